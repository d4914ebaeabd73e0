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
};

} // namespace loopscope
