#include "fakeproxycontrol.h"
#include "models/sampleevents.h"
#include "models/storeflows.h"

#include "inspect/credentialpolicy.h"
#include "inspect/eventbus.h"
#include "models/eventbatcher.h"
#include "models/flowlistmodel.h"
#include "models/jsontreemodel.h"
#include "models/looptimelinemodel.h"
#include "models/sandboxesmodel.h"
#include "sandbox/sandboxregistry.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"
#include "widgets/codeeditor.h"
#include "widgets/codepanel.h"
#include "widgets/conversationview.h"
#include "widgets/diffview.h"
#include "widgets/httpinspector.h"
#include "widgets/injectedpanel.h"
#include "widgets/jsonview.h"
#include "widgets/looppanel.h"
#include "widgets/mainwindow.h"
#include "widgets/requestspanel.h"
#include "widgets/sandboxespanel.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>

using namespace loopscope;
namespace s = loopscope::sample;
namespace sf = loopscope::storeflows;

namespace {

// Publishes the registry's signals as Sandbox* events, as the app does.
void publishRegistryEvents(SandboxRegistry *registry, EventBus *bus) {
    const auto data = [](const SandboxEntry &e) {
        return QJsonObject{
            {QStringLiteral("containerId"), e.handle.id},
            {QStringLiteral("provider"), e.handle.provider},
            {QStringLiteral("sessionId"), e.sessionId},
            {QStringLiteral("ephemeral"), !e.isSessionScoped()},
            {QStringLiteral("identity"), CredentialPolicy::mask(e.identity.value_or(QString()))},
            {QStringLiteral("createdMs"), e.createdMs},
            {QStringLiteral("lastUsedMs"), e.lastAccessedMs},
            {QStringLiteral("runs"), e.runs}};
    };
    QObject::connect(registry, &SandboxRegistry::sandboxCreated, bus,
                     [bus, data](const SandboxEntry &e) {
                         bus->publish(InspectorEvent::Kind::SandboxCreated, {}, -1, data(e));
                     });
    QObject::connect(registry, &SandboxRegistry::sandboxRemoved, bus,
                     [bus, data](const SandboxEntry &e, SandboxRemovalReason reason) {
                         bus->publish(reason == SandboxRemovalReason::Deleted
                                          ? InspectorEvent::Kind::SandboxDeleted
                                          : InspectorEvent::Kind::SandboxEvicted,
                                      {}, -1, data(e));
                     });
}

void publishAll(EventBus &bus, const QList<InspectorEvent> &events) {
    for (const InspectorEvent &e : events)
        bus.publish(e);
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("LoopscopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
    }

    void init() { QSettings().clear(); }

    void panelsFillFromBusEvents() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        FakeProxyControl proxy;
        MainWindow window(&bus, nullptr, &proxy);
        window.setFlowStore(store.get());
        window.show();

        const qint64 t0 = QDateTime::currentMSecsSinceEpoch();
        publishAll(bus, s::fullRequest(QStringLiteral("req_a"), t0, QStringLiteral("sbx_1")));
        // What the HTTP front publishes once the client got its answer.
        InspectorEvent response = InspectorEvent::make(
            InspectorEvent::Kind::ClientResponse, QStringLiteral("req_a"), -1,
            {{QStringLiteral("status"), 200},
             {QStringLiteral("stream"), false},
             {QStringLiteral("headers"),
              QJsonObject{{QStringLiteral("content-type"), QStringLiteral("application/json")}}}});
        response.raw =
            QJsonDocument(QJsonObject{{QStringLiteral("object"), QStringLiteral("response")},
                                      {QStringLiteral("output"),
                                       QJsonArray{s::ciItem(QStringLiteral("print(6*7)"),
                                                            QStringLiteral("42\n"),
                                                            QStringLiteral("sbx_1"))}}})
                .toJson(QJsonDocument::Compact);
        bus.publish(response);
        bus.publish(sf::exchangeFinished(QStringLiteral("req_a")));
        publishAll(bus, {s::started(QStringLiteral("req_b"), t0, QStringLiteral("chat_completions"),
                                    QStringLiteral("llama3"))});

        RequestsPanel *requests = window.requestsPanel();
        QTRY_COMPARE_WITH_TIMEOUT(requests->view()->model()->rowCount(), 2, 10'000);
        // Auto-follow selected the newest request (on top). Clicking an older one stops
        // following.
        QTRY_COMPARE_WITH_TIMEOUT(requests->currentRequestId(), QStringLiteral("req_b"), 10'000);
        QVERIFY(requests->autoFollow());
        // Shown, not only selected: the detail load drops a stale answer, so selecting req_a
        // before req_b's detail arrived would leave nothing "shown before" for Compare below.
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFlow().value(QLatin1String("id")).toString(),
                                  QStringLiteral("req_b"), 10'000);
        const QRect newest = requests->view()->visualRect(requests->view()->model()->index(0, 0));
        QTest::mouseClick(requests->view()->viewport(), Qt::LeftButton, {}, newest.center());
        QVERIFY(requests->autoFollow());
        const QRect older = requests->view()->visualRect(requests->view()->model()->index(1, 0));
        QTest::mouseClick(requests->view()->viewport(), Qt::LeftButton, {}, older.center());
        QVERIFY(!requests->autoFollow());
        QCOMPARE(requests->currentRequestId(), QStringLiteral("req_a"));
        requests->selectRequest(QStringLiteral("req_a"));
        QCOMPARE(requests->currentRequestId(), QStringLiteral("req_a"));

        // Loop: model call, code run, model call.
        LoopTimelineModel *loop = window.loopPanel()->timelineModel();
        QTRY_COMPARE_WITH_TIMEOUT(loop->rowCount(), 3, 10'000);
        QCOMPARE(loop->index(1, 0).data().toString(), QStringLiteral("Code run 1"));

        // Code & output shows the latest code run.
        CodePanel *code = window.codePanel();
        QTRY_COMPARE_WITH_TIMEOUT(code->codeView()->toPlainText(), QStringLiteral("print(6*7)"),
                                  10'000);
        QCOMPARE(code->stdoutView()->toPlainText(), QStringLiteral("42\n"));
        QVERIFY(code->summaryLabel()->text().contains(QStringLiteral("sbx_1")));

        // Injected outputs: exactly the items sent.
        QTRY_COMPARE_WITH_TIMEOUT(window.injectedPanel()->items().size(), 1, 10'000);
        const QJsonArray items = window.injectedPanel()->items();
        QCOMPARE(items.at(0).toObject().value(QLatin1String("type")).toString(),
                 QStringLiteral("code_interpreter_call"));
        QVERIFY(window.injectedPanel()->jsonView()->prettyText().contains(
            QStringLiteral("\"logs\": \"42\\n\"")));

        // HTTP: every hop of the flow from the store, secrets masked.
        HttpInspector *http = window.httpInspector();
        QVERIFY(http->hopList()->model()->rowCount() >= 5);
        QVERIFY(http->selectHopOfKind(QStringLiteral("upstream_request")));
        const QString upstreamRequest = http->bodyView()->toPlainText();
        QVERIFY(upstreamRequest.contains(QStringLiteral("gpt-4.1-mini")));
        QVERIFY(!upstreamRequest.contains(QStringLiteral("sk-test-1234567890abcd")));

        // Conversation: the same flow, the model's code decoded as Python.
        QVERIFY2(window.conversationView()->text().contains(QStringLiteral("print(6*7)")),
                 qPrintable(window.conversationView()->text()));

        // req_b was shown before req_a: "Compare" diffs the two conversations.
        QTRY_COMPARE_WITH_TIMEOUT(window.previousFlow().value(QLatin1String("id")).toString(),
                                  QStringLiteral("req_b"), 10'000);
        QVERIFY(window.compareFlowsAction()->isEnabled());
        window.compareFlowsAction()->trigger();
        const QList<DiffView *> diffs = window.findChildren<DiffView *>();
        QCOMPARE(diffs.size(), 1);
        DiffView *diff = diffs.first();
        QVERIFY(diff->isWindow());
        QVERIFY2(diff->summary().startsWith(QStringLiteral("lines added")),
                 qPrintable(diff->summary()));
        diff->close();

        // Selecting the first model call in the Loop panel shows its details.
        window.loopPanel()->selectStep(0);
        QVERIFY(
            window.loopPanel()->detailsView()->toPlainText().contains(QStringLiteral("HTTP 200")));

        // Live updates of the selected request reach the panels.
        publishAll(bus, {s::upstream(QStringLiteral("req_b"), 0, t0 + 100, 90),
                         s::codeError(QStringLiteral("req_b"), 0, t0 + 120, QStringLiteral("1/0"),
                                      QStringLiteral("sbx_2"), true)});
        QCOMPARE(requests->currentRequestId(), QStringLiteral("req_a")); // not following
        requests->selectRequest(QStringLiteral("req_b"));
        QTRY_COMPARE_WITH_TIMEOUT(loop->rowCount(), 2, 10'000);
        QTRY_COMPARE_WITH_TIMEOUT(code->codeView()->toPlainText(), QStringLiteral("1/0"), 10'000);
        QVERIFY(code->errorView()->toPlainText().contains(QStringLiteral("ZeroDivisionError")));
        QVERIFY(code->summaryLabel()->text().contains(QStringLiteral("timed out")));
        QVERIFY(code->summaryLabel()->text().contains(QStringLiteral("output truncated")));

        // Status bar: address, upstream, sandbox health, counts.
        QVERIFY(window.listenLabel()->text().contains(QStringLiteral("http://127.0.0.1:4555/v1")));
        QCOMPARE(window.upstreamLabel()->text(), QStringLiteral("upstream: demo"));
        QVERIFY(window.sandboxLabel()->text().contains(QStringLiteral("✓")));
        QTRY_VERIFY2_WITH_TIMEOUT(window.countsLabel()->text().startsWith(
                                      QStringLiteral("2 flows in history · 1 running")),
                                  qPrintable(window.countsLabel()->text()), 10'000);
        // Config models Loopscope cannot reach: counted in the status, named in its tooltip.
        proxy.skipped = {QStringLiteral("model 'claude' (model_list[1], line 7) skipped: x"),
                         QStringLiteral("model 'titan' (model_list[2], line 11) skipped: y")};
        emit proxy.stateChanged();
        QTRY_COMPARE(window.upstreamLabel()->text(),
                     QStringLiteral("upstream: demo · 2 models skipped"));
        QVERIFY(window.upstreamLabel()->toolTip().contains(QStringLiteral("'titan'")));
    }

    void filtersNarrowTheTable() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        MainWindow window(&bus, nullptr, nullptr);
        window.setFlowStore(store.get());
        sf::completedFlow(bus, QStringLiteral("with_code"));
        sf::completedFlow(bus, QStringLiteral("chat"), QStringLiteral("llama3"),
                          QStringLiteral("print('llama')"));
        sf::failedFlow(bus, QStringLiteral("broken"), 502);
        sf::codeErrorFlow(bus, QStringLiteral("raised"));
        RequestsPanel *panel = window.requestsPanel();
        QAbstractItemModel *shown = panel->view()->model();
        QTRY_COMPARE_WITH_TIMEOUT(shown->rowCount(), 4, 10'000);
        const auto idAt = [shown](int row) {
            return shown->index(row, 0).data(FlowListModel::FlowIdRole).toString();
        };

        panel->stateFilter()->setCurrentIndex(
            panel->stateFilter()->findData(QStringLiteral("failed")));
        QTRY_COMPARE_WITH_TIMEOUT(shown->rowCount(), 1, 10'000);
        QCOMPARE(idAt(0), QStringLiteral("broken"));
        panel->stateFilter()->setCurrentIndex(0);
        QTRY_COMPARE_WITH_TIMEOUT(shown->rowCount(), 4, 10'000);

        panel->codeErrorsCheck()->setChecked(true);
        QTRY_COMPARE_WITH_TIMEOUT(shown->rowCount(), 1, 10'000);
        QCOMPARE(idAt(0), QStringLiteral("raised"));
        panel->codeErrorsCheck()->setChecked(false);
        QTRY_COMPARE_WITH_TIMEOUT(shown->rowCount(), 4, 10'000);

        // Typing in the search box searches every flow's bodies and code after a short
        // debounce; the placeholder says what it covers.
        QVERIFY(panel->searchField()->placeholderText().contains(QStringLiteral("code")));
        QTest::keyClicks(panel->searchField(), QStringLiteral("LLAMA"));
        QTRY_COMPARE_WITH_TIMEOUT(shown->rowCount(), 1, 10'000);
        QCOMPARE(idAt(0), QStringLiteral("chat"));
        panel->searchField()->setText(QStringLiteral("nothing-like-this"));
        QTRY_VERIFY_WITH_TIMEOUT(
            panel->messageLabel()->isVisibleTo(panel) &&
                panel->messageLabel()->text().contains(QStringLiteral("No flows match")),
            10'000);
        QCOMPARE(shown->rowCount(), 0);
        panel->searchField()->clear();
        QTRY_COMPARE_WITH_TIMEOUT(shown->rowCount(), 4, 10'000);
        QVERIFY(!panel->messageLabel()->isVisibleTo(panel));
    }

    void keyboardShortcuts() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        MainWindow window(&bus, nullptr, nullptr);
        window.setFlowStore(store.get());
        QStringList questions;
        MainWindow::Prompts prompts;
        prompts.confirm = [&questions](const QString &q) {
            questions << q;
            return true;
        };
        window.setPrompts(prompts);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        publishAll(bus, s::fullRequest(QStringLiteral("a"), 1000));
        bus.publish(sf::exchangeFinished(QStringLiteral("a")));
        QTRY_COMPARE_WITH_TIMEOUT(window.flowListModel()->rowCount(), 1, 10'000);
        QCOMPARE(window.searchAllAction()->shortcut(),
                 QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));

        QCOMPARE(window.findAction()->shortcut(), QKeySequence(QKeySequence::Find));
        window.requestsPanel()->view()->setFocus();
        window.findAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(window.requestsPanel()->searchField()->hasFocus(), 5'000);

        // Ctrl+L clears the history, after asking with the count.
        QCOMPARE(window.clearAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_L));
        store->flush();
        QTest::keyClick(&window, Qt::Key_L, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(questions.size(), 1, 10'000);
        QVERIFY2(questions.at(0).startsWith(QStringLiteral("Clear 1 flow from history?")),
                 qPrintable(questions.at(0)));
        QTRY_COMPARE_WITH_TIMEOUT(window.flowListModel()->rowCount(), 0, 10'000);
        QVERIFY(store->query()->list({}).value(QStringLiteral("data")).toArray().isEmpty());
        QCOMPARE(window.codePanel()->codeView()->toPlainText(), QString());
        QCOMPARE(window.loopPanel()->timelineModel()->rowCount(), 0);
        QCOMPARE(window.httpInspector()->hopList()->model()->rowCount(), 0);
        QVERIFY(window.currentFlow().isEmpty());
        QCOMPARE(window.deleteSandboxAction()->shortcut(), QKeySequence(QKeySequence::Delete));

        // Delete in the search box edits text; it never reaches the sandboxes.
        int asked = 0;
        publishAll(bus, {s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx"), 1)});
        QTRY_COMPARE_WITH_TIMEOUT(window.sandboxesModel()->rowCount(), 1, 10'000);
        window.sandboxesPanel()->view()->selectRow(0);
        window.sandboxesPanel()->setConfirmation([&asked](const QString &) {
            ++asked;
            return false;
        });
        QLineEdit *search = window.requestsPanel()->searchField();
        search->setText(QStringLiteral("abc"));
        search->setFocus();
        search->setCursorPosition(0);
        QTest::keyClick(search, Qt::Key_Delete);
        QCOMPARE(search->text(), QStringLiteral("bc"));
        QCOMPARE(asked, 0);
    }

    void deleteInSandboxPanelRemovesFromTheRegistry() {
        EventBus bus;
        SandboxRegistry registry;
        auto *backend = new RecordingSandboxBackend(&registry);
        backend->uniqueIds = true;
        publishRegistryEvents(&registry, &bus);
        MainWindow window(&bus, &registry, nullptr);
        window.show();

        const QString identity = QStringLiteral("sha256-of-token-abcd");
        for (const QString &session :
             {QStringLiteral("s1"), QStringLiteral("s2"), QStringLiteral("s3")})
            QVERIFY(awaitFuture(registry.getOrCreate(identity + u':' + session, identity,
                                                     backend->factory(), session))
                        .ok());
        SandboxesModel *model = window.sandboxesModel();
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 3, 10'000);
        SandboxesPanel *panel = window.sandboxesPanel();
        // The registry's identity is a hash of the key: no code run linked it to a request's
        // key yet, so nothing (a hash suffix would pass for the key's last 4).
        QCOMPARE(model->index(0, SandboxesModel::IdentityColumn).data().toString(), QString());
        QCOMPARE(model->index(1, SandboxesModel::KindColumn).data().toString(),
                 QStringLiteral("session"));

        QStringList questions;
        bool answer = false;
        panel->setConfirmation([&](const QString &q) {
            questions.append(q);
            return answer;
        });

        // Nothing selected: Delete does nothing and asks nothing.
        QVERIFY(!panel->deleteButton()->isEnabled());
        QVERIFY(!panel->deleteSelected());
        QVERIFY(questions.isEmpty());

        panel->view()->selectRow(1);
        QCOMPARE(panel->selectedContainerId(), QStringLiteral("sbx_fake_2"));
        QVERIFY(panel->deleteButton()->isEnabled());
        // Declined: nothing is deleted.
        QTest::mouseClick(panel->deleteButton(), Qt::LeftButton);
        QCOMPARE(questions.size(), 1);
        QVERIFY(questions.at(0).contains(QStringLiteral("sbx_fake_2")));
        // Commands reach the registry queued: a marker queued after the click has run once
        // any delete it asked for has, and a removal takes its entry out at once.
        bool drained = false;
        QMetaObject::invokeMethod(
            &registry, [&drained] { drained = true; }, Qt::QueuedConnection);
        QTRY_VERIFY(drained);
        QCOMPARE(backend->removeCount(), 0);
        QCOMPARE(registry.size(), 3);

        // Confirmed, with the Delete key in the panel: the registry removes it, then its event
        // takes the row away.
        answer = true;
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        panel->view()->setFocus();
        QTest::keyClick(panel->view(), Qt::Key_Delete);
        QCOMPARE(questions.size(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(backend->removeCount(), 1, 10'000);
        QCOMPARE(backend->removeCalls.at(0).handle.id, QStringLiteral("sbx_fake_2"));
        QVERIFY(!registry.contains(identity + QStringLiteral(":s2")));
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 2, 10'000);
        QCOMPARE(model->rowOf(QStringLiteral("sbx_fake_2")), -1);

        // The session gets a fresh sandbox on its next request.
        QVERIFY(awaitFuture(registry.getOrCreate(identity + QStringLiteral(":s2"), identity,
                                                 backend->factory(), QStringLiteral("s2")))
                    .ok());
        QCOMPARE(backend->createCount(), 4);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 3, 10'000);

        // Delete all.
        QTest::mouseClick(panel->deleteAllButton(), Qt::LeftButton);
        QCOMPARE(questions.size(), 3);
        QCOMPARE(questions.at(2),
                 QStringLiteral("Delete all 3 sandboxes? Their Python state is lost."));
        QTRY_COMPARE_WITH_TIMEOUT(registry.size(), 0, 10'000);
        QCOMPARE(backend->removeCount(), 4);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 0, 10'000);
        QVERIFY(!panel->deleteAllButton()->isEnabled());
    }

    void withoutRegistryDeletingIsOff() {
        EventBus bus;
        MainWindow window(&bus, nullptr, nullptr);
        publishAll(bus, {s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx"), 1)});
        QTRY_COMPARE_WITH_TIMEOUT(window.sandboxesModel()->rowCount(), 1, 10'000);
        window.sandboxesPanel()->view()->selectRow(0);
        window.sandboxesPanel()->setConfirmation([](const QString &) { return true; });
        QVERIFY(!window.sandboxesPanel()->deleteButton()->isEnabled());
        QVERIFY(!window.sandboxesPanel()->deleteSelected());
        QCOMPARE(window.sandboxesModel()->index(0, SandboxesModel::StateColumn).data().toString(),
                 QStringLiteral("live"));

        // A (re)started proxy hands its registry over: deleting comes on.
        SandboxRegistry registry;
        window.setSandboxRegistry(&registry);
        QVERIFY(window.sandboxesPanel()->deleteButton()->isEnabled());
        window.setSandboxRegistry(nullptr);
        QVERIFY(!window.sandboxesPanel()->deleteButton()->isEnabled());
    }

    // A disk that refuses writes and a window that could not keep up both show in the status
    // bar, in words, and the line leaves when writing works again.
    void statusBarShowsStoreFailureAndDrops() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        MainWindow window(&bus, nullptr, nullptr);
        window.setFlowStore(store.get());
        QLabel *health = window.healthLabel();
        QVERIFY(health->isHidden());

        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral(
                                               "^loopscope: history: cannot write to :memory:")));
        store->failWritesForTests(true);
        sf::completedFlow(bus, QStringLiteral("req_kept"));
        store->flush();
        QTRY_VERIFY(!health->isHidden());
        QVERIFY2(health->text().startsWith(QStringLiteral("History cannot be written")),
                 qPrintable(health->text()));
        QVERIFY2(health->text().contains(QStringLiteral("1 flow(s) kept in memory")),
                 qPrintable(health->text()));

        store->failWritesForTests(false);
        QTRY_VERIFY_WITH_TIMEOUT(health->isHidden(), 30'000);

        // Published on this thread while it does not process events: the window's queue fills,
        // sheds live output and says how much.
        const qsizetype flood = EventBatcher::kShedAt + 500;
        for (qsizetype i = 0; i < flood; ++i)
            bus.publish(InspectorEvent::Kind::CodeRunOutput, QStringLiteral("req_kept"), 0,
                        {{QStringLiteral("callId"), QStringLiteral("c")},
                         {QStringLiteral("stream"), QStringLiteral("stdout")},
                         {QStringLiteral("text"), QStringLiteral("x\n")}});
        const quint64 dropped = window.eventBatcher()->dropped();
        QVERIFY(dropped >= 500);
        QTRY_VERIFY(!health->isHidden());
        QVERIFY2(health->text().contains(QStringLiteral("Dropped: %1 live events not shown")
                                             .arg(QLocale().toString(dropped))),
                 qPrintable(health->text()));
    }

    void proxyControlsAndStatusBar() {
        EventBus bus;
        FakeProxyControl proxy;
        proxy.selfTestProblems = QStringLiteral("bubblewrap missing: apt-get install bubblewrap");
        MainWindow window(&bus, nullptr, &proxy);
        QCOMPARE(window.startStopAction()->text(), QStringLiteral("Stop proxy"));
        QVERIFY(window.sandboxLabel()->text().contains(QStringLiteral("✗")));
        QCOMPARE(window.sandboxLabel()->toolTip(), proxy.selfTestProblems);

        window.startStopAction()->trigger();
        QCOMPARE(proxy.stops, 1);
        QCOMPARE(window.startStopAction()->text(), QStringLiteral("Start proxy"));
        QCOMPARE(window.listenLabel()->text(), QStringLiteral("stopped"));
        QVERIFY(!window.copyUrlAction()->isEnabled());
        window.startStopAction()->trigger();
        QCOMPARE(proxy.starts, 1);
        QVERIFY(window.copyUrlAction()->isEnabled());

        // Clicking the address copies the /v1 base URL.
        QApplication::clipboard()->clear();
        emit window.listenLabel()->linkActivated(QStringLiteral("http://127.0.0.1:4555/v1"));
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("http://127.0.0.1:4555/v1"));
        QApplication::clipboard()->clear();
        window.copyUrlAction()->trigger();
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("http://127.0.0.1:4555/v1"));
    }

    void settingsPersistAndApply() {
        EventBus bus;
        FakeProxyControl proxy;
        AppSettings s;
        s.port = 4100;
        s.retention = 200;
        {
            MainWindow window(&bus, nullptr, &proxy);
            QCOMPARE(window.flowListModel()->liveRowLimit(), AppSettings{}.retention);
            window.applySettings(s);
            QCOMPARE(window.flowListModel()->liveRowLimit(), 200);
            QCOMPARE(proxy.applied.size(), 1);
            QCOMPARE(proxy.applied.at(0).port, 4100);
        }
        // A new window starts from the saved settings.
        MainWindow again(&bus, nullptr, &proxy);
        QCOMPARE(again.settings(), s);
        QCOMPARE(again.flowListModel()->liveRowLimit(), 200);
    }

    void tenThousandRequestsStayResponsive() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        MainWindow window(&bus, nullptr, nullptr);
        window.setFlowStore(store.get());
        window.show();
        for (int i = 0; i < 10'000; ++i) {
            const QString id = QStringLiteral("r%1").arg(i);
            bus.publish(s::started(id, 1000 + i));
            bus.publish(s::finished(id, 1100 + i, 100, 1, 0, 50));
            bus.publish(sf::exchangeFinished(id));
        }
        QTRY_COMPARE_WITH_TIMEOUT(window.eventBatcher()->pendingCount(), 0, 60'000);
        // The table keeps "Requests kept" (5,000 by default) of the live flows, newest first, in
        // order on top; the older ones leave memory and stay in the store, read again only by
        // paging — which the view may already have asked for (it fetches while the table's last
        // row is on screen), so paged rows, if any, are older ones below the kept.
        FlowListModel *model = window.flowListModel();
        const int kept = AppSettings{}.retention;
        QTRY_COMPARE_WITH_TIMEOUT(model->rowOf(QStringLiteral("r9999")), 0, 60'000);
        QTRY_VERIFY_WITH_TIMEOUT(
            !model->isLoading() && model->rowOf(QStringLiteral("r5000")) == kept - 1, 60'000);
        QTRY_COMPARE_WITH_TIMEOUT(window.requestsPanel()->currentRequestId(),
                                  QStringLiteral("r9999"), 60'000);
        for (int row = 0; row < kept; row += 499)
            QCOMPARE(model->idAt(row), QStringLiteral("r%1").arg(9999 - row));
        // Rows below the kept ones come only from pages of the store: older flows, a page or
        // two the view asked for, not the 5,000 the limit dropped.
        QVERIFY2(model->rowCount() <= kept + 2 * FlowListModel::kPageSize,
                 qPrintable(QString::number(model->rowCount())));
        for (int row = kept; row < model->rowCount(); ++row)
            QVERIFY2(model->idAt(row).mid(1).toInt() < 5000, qPrintable(model->idAt(row)));
        // Scrolling on finds the rest, also when a page read before the store had written the
        // dropped flows came back empty.
        QTRY_VERIFY_WITH_TIMEOUT(model->canFetchMore({}), 60'000);
        store->flush();
        QCOMPARE(store->query()->list({}).value(QStringLiteral("has_more")).toBool(), true);
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
