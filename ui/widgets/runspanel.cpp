#include "widgets/runspanel.h"

#include "inspect/textformat.h"
#include "models/runsmodel.h"
#include "widgets/runcomparewindow.h"
#include "widgets/runview.h"
#include "widgets/statusdelegate.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace loopscope {

RunsPanel::RunsPanel(RunsModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_view(new QTreeView(this))
    , m_message(new QLabel(this))
    , m_runView(new RunView(this))
    , m_compare(new QPushButton(tr("Compare runs"), this)) {
    m_model->setLive(false); // until shown (showEvent)
    m_view->setModel(model);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
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
    m_compare->setToolTip(tr("Select two runs (Ctrl+click) to compare them side by side"));
    m_compare->setEnabled(false);
    connect(m_compare, &QPushButton::clicked, this, &RunsPanel::compareSelectedRuns);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { m_compare->setEnabled(selectedRuns().size() == 2); });

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (!current.isValid())
                    return; // a reload's reset: restoreSelection puts it back
                const QString run = current.data(RunsModel::RunIdRole).toString();
                if (run != m_currentRun) {
                    m_currentRun = run;
                    showCurrentRun(true);
                }
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
    connect(model, &RunsModel::loaded, this, [this] { showCurrentRun(false); });

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_message, 1);
    top->addWidget(m_compare);
    top->addWidget(refresh);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_view);
    split->addWidget(m_runView);
    split->setStretchFactor(1, 3);
    split->setSizes({1, 3}); // the conversation gets most of the height (scaled on show)
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(split, 1);
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

QStringList RunsPanel::selectedRuns() const {
    QStringList runs;
    QList<QModelIndex> rows = m_view->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) {
        const int ra = a.parent().isValid() ? a.parent().row() : a.row();
        const int rb = b.parent().isValid() ? b.parent().row() : b.row();
        return ra < rb;
    });
    for (const QModelIndex &row : rows)
        if (const QString run = row.data(RunsModel::RunIdRole).toString(); !runs.contains(run))
            runs << run;
    return runs;
}

void RunsPanel::compareSelectedRuns() {
    const QStringList runs = selectedRuns();
    if (runs.size() != 2)
        return;
    // The older run on the left: "before" and "after" read in time order.
    RunCompareWindow::open(this, m_model->client(), runs.at(1), runs.at(0));
}

void RunsPanel::showCurrentRun(bool force) {
    const QModelIndex run = m_model->indexOfRun(m_currentRun);
    // What the run view shows depends on the run's flows and on whether the last one has
    // finished (a turn read while running shows no reply yet).
    QString shown;
    if (run.isValid()) {
        const int flows = m_model->rowCount(run);
        shown = QString::number(flows);
        if (flows > 0)
            shown +=
                u'/' + m_model->index(flows - 1, 0, run).data(RunsModel::StatusKindRole).toString();
    }
    if (!force && shown == m_shownRunState)
        return; // a reload that did not change the shown run
    m_shownRunState = shown;
    m_runView->showRun(m_model->client(), run.isValid() ? m_currentRun : QString());
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
