#pragma once

#include "conversation/conversationrequest.h"
#include "conversation/conversationresponse.h"

#include <QJsonArray>
#include <QJsonObject>

namespace loopscope {

// OpenAI Responses on the wire.
class ResponsesCodec {
public:
    // The response a stream of decoded events ({"event","data"}) adds up to: the terminal
    // event's (response.completed, .incomplete or .failed) response. A stream cut short gives
    // what arrived — the finished output items, else the text deltas as one message — so a broken
    // stream still shows its text; nothing at all gives {}.
    static QJsonObject responseFromEvents(const QJsonArray &events);

    // A request body: `instructions`, then `input` (a string is one user message).
    static ConversationRequest decodeRequest(const QJsonObject &body);
    // A response body: its `output` items, the stop from `status` and `incomplete_details`, the
    // usage; or its `error`.
    static ConversationResponse decodeResponse(const QJsonObject &body);
    // One input or output item. Kinds the model does not name (web_search_call, mcp_call, …) are
    // Opaque.
    static ConversationItem decodeItem(const QJsonValue &item);

    // The model back on the wire. A request or response decoded from Responses keeps its body
    // (tools, include, store, created_at, …) under the model's fields; an item decoded from
    // Responses keeps its own fields the same way; anything else is written from the model in
    // Responses' vocabulary (a Messages tool input becomes `arguments` text, an image a URL).
    // Usage and stop go back as `usage`, `status` and `incomplete_details`.
    static QJsonObject encodeRequest(const ConversationRequest &request);
    static QJsonObject encodeResponse(const ConversationResponse &response);
    // One item; Opaque items are their wire, byte for byte. Undefined (left out) for another
    // dialect's Opaque item and another vendor's hosted call (server_tool_use: it ran there,
    // its CodeRun follows).
    static QJsonValue encodeItem(const ConversationItem &item);
};

} // namespace loopscope
