#include "proxy/proxyserver.h"

#include "common/futurechain.h"
#include "control/controlapi.h"
#include "http/httpserver.h"
#include "http/requesttarget.h"
#include "http/responsesink.h"
#include "inspect/credentialpolicy.h"
#include "inspect/eventbus.h"
#include "interception/interceptionkeys.h"
#include "loop/requestinterceptor.h"
#include "proxy/containersapi.h"
#include "proxy/requestbodyscan.h"
#include "upstream/anthropicbridge.h"
#include "upstream/responsesbridge.h"
#include "upstream/upstreamclient.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkReply>
#include <QPointer>
#include <QRandomGenerator>
#include <QTimer>

#include <memory>

namespace loopscope {

namespace {

// In-flight responses get this long to finish on shutdown before their connections are cut.
constexpr int kShutdownGraceMs = 5000;
// A pass-through stream stops reading its upstream while this much waits for a slow client.
constexpr qint64 kRelayHighWaterBytes = 1024 * 1024;
// Log entries wait this long for others to go out with them (ProxyServer::requestLogged).
constexpr int kLogBatchMs = 10;

QString invalidRequest() {
    return QStringLiteral("invalid_request_error");
}

// Compares SHA-256 digests (always 32 bytes) byte by byte without an early exit, so neither
// the key's length nor the position of the first wrong byte shows in the answer time.
bool constantTimeEquals(const QByteArray &a, const QByteArray &b) {
    const QByteArray da = QCryptographicHash::hash(a, QCryptographicHash::Sha256);
    const QByteArray db = QCryptographicHash::hash(b, QCryptographicHash::Sha256);
    unsigned char diff = 0;
    for (qsizetype i = 0; i < da.size(); ++i)
        diff |= static_cast<unsigned char>(da[i] ^ db[i]);
    return diff == 0;
}

QString newRequestId() {
    return QStringLiteral("req_") +
           QString::number(QRandomGenerator::global()->generate64(), 16).rightJustified(16, u'0');
}

} // namespace

ProxyServer::ProxyServer(ProxyConfig config, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_http(new HttpServer(this))
    , m_upstream(new UpstreamClient(this)) {
    qRegisterMetaType<loopscope::RequestLogEntry>();
    m_upstream->setMaxBodyBytes(m_config.maxUpstreamBodyBytes);
    m_http->setMaxBodyBytes(m_config.maxBodyBytes);
    HttpLimits limits = m_http->limits();
    limits.maxPendingBytes = m_config.maxPendingBytes;
    limits.headerTimeoutMs = m_config.headerTimeoutMs;
    limits.idleTimeoutMs = m_config.idleTimeoutMs;
    limits.firstByteTimeoutMs = m_config.firstByteTimeoutMs;
    m_http->setLimits(limits);
    m_http->setMaxConnections(m_config.maxConnections);
    m_access.setAllowedOrigins(m_config.allowOrigins);
    m_access.setControlToken(m_config.controlToken.toUtf8());
    m_secrets = m_config.secretValues();
    // Early rejections (bad Host, oversized body, malformed HTTP) are flows too.
    m_http->setRejectionObserver([this](const HttpRequest &request, ResponseSink *sink) {
        if (!AccessPolicy::isControlPath(request.path)) // control traffic is not a flow
            beginFlow(request, sink);
    });
    m_http->setHandler(
        [this](const HttpRequest &request, ResponseSink *sink) { handle(request, sink); });
    m_logTimer = new QTimer(this);
    m_logTimer->setSingleShot(true);
    m_logTimer->setInterval(kLogBatchMs);
    connect(m_logTimer, &QTimer::timeout, this, &ProxyServer::emitLogged);
}

ProxyServer::~ProxyServer() {
    emitLogged();
}

void ProxyServer::emitLogged() {
    // Emitted together, the queued calls wake a receiver on another thread once (its event
    // dispatcher is woken by the first post only).
    const QList<RequestLogEntry> batch = std::exchange(m_logged, {});
    for (const RequestLogEntry &entry : batch)
        emit requestLogged(entry);
}

void ProxyServer::setEventBus(EventBus *bus) {
    m_events = bus;
    // Registered once per start: a restart builds a new server from the new config.
    if (bus)
        bus->credentials()->setConfiguredSecrets(m_secrets);
}

bool ProxyServer::listen() {
    QHostAddress address;
    if (m_config.host == QLatin1String("localhost"))
        address = QHostAddress(QHostAddress::LocalHost);
    else if (!address.setAddress(m_config.host)) {
        m_error = QStringLiteral("--host: '%1' is not an IP address").arg(m_config.host);
        return false;
    }
    if (!m_http->listen(address, m_config.port)) {
        m_error = QStringLiteral("cannot listen on %1:%2: %3")
                      .arg(m_config.host)
                      .arg(m_config.port)
                      .arg(m_http->errorString());
        return false;
    }
    return true;
}

quint16 ProxyServer::port() const {
    return m_http->serverPort();
}

QString ProxyServer::listenUrl() const {
    const QHostAddress address = m_http->serverAddress();
    const QString host = address.protocol() == QAbstractSocket::IPv6Protocol
                             ? QStringLiteral("[%1]").arg(address.toString())
                             : address.toString();
    return QStringLiteral("http://%1:%2").arg(host).arg(port());
}

void ProxyServer::setContainersApi(ContainersApi *api) {
    m_containers = api;
}

void ProxyServer::setControlApi(ControlApi *api) {
    m_control = api;
    if (!api)
        return;
    api->setBaseUrl(listenUrl());
    api->setReplayer([this](HttpRequest request, const QString &replayOf) {
        return replay(std::move(request), replayOf);
    });
}

void ProxyServer::addInterceptor(RequestInterceptor *interceptor) {
    if (interceptor && !m_interceptors.contains(interceptor))
        m_interceptors.append(interceptor);
}

void ProxyServer::shutdown() {
    auto done = std::make_shared<bool>(false);
    auto finish = [this, done] {
        if (*done)
            return;
        *done = true;
        emitLogged(); // the last requests' lines before the stop
        emit stopped();
    };
    connect(m_http, &HttpServer::allConnectionsClosed, this, finish, Qt::SingleShotConnection);
    QTimer::singleShot(kShutdownGraceMs, this, [this, finish] {
        m_http->abortAll();
        finish();
    });
    if (m_control)
        m_control->shutdown(); // event streams never end by themselves
    m_http->shutdown();
}

QStringList ProxyServer::stripControlKeys(QJsonObject &body) {
    QStringList removed;
    for (auto it = body.begin(); it != body.end();) {
        if (keys::isInterceptionInternalKey(it.key()) || keys::isAgenticLoopControlKey(it.key())) {
            removed << it.key();
            it = body.erase(it);
        } else {
            ++it;
        }
    }
    return removed;
}

QString ProxyServer::callerIdentity(const QByteArray &bearerToken) {
    if (bearerToken.isEmpty())
        return QStringLiteral("anonymous");
    return QString::fromLatin1(
        QCryptographicHash::hash(bearerToken, QCryptographicHash::Sha256).toHex());
}

QByteArray ProxyServer::bearerToken(const HttpRequest &request) {
    const QByteArray auth = request.header("authorization").trimmed();
    if (auth.size() > 7 && auth.left(7).toLower() == "bearer ")
        return auth.mid(7).trimmed();
    if (!auth.isEmpty())
        return auth;
    const QByteArray apiKey = request.header("x-api-key").trimmed();
    return apiKey.isEmpty() ? request.header("api-key").trimmed() : apiKey;
}

bool ProxyServer::authorized(const HttpRequest &request) const {
    if (m_config.masterKey.isEmpty())
        return true;
    return constantTimeEquals(bearerToken(request), m_config.masterKey.toUtf8());
}

void ProxyServer::sendUnavailable(const UpstreamRoute &route, ResponseSink *sink) {
    QString where;
    if (route.configLine > 0)
        where = QStringLiteral(" (config line %1)").arg(route.configLine);
    sink->sendError(400,
                    QStringLiteral("The model `%1` is not available in Loopscope%2: %3")
                        .arg(route.modelName, where, route.unavailableReason),
                    invalidRequest(), QStringLiteral("model_not_available"),
                    QStringLiteral("model"));
}

UpstreamRoute ProxyServer::withClientAuth(UpstreamRoute route, const HttpRequest &request) const {
    route.forwardHeaders = UpstreamClient::forwardableRequestHeaders(request.headers);
    // With a master key the client's credential is Loopscope's own, never the provider's.
    if (m_config.masterKey.isEmpty())
        route.clientCredentials = UpstreamClient::clientCredentialHeaders(request.headers);
    return route;
}

std::optional<UpstreamRoute> ProxyServer::filesRoute(const HttpRequest &request) const {
    std::optional<UpstreamRoute> route = m_config.defaultRoute;
    if (!route && !m_config.modelRoutes.isEmpty())
        route = m_config.modelRoutes.first();
    if (!route || route->isDemo())
        return std::nullopt;
    return withClientAuth(*route, request);
}

QString ProxyServer::beginFlow(const HttpRequest &request, ResponseSink *sink) {
    const QString requestId = newRequestId();
    sink->setRequestId(requestId);
    if (m_events) {
        const QByteArray token = bearerToken(request);
        // The client's own key is a secret too: masked wherever it turns up from now on.
        m_events->credentials()->addClientKey(QString::fromUtf8(token));
        sink->setEventBus(m_events);
        // Built (headers masked, identity hashed) and published once the request has gone
        // upstream on the plain pass-through path, before anything else on every other path
        // (handle): it is still the flow's first event.
        sink->holdEvent([request, requestId, token, credentials = m_events->credentials()] {
            InspectorEvent event = InspectorEvent::make(
                InspectorEvent::Kind::ClientRequest, requestId, -1,
                {{QStringLiteral("method"), QString::fromLatin1(request.method)},
                 {QStringLiteral("path"), request.path},
                 {QStringLiteral("query"), QString::fromLatin1(request.query)},
                 {QStringLiteral("headers"), credentials->maskHeaders(request.headers)},
                 {QStringLiteral("identity"),
                  token.isEmpty() ? QString() : CredentialPolicy::mask(callerIdentity(token))}});
            if (!request.replayOf.isEmpty())
                event.data.insert(QStringLiteral("replayOf"), request.replayOf);
            event.raw = request.body;
            return event;
        });
    }
    return requestId;
}

void ProxyServer::handle(const HttpRequest &request, ResponseSink *sink) {
    // The control API's own traffic is not a flow of the agent being debugged, and its token
    // must never reach the store.
    const bool control = AccessPolicy::isControlPath(request.path);
    QString requestId;
    if (control) {
        requestId = newRequestId();
        sink->setRequestId(requestId);
    } else {
        requestId = beginFlow(request, sink);
    }
    const QByteArray token = bearerToken(request);
    // The control token is never logged, not even its last characters.
    const QString keyHint =
        token.isEmpty() || control ? QString() : CredentialPolicy::mask(QString::fromUtf8(token));
    connect(sink, &ResponseSink::finished, this,
            [this, sink, requestId, keyHint, method = request.method, path = request.path] {
                RequestLogEntry entry;
                entry.requestId = requestId;
                entry.method = method;
                entry.path = path;
                entry.model = sink->logModel();
                entry.status = sink->isClientGone() ? 499 : sink->status();
                entry.durationMs = double(sink->elapsedNanoseconds()) / 1e6;
                entry.overheadMs = sink->overheadMs();
                entry.iterations = sink->iterations();
                entry.keyHint = keyHint;
                m_logged.append(entry);
                if (!m_logTimer->isActive())
                    m_logTimer->start();
            });

    // Origin rule, preflight and 415 before anything is parsed or run.
    if (m_access.admit(request, sink) == AccessPolicy::Verdict::Answered)
        return;
    if (control) {
        handleControl(request, sink);
        return;
    }
    if (m_control)
        m_control->rememberCredentials(requestId, request);

    QString path = request.path;
    if (path == QLatin1String("/v1"))
        path = QStringLiteral("/");
    else if (path.startsWith(QLatin1String("/v1/")))
        path = path.mid(3);

    if (path == QLatin1String("/health") && (request.method == "GET" || request.method == "HEAD")) {
        sink->sendJson(200, {{QStringLiteral("status"), QStringLiteral("healthy")}});
        return;
    }
    if (!authorized(request)) {
        sink->sendError(401,
                        QStringLiteral("Invalid or missing API key: this Loopscope requires its "
                                       "master key (Authorization: Bearer <key>)"),
                        QStringLiteral("authentication_error"), QStringLiteral("invalid_api_key"));
        return;
    }
    const bool modelCall =
        request.method == "POST" &&
        (path == QLatin1String("/responses") || path == QLatin1String("/chat/completions") ||
         path == QLatin1String("/messages") || path == QLatin1String("/messages/count_tokens"));
    if (!modelCall)
        sink->publishHeld(); // only a plain pass-through publishes the request later
    if (request.method == "POST" && path == QLatin1String("/responses"))
        handleModelCall(ApiSurface::Responses, request, path, sink);
    else if (request.method == "POST" && path == QLatin1String("/chat/completions"))
        handleModelCall(ApiSurface::ChatCompletions, request, path, sink);
    else if (request.method == "POST" && (path == QLatin1String("/messages") ||
                                          path == QLatin1String("/messages/count_tokens")))
        handleMessages(request, path, sink);
    else if (request.method == "GET" && path == QLatin1String("/models"))
        handleModels(request, sink);
    else if (m_containers && ContainersApi::matches(path))
        m_containers->handle(request, callerIdentity(token), sink);
    else
        handleOther(request, path, sink);
    sink->publishHeld();
}

void ProxyServer::setResponseChains(std::shared_ptr<ResponseChainStore> chains) {
    m_upstream->bridge()->setChains(std::move(chains));
}

void ProxyServer::handleControl(const HttpRequest &request, ResponseSink *sink) {
    if (!m_access.controlTokenMatches(request)) {
        AccessPolicy::refuseControl(sink);
        return;
    }
    if (!m_control) {
        sink->sendError(503, QStringLiteral("The control API is not available in this process"),
                        QStringLiteral("server_error"));
        return;
    }
    if (!ControlApi::matches(request.path)) {
        sink->sendError(404, QStringLiteral("Unknown control route %1").arg(request.path.left(80)),
                        invalidRequest(), QStringLiteral("unknown_url"));
        return;
    }
    m_control->setBaseUrl(listenUrl());
    m_control->handle(request, sink);
}

QString ProxyServer::replay(HttpRequest request, const QString &replayOf) {
    request.received.start();
    request.replayOf = replayOf;
    // No client socket: writes go nowhere, the flow is recorded like any other.
    auto *sink = new ResponseSink(nullptr, request, false, this);
    connect(sink, &ResponseSink::finished, sink, &QObject::deleteLater);
    handle(request, sink);
    return sink->requestId();
}

void ProxyServer::handleModelCall(ApiSurface surface, const HttpRequest &request,
                                  const QString &path, ResponseSink *sink) {
    if (forwardUnparsed(surface, request, path, sink))
        return;
    sink->publishHeld(); // interceptors and bridges publish on the bus themselves
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        sink->sendError(400,
                        QStringLiteral("We could not parse the JSON body of your request: %1 at "
                                       "offset %2")
                            .arg(parseError.errorString())
                            .arg(parseError.offset),
                        invalidRequest(), QStringLiteral("invalid_json"));
        return;
    }
    if (!doc.isObject()) {
        sink->sendError(400, QStringLiteral("The request body must be a JSON object"),
                        invalidRequest(), QStringLiteral("invalid_json"));
        return;
    }
    QJsonObject body = doc.object();
    const QStringList stripped = stripControlKeys(body);
    const QJsonValue modelValue = body.value(QStringLiteral("model"));
    if (!modelValue.isString() || modelValue.toString().isEmpty()) {
        sink->sendError(400, QStringLiteral("you must provide a model parameter"), invalidRequest(),
                        QStringLiteral("missing_required_parameter"), QStringLiteral("model"));
        return;
    }
    const QString model = modelValue.toString();
    sink->setLogModel(model);
    const auto route = m_config.routeFor(model);
    if (!route) {
        sink->sendError(404,
                        QStringLiteral("The model `%1` does not exist or you do not have access "
                                       "to it (no route in the Loopscope config)")
                            .arg(model),
                        invalidRequest(), QStringLiteral("model_not_found"),
                        QStringLiteral("model"));
        return;
    }
    if (!route->isAvailable()) {
        sendUnavailable(*route, sink);
        return;
    }
    const UpstreamRoute upstreamRoute = withClientAuth(*route, request);
    if (intercept(surface, request, body, upstreamRoute, sink))
        return;
    // An Anthropic route speaks Messages: Chat Completions is translated here, Responses by
    // the ResponsesBridge below (over chat, then Messages; dialects.md §5).
    if (upstreamRoute.isAnthropic() && surface == ApiSurface::ChatCompletions) {
        m_upstream->bridge()->anthropic()->serve(upstreamRoute, body, sink, m_events, 0);
        return;
    }

    // A Responses request for a chat-only upstream is translated (dialects.md §5); on a route
    // not known yet, a "no such route" answer to /responses hands it to the bridge.
    ResponsesBridge *bridge = m_upstream->bridge();
    std::function<void(int)> notServed;
    if (surface == ApiSurface::Responses && bridge->bridges(upstreamRoute)) {
        bridge->serve(upstreamRoute, body, sink, m_events, 0);
        return;
    }
    if (surface == ApiSurface::Responses && bridge->detects(upstreamRoute))
        notServed = bridgeWhenNotServed(
            upstreamRoute, [body] { return body; }, sink);

    // Pass-through: the client's bytes unless something had to change.
    const bool changed = !stripped.isEmpty() || upstreamRoute.upstreamModel != model;
    const auto relay = [this, request, path, sink, upstreamRoute, notServed](
                           QJsonObject sent, bool changed, ResponsesBridge::RelayObserver keeper) {
        QByteArray out = request.body;
        if (changed) {
            sent.insert(QStringLiteral("model"), upstreamRoute.upstreamModel);
            out = QJsonDocument(sent).toJson(QJsonDocument::Compact);
        }
        QString upstreamPath = path;
        if (!request.query.isEmpty())
            upstreamPath += u'?' + QString::fromLatin1(request.query);
        passThrough(upstreamRoute, request.method, upstreamPath, out, sink, notServed,
                    std::move(keeper));
    };
    if (surface != ApiSurface::Responses || !bridge->keepsState(upstreamRoute)) {
        relay(body, changed, {});
        return;
    }
    // A stateless Responses route: Loopscope resolves the chain (from the flow history when
    // its memory misses: the request waits for that read) and keeps the answer.
    QPointer<ProxyServer> self = this;
    QPointer<ResponsesBridge> guard = bridge;
    QPointer<ResponseSink> target = sink;
    const auto resolved = [self, guard, target, body, changed,
                           relay](const QFuture<ResponsesBridge::Expanded> &f) {
        if (!self || !guard || !target || target->isClientGone())
            return;
        if (f.resultCount() == 0) {
            target->sendError(503, QStringLiteral("The proxy is stopping."),
                              QStringLiteral("api_error"), QStringLiteral("service_unavailable"));
            return;
        }
        const ResponsesBridge::Expanded expanded = f.result();
        if (expanded.errorStatus) {
            target->sendJson(expanded.errorStatus, expanded.error);
            return;
        }
        relay(expanded.body, changed || expanded.body != body, guard->keeper(body, expanded));
    };
    const QFuture<ResponsesBridge::Expanded> expanded = bridge->expandAsync(body);
    if (expanded.isFinished())
        resolved(expanded);
    else
        whenFinished(expanded, sink, resolved);
}

std::function<void(int)> ProxyServer::bridgeWhenNotServed(const UpstreamRoute &upstreamRoute,
                                                          std::function<QJsonObject()> body,
                                                          ResponseSink *sink) {
    QPointer<EventBus> events = m_events;
    QPointer<ResponsesBridge> guard = m_upstream->bridge();
    return [guard, events, upstreamRoute, body = std::move(body), sink](int status) {
        if (!guard)
            return;
        guard->rememberChatOnly(upstreamRoute, status);
        guard->serve(upstreamRoute, body(), sink, events, 1);
    };
}

bool ProxyServer::forwardUnparsed(ApiSurface surface, const HttpRequest &request,
                                  const QString &path, ResponseSink *sink) {
    const std::optional<RequestBodyScan> scan = RequestBodyScan::scan(request.body);
    if (!scan)
        return false;
    for (const RequestBodyScan::Member &member : scan->members()) {
        const QString key = QString::fromUtf8(member.key);
        if (keys::isInterceptionInternalKey(key) || keys::isAgenticLoopControlKey(key))
            return false;
    }
    const QString model = scan->plainString("model");
    if (model.isEmpty())
        return false;
    const bool messages = surface == ApiSurface::Messages;
    const std::optional<UpstreamRoute> route =
        messages ? m_config.messagesRouteFor(model) : m_config.routeFor(model);
    if (!route || !route->isAvailable() || route->upstreamModel != model ||
        (!messages && route->isAnthropic()))
        return false;
    const UpstreamRoute upstreamRoute = withClientAuth(*route, request);
    ResponsesBridge *bridge = m_upstream->bridge();
    const bool responses = surface == ApiSurface::Responses;
    if (responses && (bridge->bridges(upstreamRoute) || bridge->keepsState(upstreamRoute)))
        return false;
    // Interceptors decide from a request's settings and tools, not its conversation
    // (AgenticLoopInterceptor reads "tools"), so they are asked with the body without it; one
    // that would accept gets the whole body, parsed, on the full path.
    if (!m_interceptors.isEmpty() && (!messages || path == QLatin1String("/messages"))) {
        const std::optional<QJsonObject> head = scan->objectWithout({"messages", "input"});
        if (!head)
            return false;
        const ProxyRequest asked = proxyRequest(surface, request, *head, upstreamRoute, sink);
        for (RequestInterceptor *interceptor : std::as_const(m_interceptors))
            if (interceptor->accepts(asked))
                return false;
    }
    std::function<void(int)> notServed;
    if (responses && bridge->detects(upstreamRoute))
        notServed = bridgeWhenNotServed(
            upstreamRoute, [body = request.body] { return QJsonDocument::fromJson(body).object(); },
            sink);
    sink->setLogModel(model);
    QString upstreamPath = path;
    if (!request.query.isEmpty())
        upstreamPath += u'?' + QString::fromLatin1(request.query);
    passThrough(upstreamRoute, request.method, upstreamPath, request.body, sink,
                std::move(notServed));
    return true;
}

void ProxyServer::handleMessages(const HttpRequest &request, const QString &path,
                                 ResponseSink *sink) {
    if (forwardUnparsed(ApiSurface::Messages, request, path, sink))
        return;
    sink->publishHeld(); // interceptors and bridges publish on the bus themselves
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
        sink->sendError(400,
                        parseError.error != QJsonParseError::NoError
                            ? QStringLiteral("The request body is not valid JSON: %1 at offset %2")
                                  .arg(parseError.errorString())
                                  .arg(parseError.offset)
                            : QStringLiteral("The request body must be a JSON object"),
                        invalidRequest());
        return;
    }
    QJsonObject body = doc.object();
    const QStringList stripped = stripControlKeys(body);
    const QString model = body.value(QStringLiteral("model")).toString();
    if (model.isEmpty()) {
        sink->sendError(400, QStringLiteral("model: Field required"), invalidRequest());
        return;
    }
    sink->setLogModel(model);
    const std::optional<UpstreamRoute> route = m_config.messagesRouteFor(model);
    if (!route->isAvailable()) {
        sendUnavailable(*route, sink);
        return;
    }
    // Anthropic's code execution tool runs here, in Loopscope's sandboxes (dialects.md §4).
    if (path == QLatin1String("/messages") &&
        intercept(ApiSurface::Messages, request, body, withClientAuth(*route, request), sink))
        return;
    QByteArray out = request.body;
    if (!stripped.isEmpty() || route->upstreamModel != model) {
        body.insert(QStringLiteral("model"), route->upstreamModel);
        out = QJsonDocument(body).toJson(QJsonDocument::Compact);
    }
    QString upstreamPath = path;
    if (!request.query.isEmpty())
        upstreamPath += u'?' + QString::fromLatin1(request.query);
    passThrough(withClientAuth(*route, request), request.method, upstreamPath, out, sink);
}

ProxyRequest ProxyServer::proxyRequest(ApiSurface surface, const HttpRequest &request,
                                       const QJsonObject &body, const UpstreamRoute &upstreamRoute,
                                       const ResponseSink *sink) const {
    ProxyRequest proxyRequest;
    proxyRequest.surface = surface;
    proxyRequest.path = request.path;
    proxyRequest.body = body;
    proxyRequest.route = upstreamRoute;
    proxyRequest.callerIdentity = callerIdentity(bearerToken(request));
    proxyRequest.maxLoops = m_config.maxLoopsOverride > 0       ? m_config.maxLoopsOverride
                            : upstreamRoute.maxAgenticLoops > 0 ? upstreamRoute.maxAgenticLoops
                                                                : keys::kDefaultMaxAgenticLoops;
    proxyRequest.execTimeoutSeconds = m_config.execTimeoutSeconds;
    proxyRequest.requestId = sink->requestId();
    proxyRequest.startedAt = QDateTime::currentDateTimeUtc();
    proxyRequest.elapsed = request.received;
    return proxyRequest;
}

bool ProxyServer::intercept(ApiSurface surface, const HttpRequest &request, const QJsonObject &body,
                            const UpstreamRoute &upstreamRoute, ResponseSink *sink) {
    if (m_interceptors.isEmpty())
        return false;
    ProxyRequest proxyRequest = this->proxyRequest(surface, request, body, upstreamRoute, sink);
    for (RequestInterceptor *interceptor : std::as_const(m_interceptors)) {
        if (interceptor->accepts(proxyRequest)) {
            interceptor->handle(std::move(proxyRequest), sink);
            return true;
        }
    }
    return false;
}

void ProxyServer::handleModels(const HttpRequest &request, ResponseSink *sink) {
    const QStringList names = m_config.modelNames();
    const bool demoDefault = m_config.defaultRoute && m_config.defaultRoute->isDemo();
    if (names.isEmpty() && m_config.defaultRoute && !demoDefault) {
        QString upstreamPath = QStringLiteral("/models");
        if (!request.query.isEmpty())
            upstreamPath += u'?' + QString::fromLatin1(request.query);
        passThrough(withClientAuth(*m_config.defaultRoute, request), request.method, upstreamPath,
                    {}, sink);
        return;
    }
    QJsonArray data;
    auto add = [&data](const QString &id, const QString &owner) {
        data.append(QJsonObject{{QStringLiteral("id"), id},
                                {QStringLiteral("object"), QStringLiteral("model")},
                                {QStringLiteral("created"), 0},
                                {QStringLiteral("owned_by"), owner}});
    };
    for (const QString &name : names)
        add(name, QStringLiteral("loopscope"));
    if (demoDefault)
        add(QStringLiteral("loopscope-demo"), QStringLiteral("loopscope (scripted offline demo)"));
    sink->sendJson(
        200, {{QStringLiteral("object"), QStringLiteral("list")}, {QStringLiteral("data"), data}});
}

void ProxyServer::handleOther(const HttpRequest &request, const QString &path, ResponseSink *sink) {
    std::optional<UpstreamRoute> route = m_config.defaultRoute;
    QByteArray out = request.body;
    // Boundary hygiene applies to every JSON body, and a model field picks the route.
    QJsonParseError parseError;
    const QJsonDocument doc = request.body.isEmpty()
                                  ? QJsonDocument()
                                  : QJsonDocument::fromJson(request.body, &parseError);
    if (doc.isObject()) {
        QJsonObject body = doc.object();
        bool changed = !stripControlKeys(body).isEmpty();
        const QString model = body.value(QStringLiteral("model")).toString();
        if (!model.isEmpty()) {
            sink->setLogModel(model);
            if (auto modelRoute = m_config.routeFor(model)) {
                if (!modelRoute->isAvailable()) {
                    sendUnavailable(*modelRoute, sink);
                    return;
                }
                route = modelRoute;
                if (modelRoute->upstreamModel != model) {
                    body.insert(QStringLiteral("model"), modelRoute->upstreamModel);
                    changed = true;
                }
            }
        }
        if (changed)
            out = QJsonDocument(body).toJson(QJsonDocument::Compact);
    }
    if (!route) {
        sink->sendError(404,
                        QStringLiteral("No upstream for %1: start Loopscope with --upstream URL "
                                       "or give the model a route in the config")
                            .arg(request.path),
                        invalidRequest(), QStringLiteral("unknown_url"));
        return;
    }
    // Encoded again: the upstream URL is parsed as encoded, and must decode to this path once.
    QString upstreamPath = QString::fromLatin1(RequestTarget::encodePath(path));
    if (!request.query.isEmpty())
        upstreamPath += u'?' + QString::fromLatin1(request.query);
    passThrough(withClientAuth(*route, request), request.method, upstreamPath, out, sink);
}

void ProxyServer::passThrough(const UpstreamRoute &route, const QByteArray &method,
                              const QString &upstreamPathAndQuery, const QByteArray &body,
                              ResponseSink *sink, std::function<void(int status)> notServed,
                              std::function<void(int, const QByteArray &, bool, bool)> observer) {
    struct State {
        QElapsedTimer upstreamClock;
        bool decided = false;
        bool streaming = false;
        QTimer *drain = nullptr; // polls a slow client's write buffer while reading is paused
        std::function<void(int)> notServed;     // a Responses call the bridge takes over on 404
        ResponsesBridge::RelayObserver observe; // sees what is relayed (a stateless route)
    };
    // Defence in depth behind RequestTarget: whatever built the path, the URL that leaves (with
    // the route's key) must lie under the route's base path and hold nothing to resolve.
    const QUrl url = route.urlFor(upstreamPathAndQuery);
    if (!RequestTarget::staysUnder(url.path(QUrl::FullyEncoded).toLatin1(),
                                   route.baseUrl.path(QUrl::FullyEncoded).toLatin1())) {
        qWarning("loopscope: not forwarding %s %s: it leaves the route's base path %s",
                 method.constData(), url.path(QUrl::FullyEncoded).left(200).toLatin1().constData(),
                 route.baseUrl.path(QUrl::FullyEncoded).toLatin1().constData());
        sink->sendError(400,
                        QStringLiteral("Invalid request target: the upstream path would leave the "
                                       "route's base path"),
                        invalidRequest(), QStringLiteral("invalid_request_target"));
        return;
    }
    auto state = std::make_shared<State>();
    state->upstreamClock.start();
    state->notServed = std::move(notServed);
    state->observe = std::move(observer);
    QNetworkReply *reply = m_upstream->send(route, method, upstreamPathAndQuery, body);
    // The flow's events are built on the bus's thread: this thread's only work is the relay.
    sink->deferEvents();
    sink->publishHeld(); // the client's request, now that it has gone upstream
    QPointer<EventBus> events = m_events;
    if (events) {
        // A shared copy of the request: its headers are listed on the bus's thread, not here.
        events->publishDeferred({[request = reply->request(), method, body, id = sink->requestId(),
                                  credentials = events->credentials()] {
            HttpHeaders sent;
            for (const QByteArray &name : request.rawHeaderList())
                sent.append({name, request.rawHeader(name)});
            InspectorEvent event =
                InspectorEvent::make(InspectorEvent::Kind::UpstreamRequest, id, 0,
                                     {{QStringLiteral("method"), QString::fromLatin1(method)},
                                      {QStringLiteral("url"), request.url().toString()},
                                      {QStringLiteral("headers"), credentials->maskHeaders(sent)},
                                      {QStringLiteral("passThrough"), true}});
            event.raw = body;
            return event;
        }});
    }
    connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
    connect(sink, &ResponseSink::clientGone, reply, &QNetworkReply::abort);

    // Relays what the client's socket can take: above the high-water mark the upstream is
    // left unread (QNAM then stops reading it, so the upstream waits, not this process's
    // memory) until the client has drained to half of it.
    auto pump = [reply, sink, state] {
        while (reply->bytesAvailable() > 0 && sink->bytesPending() <= kRelayHighWaterBytes) {
            const QByteArray chunk = UpstreamClient::take(reply, kRelayHighWaterBytes);
            if (state->observe)
                state->observe(UpstreamClient::httpStatus(reply), chunk, true, false);
            sink->writeChunk(chunk);
        }
    };
    // Decide once, on the first bytes: an SSE answer is relayed chunk by chunk as it arrives,
    // anything else is relayed whole and byte-exact with its status.
    auto decide = [reply, sink, state, events, pump] {
        if (state->decided)
            return;
        state->decided = true;
        const int status = UpstreamClient::httpStatus(reply);
        const QByteArray type = reply->rawHeader("Content-Type").toLower();
        state->streaming = status > 0 && type.startsWith("text/event-stream");
        if (events) {
            HttpHeaders received;
            for (const auto &pair : reply->rawHeaderPairs())
                received.append(pair);
            // Masked and published once the answer has been relayed (the sink publishes it
            // before its own ClientResponse), not while the client waits for it.
            sink->holdEvent([received, status, streaming = state->streaming,
                             latencyMs = double(state->upstreamClock.nsecsElapsed()) / 1e6,
                             error = status == 0 ? reply->errorString() : QString(),
                             id = sink->requestId(), credentials = events->credentials()] {
                return InspectorEvent::make(
                    InspectorEvent::Kind::UpstreamResponse, id, 0,
                    {{QStringLiteral("status"), status},
                     {QStringLiteral("headers"), credentials->maskHeaders(received)},
                     {QStringLiteral("stream"), streaming},
                     {QStringLiteral("latencyMs"), latencyMs},
                     {QStringLiteral("error"), error}});
            });
        }
        if (state->streaming) {
            sink->addExternalTime(state->upstreamClock.nsecsElapsed());
            sink->beginStream(status, UpstreamClient::relayableHeaders(reply));
            reply->setReadBufferSize(kRelayHighWaterBytes);
            state->drain = new QTimer(reply);
            state->drain->setInterval(20);
            QObject::connect(state->drain, &QTimer::timeout, sink, [reply, sink, state, pump] {
                if (sink->isClientGone() || reply->bytesAvailable() == 0) {
                    state->drain->stop();
                    return;
                }
                if (sink->bytesPending() <= kRelayHighWaterBytes / 2)
                    pump();
            });
        }
    };
    // Bound the reply's buffer as soon as the headers say "stream", before any body is read:
    // QNAM's own thread keeps reading until the limit is set, and on a loaded machine the first
    // readyRead (where decide() sets it too) can come after most of a fast stream is buffered.
    connect(reply, &QNetworkReply::metaDataChanged, sink, [reply] {
        if (reply->rawHeader("Content-Type").toLower().startsWith("text/event-stream"))
            reply->setReadBufferSize(kRelayHighWaterBytes);
    });
    connect(reply, &QNetworkReply::readyRead, sink, [reply, sink, state, decide, pump] {
        decide();
        if (!state->streaming || sink->isClientGone())
            return;
        pump();
        if (reply->bytesAvailable() > 0)
            state->drain->start(); // the client is behind: wait for it
    });
    connect(reply, &QNetworkReply::finished, sink, [reply, sink, state, decide, events] {
        if (sink->isClientGone())
            return;
        const int status = UpstreamClient::httpStatus(reply);
        if (UpstreamClient::tooLarge(reply)) {
            if (state->streaming) {
                sink->abortConnection(); // cut mid-stream: do not fake a clean end
            } else {
                UpstreamReply failure;
                failure.tooLarge = true;
                sink->send(
                    failure.clientStatus(),
                    {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")}},
                    failure.transportErrorBody());
            }
            return;
        }
        if (status > 0)
            decide();
        if (state->streaming) {
            if (state->drain)
                state->drain->stop();
            const QByteArray rest = UpstreamClient::takeAll(reply);
            if (state->observe) // a stream cut short is not kept (its status says 2xx)
                state->observe(reply->error() == QNetworkReply::NoError ? status : 0, rest, true,
                               true);
            sink->writeChunk(rest);
            if (reply->error() != QNetworkReply::NoError && status >= 200 && status < 300)
                sink->abortConnection(); // cut mid-stream: do not fake a clean end
            else
                sink->endStream();
            return;
        }
        sink->addExternalTime(state->upstreamClock.nsecsElapsed());
        if (status == 0) {
            sink->publishHeld();
            if (events)
                events->publish(InspectorEvent::Kind::UpstreamResponse, sink->requestId(), 0,
                                {{QStringLiteral("status"), 0},
                                 {QStringLiteral("error"), reply->errorString()},
                                 {QStringLiteral("timedOut"), UpstreamClient::timedOut(reply)},
                                 {QStringLiteral("latencyMs"),
                                  double(state->upstreamClock.nsecsElapsed()) / 1e6}});
            UpstreamReply failure;
            failure.timedOut = UpstreamClient::timedOut(reply);
            failure.errorString = reply->errorString();
            sink->send(failure.clientStatus(),
                       {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")}},
                       failure.transportErrorBody());
            return;
        }
        const QByteArray answer = UpstreamClient::takeAll(reply);
        if (state->notServed && ResponsesBridge::notServed(status, answer)) {
            sink->publishHeld();      // the bridge publishes on the bus itself
            state->notServed(status); // the bridge answers the client
            return;
        }
        if (state->observe)
            state->observe(status, answer, false, true);
        sink->send(status, UpstreamClient::relayableHeaders(reply), answer);
    });
}

} // namespace loopscope
