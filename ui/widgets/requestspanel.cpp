#include "widgets/requestspanel.h"

#include "models/requestfilterproxymodel.h"
#include "models/requestsmodel.h"
#include "widgets/statusdelegate.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace loopscope {

RequestsPanel::RequestsPanel(RequestsModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_proxy(new RequestFilterProxyModel(this))
    , m_view(new QTableView(this))
    , m_search(new QLineEdit(this))
    , m_api(new QComboBox(this))
    , m_status(new QComboBox(this))
    , m_code(new QComboBox(this))
    , m_session(new QComboBox(this))
    , m_follow(new QCheckBox(tr("Follow"), this))
    , m_searchDebounce(new QTimer(this)) {
    m_proxy->setRequestsModel(model);

    m_search->setPlaceholderText(tr("Search id, model, code, output… (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_api->addItem(tr("All APIs"), QString());
    m_api->addItem(tr("Responses"), QStringLiteral("responses"));
    m_api->addItem(tr("Chat"), QStringLiteral("chat_completions"));
    m_api->addItem(tr("Other"), QStringLiteral("other"));
    m_status->addItem(tr("Any status"), int(RequestFilter::Status::Any));
    m_status->addItem(tr("Running"), int(RequestFilter::Status::Running));
    m_status->addItem(tr("Completed"), int(RequestFilter::Status::Completed));
    m_status->addItem(tr("Failed"), int(RequestFilter::Status::Failed));
    m_code->addItem(tr("Any code"), int(RequestFilter::Code::Any));
    m_code->addItem(tr("Ran code"), int(RequestFilter::Code::WithCode));
    m_code->addItem(tr("No code"), int(RequestFilter::Code::WithoutCode));
    m_session->addItem(tr("All sessions"), QString());
    m_session->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_session->setMinimumContentsLength(10);
    m_search->setMinimumWidth(160);
    m_follow->setChecked(true);
    m_follow->setToolTip(tr("Select each new request as it arrives"));
    auto *clear = new QPushButton(tr("Clear"), this);
    clear->setToolTip(tr("Forget every request listed (Ctrl+L)"));

    m_view->setModel(m_proxy);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(-1, Qt::AscendingOrder); // arrival order until the user sorts
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->setItemDelegateForColumn(RequestsModel::StatusColumn, new StatusDelegate(m_view));
    m_view->horizontalHeader()->setStretchLastSection(true);
    // Fixed widths (not ResizeToContents, which would measure thousands of rows).
    const int digit = m_view->fontMetrics().horizontalAdvance(u'0');
    m_view->setColumnWidth(RequestsModel::TimeColumn, digit * 13);
    m_view->setColumnWidth(RequestsModel::ApiColumn, digit * 10);
    m_view->setColumnWidth(RequestsModel::ModelColumn, digit * 15);
    m_view->setColumnWidth(RequestsModel::StatusColumn, digit * 10);
    m_view->setColumnWidth(RequestsModel::IterationsColumn, digit * 9);
    m_view->setColumnWidth(RequestsModel::CodeRunsColumn, digit * 10);
    m_view->setColumnWidth(RequestsModel::DurationColumn, digit * 9);

    m_searchDebounce->setSingleShot(true);
    m_searchDebounce->setInterval(150);
    connect(m_search, &QLineEdit::textChanged, m_searchDebounce, qOverload<>(&QTimer::start));
    connect(m_searchDebounce, &QTimer::timeout, this, &RequestsPanel::applyFilter);
    for (QComboBox *box : {m_api, m_status, m_code, m_session})
        connect(box, &QComboBox::currentIndexChanged, this, &RequestsPanel::applyFilter);
    connect(clear, &QPushButton::clicked, this, &RequestsPanel::clearRequested);
    connect(m_follow, &QCheckBox::toggled, this, [this](bool on) {
        if (on)
            onRowsInserted();
    });

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                const QString id = current.data(RequestsModel::RequestIdRole).toString();
                if (id == m_current)
                    return;
                m_current = id;
                emit currentRequestChanged(id);
            });
    // A click on an older request means the user wants to look at it: stop following.
    connect(m_view, &QTableView::pressed, this, [this](const QModelIndex &index) {
        if (m_proxy->mapToSource(index).row() != m_model->rowCount() - 1)
            m_follow->setChecked(false);
    });
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &RequestsPanel::onRowsInserted);
    connect(m_model, &RequestsModel::countsChanged, this, &RequestsPanel::refreshSessions);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, [this] {
        if (!m_current.isEmpty() && m_model->rowOf(m_current) < 0) {
            m_current.clear();
            emit currentRequestChanged({});
        }
    });

    auto *filters = new QHBoxLayout;
    filters->setContentsMargins(0, 0, 0, 0);
    filters->addWidget(m_search, 1);
    filters->addWidget(m_api);
    filters->addWidget(m_status);
    filters->addWidget(m_code);
    filters->addWidget(m_session);
    filters->addWidget(m_follow);
    filters->addWidget(clear);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(filters);
    layout->addWidget(m_view, 1);
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

RequestFilter RequestsPanel::filterFromControls() const {
    RequestFilter f;
    f.text = m_search->text();
    f.api = m_api->currentData().toString();
    f.status = RequestFilter::Status(m_status->currentData().toInt());
    f.code = RequestFilter::Code(m_code->currentData().toInt());
    f.sessionId = m_session->currentData().toString();
    return f;
}

void RequestsPanel::applyFilter() {
    m_searchDebounce->stop();
    m_proxy->setFilter(filterFromControls());
}

void RequestsPanel::focusSearch() {
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

void RequestsPanel::selectRequest(const QString &requestId) {
    const int sourceRow = m_model->rowOf(requestId);
    if (sourceRow < 0)
        return;
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(sourceRow, 0));
    if (!index.isValid())
        return;
    m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    m_view->scrollTo(index);
}

void RequestsPanel::onRowsInserted() {
    if (!m_follow->isChecked() || m_proxy->rowCount() == 0)
        return;
    // Newest arrival: the highest source row among the visible ones (sorting may reorder).
    const QModelIndex newest = m_proxy->mapFromSource(m_model->index(m_model->rowCount() - 1, 0));
    const QModelIndex target =
        newest.isValid() ? newest : m_proxy->index(m_proxy->rowCount() - 1, 0);
    m_view->selectionModel()->setCurrentIndex(target, QItemSelectionModel::ClearAndSelect |
                                                          QItemSelectionModel::Rows);
    m_view->scrollTo(target);
}

void RequestsPanel::refreshSessions() {
    const QStringList sessions = m_model->sessionIds();
    QStringList shown;
    for (int i = 1; i < m_session->count(); ++i)
        shown.append(m_session->itemData(i).toString());
    if (shown == sessions)
        return;
    const QString selected = m_session->currentData().toString();
    const QSignalBlocker block(m_session);
    while (m_session->count() > 1)
        m_session->removeItem(1);
    for (const QString &s : sessions)
        m_session->addItem(s, s);
    const int index = m_session->findData(selected);
    m_session->setCurrentIndex(index < 0 ? 0 : index);
    if (index < 0 && !selected.isEmpty())
        applyFilter();
}

} // namespace loopscope
