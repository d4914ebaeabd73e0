#include "widgets/mainwindow.h"

#include "common/futurechain.h"
#include "inspect/eventbus.h"
#include "inspect/textformat.h"
#include "models/containerfilecommands.h"
#include "models/eventbatcher.h"
#include "models/flowdetailloader.h"
#include "models/flowlistmodel.h"
#include "models/flowqueryclient.h"
#include "models/historycommands.h"
#include "models/looptimelinemodel.h"
#include "models/runsmodel.h"
#include "models/sandboxcommands.h"
#include "models/sandboxesmodel.h"
#include "record/flowstore.h"
#include "record/flowsummarymailbox.h"
#include "widgets/codepanel.h"
#include "widgets/connectsdkdialog.h"
#include "widgets/conversationview.h"
#include "widgets/diffview.h"
#include "widgets/httpinspector.h"
#include "widgets/injectedpanel.h"
#include "widgets/looppanel.h"
#include "widgets/pausedbanner.h"
#include "widgets/proxycontrol.h"
#include "widgets/requestspanel.h"
#include "widgets/runspanel.h"
#include "widgets/runview.h"
#include "widgets/sandboxespanel.h"
#include "widgets/settingsdialog.h"
#include "widgets/theme.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <utility>

namespace loopscope {

MainWindow::MainWindow(EventBus *bus, SandboxRegistry *registry, ProxyControl *proxy,
                       QWidget *parent)
    : QMainWindow(parent)
    , m_proxy(proxy)
    , m_settings(AppSettings::load(QSettings()))
    , m_batcher(new EventBatcher(this))
    , m_sandboxes(new SandboxesModel(this))
    , m_commands(new SandboxCommands(registry, this))
    , m_queryClient(new FlowQueryClient(this))
    , m_history(new HistoryCommands(m_queryClient, this))
    , m_flowList(new FlowListModel(m_queryClient, this))
    , m_detailLoader(new FlowDetailLoader(m_queryClient, this))
    , m_runs(new RunsModel(m_queryClient, this)) {
    setWindowTitle(QStringLiteral("Loopscope"));
    setObjectName(QStringLiteral("LoopscopeMainWindow"));
    setWindowIcon(Theme::appIcon());
    if (bus) {
        m_batcher->attach(bus);
        for (const char *name : {"window", "otlp", "otlp_flows", "recorder"})
            m_drops.insert(QLatin1String(name), bus->dropCounter(QLatin1String(name)));
    }
    connect(m_batcher, &EventBatcher::batchReady, this, &MainWindow::applyBatch);

    m_flowList->setLiveRowLimit(m_settings.retention);
    setPrompts({});
    createPanels();
    createActions();
    createHistoryActions();
    createStatusBar();
    // One load feeds every detail panel: they all show the same snapshot of the flow.
    connect(m_detailLoader, &FlowDetailLoader::flowLoaded, this, [this](const QJsonObject &flow) {
        const QString id = flow.value(QLatin1String("id")).toString();
        if (!m_currentFlow.isEmpty() && !id.isEmpty() &&
            m_currentFlow.value(QLatin1String("id")).toString() != id)
            m_previousFlow = m_currentFlow;
        m_currentFlow = flow;
        m_compareFlows->setEnabled(!m_previousFlow.isEmpty() && !flow.isEmpty());
        m_loopPanel->setFlow(flow);
        m_codePanel->setFlow(flow);
        m_conversation->setFlow(flow);
        m_httpInspector->setFlow(flow);
        m_injectedPanel->setFlow(flow);
        emit flowLoaded(flow);
    });
    m_countsTimer = new QTimer(this);
    m_countsTimer->setSingleShot(true);
    m_countsTimer->setInterval(500);
    connect(m_countsTimer, &QTimer::timeout, this, [this] {
        whenFinished(m_queryClient->count(), this, [this](const QFuture<int> &f) {
            m_historyCount = resultOr(f, m_historyCount);
            updateCounts();
        });
    });
    if (m_proxy) {
        connect(m_proxy, &ProxyControl::replayFinished, this, &MainWindow::onReplayFinished);
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

MainWindow::~MainWindow() {
    // Queries still running read the store; they finish before the models go.
    m_queryClient->waitForIdle();
}

void MainWindow::setFlowStore(FlowStore *store) {
    m_queryClient->setFlowStore(store);
    m_detailLoader->setFlowStore(store);
    m_flowList->setFlowStore(store);
    m_runs->setFlowStore(store);
    if (m_store)
        disconnect(m_store, &FlowStore::writeProblemChanged, this, nullptr);
    m_store = store;
    if (store) // queued: emitted on the writer thread
        connect(store, &FlowStore::writeProblemChanged, this, &MainWindow::updateHealth);
    updateHealth();
    delete m_summaries;
    if (store) {
        m_summaries = new FlowSummaryMailbox(store, this);
        connect(m_summaries, &FlowSummaryMailbox::flowStarted, m_countsTimer,
                qOverload<>(&QTimer::start));
        connect(m_summaries, &FlowSummaryMailbox::flowFinished, m_countsTimer,
                qOverload<>(&QTimer::start));
        m_countsTimer->start();
    }
    const bool has = store != nullptr;
    for (QAction *a : {m_exportSelection, m_exportRun, m_exportAll, m_import, m_replay,
                       m_editResend, m_exportFlow, m_deleteFlow})
        a->setEnabled(has);
}

FlowStore *MainWindow::flowStore() const {
    return m_queryClient->flowStore();
}

void MainWindow::setPrompts(Prompts prompts) {
    if (!prompts.saveFile)
        prompts.saveFile = [this](const QString &title, const QString &suggested) {
            return QFileDialog::getSaveFileName(this, title, suggested,
                                                tr("HAR files (*.har);;All files (*)"));
        };
    if (!prompts.openFile)
        prompts.openFile = [this](const QString &title) {
            return QFileDialog::getOpenFileName(this, title, {},
                                                tr("HAR files (*.har *.json);;All files (*)"));
        };
    if (!prompts.confirm)
        prompts.confirm = [this](const QString &question) {
            return QMessageBox::question(this, tr("Loopscope"), question,
                                         QMessageBox::Yes | QMessageBox::Cancel,
                                         QMessageBox::Cancel) == QMessageBox::Yes;
        };
    if (!prompts.error)
        prompts.error = [this](const QString &message) {
            QMessageBox::warning(this, tr("Loopscope"), message);
        };
    if (!prompts.editBody)
        prompts.editBody = [this](const QJsonObject &body) -> std::optional<QJsonObject> {
            QDialog dialog(this);
            dialog.setWindowTitle(tr("Edit and resend"));
            auto *edit = new QPlainTextEdit(&dialog);
            edit->setPlainText(QString::fromUtf8(QJsonDocument(body).toJson()));
            auto *note = new QLabel(&dialog);
            auto *buttons =
                new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
            buttons->button(QDialogButtonBox::Ok)->setText(tr("Resend"));
            auto *layout = new QVBoxLayout(&dialog);
            layout->addWidget(edit, 1);
            layout->addWidget(note);
            layout->addWidget(buttons);
            dialog.resize(720, 560);
            std::optional<QJsonObject> result;
            connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
            connect(buttons, &QDialogButtonBox::accepted, &dialog, [&] {
                QJsonParseError error;
                const QJsonDocument doc =
                    QJsonDocument::fromJson(edit->toPlainText().toUtf8(), &error);
                if (error.error != QJsonParseError::NoError || !doc.isObject()) {
                    note->setText(error.error != QJsonParseError::NoError
                                      ? tr("Not JSON: %1 at offset %2")
                                            .arg(error.errorString())
                                            .arg(error.offset)
                                      : tr("The body must be a JSON object."));
                    return;
                }
                result = doc.object();
                dialog.accept();
            });
            dialog.exec();
            return result;
        };
    m_prompts = std::move(prompts);
}

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
    m_requestsPanel = new RequestsPanel(m_flowList, this);
    m_runsPanel = new RunsPanel(m_runs, this);
    m_loopPanel = new LoopPanel(this);
    m_codePanel = new CodePanel(this);
    m_codePanel->setFileCommands(new ContainerFileCommands(m_commands, this));
    m_conversation = new ConversationView(this);
    m_httpInspector = new HttpInspector(this);
    m_sandboxesPanel = new SandboxesPanel(m_sandboxes, m_commands, this);
    m_injectedPanel = new InjectedPanel(this);

    // Docks only: every panel can be moved, floated, tabbed or closed (View menu brings it back).
    setDockNestingEnabled(true);
    setDockOptions(AnimatedDocks | AllowNestedDocks | AllowTabbedDocks);
    QDockWidget *requests = addPanel(m_requestsPanel, tr("Requests"), QStringLiteral("requests"));
    QDockWidget *loop = addPanel(m_loopPanel, tr("Loop"), QStringLiteral("loop"));
    QDockWidget *conversation =
        addPanel(m_conversation, tr("Conversation"), QStringLiteral("conversation"));
    QDockWidget *code = addPanel(m_codePanel, tr("Code and output"), QStringLiteral("code"));
    QDockWidget *sandboxes =
        addPanel(m_sandboxesPanel, tr("Sandboxes"), QStringLiteral("sandboxes"));
    QDockWidget *injected =
        addPanel(m_injectedPanel, tr("Injected outputs"), QStringLiteral("injected"));
    QDockWidget *http = addPanel(m_httpInspector, tr("HTTP"), QStringLiteral("http"));
    QDockWidget *runs = addPanel(m_runsPanel, tr("Runs"), QStringLiteral("runs"));
    // Left: Requests (Runs as a tab) over Loop. Right: the conversation (a step's default
    // detail view) with Code & output and the HTTP inspector as tabs, over Sandboxes and
    // Injected outputs. Splits first, tabs after: splitting a tabbed dock breaks its group.
    addDockWidget(Qt::LeftDockWidgetArea, requests);
    splitDockWidget(requests, conversation, Qt::Horizontal);
    splitDockWidget(requests, loop, Qt::Vertical);
    splitDockWidget(conversation, sandboxes, Qt::Vertical);
    tabifyDockWidget(requests, runs);
    tabifyDockWidget(conversation, code);
    tabifyDockWidget(code, http);
    tabifyDockWidget(sandboxes, injected);
    requests->raise();
    conversation->raise();
    sandboxes->raise();
    // Proportional, so that at 1024 px the right column keeps its share.
    resizeDocks({requests, conversation}, {55, 45}, Qt::Horizontal);
    resizeDocks({requests, loop}, {60, 40}, Qt::Vertical);
    resizeDocks({conversation, sandboxes}, {65, 35}, Qt::Vertical);

    // Breakpoints: a paused flow takes the top of the window until it is resolved.
    m_pausedBanner = new PausedBanner(this);
    m_pausedDock = new QDockWidget(tr("Paused"), this);
    m_pausedDock->setObjectName(QStringLiteral("paused"));
    m_pausedDock->setFeatures(QDockWidget::NoDockWidgetFeatures);
    m_pausedDock->setWidget(m_pausedBanner);
    addDockWidget(Qt::TopDockWidgetArea, m_pausedDock);
    m_pausedDock->hide();
    connect(m_pausedBanner, &PausedBanner::pendingChanged, this, [this](int count) {
        // The banner's minimum height can grow a short window; it gets its size back after.
        if (count > 0 && !m_pausedDock->isVisible())
            m_sizeBeforePause = size();
        m_pausedDock->setVisible(count > 0);
        if (count == 0 && m_sizeBeforePause.isValid()) {
            layout()->activate(); // the minimum without the banner, before resizing to it
            resize(std::exchange(m_sizeBeforePause, QSize()));
        }
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
    connect(m_requestsPanel, &RequestsPanel::clearRequested, this, &MainWindow::clearHistory);
    connect(m_runsPanel, &RunsPanel::flowSelected, this, &MainWindow::selectFlow);
    connect(m_flowList, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_selectWhenListed.isEmpty() && m_requestsPanel->selectRequest(m_selectWhenListed))
            m_selectWhenListed.clear();
    });
    connect(m_loopPanel, &LoopPanel::codeStepSelected, m_codePanel, &CodePanel::showCodeRun);
    connect(m_loopPanel, &LoopPanel::stepSelected, this,
            [this](const QString &, int iteration, const QString &) {
                m_conversation->showIteration(iteration);
            });
    if (m_proxy)
        m_httpInspector->setBaseUrl(m_proxy->listenUrl().toString());
    connect(m_httpInspector, &HttpInspector::statusMessage, this,
            [this](const QString &message) { statusBar()->showMessage(message, 5000); });
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
        new QAction(s->standardIcon(QStyle::SP_DialogResetButton), tr("Clear history…"), this);
    m_clear->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_clear->setToolTip(tr("Remove every flow from the history (asks first)"));
    connect(m_clear, &QAction::triggered, this, &MainWindow::clearHistory);

    m_find = new QAction(tr("Find…"), this);
    m_find->setShortcut(QKeySequence::Find);
    // Only while the Requests panel has focus: every text pane has its own Ctrl+F (FindBar),
    // and a window-wide one would make the key ambiguous there.
    m_find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(m_find, &QAction::triggered, m_requestsPanel, &RequestsPanel::focusSearch);
    m_requestsPanel->addAction(m_find);

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
    file->setObjectName(QStringLiteral("fileMenu"));
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
    edit->setObjectName(QStringLiteral("editMenu"));
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
    m_healthLabel = new QLabel(this);
    m_healthLabel->setObjectName(QStringLiteral("healthLabel"));
    m_healthLabel->hide();
    statusBar()->addPermanentWidget(m_healthLabel);
    m_healthTimer = new QTimer(this);
    m_healthTimer->setInterval(1000);
    connect(m_healthTimer, &QTimer::timeout, this, &MainWindow::updateHealth);
    m_healthTimer->start();
}

void MainWindow::updateHealth() {
    const auto count = [this](const char *name) -> quint64 {
        const auto counter = m_drops.value(QLatin1String(name));
        return counter ? counter->load(std::memory_order_relaxed) : 0;
    };
    const FlowStoreCounters c = m_store ? m_store->counters() : FlowStoreCounters{};
    const QString problem = m_store ? m_store->writeProblem() : QString();
    // What each bounded queue dropped, biggest loss first (a flow outweighs any event).
    const QList<std::pair<quint64, QString>> drops{
        {c.flowsDropped, tr("flows not written")},
        {count("recorder"), tr("events not recorded")},
        {c.sseEventsDropped, tr("stream events not kept")},
        {count("window"), tr("live events not shown")},
        {count("otlp") + count("otlp_flows"), tr("not exported (OTLP)")},
    };
    QStringList parts;
    for (const auto &[n, what] : drops)
        if (n > 0)
            parts << QStringLiteral("%1 %2").arg(QLocale().toString(n), what);
    QString text;
    if (!problem.isEmpty())
        text = problem;
    if (!parts.isEmpty())
        text += (text.isEmpty() ? QString() : QStringLiteral(" · ")) + tr("Dropped: ") +
                parts.join(QStringLiteral(", "));
    m_healthLabel->setText(text);
    m_healthLabel->setToolTip(
        tr("Queues between the proxy and the window, the history and the exporter are bounded; "
           "what they could not hold is counted here and in GET /loopscope/v1."));
    m_healthLabel->setStyleSheet(problem.isEmpty()
                                     ? QString()
                                     : QStringLiteral("color: white; background: #b3261e; "
                                                      "padding: 0 4px;"));
    m_healthLabel->setVisible(!text.isEmpty());
}

void MainWindow::applyBatch(const QList<InspectorEvent> &events) {
    m_sandboxes->applyEvents(events);
    // Live state the store does not keep per chunk (running steps, output as printed).
    m_loopPanel->applyLiveEvents(events);
    m_codePanel->applyLiveEvents(events);
    for (const InspectorEvent &e : events) {
        if (e.kind == InspectorEvent::Kind::CodeExecuted) {
            // Sandbox events may not name the session; the code run that used it does.
            const QString session = e.data.value(QLatin1String("sessionId")).toString();
            if (!session.isEmpty())
                m_sandboxes->noteSession(e.data.value(QLatin1String("containerId")).toString(),
                                         session);
        }
        if (e.kind == InspectorEvent::Kind::ExchangeFinished) // every flow, passed through too
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
    if (requestId != m_selectWhenListed)
        m_selectWhenListed.clear(); // the user moved on: a late row must not steal the selection
    if (m_detailLoader->currentId() != requestId || requestId.isEmpty())
        m_detailLoader->load(requestId);
    if (!requestId.isEmpty())
        m_runsPanel->selectFlow(requestId);
}

void MainWindow::clearRequests() {
    showRequest({}); // the loader answers {} at once, which empties every detail panel
    m_historyCount = 0;
    updateCounts();
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
    m_flowList->setLiveRowLimit(s.retention);
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
        tr("%1 in history · %2 running · %3")
            .arg(textformat::plural(m_historyCount, tr("flow")))
            .arg(m_flowList->runningCount())
            .arg(textformat::plural(m_sandboxes->rowCount(), tr("sandbox"), tr("sandboxes"))));
}

bool MainWindow::saveScreenshot(const QString &path) {
    // Show the most telling flow. LOOPSCOPE_SCREENSHOT_VIEW=run: the Runs view on the newest
    // flow whose model asked the client for a function call; otherwise the conversation of the
    // newest finished flow that looped (ran code and went back to the model).
    const bool runView = qEnvironmentVariable("LOOPSCOPE_SCREENSHOT_VIEW") == QLatin1String("run");
    QString chosen;
    for (int row = 0; row < m_flowList->rowCount() && chosen.isEmpty(); ++row) {
        const QJsonObject summary = m_flowList->summaryAt(row);
        if (summary.value(QLatin1String("state")).toString() != QLatin1String("completed"))
            continue;
        if (runView ? summary.value(QLatin1String("tool_calls")).toInt() > 0
                    : summary.value(QLatin1String("code_runs")).toInt() > 0 &&
                          summary.value(QLatin1String("iterations")).toInt() >= 2)
            chosen = summary.value(QLatin1String("id")).toString();
    }
    if (!chosen.isEmpty()) {
        m_requestsPanel->setAutoFollow(false);
        m_requestsPanel->selectRequest(chosen);
    }
    const auto raise = [this](const char *objectName) {
        if (auto *dock = findChild<QDockWidget *>(QLatin1String(objectName)))
            dock->raise();
    };
    raise("conversation");
    if (runView) {
        raise("runs");
        QElapsedTimer listed;
        listed.start();
        while (!m_runsPanel->selectFlow(chosen) && listed.elapsed() < 3000)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        while (m_runsPanel->runView()->conversation().isEmpty() && listed.elapsed() < 6000)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50); // the run's turns
        m_runsPanel->runView()->scrollToFirstReply(); // the call and its result, not the prompt
    }
    // The selection loads on a worker: give it (and the panels' layout) a moment.
    QElapsedTimer waited;
    waited.start();
    while (m_detailLoader->isLoading() && waited.elapsed() < 3000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
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

void MainWindow::createHistoryActions() {
    QStyle *s = style();
    m_searchAll = new QAction(tr("Search all flows…"), this);
    m_searchAll->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    m_searchAll->setToolTip(tr("Full-text search over every flow's bodies, code and output"));
    connect(m_searchAll, &QAction::triggered, m_requestsPanel, &RequestsPanel::focusSearch);
    addAction(m_searchAll); // works from a floating panel too

    m_exportSelection = new QAction(tr("Export selected flow as HAR…"), this);
    connect(m_exportSelection, &QAction::triggered, this, &MainWindow::exportSelection);
    m_exportRun = new QAction(tr("Export current run as HAR…"), this);
    connect(m_exportRun, &QAction::triggered, this, &MainWindow::exportCurrentRun);
    m_exportAll = new QAction(tr("Export all flows as HAR…"), this);
    connect(m_exportAll, &QAction::triggered, this, &MainWindow::exportAll);
    m_import = new QAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("Import HAR…"), this);
    connect(m_import, &QAction::triggered, this, &MainWindow::importHar);

    m_replay = new QAction(s->standardIcon(QStyle::SP_BrowserReload), tr("Replay"), this);
    m_replay->setToolTip(tr("Send the same client request again as a new flow"));
    connect(m_replay, &QAction::triggered, this, &MainWindow::replayCurrent);
    m_editResend = new QAction(tr("Edit and resend…"), this);
    connect(m_editResend, &QAction::triggered, this, &MainWindow::editAndResendCurrent);
    m_compareFlows = new QAction(tr("Compare with the flow shown before"), this);
    m_compareFlows->setToolTip(tr("Diff the two conversations side by side"));
    m_compareFlows->setEnabled(false);
    connect(m_compareFlows, &QAction::triggered, this, [this] {
        if (!m_previousFlow.isEmpty() && !m_currentFlow.isEmpty())
            DiffView::openFlows(this, m_previousFlow, m_currentFlow);
    });
    m_copyId = new QAction(tr("Copy id"), this);
    connect(m_copyId, &QAction::triggered, this, &MainWindow::copyCurrentId);
    m_exportFlow = new QAction(tr("Export HAR (this flow)…"), this);
    connect(m_exportFlow, &QAction::triggered, this, &MainWindow::exportSelection);
    m_deleteFlow = new QAction(s->standardIcon(QStyle::SP_TrashIcon), tr("Delete…"), this);
    connect(m_deleteFlow, &QAction::triggered, this, &MainWindow::deleteCurrent);
    m_rowMenu = new QMenu(this);
    m_rowMenu->addAction(m_replay);
    m_rowMenu->addAction(m_editResend);
    m_rowMenu->addSeparator();
    m_rowMenu->addAction(m_compareFlows);
    m_rowMenu->addAction(m_copyId);
    m_rowMenu->addAction(m_exportFlow);
    m_rowMenu->addSeparator();
    m_rowMenu->addAction(m_deleteFlow);
    connect(m_requestsPanel, &RequestsPanel::contextMenuRequested, this,
            [this](const QString &, const QPoint &pos) { m_rowMenu->popup(pos); });

    // File: export/import/clear next to Settings.
    if (QMenu *file = menuBar()->findChild<QMenu *>(QStringLiteral("fileMenu"))) {
        QAction *first = file->actions().value(0);
        QMenu *exportMenu = new QMenu(tr("Export HAR"), file);
        exportMenu->addAction(m_exportSelection);
        exportMenu->addAction(m_exportRun);
        exportMenu->addAction(m_exportAll);
        file->insertMenu(first, exportMenu);
        file->insertAction(first, m_import);
        file->insertAction(first, m_clear);
        file->insertSeparator(first);
    }
    if (QMenu *edit = menuBar()->findChild<QMenu *>(QStringLiteral("editMenu")))
        edit->insertAction(edit->actions().value(1), m_searchAll);
    for (QAction *a : {m_exportSelection, m_exportRun, m_exportAll, m_import, m_replay,
                       m_editResend, m_exportFlow, m_deleteFlow})
        a->setEnabled(false); // until setFlowStore
}

void MainWindow::reportError(const QString &message) {
    statusBar()->showMessage(message, 10000);
    m_prompts.error(message);
}

void MainWindow::selectFlow(const QString &flowId) {
    if (flowId.isEmpty() || flowId == m_currentRequest)
        return;
    if (m_requestsPanel->selectRequest(flowId))
        return; // the panel reports it (currentRequestChanged → showRequest)
    m_requestsPanel->setAutoFollow(false);
    m_selectWhenListed = flowId; // its Requests row, once loaded, gets selected too
    showRequest(flowId);
}

void MainWindow::clearHistory() {
    if (!flowStore()) {
        clearRequests();
        return;
    }
    whenFinished(m_history->count(), this, [this](const QFuture<int> &f) {
        const int n = resultOr(f, 0);
        const QString question =
            n == 1 ? tr("Clear 1 flow from history?")
                   : tr("Clear %1 flows from history?").arg(QLocale().toString(n));
        if (!m_prompts.confirm(question + u' ' + tr("This cannot be undone.")))
            return;
        whenFinished(m_history->clear(), this,
                     [this](const QFuture<HistoryCommands::Result> &done) {
                         const int removed = resultOr(done, HistoryCommands::Result{}).count;
                         clearRequests();
                         m_flowList->reload();
                         m_runs->reload();
                         statusBar()->showMessage(
                             removed == 1 ? tr("Cleared 1 flow")
                                          : tr("Cleared %1 flows").arg(QLocale().toString(removed)),
                             5000);
                         emit historyCleared(removed);
                     });
    });
}

void MainWindow::exportSelection() {
    if (m_currentRequest.isEmpty()) {
        statusBar()->showMessage(tr("Select a flow to export"), 5000);
        return;
    }
    exportFlows({m_currentRequest}, {}, m_currentRequest + QStringLiteral(".har"));
}

void MainWindow::exportCurrentRun() {
    const int row = m_flowList->rowOf(m_currentRequest);
    QString runId =
        row >= 0 ? m_flowList->summaryAt(row).value(QLatin1String("run_id")).toString() : QString();
    if (runId.isEmpty())
        runId = m_detailLoader->currentFlow().value(QLatin1String("run_id")).toString();
    if (runId.isEmpty()) {
        statusBar()->showMessage(tr("The selected flow belongs to no run"), 5000);
        return;
    }
    exportFlows({}, runId, runId + QStringLiteral(".har"));
}

void MainWindow::exportAll() {
    exportFlows({}, {}, QStringLiteral("loopscope-history.har"));
}

void MainWindow::exportFlows(const QStringList &ids, const QString &runId,
                             const QString &suggested) {
    const QString path = m_prompts.saveFile(tr("Export HAR"), suggested);
    if (path.isEmpty() || !flowStore())
        return;
    const QString base = m_proxy ? m_proxy->listenUrl().toString()
                                 : QStringLiteral("http://127.0.0.1:%1").arg(m_settings.port);
    statusBar()->showMessage(tr("Exporting…"));
    whenFinished(
        m_history->exportHar(ids, runId, path, base, QCoreApplication::applicationVersion()), this,
        [this, path](const QFuture<HistoryCommands::Result> &f) {
            const HistoryCommands::Result done =
                resultOr(f, HistoryCommands::Result{0, QStringLiteral("export cancelled")});
            if (!done.ok()) {
                reportError(tr("HAR export failed: %1").arg(done.error));
                emit exportFinished(false, done.error);
                return;
            }
            statusBar()->showMessage(
                tr("Exported %1 to %2")
                    .arg(done.count == 1 ? tr("1 flow") : tr("%1 flows").arg(done.count), path),
                8000);
            emit exportFinished(true, path);
        });
}

void MainWindow::importHar() {
    const QString path = m_prompts.openFile(tr("Import HAR"));
    if (path.isEmpty() || !flowStore())
        return;
    whenFinished(
        m_history->importHar(path), this, [this, path](const QFuture<HistoryCommands::Result> &f) {
            const HistoryCommands::Result done =
                resultOr(f, HistoryCommands::Result{0, QStringLiteral("import cancelled")});
            if (!done.ok()) {
                reportError(tr("Could not import %1: %2\nNothing was changed.")
                                .arg(QFileInfo(path).fileName(), done.error));
                emit importFinished(0, done.error);
                return;
            }
            m_flowList->reload();
            m_runs->reload();
            statusBar()->showMessage(
                tr("Imported %1 from %2")
                    .arg(done.count == 1 ? tr("1 flow") : tr("%1 flows").arg(done.count), path),
                8000);
            emit importFinished(done.count, {});
        });
}

void MainWindow::replayCurrent() {
    if (m_currentRequest.isEmpty())
        return;
    if (!m_proxy) {
        reportError(tr("Replay needs the proxy."));
        return;
    }
    statusBar()->showMessage(tr("Replaying %1…").arg(m_currentRequest), 5000);
    m_proxy->replayFlow(m_currentRequest, QJsonValue());
}

void MainWindow::editAndResendCurrent() {
    const QString id = m_currentRequest;
    if (id.isEmpty() || !m_proxy)
        return;
    whenFinished(m_history->clientRequestBody(id), this, [this, id](const QFuture<QJsonObject> &f) {
        const QJsonObject body = resultOr(f, QJsonObject());
        if (body.isEmpty()) {
            reportError(tr("Flow %1 has no JSON request body to edit.").arg(id));
            return;
        }
        const std::optional<QJsonObject> edited = m_prompts.editBody(body);
        if (!edited || !m_proxy)
            return;
        statusBar()->showMessage(tr("Resending %1 edited…").arg(id), 5000);
        m_proxy->replayFlow(id, *edited);
    });
}

void MainWindow::onReplayFinished(const QString &flowId, const QString &newFlowId,
                                  const QString &error) {
    if (newFlowId.isEmpty()) {
        reportError(tr("Replay of %1 failed: %2").arg(flowId, error));
        return;
    }
    statusBar()->showMessage(tr("Replayed %1 as %2").arg(flowId, newFlowId), 8000);
    m_requestsPanel->setAutoFollow(false);
    if (!m_requestsPanel->selectRequest(newFlowId))
        m_selectWhenListed = newFlowId; // its row comes with the store's flowStarted
}

void MainWindow::copyCurrentId() {
    if (m_currentRequest.isEmpty())
        return;
    QApplication::clipboard()->setText(m_currentRequest);
    statusBar()->showMessage(tr("Copied %1").arg(m_currentRequest), 3000);
}

void MainWindow::deleteCurrent() {
    const QString id = m_currentRequest;
    if (id.isEmpty() || !flowStore())
        return;
    const int row = m_flowList->rowOf(id);
    const QString state =
        row >= 0 ? m_flowList->summaryAt(row).value(QLatin1String("state")).toString() : QString();
    if (state == QLatin1String("running") || state == QLatin1String("paused")) {
        reportError(tr("Flow %1 is still running; delete it once it has finished.").arg(id));
        return;
    }
    if (!m_prompts.confirm(tr("Delete flow %1 from history?").arg(id)))
        return;
    whenFinished(m_history->remove(id), this,
                 [this, id](const QFuture<HistoryCommands::Result> &f) {
                     const bool removed = resultOr(f, HistoryCommands::Result{}).count > 0;
                     if (removed) {
                         m_flowList->removeIds({id});
                         m_runs->reload();
                         if (m_currentRequest == id)
                             showRequest({});
                         statusBar()->showMessage(tr("Deleted %1").arg(id), 5000);
                     } else {
                         reportError(tr("Flow %1 is not in the stored history.").arg(id));
                     }
                     emit flowDeleted(id, removed);
                 });
}

} // namespace loopscope
