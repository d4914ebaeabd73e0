#pragma once

#include "interception/codeinterpreterinterception.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace loopscope {

class ResponseSink;

// The Anthropic Messages side of an AgenticLoop (dialects.md §4): the loop runs its usual Chat
// Completions-shaped request through the interception hooks (the code execution tool becomes
// the hosted code_interpreter, so the same pre-call hook, gate, plan, sandboxes, breakpoints and
// live output apply), and this object is the codec at its two edges:
// - upstream: the loop's body becomes a Messages body (the sub-tools as client tools, the
//   model's own turns replayed block for block, results as tool_result blocks), and each
//   Messages answer is read back as a chat completion whose code execution calls are
//   litellm_code_execution calls running the sub-tool's program;
// - client: the answer is the model's blocks with each call as server_tool_use + its result
//   block, `container`, usage summed over the upstream calls and the last stop_reason, as one
//   JSON message or streamed as Anthropic streams it (blocks as they happen, `ping` while code
//   runs longer than the ping interval).
// Owned by its loop; lives on the proxy thread.
class MessagesLoopBridge : public QObject {
    Q_OBJECT
public:
    MessagesLoopBridge(const QJsonObject &clientBody, ResponseSink *sink, bool stream,
                       QObject *parent = nullptr);

    // The tool type the client declared (code_execution_20250825, …).
    QString toolType() const { return m_toolType; }
    // `prefix` and 32 hex digits from the system CSPRNG (message ids, new containers' sessions).
    static QString mintId(const char *prefix);
    // The request's `container` (an id string, or {id}), "" when none.
    static QString requestedContainer(const QJsonObject &clientBody);
    // The client's body in the loop's shape: the code execution tool as {"type":
    // "code_interpreter"}, `container` left out (the loop resolves it). Messages stay as sent.
    static QJsonObject internalRequest(const QJsonObject &clientBody);

    // The file ids of the container_upload blocks in the last user message, in order: copied
    // into the container before the model is asked.
    static QStringList uploadedFileIds(const QJsonObject &clientBody);

    // The Messages body for the upstream from the loop's (chat-shaped) body.
    QJsonObject upstreamBody(const QJsonObject &loopBody) const;
    // An upstream Messages answer as a chat completion (pure: for a breakpoint's view).
    QJsonObject chatView(const QJsonObject &message) const;
    // The same, remembered as the current round (its blocks go to the client, its usage adds up).
    QJsonObject roundAnswered(const QJsonObject &message);

    // Around the plan of a round: its blocks before the first call now, then each call's
    // server_tool_use as its code starts and its result when it has run; pings meanwhile.
    void planStarted();
    void codeRunStarted(const QString &callId);
    void callExecuted(const QString &containerId, const QString &callId, const ToolCallRun &run);
    void planFinished();

    // The client's message once the loop is done (`pauseTurn`: it stopped at its ceiling).
    QJsonObject finalMessage(bool pauseTurn);
    // Streaming: message_start (once), and at the end the rest, message_delta and message_stop.
    QByteArray streamStart();
    QByteArray streamEnd(const QJsonObject &message);
    // An OpenAI-shaped error body in Anthropic's shape, and as an SSE error event.
    static QJsonObject errorBody(const QJsonObject &openAiError, int status);
    static QByteArray errorEvent(const QJsonObject &anthropicError);
    QJsonObject usage() const { return m_usage; }
    // The container the request runs in (a reused one is known before any code runs).
    void setContainer(const QString &containerId, qint64 ttlMs = 0);

    void setPingIntervalMs(int ms) { m_ping.setInterval(ms); }
    static constexpr int kPingIntervalMs = 15000;

private:
    struct Call {
        QString name;
        QJsonObject input;
        bool valid = false;
        bool announced = false;
        std::optional<QJsonObject> result;
    };
    void append(const QJsonObject &block);
    void appendUntilCall();
    bool isCall(const QJsonObject &block) const; // a tool_use of this request's sub-tools
    void announce(const QString &callId);
    void flush();
    QByteArray unstreamedBlocks(); // the content's blocks not streamed yet, as events
    QJsonArray upstreamMessages(const QJsonArray &messages) const;
    QJsonArray upstreamTools(const QJsonArray &tools) const;

    QPointer<ResponseSink> m_sink;
    bool m_stream = false;
    QString m_toolType;
    QString m_model;
    QString m_messageId;
    QStringList m_subTools;
    QJsonObject m_round;  // the current upstream answer
    QJsonArray m_blocks;  // its content
    int m_next = 0;       // its first block not yet given to the client
    QJsonArray m_content; // the client's content so far
    int m_streamed = 0;   // blocks of it already streamed
    QHash<QString, Call> m_calls;
    QHash<QString, QJsonArray> m_turns;        // first tool_use id → that upstream turn's content
    QHash<QString, QString> m_resultsForModel; // tool_use id → what the model is told
    QJsonObject m_usage;
    QString m_containerId;
    qint64 m_containerTtlMs = 0;
    QTimer m_ping;
    bool m_started = false;
};

} // namespace loopscope
