#pragma once

#include "sandbox/local/localsandboxoptions.h"
#include "sandbox/sandboxbackend.h"
#include "sandbox/sandboxtoolregistry.h"

#include <QFuture>
#include <QObject>
#include <QPointer>
#include <QThreadPool>
#include <QTimer>

namespace loopscope {

class AgenticLoopInterceptor;
class CodeInterpreterInterception;
class ContainerFileImporter;
class ContainerFileStore;
class ContainersApi;
class ControlApi;
class EventBus;
class LocalPythonBackend;
class LoopInspector;
class PauseBroker;
class ProxyConfig;
class ProxyServer;
class SandboxRegistry;

// Everything the code interpreter interception adds around a ProxyServer: the sandbox backends
// (local by default; e2b and Jupyter when sandbox_tools name them), the SandboxRegistry, the
// interception hooks, the agentic-loop interceptor, /v1/containers, the control API, sandbox
// lifecycle events and the idle-TTL sweep. Create it in the proxy thread, right after the server.
class InterceptionStack : public QObject {
    Q_OBJECT
public:
    InterceptionStack(ProxyServer *server, EventBus *events, QObject *parent = nullptr);
    ~InterceptionStack() override;

    // Reads the interception settings and sandbox_tools from the server's config and wires
    // everything. False with one readable line when the config is unusable.
    bool init(const LocalSandboxOptions &localOptions, QString *error);

    // Ends every open pause (its request fails, saying the proxy stopped), deletes every
    // sandbox and stops the backends (app shutdown).
    QFuture<void> shutdown();

private:
    // previous_response_id and conversation on bridged and stateless Responses routes resolve
    // from the flow history when the bridge's in-memory store misses (issue 32).
    void wireResponseHistory();

public:
    SandboxRegistry *registry() const { return m_registry; }
    // The control API (/loopscope/v1); its flow store is set by whoever owns the store.
    ControlApi *controlApi() const { return m_control; }
    CodeInterpreterInterception *interception() const { return m_interception; }
    // Ids and sources of container files (/mnt/data); the window lists them from here.
    ContainerFileStore *fileStore() const { return m_files; }
    LocalPythonBackend *localBackend() const { return m_local; }
    // Breakpoints of every intercepted loop (exists from construction; off by default).
    PauseBroker *pauseBroker() const { return m_broker; }
    // Health of the backend new sandboxes come from (for the status bar and /health): the
    // local backend's probes run on a worker (LocalPythonBackend::selfTestInBackground), so the
    // proxy thread goes on serving; the future may finish on that worker.
    QFuture<SandboxSelfTest> probeSandbox();
    QString sandboxBackendName() const;
    QStringList warnings() const { return m_warnings; }

signals:
    // The default backend's health changed (a remote backend's probe answered): what is
    // missing, and warnings such as "isolation disabled". Emitted on the proxy thread.
    void sandboxHealthChanged(const QStringList &problems, const QStringList &warnings);

public:
    // How often idle sandboxes are swept (the registry also prunes at every plan build).
    static constexpr int kSweepIntervalMs = 30 * 1000;

private:
    QPointer<ProxyServer> m_server;
    QPointer<EventBus> m_events;
    SandboxRegistry *m_registry = nullptr;
    SandboxToolRegistry m_tools;
    LocalPythonBackend *m_local = nullptr;
    QList<SandboxBackend *> m_remoteBackends;
    CodeInterpreterInterception *m_interception = nullptr;
    AgenticLoopInterceptor *m_interceptor = nullptr;
    ContainersApi *m_containers = nullptr;
    ContainerFileStore *m_files = nullptr;
    ContainerFileImporter *m_importer = nullptr;
    ControlApi *m_control = nullptr;
    LoopInspector *m_inspector = nullptr;
    PauseBroker *m_broker = nullptr;
    QTimer m_sweep;
    // Where bridged Responses chains are looked up in the flow history (one reader: lookups
    // are rare, a missed chain after a restart or eviction).
    QThreadPool m_historyReads;
    QString m_defaultTool;
    QStringList m_warnings;
};

} // namespace loopscope
