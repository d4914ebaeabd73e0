#include "runtime/proxyservice.h"

#include "common/futurechain.h"
#include "control/controlapi.h"
#include "inspect/textformat.h"
#include "loop/pausebroker.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyserver.h"
#include "record/flowstore.h"
#include "sandbox/local/localsandboxoptions.h"
#include "sandbox/sandboxregistry.h"
#include "telemetry/otlpexporter.h"

#include <QDeadlineTimer>
#include <QTextStream>
#include <QTimer>

#include <memory>
#include <utility>

namespace loopscope {

ProxyService::ProxyService(EventBus *events, QObject *parent)
    : QObject(parent)
    , m_events(events) {
    m_thread.setObjectName(QStringLiteral("loopscope-proxy"));
    connect(&m_thread, &QThread::finished, this, &ProxyService::stopped);
}

namespace {

FlowStoreOptions historyOptions(const ProxyConfig &config) {
    FlowStoreOptions options;
    options.inMemory = config.noHistory;
    if (!config.dataDir.isEmpty())
        options.path = config.dataDir + QStringLiteral("/history.sqlite3");
    options.maxDays = config.historyMaxDays;
    options.maxBytes = config.historyMaxBytes;
    options.prices = config.modelPrices;
    return options;
}

} // namespace

ProxyService::~ProxyService() {
    if (m_thread.isRunning()) {
        // Window close and a signal in the window both end here: the same bounded stop as
        // headless, so remote sandboxes (Jupyter kernels, e2b) are deleted, not abandoned to
        // the backends' destructors. The proxy thread needs nothing from this one meanwhile.
        stop();
        m_thread.wait(QDeadlineTimer(m_shutdownTimeoutMs + kServerGraceMs + 2000));
    }
    if (m_thread.isRunning()) {
        QMetaObject::invokeMethod(
            m_anchor, [this] { delete m_live.server.data(); }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    delete m_anchor;
}

bool ProxyService::start(const ProxyConfig &config, QString *error) {
    if (!m_store) {
        auto store = std::make_unique<FlowStore>(historyOptions(config));
        QString storeError;
        if (!store->open(&storeError)) {
            if (error)
                *error = QStringLiteral("flow history: ") + storeError;
            return false;
        }
        store->attach(m_events);
        m_store = std::move(store);
    }
    if (config.otlp.enabled() && !m_exporter)
        m_exporter = std::make_unique<OtlpExporter>(config.otlp, m_store.get(), m_events);
    // A restart (Stop then Start in the window) gets a fresh anchor and a fresh stop state.
    delete m_anchor;
    m_stopping = false;
    m_url.clear();
    m_sandboxHealthKnown = false;
    m_shutdownTimeoutMs = qMax(0, config.shutdownTimeoutMs);
    m_anchor = new QObject;
    m_anchor->moveToThread(&m_thread);
    m_thread.start();
    bool ok = false;
    QMetaObject::invokeMethod(
        m_anchor,
        [this, &config, &ok, error] {
            // Every way out of here leaves m_live empty or pointing at live objects: the
            // QPointers go null with the server that owns them all.
            auto *server = new ProxyServer(config);
            server->setEventBus(m_events);
            server->setFlowStore(m_store.get());
            server->setResponseChains(m_responseChains);
            auto *stack = new InterceptionStack(server, m_events, server);
            LocalSandboxOptions sandbox;
            if (config.execTimeoutSeconds > 0)
                sandbox.timeoutMs = config.execTimeoutSeconds * 1000;
            sandbox.poolSize = qMax(0, config.sandboxPoolSize);
            sandbox.poolMaxSize = qMax(sandbox.poolSize, config.sandboxPoolMax);
            sandbox.allowUnisolated = config.allowUnisolated;
            sandbox.zygote = config.sandboxZygote;
            if (m_sandboxOptionsHook)
                m_sandboxOptionsHook(sandbox);
            if (!stack->init(sandbox, error) || !server->listen()) {
                if (error && error->isEmpty())
                    *error = server->errorString();
                delete server;
                return;
            }
            ok = true;
            m_live = {server, stack, stack->registry(), stack->pauseBroker(), stack->controlApi()};
            m_sandboxBackend = stack->sandboxBackendName();
            m_url = server->listenUrl();
            connect(stack, &InterceptionStack::sandboxHealthChanged, this,
                    [this](const QStringList &problems, const QStringList &warnings) {
                        m_sandboxProblems = problems;
                        m_sandboxWarnings = warnings;
                        emit sandboxHealthChanged();
                    });
            connect(server, &ProxyServer::requestLogged, this, &ProxyService::requestLogged);
            connect(server, &ProxyServer::stopped, m_anchor, [this] {
                if (m_live.server)
                    m_live.server->deleteLater();
                m_live = {};
                m_thread.quit();
            });
        },
        Qt::BlockingQueuedConnection);
    if (!ok) {
        m_thread.quit();
        m_thread.wait();
        return false;
    }
    // The self-test starts a real probe sandbox and probes libraries (seconds when bwrap
    // hangs): on a worker (InterceptionStack::probeSandbox), so neither the window, the
    // listening line nor a request served meanwhile waits for it. Its answer arrives here
    // through sandboxHealthChanged().
    post([this](const Live &live) {
        if (!live.stack)
            return;
        whenFinished(live.stack->probeSandbox(), m_anchor,
                     [this](const QFuture<SandboxSelfTest> &f) {
                         const SandboxSelfTest health = resultOr(f, SandboxSelfTest{});
                         QMetaObject::invokeMethod(this, [this, health] {
                             m_sandboxProblems = health.problems;
                             m_sandboxWarnings = health.warnings;
                             m_sandboxIsolated = health.isolated;
                             m_sandboxHealthKnown = true;
                             emit sandboxHealthChanged();
                         });
                     });
    });
    emit listening(m_url);
    return true;
}

bool ProxyService::post(std::function<void(const Live &)> work) {
    if (!m_anchor || !m_thread.isRunning() || m_stopping)
        return false;
    QMetaObject::invokeMethod(m_anchor, [this, work = std::move(work)] { work(m_live); });
    return true;
}

bool ProxyService::withRegistry(std::function<void(SandboxRegistry *)> work) {
    return post([work = std::move(work)](const Live &live) {
        if (live.registry)
            work(live.registry);
    });
}

bool ProxyService::withPauseBroker(std::function<void(PauseBroker *)> work) {
    return post([work = std::move(work)](const Live &live) {
        if (live.broker)
            work(live.broker);
    });
}

bool ProxyService::withControlApi(std::function<void(ControlApi *)> work) {
    return post([work = std::move(work)](const Live &live) { work(live.control.data()); });
}

void ProxyService::stop() {
    if (m_stopping || !m_thread.isRunning())
        return;
    m_stopping = true;
    const int timeoutMs = m_shutdownTimeoutMs;
    QMetaObject::invokeMethod(m_anchor, [this, timeoutMs] {
        if (!m_live.server || !m_live.stack) {
            m_thread.quit();
            return;
        }
        const QPointer<SandboxRegistry> registry = m_live.registry;
        const int live = registry ? registry->liveCount() : 0;
        if (live > 0)
            logLine(QStringLiteral("stopping: deleting %1, waiting up to %2 "
                                   "(general_settings.shutdown_timeout)")
                        .arg(textformat::plural(live, QStringLiteral("sandbox"),
                                                QStringLiteral("sandboxes")),
                             textformat::formatDuration(timeoutMs)));
        // Sandboxes go first (no process or remote kernel outlives the app), then in-flight
        // responses finish. Bounded: a remote backend that does not answer cannot hold quit.
        auto proceeded = std::make_shared<bool>(false);
        auto proceed = [this, proceeded, timeoutMs, registry](bool timedOut) {
            if (std::exchange(*proceeded, true))
                return;
            if (timedOut && registry && registry->liveCount() > 0) {
                QStringList ids;
                for (const SandboxEntry &entry : registry->entries())
                    ids << entry.handle.id;
                logLine(QStringLiteral("stopping: gave up after %1 with %2 unanswered; they "
                                       "may outlive Loopscope: %3")
                            .arg(textformat::formatDuration(timeoutMs),
                                 textformat::plural(registry->liveCount(),
                                                    QStringLiteral("sandbox delete")))
                            .arg(ids.isEmpty() ? QStringLiteral("(ids not known yet)")
                                               : ids.join(QStringLiteral(", "))));
            }
            if (m_live.server)
                m_live.server->shutdown();
        };
        whenFinished(m_live.stack->shutdown(), m_anchor,
                     [proceed](const QFuture<void> &) { proceed(false); });
        QTimer::singleShot(timeoutMs, m_anchor, [proceed] { proceed(true); });
    });
}

void ProxyService::logLine(const QString &line) {
    QTextStream(stderr) << "loopscope: " << line << Qt::endl;
}

} // namespace loopscope
