#pragma once

// The benchmarks' upstream: a ScriptedUpstream on its own thread that answers every chat
// completion at once (JSON, or four SSE chunks and [DONE] when the request streams), so what a
// harness measures is the proxy, not the model. Stopped and joined when it goes out of scope.

#include "proxy/scriptedupstream.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QThread>

namespace loopscope::bench {

class InstantChatUpstream {
public:
    InstantChatUpstream() {
        m_thread.start();
        m_anchor.moveToThread(&m_thread);
        QMetaObject::invokeMethod(
            &m_anchor,
            [this] {
                m_upstream = new test::ScriptedUpstream;
                m_upstream->setRecordRequests(false);
                m_upstream->listen();
                m_upstream->setResponder([](const test::ScriptedUpstream::Request &request) {
                    if (request.body.contains("\"stream\":true"))
                        return test::ScriptedUpstream::Response::events(streamEvents());
                    return test::ScriptedUpstream::Response::json(200, completion());
                });
            },
            Qt::BlockingQueuedConnection);
    }
    ~InstantChatUpstream() {
        QMetaObject::invokeMethod(
            &m_anchor, [this] { delete m_upstream; }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    InstantChatUpstream(const InstantChatUpstream &) = delete;
    InstantChatUpstream &operator=(const InstantChatUpstream &) = delete;

    quint16 port() const { return m_upstream->port(); }

    static QByteArray completion() {
        return R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"The result is 391."},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":6,"total_tokens":26}})";
    }
    static QList<QByteArray> streamEvents() {
        QList<QByteArray> events;
        for (const char *piece : {"The ", "result ", "is ", "391."})
            events
                << QByteArray(
                       R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":")") +
                       piece + "\"}}]}\n\n";
        events << "data: [DONE]\n\n";
        return events;
    }

private:
    QThread m_thread;
    QObject m_anchor;
    test::ScriptedUpstream *m_upstream = nullptr;
};

} // namespace loopscope::bench
