#pragma once

#include "inspect/inspectorevent.h"
#include "models/appsettings.h"
#include "models/settingssources.h"

#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QMainWindow>
#include <QPointer>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;

namespace loopscope {

class CodePanel;
class EventBatcher;
class EventBus;
class FlowDetailLoader;
class FlowListModel;
class FlowQueryClient;
class FlowStore;
class FlowSummaryMailbox;
class InjectedPanel;
class LoopPanel;
class PausedBanner;
class ProxyControl;
class ConversationView;
class HttpInspector;
class RequestsPanel;
class HistoryCommands;
class RunsModel;
class RunsPanel;
class SandboxCommands;
class SandboxRegistry;
class SandboxesModel;
class SandboxesPanel;

// The inspector: dockable panels fed only by InspectorEvents from `bus` (queued, applied in
// ~50 ms batches), sandbox deletion through sandboxCommands() and proxy start/stop through
// `proxy` (may be null in tests). None of them is owned. The app gives no `registry` (the
// proxy's lives on another thread): it wires the commands to the proxy thread's queued calls
// (ServiceProxyControl::attachWindow); tests may hand over one of their own (null: deleting
// is off).
// With a flow store (setFlowStore) the Requests and Runs views read the stored history, the
// selected flow is loaded on a worker (flowLoaded), and File offers HAR export/import and
// Clear history; rows have Replay, Edit and resend, Copy id, Export HAR and Delete.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // What the window asks the user; replaceable so tests never open a modal dialog.
    struct Prompts {
        // A file to write (HAR export); empty = cancelled.
        std::function<QString(const QString &title, const QString &suggestedName)> saveFile;
        // A file to read (HAR import); empty = cancelled.
        std::function<QString(const QString &title)> openFile;
        // A yes/no question (Clear history, Delete).
        std::function<bool(const QString &question)> confirm;
        // A problem the user must read (a bad HAR file, a refused replay).
        std::function<void(const QString &message)> error;
        // Edit and resend: the client request body, edited; nullopt = cancelled.
        std::function<std::optional<QJsonObject>(const QJsonObject &body)> editBody;
    };

    MainWindow(EventBus *bus, SandboxRegistry *registry, ProxyControl *proxy,
               QWidget *parent = nullptr);
    ~MainWindow() override;

    // The history the Requests/Runs views and the detail loader read (not owned; must outlive
    // the window). Null: those views stay empty.
    void setFlowStore(loopscope::FlowStore *store);
    FlowStore *flowStore() const;
    void setPrompts(Prompts prompts);
    const Prompts &prompts() const { return m_prompts; }

    FlowQueryClient *flowQueryClient() const { return m_queryClient; }
    FlowListModel *flowListModel() const { return m_flowList; }
    FlowDetailLoader *flowDetailLoader() const { return m_detailLoader; }
    RunsModel *runsModel() const { return m_runs; }
    RunsPanel *runsPanel() const { return m_runsPanel; }
    // The flow shown (selected in Requests or Runs); empty when none.
    QString currentFlowId() const { return m_currentRequest; }

    QAction *exportSelectionAction() const { return m_exportSelection; }
    QAction *exportRunAction() const { return m_exportRun; }
    QAction *exportAllAction() const { return m_exportAll; }
    QAction *importAction() const { return m_import; }
    QAction *searchAllAction() const { return m_searchAll; }
    QAction *replayAction() const { return m_replay; }
    QAction *editResendAction() const { return m_editResend; }
    QAction *copyIdAction() const { return m_copyId; }
    QAction *exportFlowAction() const { return m_exportFlow; }
    QAction *deleteFlowAction() const { return m_deleteFlow; }
    // Diffs the shown flow's conversation against the flow shown before it.
    QAction *compareFlowsAction() const { return m_compareFlows; }
    const QJsonObject &previousFlow() const { return m_previousFlow; }
    // The right-click menu of a request row (its actions act on the current flow).
    QMenu *requestContextMenu() const { return m_rowMenu; }

    SandboxesModel *sandboxesModel() const { return m_sandboxes; }
    EventBatcher *eventBatcher() const { return m_batcher; }
    SandboxCommands *sandboxCommands() const { return m_commands; }

    RequestsPanel *requestsPanel() const { return m_requestsPanel; }
    LoopPanel *loopPanel() const { return m_loopPanel; }
    CodePanel *codePanel() const { return m_codePanel; }
    SandboxesPanel *sandboxesPanel() const { return m_sandboxesPanel; }
    InjectedPanel *injectedPanel() const { return m_injectedPanel; }
    ConversationView *conversationView() const { return m_conversation; }
    HttpInspector *httpInspector() const { return m_httpInspector; }
    // The flow every detail panel shows (FlowDetailLoader's last answer).
    const QJsonObject &currentFlow() const { return m_currentFlow; }

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
    // History not written (the disk refuses) and what bounded queues dropped; hidden when
    // there is nothing to say.
    QLabel *healthLabel() const { return m_healthLabel; }

    const AppSettings &settings() const { return m_settings; }
    // The settings in effect (the proxy's, with the window's own retention and theme).
    SettingsSources settingsInEffect() const;

public slots:
    // Empties the detail panels (after Clear history).
    void clearRequests();
    // Asks ("Clear 1,234 flows from history?"), then empties the store and every view.
    void clearHistory();
    // Selects and shows a flow (Requests row when loaded, else loaded directly).
    void selectFlow(const QString &flowId);
    // HAR export of the selected flow, the selected flow's run, or every flow; to a file
    // from Prompts::saveFile. Written on a worker; the status bar says how it went.
    void exportSelection();
    void exportCurrentRun();
    void exportAll();
    void importHar();
    void replayCurrent();
    void editAndResendCurrent();
    void copyCurrentId();
    void deleteCurrent();
    void copyBaseUrl();
    void showConnectDialog();
    void showSettings();
    void applySettings(const loopscope::AppSettings &settings);
    void showAbout();
    void toggleProxy();
    // Tests: a registry of their own made again (null: none). Sandbox rows are left to the
    // registry's events.
    void setSandboxRegistry(loopscope::SandboxRegistry *registry);
    void refreshProxyState();
    // Writes a screenshot of the window (QWidget::grab) to `path`.
    bool saveScreenshot(const QString &path);

signals:
    void settingsChanged(const loopscope::AppSettings &settings);
    // The selected flow in full (FlowQuery::flow JSON: summary + hops), loaded on a worker and
    // re-sent when the store reports it changed; {} when nothing is selected. Detail panels'
    // setFlow() connect here.
    void flowLoaded(const QJsonObject &flow);
    // A HAR export/import finished (tests, scripts): ok, and the file or the error.
    void exportFinished(bool ok, const QString &pathOrError);
    void importFinished(int imported, const QString &error);
    void historyCleared(int removed);
    void flowDeleted(const QString &flowId, bool removed);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createPanels();
    void createActions();
    void createStatusBar();
    QDockWidget *addPanel(QWidget *panel, const QString &title, const QString &objectName);
    void applyBatch(const QList<loopscope::InspectorEvent> &events);
    void showRequest(const QString &requestId);
    void updateCounts();
    void updateHealth();
    void setUpScreenshotFromEnvironment();
    void createHistoryActions();
    void exportFlows(const QStringList &ids, const QString &runId, const QString &suggested);
    void onReplayFinished(const QString &flowId, const QString &newFlowId, const QString &error);
    void reportError(const QString &message);

    QPointer<ProxyControl> m_proxy;
    AppSettings m_settings;
    EventBatcher *m_batcher;
    SandboxesModel *m_sandboxes;
    SandboxCommands *m_commands;
    FlowQueryClient *m_queryClient;
    HistoryCommands *m_history; // export, import, clear, delete: the window only triggers them
    FlowListModel *m_flowList;
    FlowDetailLoader *m_detailLoader;
    RunsModel *m_runs;
    Prompts m_prompts;
    QString m_selectWhenListed; // a replay's new flow, selected once it shows up
    QJsonObject m_currentFlow;
    QJsonObject m_previousFlow;      // the flow shown before the current one (Compare)
    QTimer *m_countsTimer = nullptr; // coalesces the history count after store changes
    int m_historyCount = 0;

    RequestsPanel *m_requestsPanel = nullptr;
    LoopPanel *m_loopPanel = nullptr;
    CodePanel *m_codePanel = nullptr;
    SandboxesPanel *m_sandboxesPanel = nullptr;
    InjectedPanel *m_injectedPanel = nullptr;
    ConversationView *m_conversation = nullptr;
    HttpInspector *m_httpInspector = nullptr;
    RunsPanel *m_runsPanel = nullptr;
    QList<QDockWidget *> m_docks;

    QAction *m_startStop = nullptr;
    QAction *m_copyUrl = nullptr;
    QAction *m_connect = nullptr;
    QAction *m_clear = nullptr;
    QAction *m_find = nullptr;
    QAction *m_deleteSandbox = nullptr;
    QAction *m_settingsAction = nullptr;
    QAction *m_pauseBeforeCode = nullptr;
    QAction *m_exportSelection = nullptr;
    QAction *m_exportRun = nullptr;
    QAction *m_exportAll = nullptr;
    QAction *m_import = nullptr;
    QAction *m_searchAll = nullptr;
    QAction *m_replay = nullptr;
    QAction *m_editResend = nullptr;
    QAction *m_copyId = nullptr;
    QAction *m_exportFlow = nullptr;
    QAction *m_deleteFlow = nullptr;
    QAction *m_compareFlows = nullptr;
    QMenu *m_rowMenu = nullptr;
    PausedBanner *m_pausedBanner = nullptr;
    QDockWidget *m_pausedDock = nullptr;
    QSize m_sizeBeforePause; // the window's size before the banner showed

    QLabel *m_listenLabel = nullptr;
    QLabel *m_upstreamLabel = nullptr;
    QLabel *m_sandboxLabel = nullptr;
    QLabel *m_countsLabel = nullptr;
    QLabel *m_healthLabel = nullptr;
    QTimer *m_healthTimer = nullptr; // drop counts are atomics: read once a second
    QPointer<FlowStore> m_store;
    QPointer<FlowSummaryMailbox> m_summaries; // the store's summaries, one per flow while busy
    QHash<QString, std::shared_ptr<std::atomic<quint64>>> m_drops; // the bus's, by queue

    QString m_currentRequest;
    int m_finishedSinceStart = 0;
    // LOOPSCOPE_SCREENSHOT=<png> [LOOPSCOPE_SCREENSHOT_AFTER=<n finished requests>]: grab the
    // window once n requests finished, then quit (scripts/screenshot).
    QString m_screenshotPath;
    QString m_pausedScreenshotPath;
    int m_screenshotAfter = 0;
};

} // namespace loopscope
