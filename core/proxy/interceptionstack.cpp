#include "proxy/interceptionstack.h"

#include "common/futurechain.h"
#include "config/yamldocument.h"
#include "control/controlapi.h"
#include "inspect/eventbus.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionsettings.h"
#include "loop/agenticloopinterceptor.h"
#include "loop/containerfileimporter.h"
#include "loop/loopinspector.h"
#include "loop/pausebroker.h"
#include "proxy/containersapi.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "record/flowstore.h"
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/remote/e2bbackend.h"
#include "sandbox/remote/jupyterbackend.h"
#include "sandbox/sandboxregistry.h"
#include "sandbox/sandboxtoolregistry.h"
#include "upstream/responsesbridge.h"
#include "upstream/upstreamclient.h"

#include <QtConcurrent/QtConcurrentRun>

namespace loopscope {

InterceptionStack::InterceptionStack(ProxyServer *server, EventBus *events, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_events(events)
    , m_broker(new PauseBroker(events, this)) {
    // One bus for the front's flow events and the loop's: the flow store folds both.
    if (server && events && !server->eventBus())
        server->setEventBus(events);
}

InterceptionStack::~InterceptionStack() = default;

bool InterceptionStack::init(const LocalSandboxOptions &localOptions, QString *error) {
    const ProxyConfig &config = m_server->config();
    InterceptionSettings settings;
    QJsonArray sandboxTools = config.sandboxTools;
    if (config.document) {
        const LoadedInterceptionConfig loaded = InterceptionSettings::fromYaml(*config.document);
        if (!loaded.ok()) {
            if (error)
                *error = loaded.errors.first();
            return false;
        }
        settings = loaded.settings;
        sandboxTools = loaded.sandboxTools;
        m_warnings << loaded.warnings;
    }

    m_registry = new SandboxRegistry(this);
    m_registry->setMaxLive(config.maxLiveSandboxes);
    m_registry->setMaxSessions(config.maxSessionSandboxes);
    m_registry->setQueueMax(config.sandboxQueueMax);
    m_registry->setQueueTimeoutMs(config.sandboxQueueTimeoutMs);
    m_registry->setMaxIdleTtlMs(qint64(config.maxExpiresAfterMinutes) * 60 * 1000);
    m_warnings << m_tools.registerTools(sandboxTools);
    LocalSandboxOptions local = localOptions;
    if (!settings.sandboxToolName.isEmpty()) {
        // A remote backend is the one in use: no warm local interpreters nobody will ask for
        // (a sandbox_tools entry with provider local still gets its interpreters on demand).
        const auto params = m_tools.resolve(settings.sandboxToolName);
        if (params && params->provider != QLatin1String("local"))
            local.poolSize = 0;
    }
    m_local = new LocalPythonBackend(local, this);

    if (settings.sandboxToolName.isEmpty()) {
        // Loopscope's default: every sandbox is a local bubblewrap interpreter.
        m_interception = new CodeInterpreterInterception(settings, m_registry, m_local, this);
        m_defaultTool = QStringLiteral("local");
    } else {
        const auto params = m_tools.resolve(settings.sandboxToolName);
        if (!params) {
            if (error)
                *error =
                    QStringLiteral("litellm_settings.code_interpreter_interception_params."
                                   "sandbox_tool_name: no valid sandbox_tools entry named '%1'")
                        .arg(settings.sandboxToolName);
            return false;
        }
        auto *e2b = new E2bBackend(this);
        auto *jupyter = new JupyterBackend(this);
        m_remoteBackends = {e2b, jupyter};
        CodeInterpreterInterception::BackendsByProvider backends{
            {m_local->provider(), m_local}, {e2b->provider(), e2b}, {jupyter->provider(), jupyter}};
        if (!backends.contains(params->provider)) {
            if (error)
                *error = QStringLiteral("sandbox_tools: unknown sandbox_provider '%1' for '%2' "
                                        "(known: local, e2b, jupyter)")
                             .arg(params->provider, settings.sandboxToolName);
            return false;
        }
        m_interception =
            new CodeInterpreterInterception(settings, m_registry, &m_tools, backends, this);
        m_defaultTool = params->provider;
        // Reachable? Authorised? The answer lands in selfTest() for the status bar.
        const QFuture<SandboxSelfTest> probe =
            params->provider == e2b->provider() ? e2b->probe(*params) : jupyter->probe(*params);
        if (params->provider == e2b->provider() || params->provider == jupyter->provider()) {
            whenFinished(probe, this, [this](const QFuture<SandboxSelfTest> &answered) {
                const SandboxSelfTest health = resultOr(answered, SandboxSelfTest{});
                emit sandboxHealthChanged(health.problems, health.warnings);
            });
        }
    }

    m_interception->setMaxOutputChars(config.maxOutputChars);
    m_interceptor =
        new AgenticLoopInterceptor(m_interception, m_server->upstream(), m_events, this);
    m_interceptor->setPauseBroker(m_broker);
    m_server->addInterceptor(m_interceptor);
    m_files = new ContainerFileStore(this);
    m_interception->setFileStore(m_files);
    // A deleted container's files go with it.
    connect(m_registry, &SandboxRegistry::sandboxRemoved, m_files,
            [this](const SandboxEntry &entry) { m_files->forget(entry.handle.id); });
    m_importer = new ContainerFileImporter(m_server->upstream(), m_files, this);
    m_containers = new ContainersApi(m_registry, this);
    m_containers->setFileStore(m_files);
    m_containers->setContainerCreator(
        [interception = QPointer<CodeInterpreterInterception>(m_interception)](
            const QString &identity, const QString &sessionId) {
            if (!interception)
                return QtFuture::makeReadyFuture(
                    Outcome<SandboxEntry>::failure(QStringLiteral("interception is gone")));
            // The same key a request with metadata.session_id gets (preCallDeploymentHook).
            const QString key = identity.isEmpty() ? sessionId : identity + u':' + sessionId;
            return interception->getOrCreateContainer(key, identity, sessionId);
        });
    m_containers->setFileImporter(m_importer, [server = m_server](const HttpRequest &request) {
        return server ? server->filesRoute(request) : std::nullopt;
    });
    m_server->setContainersApi(m_containers);
    m_control = new ControlApi(m_events, this);
    m_control->setRegistry(m_registry);
    m_control->setPauseBroker(m_broker);
    m_control->setFlowStore(m_server->flowStore());
    m_server->setControlApi(m_control);
    wireResponseHistory();
    if (m_events && !m_server->eventBus())
        m_server->setEventBus(m_events); // every exchange becomes a flow
    if (m_events)
        m_inspector = new LoopInspector(m_registry, m_events, this);

    m_sweep.setInterval(kSweepIntervalMs);
    connect(&m_sweep, &QTimer::timeout, m_registry, [this] { m_registry->pruneExpired(); });
    m_sweep.start();
    for (const QString &w : std::as_const(m_warnings))
        qWarning().noquote() << "loopscope:" << w;
    return true;
}

void InterceptionStack::wireResponseHistory() {
    FlowStore *store = m_server->flowStore();
    if (!store || !store->query())
        return;
    m_historyReads.setMaxThreadCount(1);
    m_historyReads.setExpiryTimeout(-1); // keeps its read connection
    m_historyReads.setObjectName(QStringLiteral("loopscope-chains"));
    // The store outlives the proxy (ProxyService owns both); FlowQuery is thread-safe.
    const FlowQuery *flows = store->query();
    QPointer<QThreadPool> pool = &m_historyReads; // null once this stack is gone
    m_server->upstream()->bridge()->setHistory(
        [flows, pool](const QString &responseId) {
            if (!pool)
                return QtFuture::makeReadyFuture(std::optional<QJsonArray>());
            return QtConcurrent::run(
                pool.data(), [flows, responseId] { return flows->responseChain(responseId); });
        },
        [flows, pool](const QString &conversationId) {
            if (!pool)
                return QtFuture::makeReadyFuture(QString());
            return QtConcurrent::run(pool.data(), [flows, conversationId] {
                return flows->conversationHead(conversationId);
            });
        });
}

QFuture<void> InterceptionStack::shutdown() {
    m_sweep.stop();
    // Nobody will resolve a pause now: its loop fails with the reason, then its sandbox goes.
    m_broker->abortAll(QStringLiteral("The proxy stopped while this request was paused at a "
                                      "breakpoint."));
    if (!m_registry)
        return QtFuture::makeReadyFuture();
    auto done = startedPromise<void>();
    whenFinished(m_registry->removeAll(SandboxRemovalReason::Shutdown), this,
                 [this, done](const QFuture<void> &) {
                     if (m_local)
                         m_local->shutdown();
                     done->finish();
                 });
    return done->future();
}

QFuture<SandboxSelfTest> InterceptionStack::probeSandbox() {
    if (m_defaultTool == QLatin1String("local") || m_remoteBackends.isEmpty())
        return m_local ? m_local->selfTestInBackground()
                       : QtFuture::makeReadyFuture(SandboxSelfTest{});
    // A remote backend's own probe is asynchronous already; this is its last answer.
    for (SandboxBackend *backend : std::as_const(m_remoteBackends))
        if (backend->provider() == m_defaultTool)
            return QtFuture::makeReadyFuture(backend->selfTest());
    return QtFuture::makeReadyFuture(SandboxSelfTest{});
}

QString InterceptionStack::sandboxBackendName() const {
    return m_defaultTool;
}

} // namespace loopscope
