#include "models/looptimelinemodel.h"

#include "inspect/textformat.h"

#include <QDateTime>
#include <QJsonArray>

#include <algorithm>
#include <cmath>

namespace loopscope {

namespace {

using Kind = InspectorEvent::Kind;

bool responseFailed(const QJsonObject &hop) {
    const int status = hop.value(QStringLiteral("status")).toInt();
    return status == 0 || status >= 400 || hop.contains(QStringLiteral("error"));
}

bool codeFailed(const QJsonObject &hop) {
    const QJsonValue error = hop.value(QStringLiteral("error"));
    return (error.isObject() && !error.toObject().isEmpty()) ||
           hop.value(QStringLiteral("timed_out")).toBool();
}

// A code_run hop is finished once its fed-back output (or an error) is recorded.
bool codeFinished(const QJsonObject &hop) {
    return !hop.value(QStringLiteral("output")).isNull() ||
           !hop.value(QStringLiteral("error")).isNull();
}

} // namespace

LoopTimelineModel::LoopTimelineModel(QObject *parent)
    : QAbstractTableModel(parent) {}

QString LoopTimelineModel::formatDuration(double ms) {
    return textformat::formatDuration(ms);
}

std::vector<LoopTimelineModel::Step> LoopTimelineModel::stepsOf(const QJsonArray &hops) {
    std::vector<Step> steps;
    for (const QJsonValue &v : hops) {
        const QJsonObject hop = v.toObject();
        const QString kind = hop.value(QStringLiteral("kind")).toString();
        const int iteration = hop.value(QStringLiteral("iteration")).toInt();
        const qint64 at = qint64(hop.value(QStringLiteral("at")).toDouble());
        if (kind == QLatin1String("upstream_request")) {
            Step s;
            s.kind = StepKind::UpstreamCall;
            s.iteration = iteration;
            s.startMs = at;
            s.requestHop = hop;
            steps.push_back(s);
        } else if (kind == QLatin1String("upstream_response")) {
            auto it = std::find_if(steps.rbegin(), steps.rend(), [&](const Step &s) {
                return s.kind == StepKind::UpstreamCall && s.iteration == iteration &&
                       s.durationMs < 0;
            });
            if (it == steps.rend())
                continue; // pass-through answers belong to no loop step
            it->resultHop = hop;
            const double latency = hop.value(QStringLiteral("latency_ms")).toDouble();
            it->durationMs = latency > 0 ? latency : double(std::max<qint64>(0, at - it->startMs));
            it->failed = responseFailed(hop);
        } else if (kind == QLatin1String("code_run")) {
            Step s;
            s.kind = StepKind::CodeRun;
            s.iteration = iteration;
            s.callId = hop.value(QStringLiteral("call_id")).toString();
            s.startMs = at;
            s.resultHop = hop;
            if (codeFinished(hop)) {
                s.durationMs = hop.value(QStringLiteral("duration_ms")).toDouble();
                s.failed = codeFailed(hop);
            }
            steps.push_back(s);
        }
    }
    return steps;
}

void LoopTimelineModel::setFlow(const QJsonObject &flow) {
    const QString id = flow.value(QStringLiteral("id")).toString();
    const bool same = !id.isEmpty() && id == m_flowId;
    m_flowStartMs = qint64(flow.value(QStringLiteral("started_at")).toDouble());
    const QString state = flow.value(QStringLiteral("state")).toString();
    m_flowEnded = state == QLatin1String("completed") || state == QLatin1String("failed");
    m_flowEndMs = m_flowEnded
                      ? m_flowStartMs + qint64(flow.value(QStringLiteral("duration_ms")).toDouble())
                      : 0;
    if (m_nowMs == 0)
        m_nowMs = QDateTime::currentMSecsSinceEpoch();
    std::vector<Step> steps = stepsOf(flow.value(QStringLiteral("hops")).toArray());
    if (same) {
        // Live events may be ahead of the snapshot: keep what they told.
        for (const Step &old : m_steps) {
            auto it = std::find_if(steps.begin(), steps.end(),
                                   [&](const Step &s) { return s.sameAs(old); });
            if (it == steps.end())
                steps.push_back(old);
            else if (it->durationMs < 0 && old.durationMs >= 0 && !m_flowEnded)
                *it = old;
        }
    } else {
        m_flowId = id;
        beginResetModel();
        m_steps.clear();
        endResetModel();
    }
    setSteps(std::move(steps));
}

void LoopTimelineModel::setSteps(std::vector<Step> steps) {
    const bool isPrefix = steps.size() >= m_steps.size() &&
                          std::equal(m_steps.cbegin(), m_steps.cend(), steps.cbegin(),
                                     [](const Step &a, const Step &b) { return a.sameAs(b); });
    if (!isPrefix) {
        beginResetModel();
        m_steps = std::move(steps);
        renumber();
        endResetModel();
        return;
    }
    const size_t old = m_steps.size();
    std::copy(steps.cbegin(), steps.cbegin() + qsizetype(old), m_steps.begin());
    renumber();
    if (old > 0)
        emit dataChanged(index(0, 0), index(int(old) - 1, ColumnCount - 1));
    if (steps.size() > old) {
        beginInsertRows({}, int(old), int(steps.size()) - 1);
        m_steps.insert(m_steps.end(), steps.cbegin() + qsizetype(old), steps.cend());
        renumber();
        endInsertRows();
    }
}

void LoopTimelineModel::renumber() {
    int calls = 0;
    int runs = 0;
    for (Step &s : m_steps)
        s.ordinal = s.kind == StepKind::UpstreamCall ? ++calls : ++runs;
}

int LoopTimelineModel::find(StepKind kind, int iteration, const QString &callId) const {
    for (int row = int(m_steps.size()) - 1; row >= 0; --row) {
        const Step &s = m_steps[size_t(row)];
        if (s.kind != kind)
            continue;
        if (kind == StepKind::CodeRun ? s.callId == callId : s.iteration == iteration)
            return row;
    }
    return -1;
}

void LoopTimelineModel::appendStep(Step step) {
    beginInsertRows({}, int(m_steps.size()), int(m_steps.size()));
    m_steps.push_back(std::move(step));
    renumber();
    endInsertRows();
}

void LoopTimelineModel::changedRow(int row) {
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void LoopTimelineModel::applyLiveEvents(const QList<InspectorEvent> &events) {
    if (m_flowId.isEmpty())
        return;
    bool any = false;
    for (const InspectorEvent &e : events) {
        if (e.requestId != m_flowId)
            continue;
        const QJsonObject &d = e.data;
        const int iteration = qMax(0, e.iteration);
        const QString callId = d.value(QStringLiteral("callId")).toString();
        switch (e.kind) {
        case Kind::UpstreamCallStarted: {
            if (find(StepKind::UpstreamCall, iteration, {}) >= 0)
                break;
            Step s;
            s.kind = StepKind::UpstreamCall;
            s.iteration = iteration;
            s.startMs = e.timestampMs;
            s.requestHop = {{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                            {QStringLiteral("at"), e.timestampMs},
                            {QStringLiteral("iteration"), iteration},
                            {QStringLiteral("url"), d.value(QStringLiteral("url"))},
                            {QStringLiteral("body"), d.value(QStringLiteral("request"))}};
            appendStep(std::move(s));
            break;
        }
        case Kind::UpstreamCall: {
            const double latency = d.value(QStringLiteral("latencyMs")).toDouble();
            QJsonObject response{{QStringLiteral("kind"), QStringLiteral("upstream_response")},
                                 {QStringLiteral("at"), e.timestampMs},
                                 {QStringLiteral("iteration"), iteration},
                                 {QStringLiteral("status"), d.value(QStringLiteral("status"))},
                                 {QStringLiteral("body"), d.value(QStringLiteral("response"))},
                                 {QStringLiteral("latency_ms"), latency},
                                 {QStringLiteral("usage"), d.value(QStringLiteral("usage"))}};
            if (d.contains(QStringLiteral("error")))
                response.insert(QStringLiteral("error"), d.value(QStringLiteral("error")));
            int row = find(StepKind::UpstreamCall, iteration, {});
            if (row < 0) {
                Step s;
                s.kind = StepKind::UpstreamCall;
                s.iteration = iteration;
                s.startMs = e.timestampMs - qint64(latency);
                s.requestHop = {{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                                {QStringLiteral("at"), s.startMs},
                                {QStringLiteral("iteration"), iteration},
                                {QStringLiteral("url"), d.value(QStringLiteral("url"))},
                                {QStringLiteral("body"), d.value(QStringLiteral("request"))}};
                appendStep(std::move(s));
                row = int(m_steps.size()) - 1;
            }
            Step &s = m_steps[size_t(row)];
            s.resultHop = response;
            s.durationMs = latency;
            s.failed = responseFailed(response);
            changedRow(row);
            break;
        }
        case Kind::CodeRunStarted: {
            if (find(StepKind::CodeRun, iteration, callId) >= 0)
                break;
            Step s;
            s.kind = StepKind::CodeRun;
            s.iteration = e.iteration;
            s.callId = callId;
            s.startMs = e.timestampMs;
            s.resultHop = {{QStringLiteral("kind"), QStringLiteral("code_run")},
                           {QStringLiteral("at"), e.timestampMs},
                           {QStringLiteral("iteration"), e.iteration},
                           {QStringLiteral("call_id"), callId},
                           {QStringLiteral("code"), d.value(QStringLiteral("code"))},
                           {QStringLiteral("container_id"), d.value(QStringLiteral("containerId"))},
                           {QStringLiteral("output"), QJsonValue::Null},
                           {QStringLiteral("error"), QJsonValue::Null}};
            appendStep(std::move(s));
            break;
        }
        case Kind::CodeExecuted: {
            const double duration = d.value(QStringLiteral("durationMs")).toDouble();
            int row = find(StepKind::CodeRun, iteration, callId);
            if (row < 0) {
                Step s;
                s.kind = StepKind::CodeRun;
                s.iteration = e.iteration;
                s.callId = callId;
                s.startMs = e.timestampMs - qint64(duration);
                appendStep(std::move(s));
                row = int(m_steps.size()) - 1;
            }
            Step &s = m_steps[size_t(row)];
            const QJsonValue error = d.value(QStringLiteral("error"));
            s.resultHop = {{QStringLiteral("kind"), QStringLiteral("code_run")},
                           {QStringLiteral("at"), s.startMs},
                           {QStringLiteral("iteration"), e.iteration},
                           {QStringLiteral("call_id"), callId},
                           {QStringLiteral("code"), d.value(QStringLiteral("code"))},
                           {QStringLiteral("container_id"), d.value(QStringLiteral("containerId"))},
                           {QStringLiteral("output"), d.value(QStringLiteral("output"))},
                           {QStringLiteral("error"),
                            error.isUndefined() ? QJsonValue(QJsonValue::Null) : error},
                           {QStringLiteral("duration_ms"), duration},
                           {QStringLiteral("timed_out"), d.value(QStringLiteral("timedOut"))}};
            s.durationMs = duration;
            s.failed = codeFailed(s.resultHop);
            changedRow(row);
            break;
        }
        case Kind::RequestFinished:
        case Kind::RequestFailed:
        case Kind::ExchangeFinished:
            if (!m_flowEnded && e.kind == Kind::ExchangeFinished) {
                m_flowEnded = true;
                m_flowEndMs = e.timestampMs;
            }
            break;
        default:
            continue;
        }
        m_nowMs = std::max(m_nowMs, e.timestampMs);
        any = true;
    }
    if (any && !m_steps.empty()) // the span moved: every bar is relative to it
        emit dataChanged(index(0, TimelineColumn), index(int(m_steps.size()) - 1, TimelineColumn));
}

void LoopTimelineModel::tick(qint64 nowMs) {
    m_nowMs = nowMs;
    if (m_steps.empty())
        return;
    emit dataChanged(index(0, DurationColumn), index(int(m_steps.size()) - 1, TimelineColumn));
}

bool LoopTimelineModel::hasRunningSteps() const {
    return newestRunningRow() >= 0;
}

int LoopTimelineModel::newestRunningRow() const {
    if (m_flowEnded)
        return -1;
    for (int row = int(m_steps.size()) - 1; row >= 0; --row)
        if (m_steps[size_t(row)].durationMs < 0)
            return row;
    return -1;
}

double LoopTimelineModel::elapsedOf(const Step &s) const {
    if (s.durationMs >= 0)
        return s.durationMs;
    // Unanswered when the flow ended: it lasted until then.
    const qint64 until = m_flowEnded && m_flowEndMs > 0 ? m_flowEndMs : m_nowMs;
    return double(std::max<qint64>(0, until - s.startMs));
}

qint64 LoopTimelineModel::spanMs() const {
    qint64 end = m_flowEnded && m_flowEndMs > 0 ? m_flowEndMs : m_nowMs;
    for (const Step &s : m_steps)
        end = std::max(end, s.startMs + qint64(std::ceil(elapsedOf(s))));
    return std::max<qint64>(1, end - m_flowStartMs);
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
    const bool running = s.durationMs < 0 && !m_flowEnded;
    const qint64 offset = std::max<qint64>(0, s.startMs - m_flowStartMs);
    const double elapsed = elapsedOf(s);
    switch (role) {
    case KindRole:
        return int(s.kind);
    case IterationRole:
        return s.iteration;
    case CallIdRole:
        return s.callId;
    case OrdinalRole:
        return s.ordinal;
    case StartOffsetRole:
        return offset;
    case DurationRole:
        return elapsed;
    case BarStartRole:
        return std::clamp(double(offset) / double(spanMs()), 0.0, 1.0);
    case BarEndRole:
        return std::clamp((double(offset) + elapsed) / double(spanMs()), 0.0, 1.0);
    case FailedRole:
        return s.failed || (s.durationMs < 0 && m_flowEnded);
    case RunningRole:
        return running;
    case Qt::ToolTipRole:
        if (index.column() == DurationColumn && s.durationMs < 0 && m_flowEnded)
            return tr("Never finished: the flow ended first");
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case StepColumn: {
        QString label = s.kind == StepKind::UpstreamCall ? tr("Model call %1").arg(s.ordinal)
                                                         : tr("Code run %1").arg(s.ordinal);
        return running ? QString(label + QChar(0x2026)) : label;
    }
    case StartColumn:
        return QString(QStringLiteral("+") + formatDuration(double(offset)));
    case DurationColumn:
        return running ? tr("%1 running").arg(formatDuration(elapsed)) : formatDuration(elapsed);
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

QJsonObject LoopTimelineModel::requestHopAt(int row) const {
    if (row < 0 || row >= int(m_steps.size()))
        return {};
    return m_steps[size_t(row)].requestHop;
}

QJsonObject LoopTimelineModel::responseHopAt(int row) const {
    if (row < 0 || row >= int(m_steps.size()) ||
        m_steps[size_t(row)].kind != StepKind::UpstreamCall)
        return {};
    return m_steps[size_t(row)].resultHop;
}

QJsonObject LoopTimelineModel::codeRunHopAt(int row) const {
    if (row < 0 || row >= int(m_steps.size()) || m_steps[size_t(row)].kind != StepKind::CodeRun)
        return {};
    return m_steps[size_t(row)].resultHop;
}

int LoopTimelineModel::lastCodeRunRow() const {
    for (int row = int(m_steps.size()) - 1; row >= 0; --row)
        if (m_steps[size_t(row)].kind == StepKind::CodeRun)
            return row;
    return -1;
}

int LoopTimelineModel::rowOfCodeRun(const QString &callId) const {
    return find(StepKind::CodeRun, 0, callId);
}

} // namespace loopscope
