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
} // namespace

FlowDiff::Sides FlowDiff::iterations(const QJsonObject &flow, int left, int right) {
    const Conversation c = Conversation::fromFlow(flow);
    const QString label = flow.value(QStringLiteral("id")).toString();
    auto title = [&](int i) {
        return QCoreApplication::translate("FlowDiff", "%1 · iteration %2").arg(label).arg(i + 1);
    };
    return {c.iterationText(left, true), c.iterationText(right, true), title(left), title(right)};
}

FlowDiff::Sides FlowDiff::flows(const QJsonObject &left, const QJsonObject &right) {
    return {Conversation::fromFlow(left).text(true), Conversation::fromFlow(right).text(true),
            flowLabel(left), flowLabel(right)};
}

QList<TextDiff::Line> FlowDiff::rows(const Sides &sides) {
    return TextDiff::diff(sides.left, sides.right);
}

} // namespace loopscope
