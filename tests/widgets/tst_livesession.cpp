// The window against the real thing: ProxyServer + InterceptionStack (registry, local bubblewrap
// sandboxes, agentic loop) with the built-in demo model, requests over loopback, and every panel
// checked for what a user would see. Deleting in the Sandboxes panel must really delete.
#include "inspect/eventbus.h"
#include "models/flowlistmodel.h"
#include "models/looptimelinemodel.h"
#include "models/sandboxesmodel.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "record/flowstore.h"
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/sandboxregistry.h"
#include "widgets/codeeditor.h"
#include "widgets/codepanel.h"
#include "widgets/httpinspector.h"
#include "widgets/injectedpanel.h"
#include "widgets/jsonview.h"
#include "widgets/looppanel.h"
#include "widgets/mainwindow.h"
#include "widgets/requestspanel.h"
#include "widgets/sandboxespanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;

class TestLiveSession : public QObject {
    Q_OBJECT

    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store; // the window's history (in memory)
    std::unique_ptr<ProxyServer> m_server;
    std::unique_ptr<InterceptionStack> m_stack;
    std::unique_ptr<MainWindow> m_window;

    RawHttpClient::Response post(const QByteArray &path, const QJsonObject &body) {
        RawHttpClient client(m_server->port());
        client.request("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact),
                       {{"authorization", "Bearer sk-live-session-test-7777"},
                        {"content-type", "application/json"}});
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60'000))
            return {};
        return client.take();
    }

    static QJsonObject responsesRequest(const QString &input, const QString &session = {}) {
        QJsonObject body{{QStringLiteral("model"), QStringLiteral("loopscope-demo")},
                         {QStringLiteral("input"), input},
                         {QStringLiteral("tools"),
                          QJsonArray{QJsonObject{
                              {QStringLiteral("type"), QStringLiteral("code_interpreter")}}}}};
        if (!session.isEmpty())
            body.insert(QStringLiteral("metadata"),
                        QJsonObject{{QStringLiteral("session_id"), session}});
        return body;
    }

    bool localSandboxUsable() const { return m_stack->localBackend()->selfTest().available; }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("LoopscopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_livesession"));
        QSettings().clear();
    }

    void init() {
        m_bus = std::make_unique<EventBus>();
        FlowStoreOptions history;
        history.inMemory = true;
        m_store = std::make_unique<FlowStore>(history);
        QVERIFY(m_store->open());
        m_store->attach(m_bus.get());
        ProxyConfig config;
        config.port = 0;
        config.defaultRoute = ProxyConfig::demoRoute();
        if (QByteArray(QTest::currentTestFunction()) == "unreachableUpstreamShowsAsFailed") {
            // Port 9 (discard) on loopback: nothing listens there on a test machine.
            QString routeError;
            config.defaultRoute =
                ProxyConfig::routeForUpstream(QStringLiteral("http://127.0.0.1:9/v1"), &routeError);
            QVERIFY2(config.defaultRoute, qPrintable(routeError));
        }
        m_server = std::make_unique<ProxyServer>(config);
        m_stack = std::make_unique<InterceptionStack>(m_server.get(), m_bus.get());
        LocalSandboxOptions options;
        options.poolSize = 1;
        QString error;
        QVERIFY2(m_stack->init(options, &error), qPrintable(error));
        QVERIFY2(m_server->listen(), qPrintable(m_server->errorString()));
        if (!localSandboxUsable())
            QSKIP("local sandbox unavailable on this machine (see LocalPythonBackend::selfTest)");
        m_window = std::make_unique<MainWindow>(m_bus.get(), m_stack->registry(), nullptr);
        m_window->setFlowStore(m_store.get());
        m_window->show();
    }

    void cleanup() {
        m_window.reset();
        if (m_stack) {
            auto done = m_stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20'000));
        }
        m_stack.reset();
        m_server.reset();
        m_store.reset();
        m_bus.reset();
    }

    void aRequestShowsUpInEveryPanel() {
        const auto reply =
            post("/v1/responses", responsesRequest(QStringLiteral("What is 17*23?")));
        QCOMPARE(reply.status, 200);
        const QJsonArray output = reply.json().value(QLatin1String("output")).toArray();
        QVERIFY(!output.isEmpty());
        QCOMPARE(output.at(0).toObject().value(QLatin1String("type")).toString(),
                 QStringLiteral("code_interpreter_call"));

        FlowListModel *requests = m_window->flowListModel();
        QTRY_COMPARE_WITH_TIMEOUT(requests->rowCount(), 1, 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(requests->index(0, FlowListModel::StatusColumn).data().toString(),
                                  QStringLiteral("200"), 20'000);
        QCOMPARE(requests->index(0, FlowListModel::ApiColumn).data().toString(),
                 QStringLiteral("responses"));
        QCOMPARE(requests->index(0, FlowListModel::ModelColumn).data().toString(),
                 QStringLiteral("loopscope-demo"));
        QCOMPARE(requests->index(0, FlowListModel::IterationsColumn).data().toInt(), 2);
        QCOMPARE(requests->index(0, FlowListModel::CodeRunsColumn).data().toInt(), 1);

        // Auto-follow selected it: the Loop, Code, Injected and HTTP panels show it.
        QTRY_COMPARE_WITH_TIMEOUT(m_window->requestsPanel()->currentRequestId(), requests->idAt(0),
                                  10'000);
        LoopTimelineModel *loop = m_window->loopPanel()->timelineModel();
        QTRY_COMPARE_WITH_TIMEOUT(loop->rowCount(), 3, 10'000);
        QCOMPARE(loop->index(1, 0).data(LoopTimelineModel::KindRole).toInt(),
                 int(LoopTimelineModel::StepKind::CodeRun));

        CodePanel *code = m_window->codePanel();
        QTRY_VERIFY_WITH_TIMEOUT(code->codeView()->toPlainText().contains(QStringLiteral("17*23")),
                                 10'000);
        QCOMPARE(code->stdoutView()->toPlainText().trimmed(), QStringLiteral("391"));

        QTRY_COMPARE_WITH_TIMEOUT(m_window->injectedPanel()->items().size(), 1, 10'000);
        const QJsonArray injected = m_window->injectedPanel()->items();
        // Exactly as sent to the client.
        QCOMPARE(injected.at(0).toObject(), output.at(0).toObject());

        // client request, 2 × (upstream request, response), code run, client response
        HttpInspector *http = m_window->httpInspector();
        QTRY_COMPARE_WITH_TIMEOUT(http->hopList()->model()->rowCount(), 7, 10'000);
        QVERIFY(http->selectHopOfKind(QStringLiteral("client_request")));
        const QString client = http->bodyView()->toPlainText();
        QVERIFY(client.contains(QStringLiteral("What is 17*23?")));
        QVERIFY(!client.contains(QStringLiteral("sk-live-session-test-7777")));

        // The ephemeral sandbox came and went.
        QTRY_COMPARE_WITH_TIMEOUT(m_stack->registry()->size(), 0, 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->sandboxesModel()->rowCount(), 0, 20'000);

        // The Requests table (the store's flow) and its filters see it too.
        RequestsPanel *panel = m_window->requestsPanel();
        QTRY_COMPARE_WITH_TIMEOUT(
            panel->view()->model()->index(0, FlowListModel::StatusColumn).data().toString(),
            QStringLiteral("200"), 20'000);
        panel->codeErrorsCheck()->setChecked(true);
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->flowListModel()->isLoading(), 10'000);
        QCOMPARE(panel->view()->model()->rowCount(), 0);
        panel->codeErrorsCheck()->setChecked(false);
        QTRY_COMPARE_WITH_TIMEOUT(panel->view()->model()->rowCount(), 1, 10'000);
    }

    void deletingASessionSandboxGivesTheSessionAFreshOne() {
        QCOMPARE(post("/v1/responses",
                      responsesRequest(QStringLiteral("What is 6*7?"), QStringLiteral("nb-1")))
                     .status,
                 200);
        SandboxesModel *sandboxes = m_window->sandboxesModel();
        QTRY_COMPARE_WITH_TIMEOUT(sandboxes->rowCount(), 1, 20'000);
        QCOMPARE(sandboxes->index(0, SandboxesModel::KindColumn).data().toString(),
                 QStringLiteral("session"));
        QTRY_COMPARE_WITH_TIMEOUT(
            sandboxes->index(0, SandboxesModel::SessionColumn).data().toString(),
            QStringLiteral("nb-1"), 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(sandboxes->index(0, SandboxesModel::RunsColumn).data().toInt(), 1,
                                  20'000);
        const QString identity =
            sandboxes->index(0, SandboxesModel::IdentityColumn).data().toString();
        QVERIFY(identity.startsWith(QChar(0x2026)));
        QVERIFY(identity.size() <= 5);
        const QString first =
            sandboxes->index(0, 0).data(SandboxesModel::ContainerIdRole).toString();
        QCOMPARE(m_stack->registry()->size(), 1);
        QVERIFY(m_stack->registry()->entryByContainerId(first));

        SandboxesPanel *panel = m_window->sandboxesPanel();
        panel->setConfirmation([](const QString &) { return true; });
        panel->view()->selectRow(0);
        QVERIFY(panel->deleteSelected());
        QTRY_COMPARE_WITH_TIMEOUT(m_stack->registry()->size(), 0, 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(sandboxes->rowCount(), 0, 20'000);
        QVERIFY(!m_stack->localBackend()->sandboxIds().contains(first));

        // The session's next request runs in a new sandbox.
        QCOMPARE(post("/v1/responses",
                      responsesRequest(QStringLiteral("What is 2+2?"), QStringLiteral("nb-1")))
                     .status,
                 200);
        QTRY_COMPARE_WITH_TIMEOUT(sandboxes->rowCount(), 1, 20'000);
        const QString second =
            sandboxes->index(0, 0).data(SandboxesModel::ContainerIdRole).toString();
        QVERIFY(second != first);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->flowListModel()->rowCount(), 2, 20'000);
    }

    void streamingRequestIsInspectedToo() {
        QJsonObject body = responsesRequest(QStringLiteral("What is 12*12?"));
        body.insert(QStringLiteral("stream"), true);
        const auto reply = post("/v1/responses", body);
        QCOMPARE(reply.status, 200);
        QVERIFY(reply.body.contains("response.completed"));
        FlowListModel *requests = m_window->flowListModel();
        QTRY_COMPARE_WITH_TIMEOUT(requests->rowCount(), 1, 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(requests->index(0, FlowListModel::StatusColumn).data().toString(),
                                  QStringLiteral("200"), 20'000);
        QVERIFY(requests->summaryAt(0).value(QLatin1String("stream")).toBool());
        QTRY_COMPARE_WITH_TIMEOUT(m_window->codePanel()->stdoutView()->toPlainText().trimmed(),
                                  QStringLiteral("144"), 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->injectedPanel()->items().size(), 1, 10'000);
    }

    void unreachableUpstreamShowsAsFailed() {
        const auto reply = post("/v1/responses", responsesRequest(QStringLiteral("What is 1+1?")));
        QVERIFY(reply.status >= 400);
        FlowListModel *requests = m_window->flowListModel();
        QTRY_COMPARE_WITH_TIMEOUT(requests->rowCount(), 1, 20'000);
        QTRY_COMPARE_WITH_TIMEOUT(requests->index(0, 0).data(FlowListModel::StateRole).toString(),
                                  QStringLiteral("failed"), 20'000);
        QVERIFY2(requests->index(0, FlowListModel::StatusColumn)
                     .data()
                     .toString()
                     .contains(QStringLiteral("failed")),
                 qPrintable(requests->index(0, FlowListModel::StatusColumn).data().toString()));
        // The HTTP inspector ends with the error the client got.
        HttpInspector *http = m_window->httpInspector();
        QTRY_VERIFY_WITH_TIMEOUT(http->selectHopOfKind(QStringLiteral("client_response")), 10'000);
        QVERIFY(http->statusLineLabel()->text().contains(QString::number(reply.status)));
    }
};

QTEST_MAIN(TestLiveSession)
#include "tst_livesession.moc"
