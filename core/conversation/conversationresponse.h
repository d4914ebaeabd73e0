#pragma once

#include "conversation/conversationitem.h"
#include "conversation/dialectkind.h"
#include "conversation/stopreason.h"
#include "conversation/usage.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace loopscope {

// A model's answer, decoded from any dialect: its items in order, why it stopped, the tokens it
// counted; or the error the server gave instead.
struct ConversationResponse {
    QString id;
    QString model;
    QList<ConversationItem> items;
    StopReason stop = StopReason::Unknown;
    QString stopDetail; // the wire's own word for it ("max_output_tokens", "end_turn", …)
    Usage usage;
    QString error; // the error's message, when the body is an error
    // The body as decoded and its dialect: the same dialect's encoder writes the model's fields
    // over it, so what the model does not name (tools, sampling, metadata, vendor extras) stays.
    QJsonObject wire;
    std::optional<Dialect> wireDialect;
};

} // namespace loopscope
