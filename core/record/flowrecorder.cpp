#include "record/flowrecorder.h"

#include "record/modelpricetable.h"

#include "conversation/dialect.h"
#include "conversation/usage.h"
#include "inspect/credentialpolicy.h"
#include "record/coderunhop.h"
#include "record/storewriter.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QSet>
#include <QTimer>
#include <QUrl>

#include <utility>

namespace loopscope {

namespace {

using Kind = InspectorEvent::Kind;

// A loop that has not reported its end this long after the client's answer is written as is.
constexpr int kLoopGraceMs = 3000;
// After a hang-up the loop first stops its code (within a second, SandboxBackend) and reports
// that run: the flow waits longer for it, so the history keeps the run that was hanging.
constexpr int kHangUpGraceMs = 15000;
constexpr qsizetype kMaxTextBody = 1024 * 1024;
// Flows remembered as having lost intake events, until they finish; past it only counted.
constexpr qsizetype kMaxLossyFlows = 10'000;
// How long published events wait to be recorded together; far below what a viewer notices.
constexpr int kDrainDelayMs = 2;

bool isTruthy(const QJsonValue &v) {
    return v.isBool() ? v.toBool() : (v.isString() && v.toString() == QLatin1String("true"));
}

// The dialect an upstream hop travelled in: what its publisher said (a bridged hop), else what
// its URL's endpoint is ("…/v1/chat/completions" → chat_completions).
QString hopDialect(const QJsonObject &d) {
    if (const QString dialect = d.value(QStringLiteral("dialect")).toString(); !dialect.isEmpty())
        return dialect;
    const QString path = QUrl(d.value(QStringLiteral("url")).toString()).path();
    if (path.endsWith(QLatin1String("/chat/completions")))
        return QStringLiteral("chat_completions");
    if (path.endsWith(QLatin1String("/responses")))
        return QStringLiteral("responses");
    if (path.endsWith(QLatin1String("/messages")) ||
        path.endsWith(QLatin1String("/messages/count_tokens")))
        return QStringLiteral("messages");
    return apiOfPath(path);
}

// A flow whose call a bridge translated says so ("bridged": true in its summary) and is no
// longer a plain pass-through: its client answer is not the upstream's body.
void markBridged(RecordedFlow &flow, const QJsonObject &d) {
    if (!d.value(QStringLiteral("bridged")).toBool())
        return;
    flow.extra.insert(QStringLiteral("bridged"), true);
    flow.passThrough = false;
    flow.upstreamResponseHop = -1;
}

QJsonValue nullIfEmpty(const QJsonValue &v) {
    return v.isUndefined() ? QJsonValue(QJsonValue::Null) : v;
}

// The stored row of a finished (or imported) flow; run keys are the caller's.
FlowRow rowOf(const RecordedFlow &flow, const QJsonObject &summary, const QJsonArray &hops) {
    FlowRow row;
    row.id = flow.id;
    row.startedAt = flow.startedAt;
    row.endedAt = flow.startedAt + qint64(flow.durationMs);
    row.runId = flow.runId;
    row.sessionId = flow.sessionId;
    row.state = flow.state;
    row.status = flow.status;
    row.model = flow.model;
    row.path = flow.path;
    // Encoded on the writer thread (FlowRow::encode), so the recorder stays free for events.
    row.summaryJson = summary;
    row.hopsJson = hops;
    row.verbatimBodies = flow.verbatimBodies();
    row.inputTokens = flow.inputTokens;
    row.outputTokens = flow.outputTokens;
    row.totalTokens = flow.totalTokens;
    row.costKnown = flow.costUsd.isDouble();
    row.costUsd = flow.costUsd.toDouble();
    row.codeRuns = flow.codeRuns;
    row.toolCalls = flow.toolCalls;
    return row;
}

} // namespace

FlowRecorder::FlowRecorder(StoreWriter *writer, QHash<QString, ModelPrice> prices, QObject *parent)
    : QObject(parent)
    , m_writer(writer)
    , m_prices(std::move(prices))
    , m_intake(kIntakeLimits, &FlowRecorder::intakeWeightOf)
    // Not owned: the process-wide formats-only policy, until a bus gives its own.
    , m_credentials(std::shared_ptr<void>(), &CredentialPolicy::formatsOnly()) {
    // One wake-up per batch, not per event: the intake posts it when a push finds it empty, and
    // it stays non-empty until the drain, kDrainDelayMs later. Each wake-up was a syscall on the
    // proxy thread and a context switch on two cores (docs/benchmarks.md, issue 34). Barriers
    // (FlowStore) call drainIntake() themselves first.
    m_drainTimer.setSingleShot(true);
    m_drainTimer.setInterval(kDrainDelayMs);
    connect(&m_drainTimer, &QTimer::timeout, this, &FlowRecorder::drainIntake);
    m_intake.setWakeUp([this] {
        QMetaObject::invokeMethod(this, &FlowRecorder::scheduleDrain, Qt::QueuedConnection);
    });
}

void FlowRecorder::scheduleDrain() {
    if (!m_drainTimer.isActive())
        m_drainTimer.start();
}

void FlowRecorder::setCredentials(std::shared_ptr<const CredentialPolicy> credentials) {
    QMutexLocker lock(&m_mutex);
    if (credentials)
        m_credentials = std::move(credentials);
}

// Bodies are masked here, on the store thread, where they are parsed anyway: the proxy thread
// only shares their bytes. Parsed first, so a secret JSON-escaped in the body is found too.
QJsonValue FlowRecorder::parseBody(const QByteArray &raw, bool *verbatim) const {
    if (verbatim)
        *verbatim = false;
    if (raw.isEmpty())
        return QJsonValue::Null;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(raw, &error);
    if (error.error == QJsonParseError::NoError && (doc.isObject() || doc.isArray())) {
        bool masked = true;
        const QJsonValue body = doc.isObject()
                                    ? QJsonValue(m_credentials->maskObject(doc.object(), &masked))
                                    : QJsonValue(m_credentials->maskArray(doc.array(), &masked));
        if (verbatim)
            *verbatim = !masked;
        return body;
    }
    return m_credentials->maskText(QString::fromUtf8(raw.left(kMaxTextBody)));
}

// SSE events decoded from the client's chunks: each is whole here (the decoder joined the
// chunks), so a secret split across two chunks is masked like any other. Kept up to the cap:
// the first ones, then a window of the latest; those between are counted.
void FlowRecorder::keepSseEvents(RecordedFlow &flow, const QJsonArray &events,
                                 const QList<bool> &dataMayNeedMasking) {
    for (qsizetype i = 0; i < events.size(); ++i) {
        const QJsonValue event = events.at(i);
        // An event whose data as it came cannot hold a secret (most of a stream's thousands)
        // is kept as decoded; the rest are masked whole, name and data.
        const bool clean = i < dataMayNeedMasking.size() && !dataMayNeedMasking.at(i) &&
                           !m_credentials->mayNeedMasking(
                               event.toObject().value(QStringLiteral("event")).toString().toUtf8());
        const QJsonValue masked = clean ? event : m_credentials->maskValue(event);
        if (flow.clientEvents.size() < kMaxSseEvents - kSseTail) {
            flow.clientEvents.append(masked);
            continue;
        }
        flow.clientEventsTail.append(masked);
        if (flow.clientEventsTail.size() > kSseTail) {
            flow.clientEventsTail.removeFirst();
            ++flow.clientEventsDropped;
            m_sseDropped.fetch_add(1, std::memory_order_relaxed);
        }
    }
}

SseDecoder::DataSeen FlowRecorder::firstLook(QList<bool> &mayNeedMasking) const {
    return [this, &mayNeedMasking](QByteArrayView data) {
        mayNeedMasking.append(m_credentials->mayNeedMasking(data));
    };
}

FlowRecorder::~FlowRecorder() = default;

RecordedFlow &FlowRecorder::start(const QString &id, qint64 at) {
    RecordedFlow &flow = m_running[id];
    flow.id = id;
    flow.startedAt = at;
    return flow;
}

void FlowRecorder::assignRun(RecordedFlow &flow) {
    const bool modelCall = flow.api == QLatin1String("responses") ||
                           flow.api == QLatin1String("chat_completions") ||
                           flow.api == QLatin1String("messages");
    if (!modelCall || flow.method != QLatin1String("POST"))
        return;
    flow.runId = m_runs.find(RunGrouper::lookupKeys(flow.api, flow.requestBody, flow.sessionId,
                                                    &flow.conversationChain));
    if (flow.runId.isEmpty())
        flow.runId = RunGrouper::newRunId();
    m_runs.remember(RunGrouper::requestKeys(flow.requestBody, flow.sessionId), flow.runId);
}

RecordedFlow *FlowRecorder::flowFor(const InspectorEvent &event) {
    auto it = m_running.find(event.requestId);
    return it == m_running.end() ? nullptr : &it.value();
}

BoundedEventQueue::Weight FlowRecorder::intakeWeightOf(const InspectorEvent &event) {
    using Weight = BoundedEventQueue::Weight;
    if (event.kind == Kind::CodeRunOutput)
        return Weight::Shed; // the run's CodeExecuted carries its whole output
    return BoundedEventQueue::definesFlow(event) ? Weight::Defining : Weight::Content;
}

void FlowRecorder::setDropCounter(std::shared_ptr<std::atomic<quint64>> counter) {
    m_intake.setDropCounter(std::move(counter));
}

void FlowRecorder::take(const InspectorEvent &event) {
    if (m_intake.push(event) || event.requestId.isEmpty())
        return;
    QMutexLocker lock(&m_lossyMutex);
    if (m_lossy.size() < kMaxLossyFlows)
        m_lossy.insert(event.requestId);
}

void FlowRecorder::drainIntake() {
    m_drainTimer.stop();
    const QList<InspectorEvent> batch = m_intake.takeAll();
    for (const InspectorEvent &event : batch) {
        record(event);
        m_yield.afterUnitOfWork(batch.size());
    }
}

void FlowRecorder::record(const InspectorEvent &event) {
    m_eventsReceived.fetch_add(1, std::memory_order_relaxed);
    if (event.requestId.isEmpty())
        return;
    QMutexLocker lock(&m_mutex);
    const QJsonObject &d = event.data;
    RecordedFlow *flow = flowFor(event);
    bool started = false;
    bool updated = false;

    if (event.kind == Kind::ClientRequest && !flow) {
        RecordedFlow &f = start(event.requestId, event.timestampMs);
        f.method = d.value(QStringLiteral("method")).toString();
        f.path = d.value(QStringLiteral("path")).toString();
        f.api = apiOfPath(f.path);
        bool verbatim = false;
        const QJsonValue body = parseBody(event.raw, &verbatim);
        f.requestRaw = event.raw;
        f.requestBodyRecorded = body;
        if (verbatim)
            f.requestBodyText = event.raw;
        f.requestBody = body.toObject();
        f.model = f.requestBody.value(QStringLiteral("model")).toString();
        f.stream = isTruthy(f.requestBody.value(QStringLiteral("stream")));
        f.sessionId = RunGrouper::clientSessionId(f.requestBody,
                                                  d.value(QStringLiteral("headers")).toObject());
        QJsonObject hop{{QStringLiteral("kind"), QStringLiteral("client_request")},
                        {QStringLiteral("at"), event.timestampMs},
                        {QStringLiteral("method"), f.method},
                        {QStringLiteral("path"), f.path},
                        {QStringLiteral("headers"), d.value(QStringLiteral("headers"))},
                        {QStringLiteral("body"), body}};
        const QString query = d.value(QStringLiteral("query")).toString();
        if (!query.isEmpty())
            hop.insert(QStringLiteral("query"), query);
        if (d.value(QStringLiteral("replayOf")).isString()) // a control-API replay
            f.extra.insert(QStringLiteral("replay_of"), d.value(QStringLiteral("replayOf")));
        f.hops.push_back(hop);
        assignRun(f);
        flow = &f;
        started = true;
    } else if (event.kind == Kind::RequestStarted && !flow) {
        // A loop driven without the proxy front (tests, replays): its own start is the flow's.
        RecordedFlow &f = start(event.requestId, event.timestampMs);
        f.method = d.value(QStringLiteral("method")).toString(QStringLiteral("POST"));
        f.path = d.value(QStringLiteral("path")).toString();
        f.api = d.value(QStringLiteral("api")).toString(apiOfPath(f.path));
        f.requestBody = d.value(QStringLiteral("request")).toObject();
        f.hops.push_back({{QStringLiteral("kind"), QStringLiteral("client_request")},
                          {QStringLiteral("at"), event.timestampMs},
                          {QStringLiteral("method"), f.method},
                          {QStringLiteral("path"), f.path},
                          {QStringLiteral("headers"), QJsonObject()},
                          {QStringLiteral("body"), f.requestBody}});
        assignRun(f);
        flow = &f;
        started = true;
    }
    if (!flow) {
        m_eventsUnmatched.fetch_add(1, std::memory_order_relaxed);
        return; // a finished flow's late event, or not a flow's
    }

    switch (event.kind) {
    case Kind::RequestStarted:
        flow->intercepted = d.value(QStringLiteral("intercepted")).toBool(true);
        if (const QString model = d.value(QStringLiteral("model")).toString(); !model.isEmpty())
            flow->model = model;
        flow->stream = d.value(QStringLiteral("stream")).toBool(flow->stream);
        if (const QString s = d.value(QStringLiteral("sessionId")).toString(); !s.isEmpty())
            flow->sessionId = s;
        updated = true;
        break;
    case Kind::UpstreamCallStarted: {
        const int iteration = qMax(0, event.iteration);
        flow->upstreamRequestHops.insert(iteration, int(flow->hops.size()));
        flow->hops.push_back(
            {{QStringLiteral("kind"), QStringLiteral("upstream_request")},
             {QStringLiteral("at"), event.timestampMs},
             {QStringLiteral("iteration"), iteration},
             {QStringLiteral("url"), d.value(QStringLiteral("url")).toString()},
             {QStringLiteral("dialect"), hopDialect(d)},
             {QStringLiteral("headers"), QJsonObject()},
             {QStringLiteral("body"), d.value(QStringLiteral("request")).toObject()}});
        markBridged(*flow, d);
        updated = true;
        break;
    }
    case Kind::UpstreamCall: {
        const int iteration = qMax(0, event.iteration);
        const double latency = d.value(QStringLiteral("latencyMs")).toDouble();
        const QJsonObject usage = d.value(QStringLiteral("usage")).toObject();
        // A call announced by UpstreamCallStarted already has its request hop; a publisher that
        // only reports the answer gets one made here.
        int requestHop = flow->upstreamRequestHops.value(iteration, -1);
        if (requestHop >= 0) {
            flow->upstreamRequestHops.remove(iteration);
        } else {
            requestHop = int(flow->hops.size());
            flow->hops.push_back(
                {{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                 {QStringLiteral("at"), event.timestampMs - qint64(latency)},
                 {QStringLiteral("iteration"), iteration},
                 {QStringLiteral("url"), d.value(QStringLiteral("url")).toString()},
                 {QStringLiteral("dialect"), hopDialect(d)},
                 {QStringLiteral("headers"), QJsonObject()},
                 {QStringLiteral("body"), d.value(QStringLiteral("request")).toObject()}});
        }
        // A call a bridge translated (the loop's Responses call sent as Chat Completions): the
        // hop shows what really travelled, in the dialect it travelled in.
        const bool wire = d.value(QStringLiteral("wireRequest")).isObject();
        if (wire || d.contains(QStringLiteral("dialect"))) {
            QJsonObject &hop = flow->hops[size_t(requestHop)];
            hop.insert(QStringLiteral("dialect"), hopDialect(d));
            if (wire) {
                hop.insert(QStringLiteral("url"), d.value(QStringLiteral("wireUrl")));
                hop.insert(QStringLiteral("body"), d.value(QStringLiteral("wireRequest")));
            }
            if (d.value(QStringLiteral("bridgeNote")).isString())
                hop.insert(QStringLiteral("bridge_note"), d.value(QStringLiteral("bridgeNote")));
        }
        markBridged(*flow, d);
        QJsonObject response{{QStringLiteral("kind"), QStringLiteral("upstream_response")},
                             {QStringLiteral("at"), event.timestampMs},
                             {QStringLiteral("iteration"), iteration},
                             {QStringLiteral("status"), d.value(QStringLiteral("status"))},
                             {QStringLiteral("headers"), QJsonObject()},
                             {QStringLiteral("dialect"), hopDialect(d)},
                             {QStringLiteral("body"),
                              wire && d.value(QStringLiteral("wireResponse")).isObject() &&
                                      !d.value(QStringLiteral("wireResponse")).toObject().isEmpty()
                                  ? d.value(QStringLiteral("wireResponse"))
                              : d.contains(QStringLiteral("response"))
                                  ? d.value(QStringLiteral("response"))
                                  : nullIfEmpty(d.value(QStringLiteral("error")))},
                             {QStringLiteral("events"), QJsonArray()},
                             {QStringLiteral("latency_ms"), latency},
                             {QStringLiteral("usage"),
                              usage.isEmpty() ? QJsonObject() : Usage::fromWire(usage).toJson()}};
        flow->hops.push_back(response);
        flow->addUsage(usage);
        flow->iterations = qMax(flow->iterations, iteration + 1);
        updated = true;
        break;
    }
    case Kind::UpstreamRequest: {
        // Pass-through forwards the client's bytes as they came (shared, not copied): the body
        // was parsed and masked for the client hop already, and that took milliseconds at 1 MB.
        const bool sameBody = event.raw.constData() == flow->requestRaw.constData() &&
                              event.raw.size() == flow->requestRaw.size();
        const QJsonValue body = sameBody ? flow->requestBodyRecorded : parseBody(event.raw);
        flow->requestRaw.clear();
        flow->requestBodyRecorded = QJsonValue();
        flow->passThrough = true;
        flow->hops.push_back({{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                              {QStringLiteral("at"), event.timestampMs},
                              {QStringLiteral("iteration"), 0},
                              {QStringLiteral("method"), d.value(QStringLiteral("method"))},
                              {QStringLiteral("url"), d.value(QStringLiteral("url"))},
                              {QStringLiteral("dialect"), hopDialect(d)},
                              {QStringLiteral("headers"), d.value(QStringLiteral("headers"))},
                              {QStringLiteral("body"), body}});
        flow->iterations = qMax(flow->iterations, 1);
        updated = true;
        break;
    }
    case Kind::UpstreamResponse: {
        QJsonObject hop{{QStringLiteral("kind"), QStringLiteral("upstream_response")},
                        {QStringLiteral("at"), event.timestampMs},
                        {QStringLiteral("iteration"), 0},
                        {QStringLiteral("status"), d.value(QStringLiteral("status"))},
                        {QStringLiteral("headers"), d.value(QStringLiteral("headers")).isObject()
                                                        ? d.value(QStringLiteral("headers"))
                                                        : QJsonValue(QJsonObject())},
                        {QStringLiteral("body"), QJsonValue::Null},
                        {QStringLiteral("events"), QJsonArray()},
                        {QStringLiteral("latency_ms"), d.value(QStringLiteral("latencyMs"))},
                        {QStringLiteral("usage"), QJsonObject()}};
        const QString error = d.value(QStringLiteral("error")).toString();
        if (!error.isEmpty())
            hop.insert(QStringLiteral("error"), error);
        if (d.value(QStringLiteral("timedOut")).toBool())
            hop.insert(QStringLiteral("timed_out"), true);
        if (d.value(QStringLiteral("status")).toInt() > 0)
            flow->upstreamResponseHop = int(flow->hops.size());
        flow->hops.push_back(hop);
        updated = true;
        break;
    }
    case Kind::ClientResponse: {
        const bool streamed = d.value(QStringLiteral("stream")).toBool();
        const QJsonObject headers = d.value(QStringLiteral("headers")).toObject();
        flow->status = d.value(QStringLiteral("status")).toInt();
        QJsonObject hop{{QStringLiteral("kind"), QStringLiteral("client_response")},
                        {QStringLiteral("at"), event.timestampMs},
                        {QStringLiteral("status"), flow->status},
                        {QStringLiteral("headers"), headers},
                        {QStringLiteral("body"), QJsonValue::Null},
                        {QStringLiteral("events"), QJsonArray()}};
        flow->responseBodyText.clear(); // (this answer's, if any, from here)
        if (streamed) {
            flow->stream = true;
            for (auto it = headers.constBegin(); it != headers.constEnd(); ++it)
                if (it.key() == QLatin1String("content-type") &&
                    it.value().toString().contains(QLatin1String("text/event-stream")))
                    flow->clientSseStream = true;
        } else {
            bool verbatim = false;
            const QJsonValue body = parseBody(event.raw, &verbatim);
            hop.insert(QStringLiteral("body"), body);
            if (verbatim)
                flow->responseBodyText = event.raw;
            if (body.isObject())
                flow->finalResponse = body.toObject();
            if (flow->passThrough && flow->upstreamResponseHop >= 0) {
                QJsonObject &upstream = flow->hops[size_t(flow->upstreamResponseHop)];
                upstream.insert(QStringLiteral("body"), body);
            }
        }
        flow->clientResponseHop = int(flow->hops.size());
        flow->hops.push_back(hop);
        updated = true;
        break;
    }
    case Kind::ClientResponseChunk:
        onClientChunk(*flow, event.raw);
        break;
    case Kind::CodeRunStarted:
    case Kind::CodeRunOutput:
    case Kind::CodeExecuted: {
        const QString callId = d.value(QStringLiteral("callId")).toString();
        auto it = flow->codeRunHops.constFind(callId);
        int index = it == flow->codeRunHops.constEnd() ? -1 : it.value();
        if (index < 0) {
            index = int(flow->hops.size());
            flow->codeRunHops.insert(callId, index);
            flow->hops.push_back(CodeRunHop::started(event));
        }
        QJsonObject &hop = flow->hops[size_t(index)];
        if (event.kind == Kind::CodeRunOutput) {
            CodeRunHop::appendOutput(hop, event);
            break;
        }
        if (event.kind == Kind::CodeExecuted) {
            const QJsonValue error = d.value(QStringLiteral("error"));
            const bool timedOut = d.value(QStringLiteral("timedOut")).toBool();
            CodeRunHop::applyExecuted(hop, d);
            if (const QString s = d.value(QStringLiteral("sessionId")).toString();
                !s.isEmpty() && flow->sessionId.isEmpty())
                flow->sessionId = s;
            ++flow->codeRuns;
            if ((!error.isUndefined() && !error.isNull()) || timedOut)
                ++flow->codeErrors;
        }
        if (const QString c = d.value(QStringLiteral("containerId")).toString(); !c.isEmpty())
            flow->containerId = c;
        updated = true;
        break;
    }
    case Kind::RequestFinished:
        flow->loopDone = true;
        if (d.value(QStringLiteral("response")).isObject())
            flow->finalResponse = d.value(QStringLiteral("response")).toObject();
        if (const QString r = d.value(QStringLiteral("incompleteReason")).toString(); !r.isEmpty())
            flow->incompleteReason = r;
        if (d.contains(QStringLiteral("iterations")))
            flow->iterations =
                qMax(flow->iterations, d.value(QStringLiteral("iterations")).toInt());
        break;
    case Kind::Paused: // the summary shows "paused" while any pause of the flow is open
        ++flow->openPauses;
        flow->state = QStringLiteral("paused");
        updated = true;
        break;
    case Kind::Resumed:
        flow->openPauses = qMax(0, flow->openPauses - 1);
        if (flow->openPauses == 0 && flow->state == QLatin1String("paused"))
            flow->state = QStringLiteral("running");
        updated = true;
        break;
    case Kind::SandboxWaiting: // queued for a live sandbox slot (sandbox.max_live)
    case Kind::SandboxWaitEnded:
        flow->waitingForSandbox = event.kind == Kind::SandboxWaiting;
        updated = true;
        break;
    case Kind::RequestFailed:
        flow->loopDone = true;
        if (const int s = d.value(QStringLiteral("flowStatus")).toInt(); s > 0)
            flow->status = flow->flowStatus = s;
        if (const QString r = d.value(QStringLiteral("incompleteReason")).toString(); !r.isEmpty())
            flow->incompleteReason = r;
        if (const QString m = d.value(QStringLiteral("message")).toString();
            !m.isEmpty() && flow->incompleteReason.isNull())
            flow->incompleteReason = m;
        break;
    case Kind::ExchangeFinished:
        flow->exchangeDone = true;
        flow->status = flow->flowStatus > 0 ? flow->flowStatus
                                            : d.value(QStringLiteral("status")).toInt(flow->status);
        flow->durationMs = d.value(QStringLiteral("durationMs")).toDouble();
        flow->ttfbMs = d.value(QStringLiteral("ttfbMs")).toDouble();
        flow->overheadMs = d.value(QStringLiteral("overheadMs")).toDouble();
        if (d.value(QStringLiteral("aborted")).toBool() && flow->incompleteReason.isNull())
            flow->incompleteReason = QStringLiteral("upstream stream cut");
        if (d.value(QStringLiteral("clientGone")).toBool() && flow->incompleteReason.isNull())
            flow->incompleteReason = QStringLiteral("client_closed"); // control-api.md
        break;
    default:
        break;
    }

    const bool notify = (started || updated) && m_observed();
    const QJsonObject summary = notify ? flow->summary() : QJsonObject();
    const bool done = flow->exchangeDone && (flow->loopDone || !flow->intercepted);
    const bool waitForLoop = event.kind == Kind::ExchangeFinished && !done;
    const int graceMs =
        d.value(QStringLiteral("clientGone")).toBool() ? kHangUpGraceMs : kLoopGraceMs;
    const QString id = flow->id;
    lock.unlock();
    if (notify && started)
        emit flowStarted(summary);
    else if (notify && updated)
        emit flowUpdated(summary);
    if (done)
        finalize(id);
    else if (waitForLoop)
        QTimer::singleShot(graceMs, this, [this, id] { finalize(id); });
}

void FlowRecorder::onClientChunk(RecordedFlow &flow, const QByteArray &bytes) {
    if (flow.clientSseStream) {
        QJsonArray events;
        QList<bool> mayNeedMasking;
        flow.clientSse.feed(bytes, events, firstLook(mayNeedMasking));
        keepSseEvents(flow, events, mayNeedMasking);
    } else if (flow.clientStreamText.size() < kMaxTextBody) {
        flow.clientStreamText += bytes;
    }
}

void FlowRecorder::resolveFinalResponse(RecordedFlow &flow) {
    if (!flow.finalResponse.isEmpty())
        return;
    flow.finalResponse = responseFromEvents(dialectOfApi(flow.api), flow.clientEventsJson());
}

void FlowRecorder::finalize(const QString &id) {
    QMutexLocker lock(&m_mutex);
    auto it = m_running.find(id);
    if (it == m_running.end())
        return;
    RecordedFlow flow = std::move(it.value());
    m_running.erase(it);
    flow.waitingForSandbox = false; // over, whatever it waited for
    if (flow.clientSseStream) {
        QJsonArray events;
        QList<bool> mayNeedMasking;
        flow.clientSse.finish(events, firstLook(mayNeedMasking));
        keepSseEvents(flow, events, mayNeedMasking);
    }
    {
        QMutexLocker lossy(&m_lossyMutex);
        if (m_lossy.remove(flow.id))
            flow.extra.insert(QStringLiteral("events_dropped"), true);
    }
    // A streamed text body is masked once whole, so a secret split across chunks is found.
    flow.clientStreamText = m_credentials->maskText(flow.clientStreamText);
    resolveFinalResponse(flow);
    if (flow.passThrough) {
        const QJsonObject usage = flow.finalResponse.value(QStringLiteral("usage")).toObject();
        flow.addUsage(usage);
        if (flow.upstreamResponseHop >= 0 && !usage.isEmpty())
            flow.hops[size_t(flow.upstreamResponseHop)].insert(QStringLiteral("usage"),
                                                               Usage::fromWire(usage).toJson());
    }
    if (flow.status == 0 && !flow.exchangeDone)
        flow.status = 499;
    flow.state = (flow.status >= 200 && flow.status < 400) ? QStringLiteral("completed")
                                                           : QStringLiteral("failed");
    if (flow.usageSeen) {
        // model_info of the configured model wins; else the built-in table, by the name the
        // client asked for or the snapshot the upstream answered with.
        std::optional<ModelPrice> price;
        if (const auto configured = m_prices.constFind(flow.model);
            configured != m_prices.constEnd())
            price = *configured;
        if (!price)
            price = ModelPriceTable::builtIn().find(flow.model);
        if (!price)
            price = ModelPriceTable::builtIn().find(
                flow.finalResponse.value(QStringLiteral("model")).toString());
        if (price)
            flow.costUsd = price->cost(
                flow.inputTokens, flow.outputTokens, flow.cacheReadTokens, flow.cacheWriteTokens,
                flow.api == QLatin1String("messages") ? ModelPrice::CacheCounting::BesideInput
                                                      : ModelPrice::CacheCounting::InsideInput);
    }
    flow.toolCalls = RunGrouper::toolCallCount(flow.api, flow.finalResponse);

    const QJsonObject summary = flow.summary();
    const QJsonArray hops = flow.hopsJson();
    FlowRow row = rowOf(flow, summary, hops);
    if (!flow.runId.isEmpty()) {
        row.runKeys = RunGrouper::requestKeys(flow.requestBody, flow.sessionId) +
                      RunGrouper::responseKeys(flow.api, flow.requestBody, flow.finalResponse,
                                               flow.conversationChain);
        m_runs.remember(row.runKeys, flow.runId);
    }
    m_pending.insert(flow.id, {summary, hops});
    lock.unlock();
    m_writer->enqueue(std::move(row));
    emit flowFinished(summary);
}

void FlowRecorder::onCommitted(const QStringList &ids) {
    QMutexLocker lock(&m_mutex);
    for (const QString &id : ids)
        m_pending.remove(id);
}

void FlowRecorder::seedRunKeys(const QList<QPair<QString, QString>> &keys) {
    // Newest last so the most recent run wins a shared key.
    for (auto it = keys.crbegin(); it != keys.crend(); ++it)
        m_runs.remember({it->first}, it->second);
}

int FlowRecorder::importFlows(const QList<QJsonObject> &flows,
                              const std::function<bool(const QString &)> &stored) {
    int count = 0;
    QSet<QString> ids;
    const std::shared_ptr<const CredentialPolicy> credentials = [this] {
        QMutexLocker lock(&m_mutex);
        return m_credentials;
    }();
    for (const QJsonObject &json : flows) {
        // A HAR file may hold anything: masked with the live policy like a recorded flow.
        RecordedFlow flow = RecordedFlow::fromJson(credentials->maskObject(json));
        flow.imported = true;
        {
            QMutexLocker lock(&m_mutex);
            if (flow.id.isEmpty() || ids.contains(flow.id) || m_running.contains(flow.id) ||
                m_pending.contains(flow.id) || stored(flow.id))
                flow.id = QStringLiteral("req_imp") +
                          RunGrouper::newRunId().mid(4); // fresh, still "req_…"
        }
        if (flow.startedAt <= 0)
            flow.startedAt = QDateTime::currentMSecsSinceEpoch();
        FlowRow row = rowOf(flow, flow.summary(), flow.hopsJson());
        ids.insert(flow.id);
        m_writer->enqueue(std::move(row));
        ++count;
    }
    return count;
}

void FlowRecorder::clearFinished() {
    QMutexLocker lock(&m_mutex);
    m_pending.clear();
    m_runs.clear();
}

void FlowRecorder::finishAll(const QString &reason) {
    QStringList ids;
    {
        QMutexLocker lock(&m_mutex);
        for (auto it = m_running.begin(); it != m_running.end(); ++it) {
            // An answer still in flight never reached the client whole.
            if (!it->exchangeDone)
                it->status = 499;
            it->exchangeDone = true;
            if (it->incompleteReason.isNull())
                it->incompleteReason = reason;
            ids << it.key();
        }
    }
    for (const QString &id : std::as_const(ids))
        finalize(id);
}

QJsonObject FlowRecorder::PendingFlow::toJson() const {
    QJsonObject full = summary;
    full.insert(QStringLiteral("hops"), hops);
    return full;
}

QList<QJsonObject> FlowRecorder::liveSummaries() const {
    QMutexLocker lock(&m_mutex);
    QList<QJsonObject> out;
    out.reserve(m_running.size() + m_pending.size());
    for (const RecordedFlow &f : m_running)
        out.append(f.summary());
    for (const PendingFlow &f : m_pending)
        out.append(f.summary);
    return out;
}

QStringList FlowRecorder::liveIds() const {
    QMutexLocker lock(&m_mutex);
    QStringList out = m_running.keys();
    out += m_pending.keys();
    return out;
}

QList<QJsonObject> FlowRecorder::liveFlows() const {
    QMutexLocker lock(&m_mutex);
    QList<QJsonObject> out;
    for (const RecordedFlow &f : m_running)
        out.append(runningJson(f));
    for (const PendingFlow &f : m_pending)
        out.append(f.toJson());
    return out;
}

// A streamed text body is masked whole when its flow ends (a secret may span its chunks); until
// then a reader gets the text so far masked on the way out.
QJsonObject FlowRecorder::runningJson(const RecordedFlow &flow) const {
    const QJsonObject json = flow.toJson();
    return flow.clientStreamText.isEmpty() ? json : m_credentials->maskObject(json);
}

std::optional<QJsonObject> FlowRecorder::liveFlow(const QString &id) const {
    QMutexLocker lock(&m_mutex);
    if (const auto it = m_running.constFind(id); it != m_running.constEnd())
        return runningJson(*it);
    if (const auto it = m_pending.constFind(id); it != m_pending.constEnd())
        return it->toJson();
    return std::nullopt;
}

} // namespace loopscope
