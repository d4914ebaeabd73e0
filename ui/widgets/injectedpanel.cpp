#include "widgets/injectedpanel.h"

#include "conversation/responsescodec.h"
#include "widgets/jsonview.h"

#include <QLabel>
#include <QVBoxLayout>

namespace loopscope {

InjectedPanel::InjectedPanel(QWidget *parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_json(new JsonView(this)) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_json, 1);
    setItems({});
}

QJsonArray InjectedPanel::injectedItems(const QJsonObject &flow) {
    QJsonObject body;
    for (const QJsonValue &h : flow.value(QStringLiteral("hops")).toArray()) {
        const QJsonObject hop = h.toObject();
        if (hop.value(QStringLiteral("kind")).toString() != QLatin1String("client_response"))
            continue;
        body = hop.value(QStringLiteral("body")).toObject();
        const QJsonArray events = hop.value(QStringLiteral("events")).toArray();
        if (body.isEmpty() && !events.isEmpty())
            body = ResponsesCodec::responseFromEvents(events);
    }
    // Only the Responses API carries code_interpreter_call items (Chat gets plain messages).
    QJsonArray items;
    for (const QJsonValue &item : body.value(QStringLiteral("output")).toArray())
        if (item.toObject().value(QStringLiteral("type")).toString() ==
            QLatin1String("code_interpreter_call"))
            items.append(item);
    return items;
}

void InjectedPanel::setFlow(const QJsonObject &flow) {
    setItems(injectedItems(flow));
}

void InjectedPanel::setItems(const QJsonArray &items) {
    // The first call (constructor) must still write the summary: an empty label is no answer.
    if (items == m_items && !m_summary->text().isEmpty())
        return;
    m_items = items;
    m_summary->setText(items.isEmpty()
                           ? tr("No code_interpreter_call items injected")
                           : tr("%n code_interpreter_call item(s) injected into the final "
                                "response",
                                nullptr, int(items.size())));
    m_json->setJson(items);
}

} // namespace loopscope
