#include "widgets/requestspanel.h"

#include "models/flowlistmodel.h"
#include "widgets/statusdelegate.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace loopscope {

RequestsPanel::RequestsPanel(FlowListModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_view(new QTableView(this))
    , m_search(new QLineEdit(this))
    , m_state(new QComboBox(this))
    , m_codeErrors(new QCheckBox(tr("Code errors"), this))
    , m_follow(new QCheckBox(tr("Follow"), this))
    , m_message(new QLabel(this))
    , m_searchDebounce(new QTimer(this))
    , m_followThrottle(new QTimer(this)) {
    m_followThrottle->setSingleShot(true);
    m_followThrottle->setInterval(kFollowIntervalMs);
    connect(m_followThrottle, &QTimer::timeout, this, [this] {
        if (std::exchange(m_followPending, false))
            onRowsInserted(0);
    });
    m_search->setPlaceholderText(
        tr("Search all flows: ids, model, request and response bodies, code, output "
           "(Ctrl+Shift+F)"));
    m_search->setToolTip(m_search->placeholderText());
    m_search->setClearButtonEnabled(true);
    m_search->setMinimumWidth(160);
    m_state->addItem(tr("Any state"), QString());
    m_state->addItem(tr("Running"), QStringLiteral("running"));
    m_state->addItem(tr("Paused"), QStringLiteral("paused"));
    m_state->addItem(tr("Completed"), QStringLiteral("completed"));
    m_state->addItem(tr("Failed"), QStringLiteral("failed"));
    m_codeErrors->setToolTip(tr("Only flows whose code raised an error"));
    m_follow->setChecked(true);
    m_follow->setToolTip(tr("Select each new flow as it arrives"));
    auto *clear = new QPushButton(tr("Clear…"), this);
    clear->setToolTip(tr("Clear the flow history (asks first)"));
    m_message->setVisible(false);
    m_message->setWordWrap(true);

    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideNone); // the status says all of it (tooltip too)
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->setItemDelegateForColumn(FlowListModel::StatusColumn, new StatusDelegate(m_view));
    m_view->horizontalHeader()->setStretchLastSection(false);
    // Fixed widths (not ResizeToContents, which would measure every loaded row).
    // Each at least as wide as its title needs in the header (its font, margins and sort mark;
    // a bold "Iterations" did not fit eight digits and read "terations").
    const int digit = m_view->fontMetrics().horizontalAdvance(u'0');
    const QHeaderView *header = m_view->horizontalHeader();
    const auto fit = [&](int column, int digits) {
        m_view->setColumnWidth(column, qMax(digit * digits, header->sectionSizeHint(column)));
    };
    fit(FlowListModel::TimeColumn, 14);
    fit(FlowListModel::ApiColumn, 16); // "messages · SSE · pass"
    fit(FlowListModel::ModelColumn, 14);
    fit(FlowListModel::StatusColumn, 14);
    fit(FlowListModel::IterationsColumn, 4);
    fit(FlowListModel::CodeRunsColumn, 4);
    fit(FlowListModel::DurationColumn, 8);
    fit(FlowListModel::TokensColumn, 9);
    fit(FlowListModel::CostColumn, 8);
    m_view->setColumnHidden(FlowListModel::CostColumn, !m_model->anyCostKnown());
    connect(m_model, &FlowListModel::anyCostKnownChanged, this,
            [this](bool known) { m_view->setColumnHidden(FlowListModel::CostColumn, !known); });

    m_searchDebounce->setSingleShot(true);
    m_searchDebounce->setInterval(250);
    connect(m_search, &QLineEdit::textChanged, m_searchDebounce, qOverload<>(&QTimer::start));
    connect(m_search, &QLineEdit::returnPressed, this, &RequestsPanel::applyFilter);
    connect(m_searchDebounce, &QTimer::timeout, this, &RequestsPanel::applyFilter);
    connect(m_state, &QComboBox::currentIndexChanged, this, &RequestsPanel::applyFilter);
    connect(m_codeErrors, &QCheckBox::toggled, this, &RequestsPanel::applyFilter);
    connect(clear, &QPushButton::clicked, this, &RequestsPanel::clearRequested);
    connect(m_follow, &QCheckBox::toggled, this, [this](bool on) {
        if (on && m_model->rowCount() > 0)
            onRowsInserted(0);
    });

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                const QString id = current.data(FlowListModel::FlowIdRole).toString();
                if (id == m_current)
                    return;
                m_current = id;
                emit currentRequestChanged(id);
            });
    // A click on an older flow means the user wants to look at it: stop following.
    connect(m_view, &QTableView::pressed, this, [this](const QModelIndex &index) {
        if (index.row() != 0)
            m_follow->setChecked(false);
    });
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        const QModelIndex index = m_view->indexAt(pos);
        if (!index.isValid())
            return;
        m_follow->setChecked(false);
        m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                             QItemSelectionModel::Rows);
        emit contextMenuRequested(index.data(FlowListModel::FlowIdRole).toString(),
                                  m_view->viewport()->mapToGlobal(pos));
    });
    connect(m_model, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex &, int first, int last) {
                widenStatusColumn(first, last);
                onRowsInserted(first);
                if (m_message->isVisible())
                    updateMessage();
            });
    connect(m_model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &from, const QModelIndex &to) {
                widenStatusColumn(from.row(), to.row());
            });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        if (!m_current.isEmpty()) {
            m_current.clear();
            emit currentRequestChanged({});
        }
        updateMessage();
    });
    connect(m_model, &FlowListModel::loadingChanged, this, &RequestsPanel::updateMessage);
    connect(m_model, &FlowListModel::pageLoaded, this, &RequestsPanel::updateMessage);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &RequestsPanel::updateMessage);

    // Two rows, so the panel fits half a 1280-px screen beside the conversation; Clear…
    // (it wipes the history) sits with the search, away from Follow, which is clicked often.
    auto *search = new QHBoxLayout;
    search->setContentsMargins(0, 0, 0, 0);
    search->addWidget(m_search, 1);
    search->addSpacing(12);
    search->addWidget(clear);
    auto *filters = new QHBoxLayout;
    filters->setContentsMargins(0, 0, 0, 0);
    filters->addWidget(m_state);
    filters->addWidget(m_codeErrors);
    filters->addWidget(m_follow);
    filters->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(search);
    layout->addLayout(filters);
    layout->addWidget(m_message);
    layout->addWidget(m_view, 1);
    updateMessage();
}

QString RequestsPanel::currentRequestId() const {
    return m_current;
}

bool RequestsPanel::autoFollow() const {
    return m_follow->isChecked();
}

void RequestsPanel::setAutoFollow(bool follow) {
    m_follow->setChecked(follow);
}

void RequestsPanel::applyFilter() {
    m_searchDebounce->stop();
    FlowListModel::Filter f;
    f.text = m_search->text().trimmed();
    f.state = m_state->currentData().toString();
    f.codeErrors = m_codeErrors->isChecked();
    m_model->setFilter(f);
    updateMessage();
}

void RequestsPanel::focusSearch() {
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

bool RequestsPanel::selectRequest(const QString &requestId) {
    const int row = m_model->rowOf(requestId);
    if (row < 0)
        return false;
    const QModelIndex index = m_model->index(row, 0);
    m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    m_view->scrollTo(index);
    return true;
}

void RequestsPanel::onRowsInserted(int first) {
    // Only a new flow on top is "new"; pages appended below are older history.
    if (!m_follow->isChecked() || first != 0 || m_model->rowCount() == 0)
        return;
    // At most every kFollowIntervalMs: each selection reloads every detail panel, and under
    // heavy traffic that would keep the GUI thread busy; the newest flow is selected at the end.
    if (m_followThrottle->isActive()) {
        m_followPending = true;
        return;
    }
    m_followThrottle->start();
    m_followPending = false;
    const QModelIndex top = m_model->index(0, 0);
    m_view->selectionModel()->setCurrentIndex(top, QItemSelectionModel::ClearAndSelect |
                                                       QItemSelectionModel::Rows);
    m_view->scrollTo(top);
}

void RequestsPanel::widenStatusColumn(int first, int last) {
    // A status is never cut ("200 · incomplete: <the whole reason>"): the column grows to the
    // widest one seen, up to a bound past which the tooltip has the rest.
    const int icon = m_view->style()->pixelMetric(QStyle::PM_SmallIconSize) + 16;
    int widest = m_view->columnWidth(FlowListModel::StatusColumn);
    const int bound = qMax(widest, m_view->fontMetrics().horizontalAdvance(u'0') * 160);
    for (int row = first; row <= last && row - first < 500; ++row) {
        const QString text = m_model->index(row, FlowListModel::StatusColumn).data().toString();
        widest = qMax(widest, m_view->fontMetrics().horizontalAdvance(text) + icon);
    }
    widest = qMin(widest, bound);
    if (widest > m_view->columnWidth(FlowListModel::StatusColumn))
        m_view->setColumnWidth(FlowListModel::StatusColumn, widest);
}

void RequestsPanel::updateMessage() {
    const FlowListModel::Filter &f = m_model->filter();
    QString text;
    if (m_model->rowCount() == 0) {
        if (m_model->isLoading())
            text = f.text.isEmpty() ? tr("Loading history…") : tr("Searching all flows…");
        else if (!f.text.isEmpty())
            text = tr("No flows match “%1”.").arg(f.text);
        else if (!f.state.isEmpty() || f.codeErrors)
            text = tr("No flows match these filters.");
        else
            text = tr("No flows recorded yet: point an OpenAI SDK at the proxy's base URL.");
    }
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

} // namespace loopscope
