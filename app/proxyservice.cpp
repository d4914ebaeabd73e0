#include "proxyservice.h"

#include "common/futurechain.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyserver.h"
#include "record/flowstore.h"
#include "sandbox/localsandboxoptions.h"
#include "telemetry/otlpexporter.h"

using loopscope::ProxyServer;

ProxyService::ProxyService(loopscope::EventBus *events, QObject *parent)
    : QObject(parent)
    , m_events(events) {
    m_thread.setObjectName(QStringLiteral("loopscope-proxy"));
    connect(&m_thread, &QThread::finished, this, &ProxyService::stopped);
}

namespace {

loopscope::FlowStoreOptions historyOptions(const loopscope::ProxyConfig &config) {
    loopscope::FlowStoreOptions options;
    options.inMemory = config.noHistory;
    if (!config.dataDir.isEmpty())
        options.path = config.dataDir + QStringLiteral("/history.sqlite3");
    options.maxDays = config.historyMaxDays;
    options.maxBytes = config.historyMaxBytes;
    for (auto it = config.modelPrices.constBegin(); it != config.modelPrices.constEnd(); ++it)
        options.prices.insert(it.key(), {it.value().first, it.value().second});
    return options;
}

} // namespace

ProxyService::~ProxyService() {
    if (m_thread.isRunning()) {
        QMetaObject::invokeMethod(
            m_anchor,
            [this] {
                delete m_server;
                m_server = nullptr;
            },
            Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    delete m_anchor;
}

bool ProxyService::start(const loopscope::ProxyConfig &config, QString *error) {
    if (!m_store) {
        auto store = std::make_unique<loopscope::FlowStore>(historyOptions(config));
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
        m_exporter =
            std::make_unique<loopscope::OtlpExporter>(config.otlp, m_store.get(), m_events);
    // A restart (Stop then Start in the window) gets a fresh anchor and a fresh stop state.
    delete m_anchor;
    m_stopping = false;
    m_registry = nullptr;
    m_anchor = new QObject;
    m_anchor->moveToThread(&m_thread);
    m_thread.start();
    bool ok = false;
    QMetaObject::invokeMethod(
        m_anchor,
        [this, &config, &ok, error] {
            m_server = new ProxyServer(config);
            m_server->setEventBus(m_events);
            m_server->setFlowStore(m_store.get());
            m_stack = new loopscope::InterceptionStack(m_server, m_events, m_server);
            loopscope::LocalSandboxOptions sandbox;
            if (config.execTimeoutSeconds > 0)
                sandbox.timeoutMs = config.execTimeoutSeconds * 1000;
            sandbox.poolSize = qMax(0, config.sandboxPoolSize);
            if (!m_stack->init(sandbox, error)) {
                delete m_server;
                m_server = nullptr;
                m_stack = nullptr;
                return;
            }
            m_registry = m_stack->registry();
            m_sandboxBackend = m_stack->sandboxBackendName();
            const loopscope::SandboxSelfTest health = m_stack->sandboxSelfTest();
            m_sandboxProblems = health.problems;
            m_sandboxWarnings = health.warnings;
            m_sandboxIsolated = health.isolated;
            connect(m_stack, &loopscope::InterceptionStack::sandboxHealthChanged, this,
                    [this](const QStringList &problems, const QStringList &warnings) {
                        m_sandboxProblems = problems;
                        m_sandboxWarnings = warnings;
                        emit sandboxHealthChanged();
                    });
            ok = m_server->listen();
            if (!ok) {
                if (error)
                    *error = m_server->errorString();
                delete m_server;
                m_server = nullptr;
                return;
            }
            m_url = m_server->listenUrl();
            connect(m_server, &ProxyServer::requestLogged, this, &ProxyService::requestLogged);
            connect(m_server, &ProxyServer::stopped, m_anchor, [this] {
                m_server->deleteLater();
                m_server = nullptr;
                m_thread.quit();
            });
        },
        Qt::BlockingQueuedConnection);
    if (!ok) {
        m_thread.quit();
        m_thread.wait();
    }
    return ok;
}

void ProxyService::stop() {
    if (m_stopping || !m_thread.isRunning())
        return;
    m_stopping = true;
    QMetaObject::invokeMethod(m_anchor, [this] {
        if (!m_server) {
            m_thread.quit();
            return;
        }
        // Sandboxes go first (no process outlives the app), then in-flight responses finish.
        loopscope::whenFinished(m_stack->shutdown(), m_anchor, [this](const QFuture<void> &) {
            if (m_server)
                m_server->shutdown();
        });
    });
}
