#pragma once

#include "conversation/conversationrequest.h"
#include "conversation/conversationresponse.h"

#include <QJsonArray>
#include <QJsonObject>

namespace loopscope {

// OpenAI Chat Completions on the wire.
class ChatCompletionsCodec {
public:
    // The chat.completion a stream of decoded events ({"event","data"}) adds up to, as the SDK's
    // accumulator builds it: id, created, model, choice 0's content (null when no chunk had text)
    // and tool calls by index, its finish reason and the usage chunk; `reasoning_content`
    // deltas (servers that stream reasoning that way) joined on the message when there were any. An
    // error chunk is the answer; no chunk at all gives {}.
    static QJsonObject responseFromEvents(const QJsonArray &events);

    // A request body's `messages`, system messages in their place.
    static ConversationRequest decodeRequest(const QJsonObject &body);
    // A chat.completion: choice 0's message, its finish reason, the usage; or the `error`.
    static ConversationResponse decodeResponse(const QJsonObject &body);
    // One message as items: a role "tool" message is a ToolResult; otherwise the reasoning a
    // server returns beside the content (Anthropic's `thinking_blocks`, one item each with its
    // signature; else `reasoning_content`), the content as a Message (left out
    // when it is empty beside tool calls), then each tool call. A message with nothing in it is
    // still an (empty) Message: an empty turn is still a turn.
    static QList<ConversationItem> decodeMessage(const QJsonObject &message);

    // The model back on the wire. A body decoded from Chat keeps its other fields (tools,
    // sampling, `object`, `created`, the choice's `logprobs`, …) under the model's; items are
    // gathered back into messages: an assistant turn's reasoning, content and tool calls make
    // one message (reasoning only where Chat takes it as input: `thinking_blocks` and
    // `reasoning_content` that came on a Chat message), a ToolResult a role "tool" message.
    // `instructions` become a leading system message. Usage and stop go back as `usage` and
    // `finish_reason`.
    static QJsonObject encodeRequest(const ConversationRequest &request);
    static QJsonObject encodeResponse(const ConversationResponse &response);
    // Items as Chat messages; `fallback` is the base of an assistant message no Message item
    // brought (tool calls with null content).
    static QJsonArray encodeMessages(const QList<ConversationItem> &items,
                                     const QJsonObject &fallback = {});
};

} // namespace loopscope
