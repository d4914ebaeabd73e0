#include "widgets/injectedpanel.h"

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

void InjectedPanel::setItems(const QJsonArray &items) {
    if (items == m_items && !m_json->json().isUndefined())
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
