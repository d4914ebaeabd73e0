#pragma once

#include <QJsonArray>
#include <QJsonObject>

namespace loopscope {

// OpenAI Chat Completions on the wire.
class ChatCompletionsCodec {
public:
    // The chat.completion a stream of decoded events ({"event","data"}) adds up to, as the SDK's
    // accumulator builds it: id, created, model, choice 0's content (null when no chunk had text)
    // and tool calls by index, its finish reason and the usage chunk. An error chunk is the answer;
    // no chunk at all gives {}.
    static QJsonObject responseFromEvents(const QJsonArray &events);
};

} // namespace loopscope
