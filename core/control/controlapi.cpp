#include "control/controlapi.h"

#include "common/futurechain.h"
#include "control/breakpointsapi.h"
#include "control/controleventstream.h"
#include "control/controlroute.h"
#include "control/harcodec.h"
#include "control/mcpserver.h"
#include "http/responsesink.h"
#include "inspect/credentialpolicy.h"
#include "inspect/eventbus.h"
#include "loop/pausebroker.h"
#include "record/flowstore.h"
#include "sandbox/sandboxregistry.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <optional>
#include <utility>

namespace loopscope {

namespace {

const QString kPrefix = QStringLiteral("/loopscope/v1");

QString S(const char *text) {
    return QString::fromLatin1(text);
}

QString invalidRequest() {
    return S("invalid_request_error");
}

void badRequest(ResponseSink *sink, const QString &message, const QString &param = {}) {
    sink->sendError(400, message, invalidRequest(), S("invalid_parameter"), param);
}

void notFound(ResponseSink *sink, const QString &what, const QString &id) {
    sink->sendError(404, S("No %1 found with id '%2'.").arg(what, id.left(100)), invalidRequest(),
                    S("not_found"));
}

// Runs `work` on `pool` and hands its result to `done` on `owner`'s thread, if the client is
// still there. The proxy thread never waits for the store.
template<class Work, class Done>
void onWorker(QThreadPool *pool, QObject *owner, ResponseSink *sink, Work work, Done done) {
    using T = std::invoke_result_t<Work>;
    QPointer<ResponseSink> guard(sink);
    whenFinished(QtConcurrent::run(pool, std::move(work)), owner,
                 [guard, done = std::move(done)](const QFuture<T> &future) mutable {
                     if (!guard || guard->isClientGone() || guard->isFinished())
                         return;
                     if (future.resultCount() == 0) {
                         guard->sendError(500, S("The control API could not finish the request."),
                                          S("server_error"));
                         return;
                     }
                     done(guard.data(), future.result());
                 });
}

bool isHopByHop(const QByteArray &name) {
    return name == "host" || name == "content-length" || name == "transfer-encoding" ||
           name == "connection" || name == "keep-alive" || name == "expect" || name == "origin" ||
           name == "referer" || name == "upgrade" || name == "te" || name == "trailer";
}

} // namespace

ControlApi::ControlApi(EventBus *events, QObject *parent)
    : QObject(parent)
    , m_stream(new ControlEventStream(this))
    , m_breakpoints(new BreakpointsApi(this))
    , m_mcp(new McpServer(this, this)) {
    // Two readers at most: store reads are short, and the machine runs the proxy and sandboxes.
    m_pool.setMaxThreadCount(2);
    // Threads stay: FlowQuery keeps one read connection per thread, so reusing them keeps reads
    // from reopening SQLite.
    m_pool.setExpiryTimeout(-1);
    m_pool.setObjectName(S("loopscope-control"));
    if (events)
        for (const char *name : {"window", "otlp", "otlp_flows", "recorder"})
            m_drops.insert(S(name), events->dropCounter(S(name)));
    if (events) {
        m_policy = events->credentials();
        m_events = events;
    }
    connect(m_stream, &ControlEventStream::subscribersChanged, this, &ControlApi::followLiveFlows);
    connect(m_stream, &ControlEventStream::subscribersChanged, this, &ControlApi::followEvents);
}

void ControlApi::followEvents(bool follow) {
    if (!m_events || follow == bool(m_busEvents))
        return;
    if (follow)
        m_busEvents = connect(m_events, &EventBus::eventPublished, m_stream,
                              &ControlEventStream::publishEvent, Qt::QueuedConnection);
    else
        disconnect(std::exchange(m_busEvents, {}));
}

ControlApi::~ControlApi() {
    m_pool.waitForDone();
}

void ControlApi::setFlowStore(FlowStore *store) {
    if (m_store)
        disconnect(m_store, nullptr, m_stream, nullptr);
    m_liveFlows = {};
    m_store = store;
    if (!store)
        return;
    followLiveFlows(m_stream->subscriberCount() > 0);
}

void ControlApi::followLiveFlows(bool follow) {
    // The recorder builds a started/updated summary only while someone listens to those
    // signals (FlowStore's observed check): with nobody on the event stream, that is work on
    // every event of every flow for nothing.
    if (!m_store || follow == bool(m_liveFlows[0]))
        return;
    if (!follow) {
        for (QMetaObject::Connection &c : m_liveFlows)
            disconnect(std::exchange(c, {}));
        return;
    }
    m_liveFlows = {
        connect(m_store, &FlowStore::flowStarted, m_stream,
                [this](const QJsonObject &s) { m_stream->publishFlow("flow.started", s); }),
        connect(m_store, &FlowStore::flowUpdated, m_stream,
                [this](const QJsonObject &s) { m_stream->publishFlow("flow.updated", s); }),
        // Also only while someone reads: every flow's summary posted to the proxy thread for
        // a stream nobody has was a queue of its own.
        connect(m_store, &FlowStore::flowFinished, m_stream,
                [this](const QJsonObject &s) { m_stream->publishFlow("flow.finished", s); }),
    };
}

void ControlApi::setPauseBroker(PauseBroker *broker) {
    m_breakpoints->setBroker(broker);
    // MCP's list_paused / resolve_paused are the same broker calls as GET /paused and
    // POST /paused/{id}, with the route's status codes.
    const QPointer<PauseBroker> pauses = broker;
    McpServer::PauseHooks hooks;
    hooks.pending = [pauses] { return pauses ? pauses->pending() : QJsonArray(); };
    hooks.resolve = [pauses](const QString &id,
                             const QJsonObject &request) -> QPair<int, QJsonObject> {
        if (!pauses)
            return {503, {}};
        const PauseBroker::ResolveResult result = pauses->resolve(id, request);
        switch (result.status) {
        case PauseBroker::ResolveStatus::Resolved:
            return {200, result.pause};
        case PauseBroker::ResolveStatus::NotFound:
            return {404, {}};
        case PauseBroker::ResolveStatus::AlreadyResolved:
            return {409, result.pause};
        case PauseBroker::ResolveStatus::Invalid:
            return {400,
                    {{QStringLiteral("error"),
                      QJsonObject{{QStringLiteral("message"), result.error}}}}};
        }
        return {500, {}};
    };
    m_mcp->setPauseHooks(std::move(hooks));
}

FlowStore *ControlApi::flowStore() const {
    return m_store;
}

SandboxRegistry *ControlApi::registry() const {
    return m_registry;
}

void ControlApi::setRegistry(SandboxRegistry *registry) {
    m_registry = registry;
}

void ControlApi::rememberCredentials(const QString &flowId, const HttpRequest &request) {
    m_credentials.remember(flowId, request);
}

bool ControlApi::matches(const QString &path) {
    return path == kPrefix || path.startsWith(kPrefix + u'/') || McpServer::matches(path);
}

void ControlApi::shutdown() {
    m_stream->shutdown();
}

bool ControlApi::needStore(ResponseSink *sink) const {
    if (m_store && m_store->query())
        return true;
    sink->sendError(503, S("The flow store is not available in this process."), S("server_error"),
                    S("store_unavailable"));
    return false;
}

void ControlApi::handle(const HttpRequest &request, ResponseSink *sink) {
    if (McpServer::matches(request.path)) {
        m_mcp->handle(request, sink);
        return;
    }
    const ControlRoute route = ControlRoute::parse(request.method, request.path, request.query);
    using Kind = ControlRoute::Kind;
    switch (route.kind) {
    case Kind::Error:
        sink->sendError(route.status, route.message, invalidRequest(), route.code, route.param);
        return;
    case Kind::Breakpoints:
        m_breakpoints->handle(request, route.parts, sink);
        return;
    case Kind::ListFlows:
        listFlows(route.filter, sink);
        return;
    case Kind::ClearFlows:
        clearFlows(sink);
        return;
    case Kind::GetFlow:
        getFlow(route.id, sink);
        return;
    case Kind::ReplayFlow:
        replayFlow(route.id, request, sink);
        return;
    case Kind::Events:
        m_stream->subscribe(sink);
        return;
    case Kind::Stats:
        sink->sendJson(200, stats());
        return;
    case Kind::ListRuns:
        listRuns(route.filter.limit, sink);
        return;
    case Kind::GetRun:
        getRun(route.id, sink);
        return;
    case Kind::ListSandboxes:
        listSandboxes(sink);
        return;
    case Kind::DeleteSandbox:
        deleteSandbox(route.id, sink);
        return;
    case Kind::ExportHar:
        exportHar(route.ids, route.run, sink);
        return;
    case Kind::ImportHar:
        importHar(request, sink);
        return;
    }
}

QJsonObject ControlApi::stats() const {
    const FlowStoreCounters c = m_store ? m_store->counters() : FlowStoreCounters{};
    const auto n = [](quint64 v) { return double(v); };
    const auto events = [this, n](const char *name) {
        const auto counter = m_drops.value(S(name));
        return counter ? n(counter->load(std::memory_order_relaxed)) : 0.0;
    };
    const QString problem = m_store ? m_store->writeProblem() : QString();
    return {
        {S("object"), S("loopscope.stats")},
        {S("store"),
         QJsonObject{{S("writing"), problem.isEmpty()},
                     {S("problem"), problem.isEmpty() ? QJsonValue() : QJsonValue(problem)},
                     {S("flows_written"), n(c.flowsWritten)},
                     {S("flows_unwritten"), n(c.flowsUnwritten)},
                     {S("write_failures"), n(c.writeFailures)},
                     {S("events_received"), n(c.eventsReceived)}}},
        // Everything a bounded queue refused, by queue (docs/architecture.md, "Bounded queues").
        {S("dropped"), QJsonObject{{S("window_events"), events("window")},
                                   {S("otlp_events"), events("otlp")},
                                   {S("otlp_flows"), events("otlp_flows")},
                                   {S("recorder_events"), events("recorder")},
                                   {S("sse_events"), n(c.sseEventsDropped)},
                                   {S("flows"), n(c.flowsDropped)}}},
    };
}

void ControlApi::listFlows(const FlowFilter &filter, ResponseSink *sink) {
    if (!needStore(sink))
        return;
    const FlowQuery *flows = m_store->query();
    onWorker(
        &m_pool, this, sink, [flows, filter] { return flows->list(filter); },
        [](ResponseSink *s, const QJsonObject &list) { s->sendJson(200, list); });
}

void ControlApi::getFlow(const QString &id, ResponseSink *sink) {
    if (!needStore(sink))
        return;
    const FlowQuery *flows = m_store->query();
    onWorker(
        &m_pool, this, sink, [flows, id] { return flows->flow(id); },
        [id](ResponseSink *s, const std::optional<QJsonObject> &flow) {
            if (flow)
                s->sendJson(200, *flow);
            else
                notFound(s, S("flow"), id);
        });
}

void ControlApi::clearFlows(ResponseSink *sink) {
    if (!needStore(sink))
        return;
    QPointer<FlowStore> store = m_store;
    onWorker(
        &m_pool, this, sink, [store] { return store ? store->clear() : 0; },
        [](ResponseSink *s, int removed) {
            s->sendJson(200, {{S("object"), S("loopscope.flows.deleted")},
                              {S("deleted"), true},
                              {S("count"), removed}});
        });
}

void ControlApi::replayFlow(const QString &id, const HttpRequest &request, ResponseSink *sink) {
    QJsonValue edited;
    if (!request.body.trimmed().isEmpty()) {
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(request.body, &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) {
            badRequest(sink, S("The replay body must be a JSON object, e.g. {\"body\":{...}}"));
            return;
        }
        edited = doc.object().value(S("body"));
        if (!edited.isUndefined() && !edited.isNull() && !edited.isObject()) {
            badRequest(sink, S("\"body\" must be a JSON object (the edited client request)"),
                       S("body"));
            return;
        }
    }
    if (!m_replayer) {
        sink->sendError(503, S("Replay is not available in this process."), S("server_error"));
        return;
    }
    if (!needStore(sink))
        return;
    const FlowQuery *flows = m_store->query();
    onWorker(
        &m_pool, this, sink, [flows, id] { return flows->flow(id); },
        [this, id, edited](ResponseSink *s, const std::optional<QJsonObject> &flow) {
            if (!flow)
                notFound(s, S("flow"), id);
            else
                startReplay(*flow, edited, s);
        });
}

void ControlApi::startReplay(const QJsonObject &flow, const QJsonValue &editedBody,
                             ResponseSink *sink) {
    const ReplayResult result = replayRecorded(flow, editedBody);
    if (result.status != 200) {
        sink->sendError(result.status, result.message, invalidRequest(), result.code);
        return;
    }
    sink->sendJson(200, {{S("object"), S("loopscope.replay")},
                         {S("flow_id"), result.flowId},
                         {S("replay_of"), flow.value(S("id")).toString()}});
}

ControlApi::ReplayResult ControlApi::replayRecorded(const QJsonObject &flow,
                                                    const QJsonValue &editedBody) {
    if (!m_replayer)
        return {503, S("Replay is not available in this process."), S("server_error"), {}};
    const QString id = flow.value(S("id")).toString();
    if (flow.value(S("imported")).toBool()) {
        return {409,
                S("Flow %1 was imported; imported flows are read-only.").arg(id),
                S("flow_read_only"),
                {}};
    }
    QJsonObject clientRequest;
    for (const QJsonValue &hop : flow.value(S("hops")).toArray()) {
        if (hop.toObject().value(S("kind")).toString() == S("client_request")) {
            clientRequest = hop.toObject();
            break;
        }
    }
    if (clientRequest.isEmpty()) {
        return {409,
                S("Flow %1 has no recorded client request to replay.").arg(id),
                S("not_replayable"),
                {}};
    }
    const QJsonObject recordedHeaders = clientRequest.value(S("headers")).toObject();
    bool hadCredentials = false;
    for (auto it = recordedHeaders.begin(); it != recordedHeaders.end(); ++it)
        hadCredentials |= CredentialVault::isCredentialHeader(it.key().toLower().toUtf8());
    if (hadCredentials && !m_credentials.knows(id)) {
        return {409,
                S("The client credentials of flow %1 are not known to this process (they "
                  "are kept in memory only, for flows of this run of Loopscope).")
                    .arg(id),
                S("credentials_unavailable"),
                {}};
    }
    const bool truncated = clientRequest.value(S("body_truncated")).toBool() ||
                           clientRequest.value(S("bodyTruncated")).toBool();
    if (truncated && !editedBody.isObject()) {
        return {409,
                S("The recorded body of flow %1 was truncated; replay it with an edited "
                  "{\"body\":{...}}.")
                    .arg(id),
                S("not_replayable"),
                {}};
    }

    HttpRequest replay;
    replay.method =
        clientRequest.value(S("method")).toString(flow.value(S("method")).toString()).toLatin1();
    replay.path = clientRequest.value(S("path")).toString(flow.value(S("path")).toString());
    replay.query = clientRequest.value(S("query")).toString().toUtf8();
    replay.target = QUrl::toPercentEncoding(replay.path, "/");
    if (!replay.query.isEmpty())
        replay.target += '?' + replay.query;
    for (auto it = recordedHeaders.begin(); it != recordedHeaders.end(); ++it) {
        const QByteArray name = it.key().toLower().toUtf8();
        if (isHopByHop(name) || CredentialVault::isCredentialHeader(name))
            continue;
        replay.headers.append(qMakePair(name, it.value().toVariant().toString().toUtf8()));
    }
    replay.headers.append(m_credentials.credentials(id));
    replay.headers.append(qMakePair(QByteArray("host"), QByteArray("127.0.0.1")));
    const QJsonValue body = editedBody.isObject() ? editedBody : clientRequest.value(S("body"));
    if (body.isObject() || body.isArray()) {
        replay.body = body.isObject()
                          ? QJsonDocument(body.toObject()).toJson(QJsonDocument::Compact)
                          : QJsonDocument(body.toArray()).toJson(QJsonDocument::Compact);
        if (replay.header("content-type").isEmpty())
            replay.headers.append(
                qMakePair(QByteArray("content-type"), QByteArray("application/json")));
    } else if (body.isString()) {
        replay.body = body.toString().toUtf8();
    }
    if (!replay.body.isEmpty())
        replay.headers.append(
            qMakePair(QByteArray("content-length"), QByteArray::number(replay.body.size())));
    return {200, {}, {}, m_replayer(replay, id)};
}

void ControlApi::listRuns(int limit, ResponseSink *sink) {
    if (!needStore(sink))
        return;
    const FlowQuery *flows = m_store->query();
    const int n = limit;
    onWorker(
        &m_pool, this, sink, [flows, n] { return flows->runs(n); },
        [](ResponseSink *s, const QJsonArray &runs) {
            s->sendJson(200, {{S("object"), S("list")}, {S("data"), runs}});
        });
}

void ControlApi::getRun(const QString &id, ResponseSink *sink) {
    if (!needStore(sink))
        return;
    const FlowQuery *flows = m_store->query();
    onWorker(
        &m_pool, this, sink, [flows, id] { return flows->run(id); },
        [id](ResponseSink *s, const std::optional<QJsonObject> &run) {
            if (run)
                s->sendJson(200, *run);
            else
                notFound(s, S("run"), id);
        });
}

QJsonObject ControlApi::sandboxObject(const SandboxEntry &entry) {
    const bool session = entry.isSessionScoped();
    const QString backend = entry.backend  ? entry.backend->provider()
                            : entry.params ? entry.params->provider
                                           : entry.handle.provider;
    auto nullable = [](const QString &s) { return s.isEmpty() ? QJsonValue() : QJsonValue(s); };
    return {{S("id"), entry.handle.id},
            {S("object"), S("loopscope.sandbox")},
            {S("session_id"), nullable(entry.sessionId)},
            {S("identity"),
             session ? QJsonValue(CredentialPolicy::mask(*entry.identity)) : QJsonValue()},
            {S("backend"), backend},
            {S("ephemeral"), !session},
            {S("created_at"), entry.createdMs},
            {S("last_used_at"), entry.lastAccessedMs},
            {S("expires_at"),
             session ? QJsonValue(entry.lastAccessedMs + SandboxRegistry::idleTtlOf(entry))
                     : QJsonValue()},
            {S("runs"), entry.runs}};
}

void ControlApi::listSandboxes(ResponseSink *sink) {
    if (!m_registry) {
        sink->sendError(503, S("The sandbox registry is not available."), S("server_error"));
        return;
    }
    QList<SandboxEntry> entries = m_registry->entries();
    std::sort(entries.begin(), entries.end(), [](const SandboxEntry &a, const SandboxEntry &b) {
        return a.createdMs > b.createdMs;
    });
    QJsonArray data;
    for (const SandboxEntry &entry : std::as_const(entries))
        data.append(sandboxObject(entry));
    sink->sendJson(200, {{S("object"), S("list")}, {S("data"), data}});
}

void ControlApi::deleteSandbox(const QString &id, ResponseSink *sink) {
    if (!m_registry) {
        sink->sendError(503, S("The sandbox registry is not available."), S("server_error"));
        return;
    }
    const auto entry = m_registry->entryByContainerId(id);
    if (!entry) {
        notFound(sink, S("sandbox"), id);
        return;
    }
    // The same registry call as the window's Delete and DELETE /v1/containers/{id}.
    QPointer<ResponseSink> guard(sink);
    whenFinished(m_registry->remove(entry->key, SandboxRemovalReason::Deleted), this,
                 [guard, id](const QFuture<void> &) {
                     if (guard)
                         guard->sendJson(200, {{S("id"), id},
                                               {S("object"), S("loopscope.sandbox.deleted")},
                                               {S("deleted"), true}});
                 });
}

void ControlApi::exportHar(const QStringList &ids, const QString &run, ResponseSink *sink) {
    if (!needStore(sink))
        return;
    const FlowQuery *flows = m_store->query();
    const QString base = m_baseUrl;
    QString version = QCoreApplication::applicationVersion();
    if (version.isEmpty())
        version = S("dev");
    onWorker(
        &m_pool, this, sink,
        [flows, ids, run, base, version, policy = m_policy] {
            // Stored flows are masked; masking the file again checks them against today's
            // secrets too (a key configured after the flow was recorded).
            const QJsonObject har = HarCodec::exportHar(flows->flows(ids, run), base, version);
            return QJsonDocument(policy ? policy->maskObject(har) : har)
                .toJson(QJsonDocument::Compact);
        },
        [](ResponseSink *s, const QByteArray &har) {
            s->send(200,
                    {{"Content-Type", "application/json"},
                     {"Content-Disposition", "attachment; filename=\"loopscope.har\""}},
                    har);
        });
}

void ControlApi::importHar(const HttpRequest &request, ResponseSink *sink) {
    if (request.body.trimmed().isEmpty()) {
        sink->sendError(400, S("The body must be a HAR file ({\"log\":{\"entries\":[...]}})."),
                        invalidRequest(), S("invalid_har"));
        return;
    }
    if (!needStore(sink))
        return;
    QPointer<FlowStore> store = m_store;
    const QByteArray body = request.body;
    struct Imported {
        QString error;
        QStringList ids;
    };
    onWorker(
        &m_pool, this, sink,
        [store, body] {
            Imported result;
            const auto flows = HarCodec::importHar(body);
            if (!flows.ok()) {
                result.error = flows.error;
                return result;
            }
            if (!store) {
                result.error = S("store closed");
                return result;
            }
            store->importFlows(flows.value);
            for (const QJsonObject &flow : flows.value)
                result.ids << flow.value(S("id")).toString();
            return result;
        },
        [](ResponseSink *s, const Imported &result) {
            if (!result.error.isEmpty()) {
                s->sendError(400, result.error, invalidRequest(), S("invalid_har"));
                return;
            }
            s->sendJson(200, {{S("object"), S("loopscope.import")},
                              {S("imported"), int(result.ids.size())},
                              {S("ids"), QJsonArray::fromStringList(result.ids)}});
        });
}

} // namespace loopscope
