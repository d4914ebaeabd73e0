#pragma once

#include "inspect/inspectorevent.h"
#include "models/appsettings.h"
#include "models/settingssources.h"

#include <QMainWindow>
#include <QPointer>

#include <functional>

class QAction;
class QDockWidget;
class QLabel;

namespace loopscope {

class CodePanel;
class EventBatcher;
class EventBus;
class InjectedPanel;
class LoopPanel;
class PausedBanner;
class ProxyControl;
class RawPanel;
class RequestsModel;
class RequestsPanel;
class SandboxCommands;
class SandboxRegistry;
class SandboxesModel;
class SandboxesPanel;

// The inspector: dockable panels fed only by InspectorEvents from `bus` (queued, applied in
// ~50 ms batches), sandbox deletion through `registry` (may be null: deleting is then off) and
// proxy start/stop through `proxy` (may be null in tests). None of them is owned.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    MainWindow(EventBus *bus, SandboxRegistry *registry, ProxyControl *proxy,
               QWidget *parent = nullptr);
    ~MainWindow() override;

    RequestsModel *requestsModel() const { return m_requests; }
    SandboxesModel *sandboxesModel() const { return m_sandboxes; }
    EventBatcher *eventBatcher() const { return m_batcher; }
    SandboxCommands *sandboxCommands() const { return m_commands; }

    RequestsPanel *requestsPanel() const { return m_requestsPanel; }
    LoopPanel *loopPanel() const { return m_loopPanel; }
    CodePanel *codePanel() const { return m_codePanel; }
    SandboxesPanel *sandboxesPanel() const { return m_sandboxesPanel; }
    InjectedPanel *injectedPanel() const { return m_injectedPanel; }
    RawPanel *rawPanel() const { return m_rawPanel; }

    QAction *startStopAction() const { return m_startStop; }
    QAction *copyUrlAction() const { return m_copyUrl; }
    QAction *connectAction() const { return m_connect; }
    QAction *clearAction() const { return m_clear; }
    QAction *findAction() const { return m_find; }
    QAction *deleteSandboxAction() const { return m_deleteSandbox; }
    QAction *settingsAction() const { return m_settingsAction; }
    QAction *pauseBeforeCodeAction() const { return m_pauseBeforeCode; }
    PausedBanner *pausedBanner() const { return m_pausedBanner; }

    QLabel *listenLabel() const { return m_listenLabel; }
    QLabel *upstreamLabel() const { return m_upstreamLabel; }
    QLabel *sandboxLabel() const { return m_sandboxLabel; }
    QLabel *countsLabel() const { return m_countsLabel; }

    const AppSettings &settings() const { return m_settings; }
    // The settings in effect (the proxy's, with the window's own retention and theme).
    SettingsSources settingsInEffect() const;
    // Asked before destructive actions (Clear requests); true goes ahead. Tests replace it.
    void setConfirm(std::function<bool(const QString &, const QString &)> confirm) {
        m_confirm = std::move(confirm);
    }

public slots:
    void clearRequests();
    // Ctrl+L: asks (saying how many), then clearRequests().
    void confirmClearRequests();
    void copyBaseUrl();
    void showConnectDialog();
    void showSettings();
    void applySettings(const loopscope::AppSettings &settings);
    void showAbout();
    void toggleProxy();
    // For a restarted proxy: its new registry (null while stopped). Sandbox rows are left to
    // the registry's events.
    void setSandboxRegistry(loopscope::SandboxRegistry *registry);
    void refreshProxyState();
    // Writes a screenshot of the window (QWidget::grab) to `path`.
    bool saveScreenshot(const QString &path);

signals:
    void settingsChanged(const loopscope::AppSettings &settings);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createPanels();
    void createActions();
    void createStatusBar();
    QDockWidget *addPanel(QWidget *panel, const QString &title, const QString &objectName);
    void applyBatch(const QList<loopscope::InspectorEvent> &events);
    void showRequest(const QString &requestId);
    void refreshSelectedRequest();
    void updateCounts();
    void setUpScreenshotFromEnvironment();

    QPointer<ProxyControl> m_proxy;
    AppSettings m_settings;
    std::function<bool(const QString &, const QString &)> m_confirm;
    EventBatcher *m_batcher;
    RequestsModel *m_requests;
    SandboxesModel *m_sandboxes;
    SandboxCommands *m_commands;

    RequestsPanel *m_requestsPanel = nullptr;
    LoopPanel *m_loopPanel = nullptr;
    CodePanel *m_codePanel = nullptr;
    SandboxesPanel *m_sandboxesPanel = nullptr;
    InjectedPanel *m_injectedPanel = nullptr;
    RawPanel *m_rawPanel = nullptr;
    QList<QDockWidget *> m_docks;

    QAction *m_startStop = nullptr;
    QAction *m_copyUrl = nullptr;
    QAction *m_connect = nullptr;
    QAction *m_clear = nullptr;
    QAction *m_find = nullptr;
    QAction *m_deleteSandbox = nullptr;
    QAction *m_settingsAction = nullptr;
    QAction *m_pauseBeforeCode = nullptr;
    PausedBanner *m_pausedBanner = nullptr;
    QDockWidget *m_pausedDock = nullptr;

    QLabel *m_listenLabel = nullptr;
    QLabel *m_upstreamLabel = nullptr;
    QLabel *m_sandboxLabel = nullptr;
    QLabel *m_countsLabel = nullptr;

    QString m_currentRequest;
    int m_finishedSinceStart = 0;
    // LOOPSCOPE_SCREENSHOT=<png> [LOOPSCOPE_SCREENSHOT_AFTER=<n finished requests>]: grab the
    // window once n requests finished, then quit (scripts/screenshot).
    QString m_screenshotPath;
    QString m_pausedScreenshotPath;
    int m_screenshotAfter = 0;
};

} // namespace loopscope
