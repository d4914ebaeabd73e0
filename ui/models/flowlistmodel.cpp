#include "models/flowlistmodel.h"

#include "common/futurechain.h"
#include "inspect/textformat.h"
#include "models/flowqueryclient.h"
#include "record/flowstore.h"
#include "record/flowsummarymailbox.h"

#include <QDateTime>
#include <QLocale>

#include <limits>

namespace loopscope {

namespace {

QString apiLabel(const QString &api) {
    if (api == QLatin1String("chat_completions"))
        return QStringLiteral("chat");
    return api;
}

QString str(const QJsonObject &o, const char *key) {
    return o.value(QLatin1String(key)).toString();
}

int integer(const QJsonObject &o, const char *key) {
    return o.value(QLatin1String(key)).toInt();
}

qint64 tokens(const QJsonObject &summary, const char *key) {
    return qint64(
        summary.value(QLatin1String("usage")).toObject().value(QLatin1String(key)).toDouble());
}

FlowListModel::StatusKind kindOfSummary(const QJsonObject &s) {
    const QString state = str(s, "state");
    if (state == QLatin1String("running"))
        return FlowListModel::StatusKind::Running;
    if (state == QLatin1String("paused"))
        return FlowListModel::StatusKind::Paused;
    if (state == QLatin1String("failed"))
        return FlowListModel::StatusKind::Failed;
    if (integer(s, "code_errors") > 0)
        return FlowListModel::StatusKind::CodeError;
    if (s.value(QLatin1String("incomplete_reason")).isString())
        return FlowListModel::StatusKind::Incomplete;
    return FlowListModel::StatusKind::Ok;
}

bool isDialect(const QString &api) {
    return api == QLatin1String("responses") || api == QLatin1String("chat_completions") ||
           api == QLatin1String("messages");
}

// The API cell: the dialect (else method and path), then what kind of exchange it was —
// streamed (SSE), passed through unchanged, a replay of another flow.
QString apiCell(const QJsonObject &s) {
    const QString api = str(s, "api");
    QStringList parts{isDialect(api) || api == QLatin1String("models") ||
                              api == QLatin1String("containers")
                          ? apiLabel(api)
                          : str(s, "method") + u' ' + str(s, "path")};
    if (s.value(QLatin1String("stream")).toBool())
        parts << QStringLiteral("SSE");
    if (isDialect(api) && !s.value(QLatin1String("intercepted")).toBool())
        parts << QStringLiteral("pass");
    if (!str(s, "replay_of").isEmpty())
        parts << QStringLiteral("replay");
    return parts.join(QStringLiteral(" · "));
}

QString apiToolTip(const QJsonObject &s) {
    QStringList lines{str(s, "method") + u' ' + str(s, "path")};
    lines << (s.value(QLatin1String("stream")).toBool() ? QStringLiteral("streamed (SSE)")
                                                        : QStringLiteral("not streamed"));
    if (isDialect(str(s, "api")))
        lines << (s.value(QLatin1String("intercepted")).toBool()
                      ? QStringLiteral("intercepted: Loopscope runs the code tools")
                      : QStringLiteral("passed through unchanged"));
    if (const QString of = str(s, "replay_of"); !of.isEmpty())
        lines << QStringLiteral("replay of ") + of;
    return lines.join(u'\n');
}

// The status cell: honest about what happened, never elided into something else.
QString statusLine(const QJsonObject &s) {
    const int status = integer(s, "status");
    QStringList parts;
    switch (kindOfSummary(s)) {
    case FlowListModel::StatusKind::Running:
        parts << (s.value(QLatin1String("waiting_for_sandbox")).toBool()
                      ? QStringLiteral("waiting for a sandbox…")
                      : QStringLiteral("running…"));
        break;
    case FlowListModel::StatusKind::Paused:
        parts << QStringLiteral("paused");
        break;
    case FlowListModel::StatusKind::Failed:
        parts << (status > 0 ? QStringLiteral("failed %1").arg(status) : QStringLiteral("failed"));
        break;
    default:
        parts << QString::number(status);
        break;
    }
    const int errors = integer(s, "code_errors");
    if (errors > 0)
        parts << (errors == 1 ? QStringLiteral("code error")
                              : QStringLiteral("%1 code errors").arg(errors));
    const QJsonValue reason = s.value(QLatin1String("incomplete_reason"));
    if (reason.isString()) {
        // A failed flow's reason is its failure message; a completed one was cut short.
        if (kindOfSummary(s) == FlowListModel::StatusKind::Failed)
            parts.first() += QStringLiteral(": ") + reason.toString();
        else
            parts << QStringLiteral("incomplete: ") + reason.toString();
    }
    if (s.value(QLatin1String("imported")).toBool())
        parts << QStringLiteral("imported");
    return parts.join(QStringLiteral(" · "));
}

QString statusToolTip(const QJsonObject &s) {
    QStringList lines{statusLine(s)};
    lines << str(s, "method") + u' ' + str(s, "path");
    lines << str(s, "id");
    if (const QString run = str(s, "run_id"); !run.isEmpty())
        lines << QStringLiteral("run ") + run;
    if (const QString of = str(s, "replay_of"); !of.isEmpty())
        lines << QStringLiteral("replay of ") + of;
    return lines.join(u'\n');
}

} // namespace

QString FlowListModel::statusText(const QJsonObject &summary) {
    return statusLine(summary);
}

FlowListModel::StatusKind FlowListModel::statusKind(const QJsonObject &summary) {
    return kindOfSummary(summary);
}

FlowListModel::FlowListModel(FlowQueryClient *client, QObject *parent)
    : QAbstractTableModel(parent)
    , m_client(client) {
    // Live changes are applied in batches: at 2,000 flows/s one insert and one dataChanged per
    // batch keep the view's work (and the GUI thread's stalls) bounded.
    m_liveTimer.setSingleShot(true);
    m_liveTimer.setInterval(kLiveBatchMs);
    connect(&m_liveTimer, &QTimer::timeout, this, &FlowListModel::flushLive);
    m_elapsedTicker.setInterval(kElapsedTickMs);
    connect(&m_elapsedTicker, &QTimer::timeout, this, &FlowListModel::tickElapsed);
}

FlowListModel::~FlowListModel() = default;

void FlowListModel::setFlowStore(FlowStore *store) {
    delete m_summaries;
    m_store = store;
    if (store) {
        m_summaries = new FlowSummaryMailbox(store, this);
        connect(m_summaries, &FlowSummaryMailbox::flowStarted, this,
                [this](const QJsonObject &s) { onLive(s, true); });
        connect(m_summaries, &FlowSummaryMailbox::flowUpdated, this,
                [this](const QJsonObject &s) { onLive(s, false); });
        connect(m_summaries, &FlowSummaryMailbox::flowFinished, this,
                [this](const QJsonObject &s) { onLive(s, false); });
    }
    reload();
}

int FlowListModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int FlowListModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FlowListModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &s = rowAt(index.row()).summary;
    switch (role) {
    case FlowIdRole:
        return rowAt(index.row()).id;
    case StateRole:
        return str(s, "state");
    case StatusKindRole:
        return int(kindOfSummary(s));
    case RunIdRole:
        return str(s, "run_id");
    case ImportedRole:
        return s.value(QLatin1String("imported")).toBool();
    case ReplayOfRole:
        return str(s, "replay_of");
    case Qt::TextAlignmentRole:
        if (index.column() >= IterationsColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ToolTipRole:
        switch (index.column()) {
        case TimeColumn:
            return QDateTime::fromMSecsSinceEpoch(
                       qint64(s.value(QLatin1String("started_at")).toDouble()))
                .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
        case TokensColumn:
            if (tokens(s, "total_tokens") <= 0)
                return {};
            return tr("input %1 · output %2 · total %3 (summed over every model call)")
                .arg(tokens(s, "input_tokens"))
                .arg(tokens(s, "output_tokens"))
                .arg(tokens(s, "total_tokens"));
        case ApiColumn:
            return apiToolTip(s);
        case CostColumn:
            return s.value(QLatin1String("cost_usd")).isDouble()
                       ? tr("USD, from the config's model_info prices")
                       : tr("no price known for this model");
        default:
            return statusToolTip(s);
        }
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case TimeColumn: {
        // Today's flows by time of day, older ones by date: the whole stamp is in the tooltip.
        const QDateTime at =
            QDateTime::fromMSecsSinceEpoch(qint64(s.value(QLatin1String("started_at")).toDouble()));
        return at.date() == QDate::currentDate() ? at.toString(QStringLiteral("HH:mm:ss.zzz"))
                                                 : at.toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    }
    case ApiColumn:
        return apiCell(s);
    case ModelColumn:
        return str(s, "model");
    case StatusColumn:
        return statusLine(s);
    case IterationsColumn:
        return integer(s, "iterations");
    case CodeRunsColumn:
        return integer(s, "code_runs");
    case DurationColumn: {
        const QString state = str(s, "state");
        if (state == QLatin1String("running") || state == QLatin1String("paused")) {
            // Ticks (see m_elapsedTicker): how long the flow has been going so far.
            const double started = s.value(QLatin1String("started_at")).toDouble();
            const double elapsed = double(QDateTime::currentMSecsSinceEpoch()) - started;
            return started > 0 && elapsed >= 0
                       ? textformat::formatDuration(elapsed) + QStringLiteral("…")
                       : QStringLiteral("…");
        }
        return textformat::formatDuration(s.value(QLatin1String("duration_ms")).toDouble());
    }
    case TokensColumn: {
        const qint64 total = tokens(s, "total_tokens");
        return total > 0 ? QLocale().toString(total) : QString();
    }
    case CostColumn: {
        const QJsonValue cost = s.value(QLatin1String("cost_usd"));
        return cost.isDouble() ? QStringLiteral("$") + QString::number(cost.toDouble(), 'f', 4)
                               : QString();
    }
    default:
        return {};
    }
}

QVariant FlowListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case ApiColumn:
        return tr("API");
    case ModelColumn:
        return tr("Model");
    case StatusColumn:
        return tr("Status");
    case IterationsColumn:
        return tr("Iterations");
    case CodeRunsColumn:
        return tr("Code runs");
    case DurationColumn:
        return tr("Duration");
    case TokensColumn:
        return tr("Tokens");
    case CostColumn:
        return tr("Cost");
    default:
        return {};
    }
}

bool FlowListModel::canFetchMore(const QModelIndex &parent) const {
    return !parent.isValid() && m_hasMore && !m_loading;
}

void FlowListModel::fetchMore(const QModelIndex &parent) {
    if (canFetchMore(parent))
        requestPage();
}

void FlowListModel::setFilter(const Filter &filter) {
    if (filter == m_filter)
        return;
    m_filter = filter;
    reload();
}

int FlowListModel::rowOf(const QString &id) const {
    const auto it = m_pos.constFind(id);
    return it == m_pos.constEnd() ? -1 : int(it.value() - m_front);
}

QString FlowListModel::idAt(int row) const {
    return row >= 0 && row < rowCount() ? rowAt(row).id : QString();
}

QJsonObject FlowListModel::summaryAt(int row) const {
    return row >= 0 && row < rowCount() ? rowAt(row).summary : QJsonObject();
}

void FlowListModel::trackState(const QString &id, const QJsonObject &summary) {
    const QString state = str(summary, "state");
    if (state == QLatin1String("running") || state == QLatin1String("paused"))
        m_unfinished.insert(id);
    else
        m_unfinished.remove(id);
}

void FlowListModel::startTickerIfRunning() {
    if (!m_unfinished.isEmpty() && !m_elapsedTicker.isActive())
        m_elapsedTicker.start(); // stops itself at the first tick where nothing runs
}

void FlowListModel::reload() {
    ++m_generation; // pages still on their way belong to the old list
    beginResetModel();
    m_rows.clear();
    m_pos.clear();
    m_front = 0;
    const bool hadCost = m_costKnown > 0;
    m_costKnown = 0;
    m_hasMore = m_store != nullptr;
    m_limitDropped = false;
    m_emptyPagesInARow = 0;
    m_pageAnchor.clear();
    m_incoming.clear();
    m_incomingIndex.clear();
    m_changedRows.clear();
    m_unfinished.clear();
    m_liveTimer.stop();
    setLoading(false);
    endResetModel();
    if (hadCost)
        emit anyCostKnownChanged(false);
    if (m_hasMore)
        requestPage();
}

void FlowListModel::removeIds(const QStringList &ids) {
    for (const QString &id : ids) {
        if (m_incomingIndex.contains(id)) {
            m_incoming.removeAt(m_incomingIndex.value(id));
            m_incomingIndex.clear();
            for (int i = 0; i < m_incoming.size(); ++i)
                m_incomingIndex.insert(m_incoming.at(i).id, i);
        }
        m_changedRows.remove(id);
        m_unfinished.remove(id);
        const int row = rowOf(id);
        if (row < 0)
            continue;
        beginRemoveRows({}, row, row);
        countCost(m_rows[size_t(row)].summary, -1);
        m_rows.erase(m_rows.begin() + row);
        reindex();
        endRemoveRows();
    }
}

void FlowListModel::reindex() {
    m_pos.clear();
    m_front = 0;
    for (size_t i = 0; i < m_rows.size(); ++i)
        m_pos.insert(m_rows[i].id, qint64(i));
}

bool FlowListModel::accepts(const QJsonObject &summary) const {
    if (!m_filter.text.trimmed().isEmpty())
        return false; // only the store can tell; a reload shows new matches
    if (!m_filter.state.isEmpty() && str(summary, "state") != m_filter.state)
        return false;
    if (m_filter.codeErrors && integer(summary, "code_errors") <= 0)
        return false;
    return true;
}

void FlowListModel::onLive(const QJsonObject &summary, bool isNew) {
    const QString id = str(summary, "id");
    if (id.isEmpty())
        return;
    const int row = rowOf(id);
    if (row >= 0) {
        Row &r = m_rows[size_t(row)];
        countCost(r.summary, -1);
        r.summary = summary;
        countCost(summary, +1);
        trackState(id, summary);
        m_changedRows.insert(id);
        scheduleLiveFlush();
        return;
    }
    if (const auto it = m_incomingIndex.constFind(id); it != m_incomingIndex.constEnd()) {
        m_incoming[it.value()].summary = summary; // not shown yet: goes in with its last state
        return;
    }
    // A flow not listed yet: new ones, and known ones that now pass the filter (e.g. a flow
    // that just failed while "failed" is selected), go on top.
    if (!accepts(summary))
        return;
    if (!isNew && m_filter.state.isEmpty() && !m_filter.codeErrors)
        return; // an older flow we never listed (scrolled out of the loaded pages)
    m_incomingIndex.insert(id, int(m_incoming.size()));
    m_incoming.append({summary, id});
    scheduleLiveFlush();
}

void FlowListModel::scheduleLiveFlush() {
    if (!m_liveTimer.isActive())
        m_liveTimer.start();
}

void FlowListModel::flushLive() {
    // New flows: one insert on top, newest first (they arrived oldest first).
    if (!m_incoming.isEmpty()) {
        const QList<Row> incoming = std::exchange(m_incoming, {});
        m_incomingIndex.clear();
        const bool costBefore = anyCostKnown();
        beginInsertRows({}, 0, int(incoming.size()) - 1);
        for (const Row &r : incoming) {
            --m_front;
            m_rows.push_front(r);
            m_pos.insert(r.id, m_front);
            countCost(r.summary, +1);
            trackState(r.id, r.summary);
        }
        endInsertRows();
        if (anyCostKnown() != costBefore)
            emit anyCostKnownChanged(anyCostKnown());
        trimToLiveLimit();
    }
    // Changed rows: one dataChanged over the span they cover.
    if (!m_changedRows.isEmpty()) {
        const auto [first, last] = rowSpan(m_changedRows);
        m_changedRows.clear();
        if (last >= 0)
            emit dataChanged(index(first, 0), index(last, ColumnCount - 1));
    }
    startTickerIfRunning();
}

std::pair<int, int> FlowListModel::rowSpan(const QSet<QString> &ids) const {
    int first = std::numeric_limits<int>::max();
    int last = -1;
    for (const QString &id : ids) {
        const int row = rowOf(id);
        if (row < 0)
            continue;
        first = std::min(first, row);
        last = std::max(last, row);
    }
    return {first, last};
}

void FlowListModel::tickElapsed() {
    // One dataChanged over the Duration cells of the running rows; the ticker stops once
    // nothing listed runs.
    const auto [first, last] = rowSpan(m_unfinished);
    if (last < 0) {
        m_elapsedTicker.stop();
        return;
    }
    emit dataChanged(index(first, DurationColumn), index(last, DurationColumn), {Qt::DisplayRole});
}

void FlowListModel::setLiveRowLimit(int limit) {
    m_liveRowLimit = qMax(1, limit);
    trimToLiveLimit();
}

void FlowListModel::trimToLiveLimit() {
    // Live inserts grow the table from the top; the oldest rows beyond the limit leave memory
    // (they stay in the store: scrolling down pages them in again from the new last row).
    const int excess = rowCount() - m_liveRowLimit;
    if (excess <= 0)
        return;
    if (m_loading) { // the page in flight ends at the current last row: trim when it lands
        m_trimDeferred = true;
        return;
    }
    const int first = rowCount() - excess;
    beginRemoveRows({}, first, rowCount() - 1);
    for (int i = 0; i < excess; ++i) {
        countCost(m_rows.back().summary, -1);
        m_pos.remove(m_rows.back().id);
        m_unfinished.remove(m_rows.back().id);
        m_rows.pop_back();
    }
    endRemoveRows();
    m_pageAnchor = m_rows.empty() ? QString() : m_rows.back().id;
    m_hasMore = true;
    m_limitDropped = true;
}

void FlowListModel::requestPage() {
    if (!m_client || m_loading)
        return;
    FlowFilter f;
    f.limit = kPageSize;
    f.state = m_filter.state;
    f.q = m_filter.text.trimmed();
    // Page on after the last flow the store gave (live rows are all newer).
    f.before = m_pageAnchor;
    m_pageWithinLimit = rowCount() < m_liveRowLimit;
    setLoading(true);
    const quint64 generation = m_generation;
    whenFinished(m_client->list(f), this, [this, generation](const QFuture<QJsonObject> &page) {
        if (generation != m_generation)
            return;
        setLoading(false);
        const bool deferred = std::exchange(m_trimDeferred, false);
        if ((deferred && rowCount() > m_liveRowLimit) ||
            (m_pageWithinLimit && rowCount() >= m_liveRowLimit)) {
            // Live rows reached the limit while this page, asked for to fill the table below
            // it, loaded: the page is older than what the limit keeps, so the limit wins and
            // paging goes on from the new last row (a page asked for at the limit, by
            // scrolling, is appended).
            trimToLiveLimit();
            m_pageAnchor = m_rows.empty() ? QString() : m_rows.back().id;
            m_hasMore = true;
            emit pageLoaded(0, m_hasMore);
            return;
        }
        appendPage(resultOr(page, QJsonObject()), generation);
        // A page asked for to fill the table below the limit never grows it past: what it
        // brought beyond is older than every live row and leaves first.
        if (m_pageWithinLimit)
            trimToLiveLimit();
    });
}

void FlowListModel::appendPage(const QJsonObject &page, quint64 generation) {
    const QJsonArray data = page.value(QLatin1String("data")).toArray();
    m_hasMore = page.value(QLatin1String("has_more")).toBool();
    QList<Row> fresh;
    QString lastId;
    for (const QJsonValue &v : data) {
        const QJsonObject s = v.toObject();
        const QString id = str(s, "id");
        lastId = id;
        if (id.isEmpty() || m_pos.contains(id) || m_incomingIndex.contains(id))
            continue; // listed already, or about to go on top with the next live batch
        if (m_filter.codeErrors && integer(s, "code_errors") <= 0)
            continue;
        fresh.append({s, id});
    }
    // Rows the live limit dropped are older than every listed one: a page that brought none
    // and says "no more" was read before the store had written them (it writes in batches),
    // so scrolling may still find them.
    if (!m_hasMore && fresh.isEmpty() && m_limitDropped)
        m_hasMore = true;
    const bool costBefore = anyCostKnown();
    if (!fresh.isEmpty()) {
        const int first = rowCount();
        beginInsertRows({}, first, first + int(fresh.size()) - 1);
        for (Row &r : fresh) {
            m_pos.insert(r.id, m_front + qint64(m_rows.size()));
            countCost(r.summary, +1);
            trackState(r.id, r.summary);
            m_rows.push_back(std::move(r));
        }
        endInsertRows();
    }
    if (!lastId.isEmpty())
        m_pageAnchor = lastId; // the next page starts after it, shown or filtered out
    if (anyCostKnown() != costBefore)
        emit anyCostKnownChanged(anyCostKnown());
    emit pageLoaded(int(fresh.size()), m_hasMore);
    startTickerIfRunning(); // a page may list running flows
    // The code-error filter is applied here: keep reading while pages bring too few rows for
    // the view to ask again (bounded, so a history without errors is not read all at once).
    if (m_hasMore && generation == m_generation && fresh.size() < kPageSize / 4 &&
        m_filter.codeErrors) {
        if (fresh.isEmpty() && ++m_emptyPagesInARow > 50)
            return;
        if (!fresh.isEmpty())
            m_emptyPagesInARow = 0;
        requestPage();
    }
}

void FlowListModel::countCost(const QJsonObject &summary, int delta) {
    if (summary.value(QLatin1String("cost_usd")).isDouble())
        m_costKnown += delta;
}

void FlowListModel::setLoading(bool loading) {
    if (m_loading == loading)
        return;
    m_loading = loading;
    emit loadingChanged(loading);
}

} // namespace loopscope
