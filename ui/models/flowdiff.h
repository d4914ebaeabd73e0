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
    // One part compared on its own (sent vs sent, reply vs reply…), so a line never matches
    // a line of another part.
    struct Part {
        QString heading;
        QString left;
        QString right;
    };
    struct Sides {
        QString left; // the whole text of each side (copy, plain diff)
        QString right;
        QString leftTitle;
        QString rightTitle;
        QList<Part> parts; // when set, rows() diffs part by part under "== heading" rows
    };

    // Iterations are 0-based; an index out of range renders as empty text.
    static Sides iterations(const QJsonObject &flow, int left, int right);
    static Sides flows(const QJsonObject &left, const QJsonObject &right);
    // The diff rows: part by part when parts are set, else the whole texts.
    static QList<TextDiff::Line> rows(const Sides &sides);
};

} // namespace loopscope
