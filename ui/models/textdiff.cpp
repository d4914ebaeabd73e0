#include "models/textdiff.h"

#include <dtl/dtl.hpp>

#include <vector>

namespace loopscope {

QStringList TextDiff::splitLines(const QString &text) {
    if (text.isEmpty())
        return {};
    QStringList out = text.split(u'\n');
    if (text.endsWith(u'\n'))
        out.removeLast();
    return out;
}

QList<TextDiff::Line> TextDiff::lines(const QStringList &left, const QStringList &right) {
    const std::vector<QString> a(left.cbegin(), left.cend());
    const std::vector<QString> b(right.cbegin(), right.cend());
    dtl::Diff<QString> diff(a, b);
    // Past this size dtl trades the shortest script for bounded memory (still a valid diff).
    if (a.size() + b.size() > 50000)
        diff.onHuge();
    diff.compose();
    QList<Line> out;
    for (const auto &[text, info] : diff.getSes().getSequence()) {
        Line line;
        line.text = text;
        // dtl numbers lines from 1; 0 marks "not on that side".
        if (info.type == dtl::SES_ADD) {
            line.op = Op::Added;
            line.rightLine = int(info.afterIdx) - 1;
        } else if (info.type == dtl::SES_DELETE) {
            line.op = Op::Removed;
            line.leftLine = int(info.beforeIdx) - 1;
        } else {
            line.leftLine = int(info.beforeIdx) - 1;
            line.rightLine = int(info.afterIdx) - 1;
        }
        out.append(line);
    }
    return out;
}

QList<TextDiff::Line> TextDiff::diff(const QString &left, const QString &right) {
    return lines(splitLines(left), splitLines(right));
}

QString TextDiff::unified(const QList<Line> &rows) {
    QString out;
    for (const Line &l : rows) {
        out += l.op == Op::Added
                   ? QStringLiteral("+ ")
                   : (l.op == Op::Removed ? QStringLiteral("- ") : QStringLiteral("  "));
        out += l.text;
        out += u'\n';
    }
    return out;
}

int TextDiff::count(const QList<Line> &rows, Op op) {
    int n = 0;
    for (const Line &l : rows)
        n += l.op == op ? 1 : 0;
    return n;
}

} // namespace loopscope
