#include "widgets/rawpanel.h"

#include "widgets/jsonview.h"

#include <QListWidget>
#include <QSplitter>
#include <QVBoxLayout>

namespace loopscope {

RawPanel::RawPanel(QWidget *parent)
    : QWidget(parent)
    , m_list(new QListWidget(this))
    , m_json(new JsonView(this)) {
    connect(m_list, &QListWidget::currentRowChanged, this, &RawPanel::showSection);
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_list);
    splitter->addWidget(m_json);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 3);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(splitter);
}

void RawPanel::setRecord(const RequestRecord &record) {
    // Live updates of the same request keep the user's place; another request starts at the top.
    const int keep = record.id == m_requestId ? m_list->currentRow() : 0;
    m_requestId = record.id;
    m_sections = RawSections::build(record);
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (const RawSections::Section &section : std::as_const(m_sections))
        m_list->addItem(section.title);
    const int row = std::clamp(keep, 0, int(m_sections.size()) - 1);
    m_list->setCurrentRow(row);
    showSection(row);
}

void RawPanel::clear() {
    m_requestId.clear();
    m_sections.clear();
    const QSignalBlocker block(m_list);
    m_list->clear();
    m_json->setJson(QJsonValue(QJsonValue::Undefined));
}

void RawPanel::showSection(int row) {
    if (row < 0 || row >= m_sections.size())
        return;
    m_json->setJson(m_sections.at(row).json);
}

} // namespace loopscope
