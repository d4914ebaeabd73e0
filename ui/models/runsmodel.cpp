#include "models/runsmodel.h"

#include "common/futurechain.h"
#include "inspect/textformat.h"
#include "models/flowlistmodel.h"
#include "models/flowqueryclient.h"
#include "models/runconversation.h"
#include "record/flowstore.h"
#include "record/flowsummarymailbox.h"

#include <QDateTime>
#include <QLocale>
#include <QTimer>

namespace loopscope {

namespace {

// Run rows carry internalId 0; flow rows carry their run's row + 1.
constexpr quintptr kRunRow = 0;

QString timeText(double ms) {
    return QDateTime::fromMSecsSinceEpoch(qint64(ms))
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString tokenText(const QJsonObject &o) {
    const qint64 total = qint64(
        o.value(QLatin1String("usage")).toObject().value(QLatin1String("total_tokens")).toDouble());
    return total > 0 ? QLocale().toString(total) : QString();
}

QString costText(const QJsonObject &o) {
    const QJsonValue cost = o.value(QLatin1String("cost_usd"));
    return cost.isDouble() ? QStringLiteral("$") + QString::number(cost.toDouble(), 'f', 4)
                           : QString();
}

} // namespace

RunsModel::RunsModel(FlowQueryClient *client, QObject *parent)
    : QAbstractItemModel(parent)
    , m_client(client)
    , m_throttle(new QTimer(this)) {
    m_throttle->setSingleShot(true);
    m_throttle->setInterval(kReloadIntervalMs);
    connect(m_throttle, &QTimer::timeout, this, &RunsModel::reload);
}

void RunsModel::setFlowStore(FlowStore *store) {
    delete m_summaries;
    m_store = store;
    if (store) {
        m_summaries = new FlowSummaryMailbox(store, this);
        const auto changed = [this](const QJsonObject &summary) {
            if (summary.value(QLatin1String("run_id")).isString())
                scheduleReload();
        };
        connect(m_summaries, &FlowSummaryMailbox::flowStarted, this, changed);
        connect(m_summaries, &FlowSummaryMailbox::flowFinished, this, changed);
    }
    reload();
}

void RunsModel::setLive(bool live) {
    m_live = live;
    if (live && std::exchange(m_stale, false))
        scheduleReload();
}

bool RunsModel::isReloadPending() const {
    return m_loading || m_throttle->isActive();
}

void RunsModel::scheduleReload() {
    if (!m_live) {
        m_stale = true;
        return;
    }
    if (!m_throttle->isActive())
        m_throttle->start();
}

void RunsModel::reload() {
    if (m_loading) {
        m_again = true; // one load at a time; the newest state is read after this one
        return;
    }
    m_loading = true;
    whenFinished(m_client->runsWithFlows(kRunLimit), this, [this](const QFuture<QJsonArray> &f) {
        m_loading = false;
        apply(resultOr(f, QJsonArray()));
        if (std::exchange(m_again, false))
            scheduleReload();
    });
}

void RunsModel::apply(const QJsonArray &runs) {
    // A reset keeps this simple; the Runs view restores its selection by flow id.
    beginResetModel();
    m_runs.clear();
    for (const QJsonValue &v : runs) {
        Run r;
        r.run = v.toObject();
        for (const QJsonValue &f : r.run.value(QLatin1String("flow_summaries")).toArray()) {
            r.flows.append(f.toObject());
            r.codeErrors += f.toObject().value(QLatin1String("code_errors")).toInt();
        }
        m_runs.append(r);
    }
    endResetModel();
    emit loaded();
    readTitles();
}

void RunsModel::readTitles() {
    if (m_readingTitles)
        return;         // the next load asks again for what this one did not cover
    QStringList wanted; // runs with a flow and no title yet
    for (const Run &r : std::as_const(m_runs)) {
        const QString id = r.run.value(QLatin1String("id")).toString();
        if (!m_titles.contains(id) && !r.flows.isEmpty())
            wanted.append(id);
    }
    if (wanted.isEmpty())
        return;
    m_readingTitles = true;
    using Titles = QHash<QString, QString>;
    whenFinished(m_client->submit<Titles>([wanted](const FlowQuery &query) {
        Titles titles;
        for (const QString &run : wanted) {
            RunConversation first; // the title is the first flow's
            if (first.appendRun(query, run, 0, 1) > 0)
                titles.insert(run, first.title());
        }
        return titles;
    }),
                 this, [this](const QFuture<Titles> &f) {
                     m_readingTitles = false;
                     const Titles titles = resultOr(f, Titles());
                     for (auto it = titles.begin(); it != titles.end(); ++it) {
                         m_titles.insert(it.key(), it.value());
                         if (const QModelIndex row = indexOfRun(it.key()); row.isValid())
                             emit dataChanged(row, row, {Qt::DisplayRole, Qt::ToolTipRole});
                     }
                     emit titlesRead();
                 });
}

QModelIndex RunsModel::index(int row, int column, const QModelIndex &parent) const {
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kRunRow);
    if (parent.internalId() != kRunRow)
        return {};
    return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex RunsModel::parent(const QModelIndex &child) const {
    if (!child.isValid() || child.internalId() == kRunRow)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kRunRow);
}

int RunsModel::rowCount(const QModelIndex &parent) const {
    if (!parent.isValid())
        return int(m_runs.size());
    if (parent.internalId() != kRunRow || parent.column() != 0)
        return 0;
    return int(m_runs.at(parent.row()).flows.size());
}

int RunsModel::columnCount(const QModelIndex &) const {
    return ColumnCount;
}

QVariant RunsModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const bool isRun = index.internalId() == kRunRow;
    const Run &run = m_runs.at(isRun ? index.row() : int(index.internalId() - 1));
    const QJsonObject &o = isRun ? run.run : run.flows.at(index.row());
    if (role == RunIdRole)
        return run.run.value(QLatin1String("id")).toString();
    if (role == FlowIdRole)
        return isRun ? QString() : o.value(QLatin1String("id")).toString();
    if (role == StatusKindRole)
        return isRun ? QVariant() : QVariant(int(FlowListModel::statusKind(o)));
    if (role == Qt::TextAlignmentRole && index.column() >= DurationColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == ToolCallsColumn)
        return tr("Client-side function calls the model asked for");
    if (role == Qt::ToolTipRole && isRun && index.column() == NameColumn)
        return o.value(QLatin1String("id")).toString();
    if (role == Qt::ToolTipRole && !isRun)
        return QString(FlowListModel::statusText(o) + u"\n" +
                       o.value(QLatin1String("id")).toString());
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case NameColumn:
        if (isRun) {
            const QString id = o.value(QLatin1String("id")).toString();
            const QString title = m_titles.value(id);
            return tr("%1 · %2 · %3")
                .arg(timeText(o.value(QLatin1String("started_at")).toDouble()),
                     title.isEmpty() ? id : title,
                     textformat::plural(run.flows.size(), tr("flow")));
        }
        return QStringLiteral("%1. %2  %3 %4")
            .arg(index.row() + 1)
            .arg(timeText(o.value(QLatin1String("started_at")).toDouble()),
                 o.value(QLatin1String("api")).toString(),
                 o.value(QLatin1String("model")).toString());
    case StatusColumn:
        if (isRun)
            return run.codeErrors > 0 ? textformat::plural(run.codeErrors, tr("code error"))
                                      : QString();
        return FlowListModel::statusText(o);
    case DurationColumn:
        return textformat::formatDuration(o.value(QLatin1String("duration_ms")).toDouble());
    case TokensColumn:
        return tokenText(o);
    case CostColumn:
        return costText(o);
    case CodeRunsColumn:
        return o.value(QLatin1String("code_runs")).toInt();
    case ErrorsColumn:
        return isRun ? run.codeErrors : o.value(QLatin1String("code_errors")).toInt();
    case ToolCallsColumn:
        return o.value(QLatin1String("tool_calls")).toInt();
    default:
        return {};
    }
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractItemModel::headerData(section, orientation, role);
    switch (section) {
    case NameColumn:
        return tr("Run / flow");
    case StatusColumn:
        return tr("Status");
    case DurationColumn:
        return tr("Duration");
    case TokensColumn:
        return tr("Tokens");
    case CostColumn:
        return tr("Cost");
    case CodeRunsColumn:
        return tr("Code runs");
    case ErrorsColumn:
        return tr("Errors");
    case ToolCallsColumn:
        return tr("Tool calls");
    default:
        return {};
    }
}

QModelIndex RunsModel::indexOfRun(const QString &runId) const {
    for (int i = 0; i < m_runs.size(); ++i)
        if (m_runs.at(i).run.value(QLatin1String("id")).toString() == runId)
            return index(i, 0);
    return {};
}

QModelIndex RunsModel::indexOfFlow(const QString &flowId) const {
    for (int i = 0; i < m_runs.size(); ++i)
        for (int j = 0; j < m_runs.at(i).flows.size(); ++j)
            if (m_runs.at(i).flows.at(j).value(QLatin1String("id")).toString() == flowId)
                return index(j, 0, index(i, 0));
    return {};
}

QJsonObject RunsModel::runAt(int row) const {
    return row >= 0 && row < m_runs.size() ? m_runs.at(row).run : QJsonObject();
}

} // namespace loopscope
