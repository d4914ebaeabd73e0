#include "models/requestsmodel.h"

#include <QDateTime>
#include <QSet>

#include <algorithm>

namespace loopscope {

namespace {

QString formatDuration(qint64 ms) {
    if (ms < 1000)
        return QString::number(ms) + QStringLiteral(" ms");
    return QString::number(double(ms) / 1000.0, 'f', 2) + QStringLiteral(" s");
}

QString apiLabel(const QString &api) {
    if (api == QLatin1String("chat_completions"))
        return QStringLiteral("chat");
    return api;
}

} // namespace

RequestsModel::RequestsModel(QObject *parent)
    : QAbstractTableModel(parent) {}

RequestsModel::~RequestsModel() = default;

int RequestsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RequestsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RequestsModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const RequestRecord &r = m_rows[size_t(index.row())];
    switch (role) {
    case RequestIdRole:
        return r.id;
    case StateRole:
        return int(r.state);
    case HasCodeRole:
        return r.hasCode();
    case SessionIdRole:
        return r.sessionId;
    case ApiRole:
        return r.api;
    case Qt::ToolTipRole:
        if (r.state == RequestState::Failed && !r.failureMessage.isEmpty())
            return r.failureMessage;
        return QString(r.method + u' ' + r.path + QStringLiteral("\n") + r.id);
    case Qt::TextAlignmentRole:
        if (index.column() >= IterationsColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    const bool sort = role == SortRole;
    switch (index.column()) {
    case TimeColumn:
        if (sort)
            return r.startedMs;
        return QDateTime::fromMSecsSinceEpoch(r.startedMs).toString(QStringLiteral("HH:mm:ss.zzz"));
    case ApiColumn:
        return sort ? r.api : apiLabel(r.api);
    case ModelColumn:
        return r.model;
    case StatusColumn:
        return sort ? QVariant(int(r.state) * 1000 + r.httpStatus) : QVariant(r.statusText());
    case IterationsColumn:
        return r.iterations;
    case CodeRunsColumn:
        return r.codeRunCount;
    case DurationColumn:
        if (sort)
            return r.elapsedMs();
        return r.durationMs < 0 ? QStringLiteral("…") : formatDuration(r.durationMs);
    case TokensColumn:
        if (sort)
            return r.usage.total;
        return r.usage.isEmpty() ? QString() : QString::number(r.usage.total);
    default:
        return {};
    }
}

QVariant RequestsModel::headerData(int section, Qt::Orientation orientation, int role) const {
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
    default:
        return {};
    }
}

void RequestsModel::setRetentionLimit(int limit) {
    m_retention = std::max(1, limit);
    if (int(m_rows.size()) > m_retention) {
        trimTo(m_retention);
        emit countsChanged();
    }
}

int RequestsModel::rowOf(const QString &requestId) const {
    const auto it = m_absoluteIndex.constFind(requestId);
    return it == m_absoluteIndex.cend() ? -1 : int(*it - m_base);
}

const RequestRecord *RequestsModel::record(int row) const {
    if (row < 0 || row >= int(m_rows.size()))
        return nullptr;
    return &m_rows[size_t(row)];
}

const RequestRecord *RequestsModel::recordById(const QString &requestId) const {
    return record(rowOf(requestId));
}

QStringList RequestsModel::sessionIds() const {
    QSet<QString> ids;
    for (const RequestRecord &r : m_rows) {
        if (!r.sessionId.isEmpty())
            ids.insert(r.sessionId);
    }
    QStringList list(ids.cbegin(), ids.cend());
    list.sort();
    return list;
}

int RequestsModel::runningCount() const {
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(), [](const RequestRecord &r) {
        return r.state == RequestState::Running;
    }));
}

int RequestsModel::failedCount() const {
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(), [](const RequestRecord &r) {
        return r.state == RequestState::Failed;
    }));
}

void RequestsModel::applyEvent(const InspectorEvent &event) {
    applyEvents({event});
}

void RequestsModel::applyEvents(const QList<InspectorEvent> &events) {
    // New requests are folded outside the model first, so a request that starts and finishes
    // within one batch is inserted once, complete.
    std::vector<RequestRecord> fresh;
    QHash<QString, int> freshIndex;
    QSet<QString> touched;
    int minChanged = -1;
    int maxChanged = -1;

    for (const InspectorEvent &event : events) {
        if (event.requestId.isEmpty() || event.isSandboxEvent() ||
            event.kind == InspectorEvent::Kind::Log)
            continue;
        if (event.kind == InspectorEvent::Kind::RequestStarted) {
            if (m_absoluteIndex.contains(event.requestId) || freshIndex.contains(event.requestId))
                continue; // duplicate start: keep the first
            freshIndex.insert(event.requestId, int(fresh.size()));
            fresh.push_back(RequestRecord::fromStarted(event));
            touched.insert(event.requestId);
            continue;
        }
        if (const auto f = freshIndex.constFind(event.requestId); f != freshIndex.cend()) {
            fresh[size_t(*f)].apply(event);
            continue;
        }
        // Events of requests never seen (or already trimmed) are dropped: resurrecting a
        // trimmed request as a partial row would be more confusing than losing it.
        const int row = rowOf(event.requestId);
        if (row < 0)
            continue;
        RequestRecord &record = m_rows[size_t(row)];
        if (record.apply(event)) {
            if (record.payloadsDropped) // a late event of an old request
                record.dropPayloads();
            touched.insert(event.requestId);
            minChanged = minChanged < 0 ? row : std::min(minChanged, row);
            maxChanged = std::max(maxChanged, row);
        }
    }

    const int existing = int(m_rows.size());
    const int total = existing + int(fresh.size());
    int dropFresh = 0;
    if (total > m_retention) {
        const int excess = total - m_retention;
        const int dropExisting = std::min(existing, excess);
        dropFresh = excess - dropExisting;
        if (dropExisting > 0) {
            trimTo(existing - dropExisting);
            minChanged -= dropExisting;
            maxChanged -= dropExisting;
        }
    }

    if (maxChanged >= 0) {
        minChanged = std::max(0, minChanged);
        emit dataChanged(index(minChanged, 0), index(maxChanged, ColumnCount - 1));
    }

    const int insertCount = int(fresh.size()) - dropFresh;
    if (insertCount > 0) {
        const int first = int(m_rows.size());
        beginInsertRows({}, first, first + insertCount - 1);
        for (size_t i = size_t(dropFresh); i < fresh.size(); ++i) {
            m_absoluteIndex.insert(fresh[i].id, m_base + qint64(m_rows.size()));
            m_rows.push_back(std::move(fresh[i]));
        }
        endInsertRows();
    }

    dropOldPayloads();

    if (!touched.isEmpty()) {
        QStringList ids;
        ids.reserve(touched.size());
        for (const QString &id : std::as_const(touched)) {
            if (m_absoluteIndex.contains(id))
                ids.append(id);
        }
        if (!ids.isEmpty())
            emit requestsUpdated(ids);
        emit countsChanged();
    }
}

void RequestsModel::setPayloadRetention(int count) {
    m_payloadRetention = std::max(1, count);
    dropOldPayloads();
}

void RequestsModel::dropOldPayloads() {
    // Amortised O(1): each record is stripped once, when it leaves the newest window.
    const qint64 end = m_base + qint64(m_rows.size());
    const qint64 keepFrom = end - m_payloadRetention;
    for (qint64 abs = std::max(m_payloadsKeptFrom, m_base); abs < keepFrom; ++abs)
        m_rows[size_t(abs - m_base)].dropPayloads();
    m_payloadsKeptFrom = std::max(m_payloadsKeptFrom, keepFrom);
}

void RequestsModel::clear() {
    if (m_rows.empty())
        return;
    beginResetModel();
    m_rows.clear();
    m_absoluteIndex.clear();
    m_base = 0;
    m_payloadsKeptFrom = 0;
    endResetModel();
    emit countsChanged();
}

// Removes the oldest rows until `limit` remain.
void RequestsModel::trimTo(int limit) {
    const int remove = int(m_rows.size()) - limit;
    if (remove <= 0)
        return;
    beginRemoveRows({}, 0, remove - 1);
    for (int i = 0; i < remove; ++i) {
        m_absoluteIndex.remove(m_rows.front().id);
        m_rows.pop_front();
    }
    m_base += remove;
    endRemoveRows();
}

} // namespace loopscope
