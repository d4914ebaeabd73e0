#include "widgets/jsonview.h"

#include "widgets/findbar.h"

#include "models/jsontreemodel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace loopscope {

JsonView::JsonView(QWidget *parent)
    : QWidget(parent)
    , m_model(new JsonTreeModel(this))
    , m_tabs(new QTabWidget(this))
    , m_tree(new QTreeView(this))
    , m_text(new QPlainTextEdit(this)) {
    m_tree->setModel(m_model);
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->header()->setSectionResizeMode(JsonTreeModel::KeyColumn, QHeaderView::Interactive);
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->setSectionResizeMode(JsonTreeModel::ValueColumn, QHeaderView::Stretch);
    m_tree->setColumnWidth(JsonTreeModel::KeyColumn, 180);
    m_tree->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *copySubtree = new QAction(tr("Copy subtree"), m_tree);
    copySubtree->setShortcut(QKeySequence::Copy);
    copySubtree->setShortcutContext(Qt::WidgetShortcut);
    connect(copySubtree, &QAction::triggered, this, &JsonView::copySelectedSubtree);
    m_tree->addAction(copySubtree);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    FindBar::attach(m_text); // Ctrl+F and the wrap toggle in the pretty text
    m_tabs->addTab(m_tree, tr("Tree"));
    m_tabs->addTab(m_text, tr("Text"));
    m_tabs->setDocumentMode(true);

    auto *copy = new QToolButton(this);
    copy->setText(tr("Copy"));
    copy->setToolTip(tr("Copy the JSON as pretty text"));
    connect(copy, &QToolButton::clicked, this, &JsonView::copyToClipboard);
    m_tabs->setCornerWidget(copy, Qt::TopRightCorner);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);
}

void JsonView::setJson(const QJsonValue &value) {
    m_json = value;
    m_model->setJson(value);
    m_tree->expandToDepth(1);
    m_text->setPlainText(prettyText());
}

QString JsonView::prettyText() const {
    return toPrettyText(m_json);
}

QString JsonView::toPrettyText(const QJsonValue &value) {
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Indented));
    if (value.isArray())
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Indented));
    if (value.isUndefined())
        return {};
    // Scalars: wrap in an array to reuse the serializer, then strip the brackets.
    const QByteArray wrapped = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(wrapped.mid(1, wrapped.size() - 2));
}

void JsonView::copyToClipboard() const {
    QApplication::clipboard()->setText(prettyText());
}

void JsonView::copySelectedSubtree() const {
    const QModelIndex current = m_tree->currentIndex();
    if (!current.isValid())
        return;
    const QJsonValue value = current.siblingAtColumn(JsonTreeModel::KeyColumn)
                                 .data(JsonTreeModel::JsonValueRole)
                                 .value<QJsonValue>();
    QApplication::clipboard()->setText(toPrettyText(value));
}

} // namespace loopscope
