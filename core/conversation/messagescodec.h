#pragma once

#include "conversation/conversationrequest.h"
#include "conversation/conversationresponse.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>

namespace loopscope {

// Anthropic Messages on the wire.
class MessagesCodec {
public:
    // The message a stream of decoded events ({"event","data"}) adds up to, as the SDK's
    // accumulator builds it: message_start's message, each content block from its start plus
    // its deltas (text, the tool input's JSON pieces, thinking and its signature, citations),
    // message_delta's stop reason and usage (output counts are cumulative, so they replace).
    // No message_start gives {}.
    static QJsonObject responseFromEvents(const QJsonArray &events);
    // A whole message as Anthropic streams it: message_start (the message without content and
    // stop reason), per block content_block_start / its deltas / content_block_stop (text as
    // text_delta and citations_delta, thinking as thinking_delta then signature_delta, a tool's
    // input as one input_json_delta, result blocks whole in their start), then message_delta
    // (stop reason, the output usage) and message_stop. responseFromEvents() of it gives the
    // message back.
    static QByteArray streamFromMessage(const QJsonObject &message);
    // One content block at `index` as streamFromMessage() streams it.
    static QByteArray blockEvents(int index, const QJsonObject &block);
    // One event: `data` with "type": `type`, framed with the same event name.
    static QByteArray event(const char *type, QJsonObject data);

    // A request body: `system` (a string or text blocks) as the instructions, then `messages`.
    static ConversationRequest decodeRequest(const QJsonObject &body);
    // A message: its content blocks as items, `stop_reason`, the usage; or an error body's
    // message.
    static ConversationResponse decodeResponse(const QJsonObject &body);
    // One message's content (a string, or blocks) as items, in order: runs of text, image and
    // document blocks make one Message; thinking and redacted_thinking are Reasoning; tool_use,
    // server_tool_use and mcp_tool_use are ToolCalls; tool_result is a ToolResult; the code
    // execution tools' results are CodeRuns; any other block is Opaque.
    static QList<ConversationItem> decodeContent(const QString &role, const QJsonValue &content);

    // The model back on the wire. A body decoded from Messages keeps its other fields
    // (max_tokens, tools, thinking, container, stop_sequence, …) under the model's; consecutive
    // items of one role make one turn (Anthropic combines consecutive turns the same way);
    // `instructions` are `system` (kept as the blocks it came as when they say the same).
    // Usage and stop go back as `usage` and `stop_reason`; an error as Anthropic's error body.
    static QJsonObject encodeRequest(const ConversationRequest &request);
    static QJsonObject encodeResponse(const ConversationResponse &response);
    // Items as Messages turns ({role, content}).
    static QJsonArray encodeMessages(const QList<ConversationItem> &items);
    // One item as content blocks: a Message its parts, a Reasoning a thinking (signature kept)
    // or redacted_thinking block, a ToolCall tool_use (server_tool_use/mcp_tool_use for hosted
    // ones; OpenAI's arguments text parsed to `input`), a ToolResult tool_result, a CodeRun its
    // result block; Opaque its wire (another dialect's Opaque: nothing).
    static QJsonArray encodeBlocks(const ConversationItem &item);
    // An image block for a picture's URL: a data: URL's bytes as a base64 source, any other URL
    // as a url source (Anthropic fetches it).
    static QJsonObject imageBlock(const QString &url);
};

} // namespace loopscope
