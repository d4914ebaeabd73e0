#pragma once

#include "proxy/proxyconfig.h"
#include "widgets/proxycontrol.h"

#include <QThreadPool>

#include <functional>

namespace loopscope {
class SandboxRegistry;
}

class ProxyService;

// The window's handle on the proxy: ProxyService (its own thread) behind ProxyControl.
// Start/stop run the same ProxyService, so a restart brings a new SandboxRegistry, handed to
// the window through `onRegistryChanged`.
class ServiceProxyControl : public loopscope::ProxyControl {
    Q_OBJECT
public:
    // `sources`: the settings in effect at start (CommandLine::settingsInEffect), already
    // written into `config`.
    ServiceProxyControl(ProxyService *service, loopscope::ProxyConfig config,
                        loopscope::SettingsSources sources = {}, QObject *parent = nullptr);
    ~ServiceProxyControl() override;

    std::function<void(loopscope::SandboxRegistry *)> onRegistryChanged;

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
    ProxyService *m_service;
    loopscope::ProxyConfig m_config;
    loopscope::SettingsSources m_sources;
    bool m_restarting = false; // a settings restart: restarted() follows the next start
    bool m_running = false;
    bool m_restartWhenStopped = false;
    bool m_pauseBeforeCode = false; // re-applied when a restart brings a new broker
    // Store reads for replay: own threads, ended (with their read connections) before the
    // store, which the service owns and outlives this control.
    QThreadPool m_reads;
};
