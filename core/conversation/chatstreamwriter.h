#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>

namespace loopscope {

// Replays a finished chat completion as OpenAI chat.completion.chunk SSE frames for a client
// that asked `stream: true` (the upstream call itself was forced non-streaming): a role chunk,
// the content, any tool calls, a finish chunk, then exactly one usage chunk iff the caller's
// stream_options.include_usage is true (with the final call's usage), then `data: [DONE]`.
// Every chunk shares the completion's id. Malformed stream_options mean no usage chunk.
// Pure: returns bytes. (Fixes LiteLLM #37652, where this path returned a bare chunk.)
class ChatStreamWriter {
public:
    // `streamOptions`: the caller's original stream_options value (any JSON, possibly absent).
    static QByteArray replay(const QJsonObject &completion, const QJsonValue &streamOptions);
    static bool includeUsage(const QJsonValue &streamOptions);
    // An OpenAI-shaped error frame (`data: {"error": {...}}`); the stream ends after it.
    static QByteArray error(const QString &type, const QString &message, const QString &code = {});

    static QByteArray dataFrame(const QJsonObject &payload);
    static QByteArray doneFrame();
};

} // namespace loopscope
