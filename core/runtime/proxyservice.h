#pragma once

#include "proxy/proxyconfig.h"
#include "proxy/requestlogentry.h"
#include "upstream/responsechainstore.h"

#include <QObject>
#include <QPointer>
#include <QThread>

#include <functional>
#include <memory>

namespace loopscope {

class ControlApi;
class EventBus;
class FlowStore;
class InterceptionStack;
struct LocalSandboxOptions;
class PauseBroker;
class OtlpExporter;
class ProxyServer;
class SandboxRegistry;

// Runs the proxy on its own QThread (the GUI keeps the main thread): every proxy object, socket
// and the QNetworkAccessManager is created inside that thread. Cross-thread traffic is queued
// signals out (requestLogged) and queued invocations in (stop).
class ProxyService : public QObject {
    Q_OBJECT
public:
    // `events` receives every inspector event (published from the proxy thread); may be null.
    explicit ProxyService(EventBus *events = nullptr, QObject *parent = nullptr);
    ~ProxyService() override;

    // Creates the server in the proxy thread and listens; blocks until that is done.
    bool start(const ProxyConfig &config, QString *error);
    QString listenUrl() const { return m_url; }
    // The flow history (core/record), made at the first start() from the config (--data-dir,
    // --no-history, history:, model_info prices) and kept across restarts; null before.
    // Its query() is thread-safe.
    FlowStore *flowStore() const { return m_store.get(); }
    // "local", "e2b", ... and its health, as found at start-up.
    QString sandboxBackend() const { return m_sandboxBackend; }
    QStringList sandboxProblems() const { return m_sandboxProblems; }
    QStringList sandboxWarnings() const { return m_sandboxWarnings; }
    bool sandboxIsolated() const { return m_sandboxIsolated; }
    // False until the start-up self-test (run after start() returns) has answered.
    bool sandboxHealthKnown() const { return m_sandboxHealthKnown; }
    // The only ways in from another thread: no pointer to a proxy-thread object leaves it.
    // Each queues `work` on the proxy thread and runs it there with the object if it still
    // exists (checked there, where it is deleted), so a stop or restart in between cannot hand
    // it freed memory; false when the proxy is not running (or stopping), and `work` is
    // dropped. The window reaches the registry this way (SandboxCommands' dispatcher).
    bool withRegistry(std::function<void(SandboxRegistry *)> work);
    // Breakpoints.
    bool withPauseBroker(std::function<void(PauseBroker *)> work);
    // The control API (replay). Unlike the others `work` also runs when the API went away
    // meanwhile, with null, so an answer the caller waits for always comes.
    bool withControlApi(std::function<void(ControlApi *)> work);
    // Graceful stop (in-flight responses finish, bounded); stopped() follows.
    void stop();
    // Test seam: adjusts the local sandbox options of every later start(), on the proxy thread.
    void setSandboxOptionsHook(std::function<void(LocalSandboxOptions &)> hook) {
        m_sandboxOptionsHook = std::move(hook);
    }

signals:
    void requestLogged(const RequestLogEntry &entry);
    void stopped();
    // Every successful start(), the first and each restart: where clients connect now.
    void listening(const QString &url);
    // sandboxProblems()/sandboxWarnings() changed (a remote backend's probe answered).
    void sandboxHealthChanged();

private:
    // The proxy thread's objects, as that thread sees them: written and read there only
    // (QPointer, so a deleted server reads as null), never from this object's thread.
    struct Live {
        QPointer<ProxyServer> server;
        QPointer<InterceptionStack> stack; // child of server
        QPointer<SandboxRegistry> registry;
        QPointer<PauseBroker> broker;
        QPointer<ControlApi> control;
    };
    // Queues `work` on the proxy thread with m_live; false when not running or stopping.
    bool post(std::function<void(const Live &)> work);
    static void logLine(const QString &line);
    // ProxyServer's own grace for in-flight responses after the sandboxes are gone.
    static constexpr int kServerGraceMs = 5000;

    QThread m_thread;
    QObject *m_anchor = nullptr; // lives in m_thread: the context for invocations
    Live m_live;                 // proxy thread only
    EventBus *m_events = nullptr;
    std::unique_ptr<FlowStore> m_store;
    // Bridged routes' Responses chains (previous_response_id), kept across proxy restarts.
    std::shared_ptr<ResponseChainStore> m_responseChains = std::make_shared<ResponseChainStore>();
    // Trace export (--otlp-endpoint); declared after the store so it goes first.
    std::unique_ptr<OtlpExporter> m_exporter;
    QString m_sandboxBackend;
    QStringList m_sandboxProblems; // read and written on this object's thread only
    QStringList m_sandboxWarnings;
    bool m_sandboxIsolated = true;
    bool m_sandboxHealthKnown = false;
    QString m_url;
    bool m_stopping = false;
    int m_shutdownTimeoutMs = 5000; // general_settings.shutdown_timeout
    std::function<void(LocalSandboxOptions &)> m_sandboxOptionsHook;
};

} // namespace loopscope
