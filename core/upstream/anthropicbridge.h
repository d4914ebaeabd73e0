#pragma once

#include "common/cancellation.h"
#include "upstream/upstreamreply.h"
#include "upstream/upstreamroute.h"

#include <QFuture>
#include <QJsonObject>
#include <QObject>

namespace loopscope {

class EventBus;
class ResponseSink;
class UpstreamClient;

// OpenAI clients over an Anthropic upstream (`anthropic/…` routes, dialects.md §5), as a
// translating hop below the loop and the pass-through: a Chat Completions body bound for such a
// route goes out to /messages as Anthropic's Messages request (ChatOverMessages), and the
// message — JSON or SSE (MessagesToChatStream) — comes back as a chat completion or chat
// chunks; Anthropic's errors as OpenAI's. The Responses API reaches it through the
// ResponsesBridge, whose chat hop is this one on Anthropic routes. The configured key goes as
// x-api-key with anthropic-version (the client's Bearer token as x-api-key when the route has
// no key of its own). Owned by the ResponsesBridge; proxy thread.
class AnthropicBridge : public QObject {
    Q_OBJECT
public:
    explicit AnthropicBridge(UpstreamClient *client, QObject *parent = nullptr);

    static constexpr const char *kVersion = "2023-06-01";
    static bool serves(const UpstreamRoute &route) { return route.isAnthropic(); }

    // The Messages body for `chat` on this route (the route's model), or the 400 error.
    struct Prepared {
        QJsonObject body;
        int errorStatus = 0;
        QJsonObject error;
    };
    static Prepared prepare(const UpstreamRoute &route, const QJsonObject &chat);
    // The route as the wire needs it: anthropic-version unless the client sent one, and a
    // client's "Authorization: Bearer k" as "x-api-key: k".
    static UpstreamRoute wireRoute(const UpstreamRoute &route);
    // One Messages answer as the chat answer: a message → chat.completion, an error → OpenAI's
    // error (ChatOverMessages::clientStatus); marked bridged with the wire it used.
    static UpstreamReply chatReply(const UpstreamRoute &route, const QJsonObject &wireRequest,
                                   const UpstreamReply &messages);

    // The loop's (and the ResponsesBridge's) chat call: resolves to the chat answer.
    QFuture<UpstreamReply> postChat(const UpstreamRoute &route, const QJsonObject &chat,
                                    const CancellationToken &cancel = {});
    // A pass-through Chat Completions request answered on `sink` (JSON, or chat chunks when it
    // asked to stream), publishing its hop as UpstreamCallStarted / UpstreamCall at `iteration`.
    void serve(const UpstreamRoute &route, const QJsonObject &chat, ResponseSink *sink,
               EventBus *events, int iteration);

    // The UpstreamCall payload of one hop to /messages.
    static QJsonObject hopData(const UpstreamRoute &route, const QJsonObject &wireRequest,
                               const UpstreamReply &reply, const QJsonObject &message);

private:
    UpstreamClient *m_client;
};

} // namespace loopscope
