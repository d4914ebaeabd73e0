#include "widgets/mainwindow.h"

#include "inspect/eventbus.h"
#include "models/eventbatcher.h"
#include "models/looptimelinemodel.h"
#include "models/requestsmodel.h"
#include "models/sandboxcommands.h"
#include "models/sandboxesmodel.h"
#include "models/textformat.h"
#include "widgets/codepanel.h"
#include "widgets/connectsdkdialog.h"
#include "widgets/injectedpanel.h"
#include "widgets/looppanel.h"
#include "widgets/pausedbanner.h"
#include "widgets/proxycontrol.h"
#include "widgets/rawpanel.h"
#include "widgets/requestspanel.h"
#include "widgets/sandboxespanel.h"
#include "widgets/settingsdialog.h"
#include "widgets/theme.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QToolBar>

namespace loopscope {

MainWindow::MainWindow(EventBus *bus, SandboxRegistry *registry, ProxyControl *proxy,
                       QWidget *parent)
    : QMainWindow(parent)
    , m_proxy(proxy)
    , m_settings(AppSettings::load(QSettings()))
    , m_batcher(new EventBatcher(this))
    , m_requests(new RequestsModel(this))
    , m_sandboxes(new SandboxesModel(this))
    , m_commands(new SandboxCommands(registry, this)) {
    m_confirm = [this](const QString &title, const QString &question) {
        return QMessageBox::question(this, title, question, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    setWindowTitle(QStringLiteral("Loopscope"));
    setObjectName(QStringLiteral("LoopscopeMainWindow"));
    setWindowIcon(Theme::appIcon());
    m_requests->setRetentionLimit(m_settings.retention);
    if (bus)
        m_batcher->attach(bus);
    connect(m_batcher, &EventBatcher::batchReady, this, &MainWindow::applyBatch);

    createPanels();
    createActions();
    createStatusBar();
    if (m_proxy) {
        connect(m_proxy, &ProxyControl::stateChanged, this, &MainWindow::refreshProxyState);
        connect(m_proxy, &ProxyControl::errorOccurred, this,
                [this](const QString &message) { statusBar()->showMessage(message, 10000); });
        // settings hunk: a restart's new listening line, as the headless log prints it.
        connect(m_proxy, &ProxyControl::restarted, this, [this](const QUrl &url) {
            statusBar()->showMessage(
                tr("Proxy restarted: loopscope listening on %1").arg(url.toString()));
        });
    }
    refreshProxyState();
    updateCounts();

    resize(1280, 800);
    const QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    setUpScreenshotFromEnvironment();
}

MainWindow::~MainWindow() = default;

QDockWidget *MainWindow::addPanel(QWidget *panel, const QString &title, const QString &objectName) {
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(objectName); // saveState() needs it
    dock->setWidget(panel);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    m_docks.append(dock);
    return dock;
}

void MainWindow::createPanels() {
    m_requestsPanel = new RequestsPanel(m_requests, this);
    m_loopPanel = new LoopPanel(m_requests, this);
    m_codePanel = new CodePanel(this);
    m_sandboxesPanel = new SandboxesPanel(m_sandboxes, m_commands, this);
    m_injectedPanel = new InjectedPanel(this);
    m_rawPanel = new RawPanel(this);

    // Docks only: every panel can be moved, floated, tabbed or closed (View menu brings it back).
    setDockNestingEnabled(true);
    setDockOptions(AnimatedDocks | AllowNestedDocks | AllowTabbedDocks);
    QDockWidget *requests = addPanel(m_requestsPanel, tr("Requests"), QStringLiteral("requests"));
    QDockWidget *loop = addPanel(m_loopPanel, tr("Loop"), QStringLiteral("loop"));
    QDockWidget *code = addPanel(m_codePanel, tr("Code & output"), QStringLiteral("code"));
    QDockWidget *sandboxes =
        addPanel(m_sandboxesPanel, tr("Sandboxes"), QStringLiteral("sandboxes"));
    QDockWidget *injected =
        addPanel(m_injectedPanel, tr("Injected outputs"), QStringLiteral("injected"));
    QDockWidget *raw = addPanel(m_rawPanel, tr("Raw"), QStringLiteral("raw"));
    addDockWidget(Qt::LeftDockWidgetArea, requests);
    splitDockWidget(requests, code, Qt::Horizontal);
    splitDockWidget(requests, loop, Qt::Vertical);
    splitDockWidget(code, sandboxes, Qt::Vertical);
    tabifyDockWidget(sandboxes, injected);
    tabifyDockWidget(injected, raw);
    sandboxes->raise();
    resizeDocks({requests, code}, {700, 580}, Qt::Horizontal);
    resizeDocks({requests, loop}, {440, 280}, Qt::Vertical);
    resizeDocks({code, sandboxes}, {420, 300}, Qt::Vertical);

    // Breakpoints: a paused flow takes the top of the window until it is resolved.
    m_pausedBanner = new PausedBanner(this);
    m_pausedDock = new QDockWidget(tr("Paused"), this);
    m_pausedDock->setObjectName(QStringLiteral("paused"));
    m_pausedDock->setFeatures(QDockWidget::NoDockWidgetFeatures);
    m_pausedDock->setWidget(m_pausedBanner);
    addDockWidget(Qt::TopDockWidgetArea, m_pausedDock);
    m_pausedDock->hide();
    connect(m_pausedBanner, &PausedBanner::pendingChanged, this, [this](int count) {
        m_pausedDock->setVisible(count > 0);
        if (count > 0)
            m_pausedBanner->editor()->setFocus();
    });
    connect(m_pausedBanner, &PausedBanner::resolveRequested, this,
            [this](const QString &id, const QJsonObject &decision) {
                if (m_proxy)
                    m_proxy->resolvePause(id, decision);
            });
    connect(m_pausedBanner, &PausedBanner::autoApproveRequested, this, [this](const QString &key) {
        if (m_proxy)
            m_proxy->autoApprovePauses(key);
    });

    connect(m_requestsPanel, &RequestsPanel::currentRequestChanged, this, &MainWindow::showRequest);
    connect(m_requestsPanel, &RequestsPanel::clearRequested, this, &MainWindow::clearRequests);
    connect(m_loopPanel, &LoopPanel::codeRunSelected, m_codePanel, &CodePanel::showRun);
    connect(m_requests, &RequestsModel::requestsUpdated, this, [this](const QStringList &ids) {
        if (!m_currentRequest.isEmpty() && ids.contains(m_currentRequest))
            refreshSelectedRequest();
    });
    connect(m_requests, &RequestsModel::countsChanged, this, &MainWindow::updateCounts);
    connect(m_sandboxes, &QAbstractItemModel::rowsInserted, this, &MainWindow::updateCounts);
    connect(m_sandboxes, &QAbstractItemModel::rowsRemoved, this, &MainWindow::updateCounts);
}

void MainWindow::createActions() {
    QStyle *s = style();
    m_startStop = new QAction(this);
    connect(m_startStop, &QAction::triggered, this, &MainWindow::toggleProxy);

    m_copyUrl = new QAction(s->standardIcon(QStyle::SP_FileLinkIcon), tr("Copy base URL"), this);
    m_copyUrl->setToolTip(tr("Copy the /v1 base URL for OPENAI_BASE_URL"));
    connect(m_copyUrl, &QAction::triggered, this, &MainWindow::copyBaseUrl);

    m_connect =
        new QAction(s->standardIcon(QStyle::SP_MessageBoxInformation), tr("Connect an SDK…"), this);
    connect(m_connect, &QAction::triggered, this, &MainWindow::showConnectDialog);

    m_clear =
        new QAction(s->standardIcon(QStyle::SP_DialogResetButton), tr("Clear requests"), this);
    m_clear->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    connect(m_clear, &QAction::triggered, this, &MainWindow::confirmClearRequests);

    m_find = new QAction(tr("Find…"), this);
    m_find->setShortcut(QKeySequence::Find);
    connect(m_find, &QAction::triggered, m_requestsPanel, &RequestsPanel::focusSearch);

    m_deleteSandbox =
        new QAction(s->standardIcon(QStyle::SP_TrashIcon), tr("Delete sandbox"), this);
    m_deleteSandbox->setShortcut(QKeySequence::Delete);
    // Only while the Sandboxes panel has focus: Delete elsewhere (search box, tables) keeps its
    // usual meaning. The menu entry works from anywhere.
    m_deleteSandbox->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_sandboxesPanel->addAction(m_deleteSandbox);
    connect(m_deleteSandbox, &QAction::triggered, m_sandboxesPanel,
            &SandboxesPanel::deleteSelected);
    auto *deleteAll = new QAction(tr("Delete all sandboxes…"), this);
    connect(deleteAll, &QAction::triggered, m_sandboxesPanel, &SandboxesPanel::deleteAll);

    m_settingsAction =
        new QAction(s->standardIcon(QStyle::SP_FileDialogDetailedView), tr("Settings…"), this);
    m_settingsAction->setShortcut(QKeySequence::Preferences);
    connect(m_settingsAction, &QAction::triggered, this, &MainWindow::showSettings);

    m_pauseBeforeCode =
        new QAction(s->standardIcon(QStyle::SP_MediaPause), tr("Pause before code runs"), this);
    m_pauseBeforeCode->setCheckable(true);
    m_pauseBeforeCode->setToolTip(tr("Stop every intercepted loop before the model's code runs: "
                                     "read it, edit it, run, deny or abort"));
    connect(m_pauseBeforeCode, &QAction::toggled, this, [this](bool on) {
        if (m_proxy)
            m_proxy->setPauseBeforeCode(on);
    });

    auto *quit = new QAction(tr("Quit"), this);
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);
    auto *about = new QAction(tr("About Loopscope"), this);
    connect(about, &QAction::triggered, this, &MainWindow::showAbout);

    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_settingsAction);
    file->addSeparator();
    file->addAction(quit);
    QMenu *proxy = menuBar()->addMenu(tr("&Proxy"));
    proxy->addAction(m_startStop);
    proxy->addAction(m_copyUrl);
    proxy->addAction(m_connect);
    proxy->addSeparator();
    proxy->addAction(m_pauseBeforeCode);
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(m_find);
    edit->addAction(m_clear);
    edit->addSeparator();
    edit->addAction(m_deleteSandbox);
    edit->addAction(deleteAll);
    QMenu *view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget *dock : std::as_const(m_docks)) {
        QAction *toggle = dock->toggleViewAction();
        toggle->setText(dock->windowTitle().replace(u'&', QStringLiteral("&&")));
        view->addAction(toggle);
    }
    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(about);

    QToolBar *bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->setMovable(false);
    bar->addAction(m_startStop);
    bar->addAction(m_copyUrl);
    bar->addAction(m_connect);
    bar->addSeparator();
    bar->addAction(m_pauseBeforeCode);
    bar->addSeparator();
    bar->addAction(m_clear);
    bar->addAction(m_settingsAction);
}

void MainWindow::createStatusBar() {
    m_listenLabel = new QLabel(this);
    m_listenLabel->setToolTip(tr("Click to copy the base URL"));
    m_listenLabel->setTextInteractionFlags(Qt::LinksAccessibleByMouse);
    connect(m_listenLabel, &QLabel::linkActivated, this, &MainWindow::copyBaseUrl);
    m_upstreamLabel = new QLabel(this);
    m_sandboxLabel = new QLabel(this);
    m_countsLabel = new QLabel(this);
    statusBar()->addPermanentWidget(m_listenLabel);
    statusBar()->addPermanentWidget(m_upstreamLabel);
    statusBar()->addPermanentWidget(m_sandboxLabel);
    statusBar()->addPermanentWidget(m_countsLabel);
}

void MainWindow::applyBatch(const QList<InspectorEvent> &events) {
    m_requests->applyEvents(events);
    m_sandboxes->applyEvents(events);
    for (const InspectorEvent &e : events) {
        if (e.kind == InspectorEvent::Kind::CodeExecuted) {
            // Sandbox events may not name the session; the request that used it does.
            if (const RequestRecord *r = m_requests->recordById(e.requestId))
                m_sandboxes->noteSession(e.data.value(QLatin1String("containerId")).toString(),
                                         r->sessionId);
        }
        if (e.kind == InspectorEvent::Kind::RequestFinished ||
            e.kind == InspectorEvent::Kind::RequestFailed)
            ++m_finishedSinceStart;
        if (e.kind == InspectorEvent::Kind::Log) {
            const QString level = e.data.value(QLatin1String("level")).toString();
            if (level == QLatin1String("warning") || level == QLatin1String("error"))
                statusBar()->showMessage(e.data.value(QLatin1String("message")).toString(), 10000);
        }
        if (e.kind == InspectorEvent::Kind::Paused) {
            m_pausedBanner->onPaused(e.data);
            if (!m_pausedScreenshotPath.isEmpty()) {
                const QString path = std::exchange(m_pausedScreenshotPath, {});
                QTimer::singleShot(1000, this, [this, path] {
                    QCoreApplication::exit(saveScreenshot(path) ? 0 : 2);
                });
            }
        }
        if (e.kind == InspectorEvent::Kind::Resumed)
            m_pausedBanner->onResumed(e.data.value(QLatin1String("id")).toString());
        if (e.kind == InspectorEvent::Kind::SandboxDeleteFailed)
            statusBar()->showMessage(tr("Deleting sandbox %1 failed: %2")
                                         .arg(e.data.value(QLatin1String("containerId")).toString(),
                                              e.data.value(QLatin1String("error")).toString()),
                                     10000);
    }
    if (!m_screenshotPath.isEmpty() && m_finishedSinceStart >= m_screenshotAfter) {
        const QString path = std::exchange(m_screenshotPath, {});
        // Let the panels lay out and paint the last batch first.
        QTimer::singleShot(1000, this, [this, path] {
            const bool ok = saveScreenshot(path);
            QCoreApplication::exit(ok ? 0 : 2);
        });
    }
}

void MainWindow::showRequest(const QString &requestId) {
    m_currentRequest = requestId;
    m_codePanel->clear();
    m_loopPanel->setRequestId(requestId);
    if (requestId.isEmpty()) {
        m_injectedPanel->setItems({});
        m_rawPanel->clear();
        return;
    }
    refreshSelectedRequest();
}

void MainWindow::refreshSelectedRequest() {
    const RequestRecord *record = m_requests->recordById(m_currentRequest);
    if (!record)
        return;
    m_injectedPanel->setItems(record->injectedItems);
    m_rawPanel->setRecord(*record);
}

// settings hunk: Ctrl+L (Clear requests) asks first and says how many.
void MainWindow::confirmClearRequests() {
    const int count = m_requests->rowCount();
    if (count == 0)
        return;
    if (!m_confirm(tr("Clear requests"),
                   tr("Clear %1 from the window?").arg(textformat::plural(count, tr("request")))))
        return;
    clearRequests();
}

void MainWindow::clearRequests() {
    m_requests->clear(); // the panel reports the lost selection, which empties the others
    showRequest({});
}

void MainWindow::copyBaseUrl() {
    if (!m_proxy)
        return;
    const QString url = m_proxy->baseUrl().toString();
    QApplication::clipboard()->setText(url);
    statusBar()->showMessage(tr("Copied %1").arg(url), 3000);
}

void MainWindow::showConnectDialog() {
    const QUrl base = m_proxy ? m_proxy->baseUrl()
                              : QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(m_settings.port));
    // settings hunk: the snippets name the model that answers (the demo's or the config's).
    auto *dialog = new ConnectSdkDialog(
        base, m_proxy ? m_proxy->suggestedModel() : ConnectSnippets::demoModel(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

// settings hunk: the dialog shows the values in effect (ProxyControl::settingsInEffect) and
// what a restart would delete; applySettings saves only what changed and restarts only for a
// proxy setting.
SettingsSources MainWindow::settingsInEffect() const {
    SettingsSources sources =
        m_proxy ? m_proxy->settingsInEffect() : SettingsSources::fromSaved(QSettings());
    sources.set(AppSettings::Field::Retention, m_settings.retention,
                sources.source(AppSettings::Field::Retention));
    sources.set(AppSettings::Field::Theme, m_settings.theme,
                sources.source(AppSettings::Field::Theme));
    return sources;
}

void MainWindow::showSettings() {
    auto *dialog = new SettingsDialog(settingsInEffect(), m_sandboxes->sessionCount(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { applySettings(dialog->settings()); });
    dialog->open();
}

void MainWindow::applySettings(const AppSettings &settings) {
    SettingsSources sources = settingsInEffect();
    const AppSettings s = sources.accepted(settings);
    const bool changed = !sources.changes(s).isEmpty();
    {
        QSettings store;
        sources.commit(s, store);
    }
    const bool themeChanged = s.theme != m_settings.theme;
    m_settings = s;
    m_requests->setRetentionLimit(s.retention);
    if (themeChanged)
        if (auto *app = qobject_cast<QApplication *>(QCoreApplication::instance()))
            Theme::apply(*app, s.theme);
    if (changed) {
        if (m_proxy)
            m_proxy->applySettings(s);
        emit settingsChanged(s);
    }
}

void MainWindow::showAbout() {
    QMessageBox::about(
        this, tr("About Loopscope"),
        tr("<h3>Loopscope %1</h3>"
           "<p>A local OpenAI-compatible proxy and live inspector for agentic code-execution "
           "loops: requests declaring the <code>code_interpreter</code> tool run their Python in "
           "a local sandbox, and every model call, code run and sandbox shows up here.</p>"
           "<p>Built with Qt %2.</p>")
            .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion())));
}

void MainWindow::toggleProxy() {
    if (!m_proxy)
        return;
    if (m_proxy->isRunning())
        m_proxy->stop();
    else
        m_proxy->start();
}

void MainWindow::setSandboxRegistry(SandboxRegistry *registry) {
    m_commands->setRegistry(registry);
}

void MainWindow::refreshProxyState() {
    const bool running = m_proxy && m_proxy->isRunning();
    m_startStop->setEnabled(m_proxy);
    m_startStop->setText(running ? tr("Stop proxy") : tr("Start proxy"));
    m_startStop->setIcon(
        style()->standardIcon(running ? QStyle::SP_MediaStop : QStyle::SP_MediaPlay));
    m_copyUrl->setEnabled(running);
    if (!m_proxy) {
        m_listenLabel->setText(tr("proxy not connected"));
        m_upstreamLabel->clear();
        m_sandboxLabel->clear();
        return;
    }
    const QString base = m_proxy->baseUrl().toString();
    m_listenLabel->setText(running
                               ? QStringLiteral("<a href=\"%1\">%1</a>").arg(base.toHtmlEscaped())
                               : tr("stopped"));
    const QStringList skipped = m_proxy->skippedModels();
    m_upstreamLabel->setText(
        skipped.isEmpty()
            ? tr("upstream: %1").arg(m_proxy->upstream())
            : tr("upstream: %1 · %2 skipped")
                  .arg(m_proxy->upstream(), textformat::plural(skipped.size(), tr("model"))));
    m_upstreamLabel->setToolTip(skipped.join(u'\n'));
    const QString problems = m_proxy->sandboxSelfTest();
    const QString backend = m_proxy->sandboxBackend();
    m_sandboxLabel->setText(problems.isEmpty() ? tr("sandbox: %1 ✓").arg(backend)
                                               : tr("sandbox: %1 ✗").arg(backend));
    m_sandboxLabel->setToolTip(problems.isEmpty() ? tr("Sandbox backend ready") : problems);
}

void MainWindow::updateCounts() {
    m_countsLabel->setText(
        tr("%1 · %2 running · %3 failed · %4")
            .arg(textformat::plural(m_requests->rowCount(), tr("request")))
            .arg(m_requests->runningCount())
            .arg(m_requests->failedCount())
            .arg(textformat::plural(m_sandboxes->rowCount(), tr("sandbox"), tr("sandboxes"))));
}

bool MainWindow::saveScreenshot(const QString &path) {
    // Show the most telling request: the latest one that ran code, its last code run selected.
    for (int row = m_requests->rowCount() - 1; row >= 0; --row) {
        const RequestRecord *r = m_requests->record(row);
        if (r && r->hasCode() && r->state != RequestState::Running) {
            m_requestsPanel->setAutoFollow(false);
            m_requestsPanel->selectRequest(r->id);
            m_loopPanel->selectStep(m_loopPanel->timelineModel()->lastCodeRunRow());
            break;
        }
    }
    QCoreApplication::processEvents();
    const QFileInfo info(path);
    QDir().mkpath(info.absolutePath());
    return grab().save(path);
}

void MainWindow::setUpScreenshotFromEnvironment() {
    // LOOPSCOPE_SCREENSHOT_PAUSED=<png>: pause before code runs, grab the first paused flow.
    m_pausedScreenshotPath = qEnvironmentVariable("LOOPSCOPE_SCREENSHOT_PAUSED");
    if (!m_pausedScreenshotPath.isEmpty())
        QTimer::singleShot(0, this, [this] { m_pauseBeforeCode->setChecked(true); });
    m_screenshotPath = qEnvironmentVariable("LOOPSCOPE_SCREENSHOT");
    if (m_screenshotPath.isEmpty())
        return;
    bool ok = false;
    m_screenshotAfter = qEnvironmentVariableIntValue("LOOPSCOPE_SCREENSHOT_AFTER", &ok);
    if (!ok || m_screenshotAfter < 1)
        m_screenshotAfter = 1;
    // Fall back after a minute so a script never hangs on a window that sees no traffic.
    QTimer::singleShot(60'000, this, [this] {
        if (m_screenshotPath.isEmpty())
            return;
        const QString path = std::exchange(m_screenshotPath, {});
        saveScreenshot(path);
        QCoreApplication::exit(3);
    });
}

void MainWindow::closeEvent(QCloseEvent *event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

} // namespace loopscope
