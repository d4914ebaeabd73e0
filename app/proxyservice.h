#pragma once

#include "proxy/proxyconfig.h"
#include "proxy/requestlogentry.h"

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
class PauseBroker;
class OtlpExporter;
class ProxyServer;
class SandboxRegistry;
} // namespace loopscope

// Runs the proxy on its own QThread (the GUI keeps the main thread): every proxy object, socket
// and the QNetworkAccessManager is created inside that thread. Cross-thread traffic is queued
// signals out (requestLogged) and queued invocations in (stop).
class ProxyService : public QObject {
    Q_OBJECT
public:
    // `events` receives every inspector event (published from the proxy thread); may be null.
    explicit ProxyService(loopscope::EventBus *events = nullptr, QObject *parent = nullptr);
    ~ProxyService() override;

    // Creates the server in the proxy thread and listens; blocks until that is done.
    bool start(const loopscope::ProxyConfig &config, QString *error);
    QString listenUrl() const { return m_url; }
    // Lives in the proxy thread: call it only through QMetaObject::invokeMethod(registry, ...).
    loopscope::SandboxRegistry *registry() const { return m_registry; }
    // Breakpoints; lives in the proxy thread like the registry (null while stopped).
    loopscope::PauseBroker *pauseBroker() const;
    // The control API (replay); lives in the proxy thread like the broker (null while stopped).
    loopscope::ControlApi *controlApi() const;
    // The flow history (core/record), made at the first start() from the config (--data-dir,
    // --no-history, history:, model_info prices) and kept across restarts; null before.
    // Its query() is thread-safe.
    loopscope::FlowStore *flowStore() const { return m_store.get(); }
    // "local", "e2b", ... and its health, as found at start-up.
    QString sandboxBackend() const { return m_sandboxBackend; }
    QStringList sandboxProblems() const { return m_sandboxProblems; }
    QStringList sandboxWarnings() const { return m_sandboxWarnings; }
    bool sandboxIsolated() const { return m_sandboxIsolated; }
    // False until the start-up self-test (run after start() returns) has answered.
    bool sandboxHealthKnown() const { return m_sandboxHealthKnown; }
    // Queues `work` on the proxy thread with the registry if it still exists there (checked
    // there, where it is deleted); false when the proxy is not running. The window's way in.
    bool withRegistry(std::function<void(loopscope::SandboxRegistry *)> work);
    // Graceful stop (in-flight responses finish, bounded); stopped() follows.
    void stop();

signals:
    void requestLogged(const loopscope::RequestLogEntry &entry);
    void stopped();
    // Every successful start(), the first and each restart: where clients connect now.
    void listening(const QString &url);
    // sandboxProblems()/sandboxWarnings() changed (a remote backend's probe answered).
    void sandboxHealthChanged();

private:
    static void logLine(const QString &line);
    // ProxyServer's own grace for in-flight responses after the sandboxes are gone.
    static constexpr int kServerGraceMs = 5000;

    QThread m_thread;
    QObject *m_anchor = nullptr;                // lives in m_thread: the context for invocations
    loopscope::ProxyServer *m_server = nullptr; // lives in m_thread
    loopscope::InterceptionStack *m_stack = nullptr; // lives in m_thread, child of m_server
    loopscope::SandboxRegistry *m_registry = nullptr;
    // Made and read on the proxy thread only (it tracks an object of that thread).
    QPointer<loopscope::SandboxRegistry> m_registryGuard;
    loopscope::EventBus *m_events = nullptr;
    std::unique_ptr<loopscope::FlowStore> m_store;
    // Trace export (--otlp-endpoint); declared after the store so it goes first.
    std::unique_ptr<loopscope::OtlpExporter> m_exporter;
    QString m_sandboxBackend;
    QStringList m_sandboxProblems; // read and written on this object's thread only
    QStringList m_sandboxWarnings;
    bool m_sandboxIsolated = true;
    bool m_sandboxHealthKnown = false;
    QString m_url;
    bool m_stopping = false;
    int m_shutdownTimeoutMs = 5000; // general_settings.shutdown_timeout
};
