#include "widgets/runspanel.h"

#include "models/runsmodel.h"
#include "models/textformat.h"
#include "widgets/statusdelegate.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QTreeView>
#include <QVBoxLayout>

#include <utility>

namespace loopscope {

RunsPanel::RunsPanel(RunsModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_view(new QTreeView(this))
    , m_message(new QLabel(this)) {
    m_model->setLive(false); // until shown (showEvent)
    m_view->setModel(model);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setTextElideMode(Qt::ElideNone);
    m_view->setItemDelegateForColumn(RunsModel::StatusColumn, new StatusDelegate(m_view));
    const int digit = m_view->fontMetrics().horizontalAdvance(u'0');
    m_view->setColumnWidth(RunsModel::NameColumn, digit * 44);
    m_view->setColumnWidth(RunsModel::StatusColumn, digit * 12);
    for (int c = RunsModel::DurationColumn; c < RunsModel::ColumnCount; ++c)
        m_view->setColumnWidth(c, digit * 10);
    m_message->setWordWrap(true);
    auto *refresh = new QPushButton(tr("Refresh"), this);
    refresh->setToolTip(tr("Read the runs from the history again"));
    connect(refresh, &QPushButton::clicked, model, &RunsModel::reload);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (!current.isValid())
                    return; // a reload's reset: restoreSelection puts it back
                m_currentRun = current.data(RunsModel::RunIdRole).toString();
                const QString flow = current.data(RunsModel::FlowIdRole).toString();
                if (flow.isEmpty() || flow == m_currentFlow)
                    return;
                m_currentFlow = flow;
                emit flowSelected(flow);
            });
    connect(m_view, &QTreeView::expanded, this, [this](const QModelIndex &index) {
        m_expandedRuns.insert(index.data(RunsModel::RunIdRole).toString());
    });
    connect(m_view, &QTreeView::collapsed, this, [this](const QModelIndex &index) {
        m_expandedRuns.remove(index.data(RunsModel::RunIdRole).toString());
    });
    connect(model, &RunsModel::loaded, this, &RunsPanel::restoreSelection);

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_message, 1);
    top->addWidget(refresh);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
    restoreSelection();
}

bool RunsPanel::selectFlow(const QString &flowId) {
    const QModelIndex index = m_model->indexOfFlow(flowId);
    if (!index.isValid())
        return false;
    m_view->expand(index.parent());
    m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    m_view->scrollTo(index);
    return true;
}

void RunsPanel::restoreSelection() {
    const int runs = m_model->rowCount();
    m_message->setText(
        runs == 0 ? tr("No agent runs yet: flows that continue a conversation "
                       "(previous_response_id, session metadata, a longer "
                       "message list) are grouped here.")
                  : tr("%1, most recently active first").arg(textformat::plural(runs, tr("run"))));
    const QString flow = m_currentFlow;
    const QString run = m_currentRun;
    // Runs the user opened stay open (runs no longer listed are forgotten).
    const QSet<QString> expanded = std::exchange(m_expandedRuns, {});
    for (const QString &id : expanded)
        if (const QModelIndex r = m_model->indexOfRun(id); r.isValid())
            m_view->expand(r); // puts the id back through `expanded`
    const QSignalBlocker block(m_view->selectionModel());
    if (!flow.isEmpty() && selectFlow(flow))
        return;
    if (const QModelIndex r = m_model->indexOfRun(run); r.isValid())
        m_view->selectionModel()->setCurrentIndex(r, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
}

void RunsPanel::showEvent(QShowEvent *event) {
    QWidget::showEvent(event);
    m_model->setLive(true);
}

void RunsPanel::hideEvent(QHideEvent *event) {
    QWidget::hideEvent(event);
    m_model->setLive(false);
}

} // namespace loopscope
