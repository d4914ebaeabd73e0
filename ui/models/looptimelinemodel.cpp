#include "models/looptimelinemodel.h"

#include "models/requestsmodel.h"

#include <algorithm>
#include <tuple>

namespace loopscope {

LoopTimelineModel::LoopTimelineModel(QObject *parent)
    : QAbstractTableModel(parent) {}

void LoopTimelineModel::setRequestsModel(RequestsModel *model) {
    if (m_requests)
        disconnect(m_requests, nullptr, this, nullptr);
    m_requests = model;
    if (model) {
        connect(model, &RequestsModel::requestsUpdated, this,
                &LoopTimelineModel::onRequestsUpdated);
        // Trimming or clearing can take the selected request away.
        connect(model, &QAbstractItemModel::rowsRemoved, this, &LoopTimelineModel::refresh);
        connect(model, &QAbstractItemModel::modelReset, this, &LoopTimelineModel::refresh);
    }
    beginResetModel();
    m_steps.clear();
    endResetModel();
    refresh();
}

void LoopTimelineModel::setRequestId(const QString &requestId) {
    if (requestId == m_requestId)
        return;
    beginResetModel();
    m_requestId = requestId;
    m_steps.clear();
    endResetModel();
    refresh();
}

const RequestRecord *LoopTimelineModel::currentRecord() const {
    if (!m_requests || m_requestId.isEmpty())
        return nullptr;
    return m_requests->recordById(m_requestId);
}

std::vector<LoopTimelineModel::Step> LoopTimelineModel::buildSteps(const RequestRecord &record,
                                                                   qint64 *span) const {
    std::vector<Step> steps;
    steps.reserve(size_t(record.upstreamCalls.size() + record.codeRuns.size()));
    qint64 end = record.startedMs + record.elapsedMs();
    for (int i = 0; i < record.upstreamCalls.size(); ++i) {
        const UpstreamCallRecord &c = record.upstreamCalls.at(i);
        const bool failed = !c.error.isEmpty() || c.status >= 400;
        steps.push_back({StepKind::UpstreamCall, i,
                         std::max<qint64>(0, c.timestampMs - c.latencyMs - record.startedMs),
                         double(c.latencyMs), failed, i + 1});
        end = std::max(end, c.timestampMs);
    }
    for (int i = 0; i < record.codeRuns.size(); ++i) {
        const CodeRunRecord &r = record.codeRuns.at(i);
        steps.push_back(
            {StepKind::CodeRun, i,
             std::max<qint64>(0, r.timestampMs - qint64(r.durationMs) - record.startedMs),
             r.durationMs, r.hasError() || r.timedOut, i + 1});
        end = std::max(end, r.timestampMs);
    }
    // Loop order: an iteration's upstream call, then the code it asked for. Events of one kind
    // arrive in order, so the per-kind index breaks remaining ties.
    const auto iterationOf = [&record](const Step &s) {
        return s.kind == StepKind::UpstreamCall ? record.upstreamCalls.at(s.sourceIndex).iteration
                                                : record.codeRuns.at(s.sourceIndex).iteration;
    };
    std::stable_sort(steps.begin(), steps.end(), [&](const Step &a, const Step &b) {
        return std::tuple(iterationOf(a), int(a.kind), a.sourceIndex) <
               std::tuple(iterationOf(b), int(b.kind), b.sourceIndex);
    });
    *span = std::max<qint64>(1, end - record.startedMs);
    return steps;
}

void LoopTimelineModel::onRequestsUpdated(const QStringList &ids) {
    if (!m_requestId.isEmpty() && ids.contains(m_requestId))
        refresh();
}

void LoopTimelineModel::refresh() {
    const RequestRecord *record = currentRecord();
    if (!record) {
        if (!m_steps.empty()) {
            beginResetModel();
            m_steps.clear();
            endResetModel();
        }
        return;
    }
    qint64 span = 1;
    std::vector<Step> steps = buildSteps(*record, &span);
    const bool isPrefix = steps.size() >= m_steps.size() &&
                          std::equal(m_steps.cbegin(), m_steps.cend(), steps.cbegin(),
                                     [](const Step &a, const Step &b) {
                                         return a.kind == b.kind && a.sourceIndex == b.sourceIndex;
                                     });
    if (!isPrefix) {
        beginResetModel();
        m_steps = std::move(steps);
        m_spanMs = span;
        endResetModel();
        return;
    }
    const size_t old = m_steps.size();
    m_spanMs = span;
    if (old > 0) {
        std::copy(steps.cbegin(), steps.cbegin() + qsizetype(old), m_steps.begin());
        emit dataChanged(index(0, 0), index(int(old) - 1, ColumnCount - 1));
    }
    if (steps.size() > old) {
        beginInsertRows({}, int(old), int(steps.size()) - 1);
        m_steps.insert(m_steps.end(), steps.cbegin() + qsizetype(old), steps.cend());
        endInsertRows();
    }
}

int LoopTimelineModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_steps.size());
}

int LoopTimelineModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LoopTimelineModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Step &s = m_steps[size_t(index.row())];
    switch (role) {
    case KindRole:
        return int(s.kind);
    case SourceIndexRole:
        return s.sourceIndex;
    case StartOffsetRole:
        return s.startOffsetMs;
    case DurationRole:
        return s.durationMs;
    case BarStartRole:
        return std::clamp(double(s.startOffsetMs) / double(m_spanMs), 0.0, 1.0);
    case BarEndRole:
        return std::clamp((double(s.startOffsetMs) + s.durationMs) / double(m_spanMs), 0.0, 1.0);
    case FailedRole:
        return s.failed;
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case StepColumn:
        return s.kind == StepKind::UpstreamCall ? tr("Model call %1").arg(s.ordinal)
                                                : tr("Code run %1").arg(s.ordinal);
    case StartColumn:
        return QStringLiteral("+%1 ms").arg(s.startOffsetMs);
    case DurationColumn:
        // Latencies are whole milliseconds: 0 means "under one", not "none".
        if (s.durationMs <= 0)
            return QStringLiteral("<1 ms");
        return QStringLiteral("%1 ms").arg(s.durationMs, 0, 'f', s.durationMs < 10 ? 1 : 0);
    default:
        return {};
    }
}

QVariant LoopTimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case StepColumn:
        return tr("Step");
    case StartColumn:
        return tr("Start");
    case DurationColumn:
        return tr("Duration");
    case TimelineColumn:
        return tr("Timeline");
    default:
        return {};
    }
}

const UpstreamCallRecord *LoopTimelineModel::upstreamCallAt(int row) const {
    const RequestRecord *record = currentRecord();
    if (!record || row < 0 || row >= int(m_steps.size()))
        return nullptr;
    const Step &s = m_steps[size_t(row)];
    if (s.kind != StepKind::UpstreamCall || s.sourceIndex >= record->upstreamCalls.size())
        return nullptr;
    return &record->upstreamCalls.at(s.sourceIndex);
}

const CodeRunRecord *LoopTimelineModel::codeRunAt(int row) const {
    const RequestRecord *record = currentRecord();
    if (!record || row < 0 || row >= int(m_steps.size()))
        return nullptr;
    const Step &s = m_steps[size_t(row)];
    if (s.kind != StepKind::CodeRun || s.sourceIndex >= record->codeRuns.size())
        return nullptr;
    return &record->codeRuns.at(s.sourceIndex);
}

int LoopTimelineModel::lastCodeRunRow() const {
    for (int row = int(m_steps.size()) - 1; row >= 0; --row) {
        if (m_steps[size_t(row)].kind == StepKind::CodeRun)
            return row;
    }
    return -1;
}

} // namespace loopscope
