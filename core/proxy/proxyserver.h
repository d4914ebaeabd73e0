#pragma once

#include <functional>
#include <memory>

#include "loop/proxyrequest.h"
#include "proxy/accesspolicy.h"
#include "proxy/proxyconfig.h"
#include "proxy/requestlogentry.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QStringList>

class QTimer;

namespace loopscope {

class ResponseChainStore;

class ContainersApi;
class ControlApi;
class EventBus;
class FlowStore;
class HttpServer;
class RequestInterceptor;
class ResponseSink;
class UpstreamClient;
struct HttpRequest;

// The OpenAI-compatible front: routes, auth (master key), control-key stripping, routing to
// upstream, pass-through (streaming and byte-exact), the interceptor seam, and one log entry
// per request. Create it in the thread that should run the proxy (all its objects, sockets and
// the QNetworkAccessManager live there).
//
// Routes (each also without /v1): POST /v1/responses, POST /v1/chat/completions,
// GET /v1/models, GET /health, /v1/containers… (when a ContainersApi is set), /loopscope/…
// (the control API, behind its token); everything else passes through to the default upstream.
// Every request first meets the AccessPolicy (Origin rule, CORS, 415), before any parsing.
class ProxyServer : public QObject {
    Q_OBJECT
public:
    explicit ProxyServer(ProxyConfig config, QObject *parent = nullptr);
    ~ProxyServer() override;

    bool listen();
    QString errorString() const { return m_error; }
    quint16 port() const;
    // "http://HOST:PORT" as printed on start-up.
    QString listenUrl() const;

    // Interceptors are asked in registration order; not owned (must outlive the server).
    void addInterceptor(RequestInterceptor *interceptor);
    // Serves /v1/containers (issue 5); not owned. Without it those paths pass through.
    void setContainersApi(ContainersApi *api);
    // Serves /loopscope/v1 (control-api.md) behind the control token; not owned. Without it
    // those routes answer 503 (after the token check).
    void setControlApi(ControlApi *api);
    const AccessPolicy &accessPolicy() const { return m_access; }
    // Every exchange is published on `bus` as flow events (inspect/inspectorevent.h) for the
    // flow store; not owned. InterceptionStack sets the same bus the loop publishes on.
    // The bus's credential policy gets the config's secrets (ProxyConfig::secretValues).
    void setEventBus(EventBus *bus);
    EventBus *eventBus() const { return m_events; }
    // The flow history the control API reads (record/flowstore.h); not owned, may be null.
    void setFlowStore(FlowStore *store) { m_store = store; }
    // The Responses chains bridged routes answer previous_response_id from (ResponsesBridge);
    // given by ProxyService so they outlive a proxy restart like the history does.
    void setResponseChains(std::shared_ptr<ResponseChainStore> chains);
    FlowStore *flowStore() const { return m_store; }
    // Configured secrets (ProxyConfig::secretValues): masked wherever anything is shown.
    QStringList secrets() const { return m_secrets; }
    UpstreamClient *upstream() const { return m_upstream; }
    HttpServer *httpServer() const { return m_http; }
    const ProxyConfig &config() const { return m_config; }
    // Where OpenAI Files (container file_ids) are fetched for this request: the default route,
    // else the first configured model's, with the caller's credentials as for a model call.
    std::optional<UpstreamRoute> filesRoute(const HttpRequest &request) const;

    // Graceful: stop accepting, finish in-flight responses, then emit stopped().
    void shutdown();

    // Removes client-forged control keys from a body's root (keys starting with _agentic_loop,
    // equal to max_agentic_loops, or starting with an interception prefix); returns them.
    static QStringList stripControlKeys(QJsonObject &body);
    // SHA-256 hex of the bearer token, "anonymous" without one.
    static QString callerIdentity(const QByteArray &bearerToken);
    static QByteArray bearerToken(const HttpRequest &request);

signals:
    // One per finished request, emitted in batches (kLogBatchMs after the first of a batch): a
    // queued signal per request woke the receiving thread (the headless log) once each.
    void requestLogged(const loopscope::RequestLogEntry &entry);
    void stopped();

private:
    void handle(const HttpRequest &request, ResponseSink *sink);
    // Names the flow, publishes its ClientRequest and makes the sink publish its answer.
    QString beginFlow(const HttpRequest &request, ResponseSink *sink);
    void handleModelCall(ApiSurface surface, const HttpRequest &request, const QString &path,
                         ResponseSink *sink);
    void handleModels(const HttpRequest &request, ResponseSink *sink);
    // POST /v1/messages and /v1/messages/count_tokens: Anthropic's surface, routed by
    // ProxyConfig::messagesRouteFor, errors in Anthropic's envelope (ResponseSink does that).
    void handleMessages(const HttpRequest &request, const QString &path, ResponseSink *sink);
    // The common case without parsing the body (RequestBodyScan): a valid JSON object whose
    // plain "model" routes it on unchanged, with no control key to strip and nothing for an
    // interceptor or the Responses bridge to do, goes upstream as the client's bytes — as the
    // full parse would decide. False (nothing answered) for everything else, errors included.
    bool forwardUnparsed(ApiSurface surface, const HttpRequest &request, const QString &path,
                         ResponseSink *sink);
    // A Responses call the upstream answered "no such route": the bridge serves it (the body
    // is asked for only then).
    std::function<void(int)> bridgeWhenNotServed(const UpstreamRoute &upstreamRoute,
                                                 std::function<QJsonObject()> body,
                                                 ResponseSink *sink);
    ProxyRequest proxyRequest(ApiSurface surface, const HttpRequest &request,
                              const QJsonObject &body, const UpstreamRoute &upstreamRoute,
                              const ResponseSink *sink) const;
    // Hands a model request to the first interceptor that accepts it; false when none does.
    bool intercept(ApiSurface surface, const HttpRequest &request, const QJsonObject &body,
                   const UpstreamRoute &upstreamRoute, ResponseSink *sink);
    void handleOther(const HttpRequest &request, const QString &path, ResponseSink *sink);
    void passThrough(const UpstreamRoute &route, const QByteArray &method,
                     const QString &upstreamPathAndQuery, const QByteArray &body,
                     ResponseSink *sink, std::function<void(int status)> notServed = {},
                     std::function<void(int, const QByteArray &, bool, bool)> observer = {});
    void handleControl(const HttpRequest &request, ResponseSink *sink);
    // Runs a replayed client request as a new flow (no client socket); returns its flow id.
    QString replay(HttpRequest request, const QString &replayOf);
    UpstreamRoute withClientAuth(UpstreamRoute route, const HttpRequest &request) const;
    // 400 for a model the config names but Loopscope cannot reach (issue 17).
    static void sendUnavailable(const UpstreamRoute &route, ResponseSink *sink);
    bool authorized(const HttpRequest &request) const;

    ProxyConfig m_config;
    HttpServer *m_http;
    UpstreamClient *m_upstream;
    QList<RequestInterceptor *> m_interceptors;
    void emitLogged();
    QList<RequestLogEntry> m_logged; // waiting for the batch's requestLogged
    QTimer *m_logTimer = nullptr;
    QPointer<ContainersApi> m_containers;
    QPointer<ControlApi> m_control;
    AccessPolicy m_access;
    QString m_error;
    EventBus *m_events = nullptr;
    FlowStore *m_store = nullptr;
    QStringList m_secrets;
};

} // namespace loopscope
