#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace loopscope {

// A line diff (shortest edit script, Myers O(ND) via Debian's header-only dtl), as the rows a
// diff view shows. Qt Core only.
class TextDiff {
public:
    enum class Op { Equal, Added, Removed };
    struct Line {
        Op op = Op::Equal;
        QString text;
        int leftLine = -1;  // 0-based line in the left text, -1 for an added line
        int rightLine = -1; // 0-based line in the right text, -1 for a removed line
        friend bool operator==(const Line &, const Line &) = default;
    };

    static QList<Line> lines(const QStringList &left, const QStringList &right);
    // Splits on '\n' (a final newline does not add an empty line).
    static QList<Line> diff(const QString &left, const QString &right);
    static QStringList splitLines(const QString &text);

    // "+ added", "- removed", "  same" — one line per row.
    static QString unified(const QList<Line> &rows);
    static int count(const QList<Line> &rows, Op op);
};

} // namespace loopscope
