#pragma once

#include "conversation/conversationitem.h"

#include <QList>
#include <QString>

namespace loopscope {

// What a client asked a model, decoded from any dialect: the instructions (Responses
// `instructions`, Messages `system`; Chat keeps its system messages as items, in their place),
// then the conversation's items in order.
struct ConversationRequest {
    QString model;
    QString instructions;
    QList<ConversationItem> items;
    bool stream = false;
};

} // namespace loopscope
