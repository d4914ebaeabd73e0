#pragma once

#include "proxy/proxyconfig.h"
#include "widgets/proxycontrol.h"

#include <QPointer>
#include <QThreadPool>

#include <functional>

namespace loopscope {
class MainWindow;
class ProxyService;
} // namespace loopscope

// The window's handle on the proxy: ProxyService (its own thread) behind ProxyControl.
// Start/stop run the same ProxyService; the window reaches the proxy thread's objects only
// through the service's queued calls (withRegistry, withPauseBroker, withControlApi), never
// by pointer.
class ServiceProxyControl : public loopscope::ProxyControl {
    Q_OBJECT
public:
    // `sources`: the settings in effect at start (CommandLine::settingsInEffect), already
    // written into `config`.
    ServiceProxyControl(loopscope::ProxyService *service, loopscope::ProxyConfig config,
                        loopscope::SettingsSources sources = {}, QObject *parent = nullptr);
    ~ServiceProxyControl() override;

    // Wires `window` to the service: its sandbox commands go through
    // ProxyService::withRegistry, and are on while the proxy runs.
    void attachWindow(loopscope::MainWindow *window);

    QUrl listenUrl() const override;
    QString upstream() const override;
    bool isRunning() const override { return m_running; }
    QString sandboxBackend() const override;
    QString sandboxSelfTest() const override;
    QStringList skippedModels() const override { return m_config.warnings; }
    loopscope::SettingsSources settingsInEffect() const override { return m_sources; }
    QString suggestedModel() const override;

public slots:
    void start() override;
    void stop() override;
    void applySettings(const loopscope::AppSettings &settings) override;
    void setPauseBeforeCode(bool on) override;
    void resolvePause(const QString &pauseId, const QJsonObject &decision) override;
    void autoApprovePauses(const QString &sessionOrFlowId) override;
    void replayFlow(const QString &flowId, const QJsonValue &editedBody) override;

private:
    loopscope::ProxyService *m_service;
    loopscope::ProxyConfig m_config;
    loopscope::SettingsSources m_sources;
    bool m_restarting = false; // a settings restart: restarted() follows the next start
    bool m_running = false;
    bool m_restartWhenStopped = false;
    bool m_pauseBeforeCode = false;           // re-applied when a restart brings a new broker
    QPointer<loopscope::MainWindow> m_window; // attachWindow(); this thread
    // Store reads for replay: own threads, ended (with their read connections) before the
    // store, which the service owns and outlives this control.
    QThreadPool m_reads;
};
