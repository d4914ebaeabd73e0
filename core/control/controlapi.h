#pragma once

#include "control/credentialvault.h"
#include "http/httprequest.h"
#include "inspect/credentialpolicy.h"
#include "record/flowquery.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <array>
#include <atomic>
#include <functional>
#include <memory>

namespace loopscope {

class BreakpointsApi;
class ControlEventStream;
class PauseBroker;
class EventBus;
class McpServer;
class FlowStore;
class ResponseSink;
class SandboxRegistry;
struct SandboxEntry;

// The control API under /loopscope/v1 (docs: ../shared/spec/control-api.md): flows, runs,
// events (SSE), sandboxes, replay, HAR export and import. Access (Origin rule, control token)
// is decided before a request gets here, by the HTTP front's AccessPolicy.
//
// Threads: lives on the proxy thread. Store reads and writes (FlowQuery, clear, import, HAR
// building) run on this API's own small thread pool and answer through whenFinished, so the
// proxy thread never waits for SQLite. The sandbox registry lives on the proxy thread and is
// called directly.
class ControlApi : public QObject {
    Q_OBJECT
public:
    // Runs a request through the proxy as a new flow (no client socket) and returns its id.
    using Replayer = std::function<QString(HttpRequest request, const QString &replayOf)>;

    explicit ControlApi(EventBus *events, QObject *parent = nullptr);
    ~ControlApi() override;

    // Not owned; any may be null (routes needing them answer 503).
    void setFlowStore(FlowStore *store);
    void setRegistry(SandboxRegistry *registry);
    // Breakpoints (/breakpoints, /paused): served by BreakpointsApi over this broker.
    void setPauseBroker(PauseBroker *broker);
    void setReplayer(Replayer replayer) { m_replayer = std::move(replayer); }
    // "http://127.0.0.1:4000": the base of request URLs in exported HAR files.
    void setBaseUrl(const QString &url) { m_baseUrl = url; }

    // Keeps the client's credentials of a flow of this process, for replay (memory only).
    void rememberCredentials(const QString &flowId, const HttpRequest &request);

    // What a replay of a recorded flow came to: the new flow's id, or an error (HTTP status,
    // message, code) the route and the MCP tool each report in their own shape.
    struct ReplayResult {
        int status = 200;
        QString message;
        QString code;
        QString flowId;
    };
    ReplayResult replayRecorded(const QJsonObject &flow, const QJsonValue &editedBody);

    FlowStore *flowStore() const;
    SandboxRegistry *registry() const;

    // "/loopscope/v1" and below, and the MCP endpoint "/loopscope/mcp".
    static bool matches(const QString &path);
    void handle(const HttpRequest &request, ResponseSink *sink);

    ControlEventStream *eventStream() const { return m_stream; }
    // The MCP server behind /loopscope/mcp (its breakpoint hooks are set by whoever owns them).
    McpServer *mcpServer() const { return m_mcp; }
    // Ends event streams (server shutdown) so connections can close.
    void shutdown();

    static QJsonObject sandboxObject(const SandboxEntry &entry);
    // GET /loopscope/v1: the store's state and every bounded queue's drops.
    QJsonObject stats() const;

private:
    void listFlows(const FlowFilter &filter, ResponseSink *sink);
    void getFlow(const QString &id, ResponseSink *sink);
    void clearFlows(ResponseSink *sink);
    void replayFlow(const QString &id, const HttpRequest &request, ResponseSink *sink);
    void listRuns(int limit, ResponseSink *sink);
    void getRun(const QString &id, ResponseSink *sink);
    void listSandboxes(ResponseSink *sink);
    void deleteSandbox(const QString &id, ResponseSink *sink);
    void exportHar(const QStringList &ids, const QString &run, ResponseSink *sink);
    void importHar(const HttpRequest &request, ResponseSink *sink);
    void startReplay(const QJsonObject &flow, const QJsonValue &editedBody, ResponseSink *sink);
    bool needStore(ResponseSink *sink) const;
    void followLiveFlows(bool follow);
    // Connects the bus to the event stream while it has a subscriber, queued: events come
    // from the proxy thread and from the bus's own thread (deferred ones), and one queue keeps
    // their order; with nobody subscribed no event is posted to the proxy thread at all.
    void followEvents(bool follow);

    QPointer<FlowStore> m_store;
    // The bus's drop counters by queue name (shared: no pointer into the bus crosses threads).
    QHash<QString, std::shared_ptr<std::atomic<quint64>>> m_drops;
    // flow.started/updated/finished while the event stream has a subscriber (see
    // followLiveFlows()).
    std::array<QMetaObject::Connection, 3> m_liveFlows;
    QPointer<EventBus> m_events;
    QMetaObject::Connection m_busEvents; // followEvents()
    QPointer<SandboxRegistry> m_registry;
    ControlEventStream *m_stream;
    BreakpointsApi *m_breakpoints;
    McpServer *m_mcp;
    CredentialVault m_credentials;
    Replayer m_replayer;
    QString m_baseUrl;
    QThreadPool m_pool;
    std::shared_ptr<const CredentialPolicy> m_policy; // the bus's: the HAR export is masked again
};

} // namespace loopscope
