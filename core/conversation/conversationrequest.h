#pragma once

#include "conversation/conversationitem.h"
#include "conversation/dialectkind.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace loopscope {

// What a client asked a model, decoded from any dialect: the instructions (Responses
// `instructions`, Messages `system`; Chat keeps its system messages as items, in their place),
// then the conversation's items in order.
struct ConversationRequest {
    QString model;
    QString instructions;
    QList<ConversationItem> items;
    bool stream = false;
    // The body as decoded and its dialect: the same dialect's encoder writes the model's fields
    // over it, so what the model does not name (tools, sampling, metadata, vendor extras) stays.
    QJsonObject wire;
    std::optional<Dialect> wireDialect;
};

} // namespace loopscope
