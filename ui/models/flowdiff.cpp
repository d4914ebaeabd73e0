#include "models/flowdiff.h"

#include "models/conversation.h"

#include <QCoreApplication>

namespace loopscope {

namespace {

QString flowLabel(const QJsonObject &flow) {
    const QString model = flow.value(QStringLiteral("model")).toString();
    const QString id = flow.value(QStringLiteral("id")).toString();
    return model.isEmpty() ? id : id + QStringLiteral(" · ") + model;
}

QString tr(const char *text) {
    return QCoreApplication::translate("FlowDiff", text);
}

// Sent / reply / fed-back parts of iteration `l` of `a` against iteration `r` of `b` (an
// index out of range is an empty side).
QList<FlowDiff::Part> iterationParts(const Conversation &a, int l, const Conversation &b, int r,
                                     const QString &prefix) {
    auto part = [](const Conversation &c, int i, auto member) {
        return i >= 0 && i < c.iterations().size()
                   ? Conversation::entriesText(c.iterations().at(i).*member)
                   : QString();
    };
    using It = Conversation::Iteration;
    return {{prefix + tr("Sent to the model"), part(a, l, &It::sent), part(b, r, &It::sent)},
            {prefix + tr("Model reply"), part(a, l, &It::reply), part(b, r, &It::reply)},
            {prefix + tr("Fed back"), part(a, l, &It::fedBack), part(b, r, &It::fedBack)}};
}

QString joined(const QList<FlowDiff::Part> &parts, bool left) {
    QString out;
    for (const FlowDiff::Part &p : parts)
        out += QStringLiteral("== ") + p.heading + u'\n' + (left ? p.left : p.right);
    return out;
}

} // namespace

FlowDiff::Sides FlowDiff::iterations(const QJsonObject &flow, int left, int right) {
    const Conversation c = Conversation::fromFlow(flow);
    const QString label = flow.value(QStringLiteral("id")).toString();
    auto title = [&](int i) { return tr("%1 · iteration %2").arg(label).arg(i + 1); };
    Sides sides;
    sides.parts = iterationParts(c, left, c, right, QString());
    sides.left = joined(sides.parts, true);
    sides.right = joined(sides.parts, false);
    sides.leftTitle = title(left);
    sides.rightTitle = title(right);
    return sides;
}

FlowDiff::Sides FlowDiff::flows(const QJsonObject &left, const QJsonObject &right) {
    const Conversation a = Conversation::fromFlow(left);
    const Conversation b = Conversation::fromFlow(right);
    Sides sides;
    const qsizetype n = qMax(a.iterations().size(), b.iterations().size());
    for (int i = 0; i < n; ++i)
        sides.parts += iterationParts(a, i, b, i, tr("Iteration %1 · ").arg(i + 1));
    sides.parts.append({tr("Final answer"), Conversation::entriesText(a.finalAnswer()),
                        Conversation::entriesText(b.finalAnswer())});
    sides.left = joined(sides.parts, true);
    sides.right = joined(sides.parts, false);
    sides.leftTitle = flowLabel(left);
    sides.rightTitle = flowLabel(right);
    return sides;
}

QList<TextDiff::Line> FlowDiff::rows(const Sides &sides) {
    if (sides.parts.isEmpty())
        return TextDiff::diff(sides.left, sides.right);
    QList<TextDiff::Line> out;
    int leftLine = 0;
    int rightLine = 0;
    for (const Part &p : sides.parts) {
        out.append(
            {TextDiff::Op::Equal, QStringLiteral("== ") + p.heading, leftLine++, rightLine++});
        const QList<TextDiff::Line> rows = TextDiff::diff(p.left, p.right);
        for (TextDiff::Line row : rows) {
            row.leftLine = row.leftLine < 0 ? -1 : row.leftLine + leftLine;
            row.rightLine = row.rightLine < 0 ? -1 : row.rightLine + rightLine;
            out.append(row);
        }
        leftLine += int(TextDiff::splitLines(p.left).size());
        rightLine += int(TextDiff::splitLines(p.right).size());
    }
    return out;
}

} // namespace loopscope
