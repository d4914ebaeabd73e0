// The window over the flow store (issue 13): history newest first and lazily paged, live rows
// and honest states, the selected flow loaded on a worker (flowLoaded), HAR export → import
// round trip, Clear history that asks with the count, the row menu (copy id, export, delete,
// replay and edit-and-resend through a REAL ProxyServer's control API), and the Runs view.
// A real in-memory FlowStore fed real events throughout; no dialog opens (Prompts).
#include "fakeproxycontrol.h"
#include "models/storeflows.h"

#include "control/controlapi.h"
#include "models/flowdetailloader.h"
#include "models/flowlistmodel.h"
#include "models/flowqueryclient.h"
#include "models/runsmodel.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "sandbox/local/localsandboxoptions.h"
#include "widgets/mainwindow.h"
#include "widgets/requestspanel.h"
#include "widgets/runspanel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyle>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

using namespace loopscope;
using loopscope::test::RawHttpClient;
namespace sf = loopscope::storeflows;

namespace {

// The window's ProxyControl over a real in-process proxy: replay goes through the control
// API's replayRecorded, as app/serviceproxycontrol does (there across threads).
class StackProxyControl : public FakeProxyControl {
public:
    ControlApi *api = nullptr;
    FlowStore *store = nullptr;
    int replays = 0;
    void replayFlow(const QString &flowId, const QJsonValue &editedBody) override {
        ++replays;
        const auto flow = store->query()->flow(flowId);
        if (!flow) {
            emit replayFinished(flowId, {}, QStringLiteral("unknown flow"));
            return;
        }
        const auto result = api->replayRecorded(*flow, editedBody);
        emit replayFinished(flowId, result.flowId, result.message);
    }
};

QJsonObject hopOf(const QJsonObject &flow, const QString &kind) {
    for (const QJsonValue &h : flow.value(QStringLiteral("hops")).toArray())
        if (h.toObject().value(QStringLiteral("kind")).toString() == kind)
            return h.toObject();
    return {};
}

struct Prompted {
    QStringList questions;
    QStringList errors;
    bool answer = true;
    QString saveTo;
    QString openFrom;
    std::optional<QJsonObject> edited;
    QJsonObject editorSaw;

    MainWindow::Prompts prompts() {
        MainWindow::Prompts p;
        p.confirm = [this](const QString &q) {
            questions << q;
            return answer;
        };
        p.error = [this](const QString &e) { errors << e; };
        p.saveFile = [this](const QString &, const QString &) { return saveTo; };
        p.openFile = [this](const QString &) { return openFrom; };
        p.editBody = [this](const QJsonObject &body) {
            editorSaw = body;
            return edited;
        };
        return p;
    }
};

} // namespace

class TestHistoryWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("LoopscopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_historywindow"));
        QSettings().clear();
    }

    void historyOpensNewestFirstAndScrollsToTheEnd() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        QCOMPARE(sf::importNumbered(*store, 2500), 2500);
        MainWindow window(&bus, nullptr, nullptr);
        QSignalSpy loaded(&window, &MainWindow::flowLoaded);
        window.setFlowStore(store.get());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTableView *view = window.requestsPanel()->view();
        QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), FlowListModel::kPageSize, 10'000);
        QCOMPARE(window.flowListModel()->idAt(0), QStringLiteral("f02499"));

        // Scrolling to the bottom pages the rest in, down to the oldest flow.
        for (int i = 0; i < 100 && view->model()->rowCount() < 2500; ++i) {
            view->scrollToBottom();
            QTest::qWait(20);
            QVERIFY(QTest::qWaitFor([&] { return !window.flowListModel()->isLoading(); }, 10'000));
        }
        QCOMPARE(view->model()->rowCount(), 2500);
        QCOMPARE(window.flowListModel()->idAt(2499), QStringLiteral("f00000"));

        // Selecting a row loads that flow in full for the detail panels.
        window.requestsPanel()->setAutoFollow(false);
        QVERIFY(window.requestsPanel()->selectRequest(QStringLiteral("f01234")));
        QTRY_VERIFY_WITH_TIMEOUT(
            !loaded.isEmpty() &&
                loaded.last().at(0).toJsonObject().value(QStringLiteral("id")).toString() ==
                    QLatin1String("f01234"),
            10'000);
        const QJsonObject flow = loaded.last().at(0).toJsonObject();
        QCOMPARE(hopOf(flow, QStringLiteral("client_request"))
                     .value(QStringLiteral("body"))
                     .toObject()
                     .value(QStringLiteral("input"))
                     .toString(),
                 QStringLiteral("question 1234"));
        QCOMPARE(window.currentFlowId(), QStringLiteral("f01234"));
    }

    void liveRowsShowHonestStates() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        MainWindow window(&bus, nullptr, nullptr);
        window.setFlowStore(store.get());
        window.show();
        RequestsPanel *panel = window.requestsPanel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->messageLabel()->text().contains(QStringLiteral("No flows")),
                                 10'000);

        const QString reason = QStringLiteral(
            "max_agentic_loops (3) reached before the model gave a final answer; the last "
            "response is returned unchanged");
        sf::completedFlow(bus, QStringLiteral("req_ok"));
        sf::codeErrorFlow(bus, QStringLiteral("req_err"));
        sf::incompleteFlow(bus, QStringLiteral("req_inc"), reason);
        sf::pausedFlow(bus, QStringLiteral("req_pause"));
        FlowListModel *model = window.flowListModel();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 4, 10'000);
        // Follow keeps the newest flow selected; it is on top.
        QTRY_COMPARE_WITH_TIMEOUT(panel->currentRequestId(), QStringLiteral("req_pause"), 10'000);
        QCOMPARE(model->idAt(0), QStringLiteral("req_pause"));
        QVERIFY(!panel->messageLabel()->isVisibleTo(panel));

        const auto status = [model](const QString &id) {
            return model->index(model->rowOf(id), FlowListModel::StatusColumn).data().toString();
        };
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("req_pause")), QStringLiteral("paused"),
                                  10'000);
        QCOMPARE(status(QStringLiteral("req_err")), QStringLiteral("200 · code error"));
        const QString incomplete = status(QStringLiteral("req_inc"));
        QCOMPARE(incomplete, QString(QStringLiteral("200 · incomplete: ") + reason));
        // Wide enough for the whole reason: nothing is cut off.
        QTableView *view = panel->view();
        QVERIFY2(view->columnWidth(FlowListModel::StatusColumn) >
                     view->fontMetrics().horizontalAdvance(incomplete),
                 qPrintable(QString::number(view->columnWidth(FlowListModel::StatusColumn))));
        QCOMPARE(view->textElideMode(), Qt::ElideNone);
        // Every column's title fits in its header ("Iterations" read "terations"): each section
        // is at least as wide as the header says its title needs.
        const QHeaderView *header = view->horizontalHeader();
        for (int column = 0; column < model->columnCount(); ++column)
            QVERIFY2(header->sectionSize(column) >= header->sectionSizeHint(column),
                     qPrintable(model->headerData(column, Qt::Horizontal).toString() +
                                QStringLiteral(": %1 < %2")
                                    .arg(header->sectionSize(column))
                                    .arg(header->sectionSizeHint(column))));
        // Cost shows: the flows' model (gpt-4.1-mini) is priced by the built-in table.
        QTRY_VERIFY_WITH_TIMEOUT(!view->isColumnHidden(FlowListModel::CostColumn), 10'000);

        // Ctrl+Shift+F goes to "search all flows".
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        view->setFocus();
        window.searchAllAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(panel->searchField()->hasFocus(), 5'000);
        QVERIFY(panel->searchField()->placeholderText().contains(QStringLiteral("bodies")));
    }

    void exportImportAndClearRoundTrip() {
        QTemporaryDir dir;
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        sf::completedFlow(bus, QStringLiteral("req_1"));
        sf::codeErrorFlow(bus, QStringLiteral("req_2"));
        sf::completedFlow(bus, QStringLiteral("req_3"), QStringLiteral("gpt-5"),
                          QStringLiteral("print('round trip')"));
        store->flush();
        MainWindow window(&bus, nullptr, nullptr);
        Prompted asked;
        window.setPrompts(asked.prompts());
        window.setFlowStore(store.get());
        QTRY_COMPARE_WITH_TIMEOUT(window.flowListModel()->rowCount(), 3, 10'000);

        // Export the selection: one entry.
        QSignalSpy exported(&window, &MainWindow::exportFinished);
        window.requestsPanel()->selectRequest(QStringLiteral("req_3"));
        asked.saveTo = dir.filePath(QStringLiteral("one.har"));
        window.exportSelectionAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(exported.size(), 1, 10'000);
        QVERIFY(exported.at(0).at(0).toBool());
        QFile one(asked.saveTo);
        QVERIFY(one.open(QIODevice::ReadOnly));
        const QJsonArray entries = QJsonDocument::fromJson(one.readAll())
                                       .object()
                                       .value(QStringLiteral("log"))
                                       .toObject()
                                       .value(QStringLiteral("entries"))
                                       .toArray();
        QCOMPARE(entries.size(), 1);

        // Export all, then clear (asked first, with the count), then import it back.
        asked.saveTo = dir.filePath(QStringLiteral("all.har"));
        window.exportAllAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(exported.size(), 2, 10'000);
        QVERIFY(exported.at(1).at(0).toBool());

        QSignalSpy cleared(&window, &MainWindow::historyCleared);
        asked.answer = false; // declined: nothing happens
        window.clearAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(asked.questions.size(), 1, 10'000);
        QVERIFY2(asked.questions.at(0).startsWith(QStringLiteral("Clear 3 flows from history?")),
                 qPrintable(asked.questions.at(0)));
        // Had the decline cleared anyway, that work would be on the window's query pool: once
        // the pool is idle and its answers are delivered, a clear would have been reported.
        window.flowQueryClient()->waitForIdle();
        QCoreApplication::sendPostedEvents();
        QCOMPARE(cleared.size(), 0);
        QCOMPARE(window.flowListModel()->rowCount(), 3);
        asked.answer = true;
        window.clearAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(cleared.size(), 1, 10'000);
        QCOMPARE(cleared.at(0).at(0).toInt(), 3);
        QTRY_COMPARE_WITH_TIMEOUT(window.flowListModel()->rowCount(), 0, 10'000);

        QSignalSpy imported(&window, &MainWindow::importFinished);
        asked.openFrom = asked.saveTo;
        window.importAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 1, 10'000);
        QCOMPARE(imported.at(0).at(0).toInt(), 3);
        QTRY_COMPARE_WITH_TIMEOUT(window.flowListModel()->rowCount(), 3, 10'000);
        FlowListModel *model = window.flowListModel();
        for (int row = 0; row < 3; ++row)
            QVERIFY(model->index(row, 0).data(FlowListModel::ImportedRole).toBool());
        // The code error survives the round trip.
        QCOMPARE(model->index(1, FlowListModel::StatusColumn).data().toString(),
                 QStringLiteral("200 · code error · imported"));

        // A bad file: a readable error, nothing lost.
        const QString bad = dir.filePath(QStringLiteral("bad.har"));
        QFile badFile(bad);
        QVERIFY(badFile.open(QIODevice::WriteOnly));
        badFile.write("{ this is not a HAR");
        badFile.close();
        asked.openFrom = bad;
        window.importAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(imported.size(), 2, 10'000);
        QCOMPARE(imported.at(1).at(0).toInt(), 0);
        QCOMPARE(asked.errors.size(), 1);
        QVERIFY2(asked.errors.at(0).contains(QStringLiteral("bad.har")) &&
                     asked.errors.at(0).contains(QStringLiteral("Nothing was changed")),
                 qPrintable(asked.errors.at(0)));
        store->flush();
        QCOMPARE(store->query()->count(), 3);
    }

    void rowMenuActsOnTheSelectedFlow() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        ProxyConfig config;
        config.port = 0;
        config.defaultRoute = ProxyConfig::demoRoute();
        ProxyServer server(config);
        server.setEventBus(&bus);
        server.setFlowStore(store.get());
        InterceptionStack stack(&server, &bus);
        LocalSandboxOptions sandbox;
        sandbox.poolSize = 0;
        QString error;
        QVERIFY2(stack.init(sandbox, &error), qPrintable(error));
        QVERIFY2(server.listen(), qPrintable(server.errorString()));
        StackProxyControl proxy;
        proxy.api = stack.controlApi();
        proxy.store = store.get();

        MainWindow window(&bus, nullptr, &proxy);
        Prompted asked;
        window.setPrompts(asked.prompts());
        window.setFlowStore(store.get());
        window.show();

        // A real chat call through the proxy (the demo model, no code).
        RawHttpClient client(server.port());
        const QJsonObject body{
            {QStringLiteral("model"), QStringLiteral("loopscope-demo")},
            {QStringLiteral("messages"),
             QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                    {QStringLiteral("content"), QStringLiteral("hello there")}}}}};
        client.request("POST", "/v1/chat/completions",
                       QJsonDocument(body).toJson(QJsonDocument::Compact),
                       {{"authorization", "Bearer sk-history-test-1234"},
                        {"content-type", "application/json"}});
        QVERIFY(QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 30'000));
        QCOMPARE(client.take().status, 200);
        FlowListModel *model = window.flowListModel();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1, 10'000);
        const QString original = model->idAt(0);
        QTRY_COMPARE_WITH_TIMEOUT(model->index(0, 0).data(FlowListModel::StateRole).toString(),
                                  QStringLiteral("completed"), 10'000);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFlowId(), original, 10'000);

        // The menu offers the six actions.
        QStringList texts;
        for (QAction *a : window.requestContextMenu()->actions())
            if (!a->isSeparator())
                texts << a->text();
        QCOMPARE(texts,
                 (QStringList{QStringLiteral("Replay"), QStringLiteral("Edit and resend…"),
                              QStringLiteral("Compare with the flow shown before"),
                              QStringLiteral("Copy id"), QStringLiteral("Export HAR (this flow)…"),
                              QStringLiteral("Delete…")}));

        QApplication::clipboard()->clear();
        window.copyIdAction()->trigger();
        QCOMPARE(QApplication::clipboard()->text(), original);

        // Replay: a new flow linked to the original, selected in the table.
        window.replayAction()->trigger();
        QCOMPARE(proxy.replays, 1);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 20'000);
        const QString replayed = model->idAt(0);
        QVERIFY(replayed != original);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFlowId(), replayed, 10'000);
        QTRY_COMPARE_WITH_TIMEOUT(model->index(0, 0).data(FlowListModel::ReplayOfRole).toString(),
                                  original, 20'000);
        QVERIFY(asked.errors.isEmpty());

        // Edit and resend: the editor gets the recorded body; the new flow carries the edit.
        QVERIFY(window.requestsPanel()->selectRequest(original));
        QJsonObject edited = body;
        edited.insert(QStringLiteral("messages"),
                      QJsonArray{QJsonObject{
                          {QStringLiteral("role"), QStringLiteral("user")},
                          {QStringLiteral("content"), QStringLiteral("edited question")}}});
        asked.edited = edited;
        window.editResendAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 3, 20'000);
        QCOMPARE(asked.editorSaw.value(QStringLiteral("messages")),
                 body.value(QStringLiteral("messages")));
        const QString resent = model->idAt(0);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFlowId(), resent, 10'000);
        QJsonObject resentFlow;
        QVERIFY(QTest::qWaitFor(
            [&] {
                store->flush();
                resentFlow = store->query()->flow(resent).value_or(QJsonObject());
                return resentFlow.value(QStringLiteral("state")).toString() ==
                       QLatin1String("completed");
            },
            20'000));
        QCOMPARE(resentFlow.value(QStringLiteral("replay_of")).toString(), original);
        QVERIFY(QJsonDocument(hopOf(resentFlow, QStringLiteral("client_request")))
                    .toJson()
                    .contains("edited question"));

        // Delete: asked, then gone from the table and the store.
        store->flush();
        QVERIFY(window.requestsPanel()->selectRequest(replayed));
        QSignalSpy deleted(&window, &MainWindow::flowDeleted);
        const int questionsBefore = int(asked.questions.size());
        window.deleteFlowAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(deleted.size(), 1, 10'000);
        QCOMPARE(asked.questions.size(), questionsBefore + 1);
        QVERIFY(asked.questions.last().contains(replayed));
        QVERIFY(deleted.at(0).at(1).toBool());
        QCOMPARE(model->rowOf(replayed), -1);
        QVERIFY(!store->query()->flow(replayed));
        QCOMPARE(model->rowCount(), 2);

        auto done = stack.shutdown();
        QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20'000));
    }

    void runsViewShowsWholeRunsAndSelectsFlows() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        sf::sessionFlow(bus, QStringLiteral("req_r1"), QStringLiteral("agent-1"));
        sf::sessionFlow(bus, QStringLiteral("req_r2"), QStringLiteral("agent-1"), true);
        sf::completedFlow(bus, QStringLiteral("req_alone"));
        sf::sessionFlow(bus, QStringLiteral("req_other1"), QStringLiteral("agent-2"));
        sf::sessionFlow(bus, QStringLiteral("req_other2"), QStringLiteral("agent-2"));
        store->flush();
        MainWindow window(&bus, nullptr, nullptr);
        window.setFlowStore(store.get());
        window.show();
        RunsModel *runs = window.runsModel();
        QTRY_VERIFY_WITH_TIMEOUT(runs->indexOfFlow(QStringLiteral("req_r2")).isValid(), 10'000);
        const QModelIndex run = runs->indexOfFlow(QStringLiteral("req_r1")).parent();
        QCOMPARE(runs->rowCount(run), 2);
        QCOMPARE(runs->index(run.row(), RunsModel::ErrorsColumn).data().toInt(), 1);
        QCOMPARE(runs->index(run.row(), RunsModel::CodeRunsColumn).data().toInt(), 2);

        // Choosing a flow in the Runs view shows it everywhere.
        QSignalSpy loaded(&window, &MainWindow::flowLoaded);
        window.requestsPanel()->setAutoFollow(false);
        QVERIFY(window.runsPanel()->selectFlow(QStringLiteral("req_r1")));
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFlowId(), QStringLiteral("req_r1"), 10'000);
        QTRY_COMPARE_WITH_TIMEOUT(window.requestsPanel()->currentRequestId(),
                                  QStringLiteral("req_r1"), 10'000);
        QTRY_VERIFY_WITH_TIMEOUT(
            !loaded.isEmpty() &&
                loaded.last().at(0).toJsonObject().value(QStringLiteral("id")).toString() ==
                    QLatin1String("req_r1"),
            10'000);
        // And selecting it in Requests selects it in Runs.
        QVERIFY(window.requestsPanel()->selectRequest(QStringLiteral("req_r2")));
        QTRY_COMPARE_WITH_TIMEOUT(window.runsPanel()->currentFlowId(), QStringLiteral("req_r2"),
                                  10'000);
        // A run the user opened stays open when the view reloads (a reload resets the model).
        QTreeView *tree = window.runsPanel()->view();
        const auto otherRun = [&] {
            return runs->indexOfFlow(QStringLiteral("req_other1")).parent();
        };
        tree->expand(otherRun());
        QSignalSpy reloaded(runs, &RunsModel::loaded);
        runs->reload();
        QTRY_VERIFY_WITH_TIMEOUT(!reloaded.isEmpty(), 10'000);
        QVERIFY(tree->isExpanded(otherRun()));
        QVERIFY(tree->isExpanded(runs->indexOfFlow(QStringLiteral("req_r2")).parent()));
        tree->collapse(otherRun());
        runs->reload();
        QTRY_COMPARE_WITH_TIMEOUT(reloaded.size(), 2, 10'000);
        QVERIFY(!tree->isExpanded(otherRun()));

        // Export the current run: its two flows.
        QTemporaryDir dir;
        Prompted asked;
        asked.saveTo = dir.filePath(QStringLiteral("run.har"));
        window.setPrompts(asked.prompts());
        QSignalSpy exported(&window, &MainWindow::exportFinished);
        window.exportRunAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(exported.size(), 1, 10'000);
        QFile file(asked.saveTo);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(file.readAll())
                     .object()
                     .value(QStringLiteral("log"))
                     .toObject()
                     .value(QStringLiteral("entries"))
                     .toArray()
                     .size(),
                 2);
    }
};

QTEST_MAIN(TestHistoryWindow)
#include "tst_historywindow.moc"
