#pragma once

#include "models/textdiff.h"

#include <QJsonObject>
#include <QString>

namespace loopscope {

// What the diff view compares: two iterations of one flow, or the conversations of two flows,
// rendered as text by Conversation (every sent item, not only the new ones, so the diff shows
// exactly what changed between the two requests).
class FlowDiff {
public:
    struct Sides {
        QString left;
        QString right;
        QString leftTitle;
        QString rightTitle;
    };

    // Iterations are 0-based; an index out of range renders as empty text.
    static Sides iterations(const QJsonObject &flow, int left, int right);
    static Sides flows(const QJsonObject &left, const QJsonObject &right);
    static QList<TextDiff::Line> rows(const Sides &sides);
};

} // namespace loopscope
