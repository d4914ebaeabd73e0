#include "serviceproxycontrol.h"

#include "commandline.h"

#include "common/futurechain.h"
#include "control/controlapi.h"
#include "loop/pausebroker.h"
#include "models/sandboxcommands.h"
#include "record/flowstore.h"
#include "runtime/proxyservice.h"
#include "widgets/mainwindow.h"

#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

ServiceProxyControl::ServiceProxyControl(loopscope::ProxyService *service,
                                         loopscope::ProxyConfig config,
                                         loopscope::SettingsSources sources, QObject *parent)
    : ProxyControl(parent)
    , m_service(service)
    , m_config(std::move(config))
    , m_sources(std::move(sources))
    , m_running(!service->listenUrl().isEmpty()) {
    connect(service, &loopscope::ProxyService::sandboxHealthChanged, this,
            &ProxyControl::stateChanged);
    connect(service, &loopscope::ProxyService::stopped, this, [this] {
        m_running = false;
        if (m_window)
            m_window->sandboxCommands()->setAvailable(false);
        emit stateChanged();
        if (std::exchange(m_restartWhenStopped, false))
            start();
    });
}

ServiceProxyControl::~ServiceProxyControl() {
    m_reads.waitForDone();
}

void ServiceProxyControl::attachWindow(loopscope::MainWindow *window) {
    m_window = window;
    loopscope::ProxyService *service = m_service; // outlives the window and this control
    window->sandboxCommands()->setDispatcher(
        [service](std::function<void(loopscope::SandboxRegistry *)> work) {
            return service->withRegistry(std::move(work));
        });
    window->sandboxCommands()->setAvailable(m_running);
}

QUrl ServiceProxyControl::listenUrl() const {
    if (!m_service->listenUrl().isEmpty())
        return QUrl(m_service->listenUrl());
    return QUrl(QStringLiteral("http://%1:%2").arg(m_config.host).arg(m_config.port));
}

QString ServiceProxyControl::upstream() const {
    if (!m_config.defaultRoute)
        return m_config.configPath.isEmpty() ? QStringLiteral("none") : m_config.configPath;
    return m_config.defaultRoute->isDemo() ? QStringLiteral("demo")
                                           : m_config.defaultRoute->baseUrl.toString();
}

QString ServiceProxyControl::suggestedModel() const {
    return CommandLine::suggestedModel(m_config);
}

QString ServiceProxyControl::sandboxBackend() const {
    return m_service->sandboxBackend();
}

QString ServiceProxyControl::sandboxSelfTest() const {
    QStringList lines = m_service->sandboxProblems();
    if (!m_service->sandboxIsolated()) // flagged loudly: the status bar shows ✗ with the reason
        lines << m_service->sandboxWarnings();
    return lines.join(u'\n');
}

void ServiceProxyControl::start() {
    if (m_running)
        return;
    QString error;
    m_running = m_service->start(m_config, &error);
    if (!m_running)
        emit errorOccurred(QStringLiteral("Could not start the proxy: ") + error);
    if (m_window)
        m_window->sandboxCommands()->setAvailable(m_running);
    if (m_running && m_pauseBeforeCode) // a restarted proxy has a new broker
        setPauseBeforeCode(true);
    emit stateChanged();
    if (m_running && std::exchange(m_restarting, false))
        emit restarted(listenUrl());
}

void ServiceProxyControl::stop() {
    if (m_running)
        m_service->stop(); // stopped() follows
}

void ServiceProxyControl::applySettings(const loopscope::AppSettings &settings) {
    // Only what the user changed counts: values locked by the command line or the config file
    // stay, window-only settings never touch the proxy, and a proxy setting restarts it (the
    // dialog said so and asked first). Saving them is the window's business.
    const bool restart = m_sources.needsRestart(settings);
    loopscope::SettingsSources next = m_sources;
    next.adopt(settings);
    if (!restart) {
        m_sources = next;
        return;
    }
    loopscope::ProxyConfig config = m_config;
    QString error;
    if (!CommandLine::applyToConfig(next, &config, &error)) {
        emit errorOccurred(error); // nothing restarts for an unusable upstream
        return;
    }
    m_sources = next;
    m_config = config;
    if (m_running) {
        m_restarting = true;
        m_restartWhenStopped = true;
        stop();
    }
}

// The broker and the control API live on the proxy thread: every call is queued there through
// the service, which runs it only while they exist (a restart brings new ones).
void ServiceProxyControl::setPauseBeforeCode(bool on) {
    m_pauseBeforeCode = on;
    m_service->withPauseBroker([on](loopscope::PauseBroker *broker) {
        loopscope::BreakpointSettings settings = broker->settings();
        settings.code = on;
        broker->setSettings(settings);
    });
}

void ServiceProxyControl::resolvePause(const QString &pauseId, const QJsonObject &decision) {
    // The Resumed event updates the window; a pause of a proxy since stopped is gone already
    // (its request failed when the proxy stopped), and the new broker does not know its id.
    m_service->withPauseBroker([pauseId, decision](loopscope::PauseBroker *broker) {
        broker->resolve(pauseId, decision);
    });
}

void ServiceProxyControl::autoApprovePauses(const QString &sessionOrFlowId) {
    m_service->withPauseBroker([sessionOrFlowId](loopscope::PauseBroker *broker) {
        broker->setAutoApprove(sessionOrFlowId, true);
    });
}

// The window's Replay: the flow is read on a worker, replayed by the control API on the proxy
// thread (where it lives), and the answer comes back here as replayFinished.
void ServiceProxyControl::replayFlow(const QString &flowId, const QJsonValue &editedBody) {
    loopscope::FlowStore *store = m_service->flowStore();
    if (!m_running || !store) {
        emit replayFinished(flowId, {}, QStringLiteral("the proxy is not running"));
        return;
    }
    const loopscope::FlowQuery *query = store->query();
    auto read = QtConcurrent::run(&m_reads, [query, flowId] { return query->flow(flowId); });
    loopscope::whenFinished(read, this, [this, flowId, editedBody](const auto &f) {
        const std::optional<QJsonObject> flow =
            loopscope::resultOr(f, std::optional<QJsonObject>());
        if (!flow) {
            emit replayFinished(flowId, {},
                                QStringLiteral("no flow %1 in the history").arg(flowId));
            return;
        }
        QPointer<ServiceProxyControl> self = this;
        const bool queued = m_service->withControlApi(
            [self, flowId, editedBody, flow = *flow](loopscope::ControlApi *api) {
                const auto result = api ? api->replayRecorded(flow, editedBody)
                                        : loopscope::ControlApi::ReplayResult{};
                const QString message =
                    api ? result.message : QStringLiteral("the proxy is not running");
                QMetaObject::invokeMethod(self.data(), [self, flowId, result, message] {
                    if (self)
                        emit self->replayFinished(flowId, result.flowId, message);
                });
            });
        if (!queued)
            emit replayFinished(flowId, {}, QStringLiteral("the proxy is not running"));
    });
}
