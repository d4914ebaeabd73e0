// The HTTP inspector over flows a real proxy session recorded: a ProxyServer on loopback in
// front of a scripted OpenAI-compatible upstream, the real EventBus and an in-memory FlowStore;
// plus an intercepted flow folded from InspectorEvents. What a user would see is checked:
// status lines, masked headers, timings, SSE events, rejected flows, and "Copy as curl" really
// re-sending the request through the proxy.
#undef QT_NO_CAST_FROM_ASCII // JSON fixtures and expectations as plain literals
#include "inspect/eventbus.h"
#include "models/exchangemodel.h"
#include "models/sampleevents.h"
#include "models/sseeventsmodel.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowstore.h"
#include "widgets/findbar.h"
#include "widgets/httpinspector.h"

#include <QApplication>
#include <QClipboard>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProcess>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QtTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

const QByteArray kClientKey = "sk-client-key-0123456789-wxyz";

QByteArray sse(const QByteArray &type, const QJsonObject &data) {
    return "event: " + type + "\ndata: " + QJsonDocument(data).toJson(QJsonDocument::Compact) +
           "\n\n";
}

QStringList column(QTableWidget *table, int column) {
    QStringList out;
    for (int row = 0; row < table->rowCount(); ++row)
        out << table->item(row, column)->text();
    return out;
}

QString cell(QTableWidget *table, const QString &key) {
    for (int row = 0; row < table->rowCount(); ++row)
        if (table->item(row, 0)->text() == key)
            return table->item(row, 1)->text();
    return {};
}

} // namespace

class TstHttpInspector : public QObject {
    Q_OBJECT

    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<ProxyServer> m_proxy;
    QStringList m_ids;

    void start(const QString &masterKey = {}) {
        FlowStoreOptions options;
        options.inMemory = true;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        QVERIFY2(m_store->open(&error), qPrintable(error));
        m_store->attach(m_bus.get());
        ProxyConfig c;
        c.host = "127.0.0.1";
        c.port = 0;
        c.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        c.masterKey = masterKey;
        m_proxy = std::make_unique<ProxyServer>(std::move(c));
        m_proxy->setEventBus(m_bus.get());
        connect(m_proxy.get(), &ProxyServer::requestLogged, this,
                [this](const RequestLogEntry &e) { m_ids.append(e.requestId); });
        QVERIFY(m_proxy->listen());
    }

    int post(const QByteArray &body) {
        RawHttpClient client(m_proxy->port());
        client.request(
            "POST", "/v1/responses", body,
            {{"Authorization", "Bearer " + kClientKey}, {"Content-Type", "application/json"}});
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 30000))
            return 0;
        return client.take().status;
    }

    // The finished flow of the n-th request (waits for the log line and the store).
    QJsonObject flowOf(int n) {
        if (!QTest::qWaitFor([&] { return m_ids.size() > n; }, 30000))
            return {};
        QJsonObject flow;
        (void)QTest::qWaitFor(
            [&] {
                m_store->flush();
                flow = m_store->query()->flow(m_ids.at(n)).value_or(QJsonObject());
                return !flow.isEmpty() && flow.value("state").toString() != "running";
            },
            30000);
        return flow;
    }

private slots:
    void init() {
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
        m_bus = std::make_unique<EventBus>();
        m_ids.clear();
    }
    void cleanup() {
        m_proxy.reset();
        m_store.reset();
        m_bus.reset();
        m_upstream.reset();
    }

    void streamedFlowShowsEverySseEvent() {
        start();
        m_upstream->enqueue(ScriptedUpstream::Response::events(
            {sse("response.created",
                 {{"type", "response.created"}, {"response", QJsonObject{{"id", "resp_s"}}}}),
             sse("response.output_text.delta",
                 {{"type", "response.output_text.delta"}, {"delta", "Hel"}}),
             sse("response.output_text.delta",
                 {{"type", "response.output_text.delta"}, {"delta", "lo\nworld"}}),
             sse("response.completed",
                 {{"type", "response.completed"}, {"response", QJsonObject{{"id", "resp_s"}}}})}));
        QCOMPARE(post(R"({"model":"m","input":"hi","stream":true})"), 200);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(flow.value("stream").toBool(), true);

        HttpInspector inspector;
        inspector.resize(1000, 700);
        inspector.show();
        inspector.setFlow(flow);
        // A new flow opens on the client's response; a streamed one on its events.
        QCOMPARE(inspector.exchangeModel()->hop(inspector.currentHop()).value("kind").toString(),
                 QStringLiteral("client_response"));
        QCOMPARE(inspector.tabs()->currentIndex(), int(HttpInspector::EventsTab));
        QCOMPARE(inspector.tabs()->tabText(HttpInspector::EventsTab), QStringLiteral("Events (4)"));
        QCOMPARE(inspector.eventsTable()->model()->rowCount(), 4);
        // Recorded events carry no time here: no empty Time column.
        QVERIFY(inspector.eventsTable()->isColumnHidden(SseEventsModel::TimeColumn));
        const QAbstractItemModel *events = inspector.eventsTable()->model();
        QCOMPARE(events->index(0, SseEventsModel::EventColumn).data().toString(),
                 QStringLiteral("response.created"));
        QCOMPARE(events->index(3, SseEventsModel::EventColumn).data().toString(),
                 QStringLiteral("response.completed"));
        // Selecting an event shows its data decoded.
        inspector.eventsTable()->setCurrentIndex(events->index(2, 0));
        const QString data = inspector.eventDataView()->toPlainText();
        QVERIFY2(data.startsWith("event: response.output_text.delta"), qPrintable(data));
        QVERIFY2(data.contains(R"("delta": "lo\nworld")"), qPrintable(data));
        // The upstream side streamed too: its hop has the same events.
        QVERIFY(inspector.selectHopOfKind("upstream_response"));
        QCOMPARE(inspector.eventsTable()->model()->rowCount(), 4);
        // Copy body of a streamed side gives the SSE text.
        const QString body = inspector.bodyForCopy();
        QVERIFY(body.startsWith("event: response.created\ndata: {"));
        QCOMPARE(body.count("\n\n"), 4);
        // A hop that did not stream has no events to show.
        QVERIFY(inspector.selectHopOfKind("client_request"));
        QVERIFY(!inspector.tabs()->isTabEnabled(HttpInspector::EventsTab));
        QCOMPARE(inspector.tabs()->currentIndex(), int(HttpInspector::BodyTab));
        QVERIFY(inspector.bodyView()->toPlainText().contains("\"stream\": true"));
    }

    void passThroughShowsStatusLinesMaskedHeadersAndTimings() {
        start();
        ScriptedUpstream::Response answer = ScriptedUpstream::Response::json(
            QJsonObject{{"id", "resp_a"}, {"object", "response"}, {"output_text", "hello"}});
        answer.headers = {{"x-upstream-id", "up-42"}};
        m_upstream->enqueue(answer);
        QCOMPARE(post(R"({"model":"m","input":"hi"})"), 200);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(flow.value("intercepted").toBool(), false);

        HttpInspector inspector;
        inspector.resize(1000, 700);
        inspector.show();
        inspector.setFlow(flow);
        QCOMPARE(inspector.hopList()->model()->rowCount(), 4);
        QVERIFY(inspector.summaryLabel()->text().contains("200 OK"));
        QVERIFY(inspector.summaryLabel()->text().contains("pass-through"));
        QVERIFY(inspector.timingLabel()->text().contains("TTFB"));
        QVERIFY(inspector.timingLabel()->text().contains("Loopscope overhead"));

        QVERIFY(inspector.selectHopOfKind("client_request"));
        QCOMPARE(inspector.statusLineLabel()->text(),
                 QStringLiteral("POST /v1/responses HTTP/1.1"));
        // The store masked the key; the inspector shows exactly that, never more.
        QCOMPARE(cell(inspector.headersTable(), "authorization"),
                 QStringLiteral("Bearer \u2026wxyz"));
        QVERIFY(inspector.bodyView()->toPlainText().contains("\"input\": \"hi\""));

        QVERIFY(inspector.selectHopOfKind("upstream_request"));
        QVERIFY(inspector.statusLineLabel()->text().startsWith("POST http://127.0.0.1:"));
        QVERIFY(inspector.statusLineLabel()->text().endsWith("/v1/responses HTTP/1.1"));

        QVERIFY(inspector.selectHopOfKind("upstream_response"));
        QCOMPARE(inspector.statusLineLabel()->text(), QStringLiteral("HTTP/1.1 200 OK"));
        QCOMPARE(cell(inspector.headersTable(), "x-upstream-id"), QStringLiteral("up-42"));
        QVERIFY(inspector.tabs()->tabText(HttpInspector::HeadersTab).startsWith("Headers ("));
        QVERIFY(!cell(inspector.timingTable(), "Upstream latency").isEmpty());
        QVERIFY(!cell(inspector.timingTable(), "Time to first byte").isEmpty());
        QVERIFY(!cell(inspector.timingTable(), "Loopscope overhead").isEmpty());
        QVERIFY(inspector.bodyView()->toPlainText().contains("\"resp_a\""));

        // Nothing anywhere in the panel shows the client's key.
        for (int row = 0; row < inspector.exchangeModel()->rowCount(); ++row) {
            inspector.selectHop(row);
            for (const QString &text : column(inspector.headersTable(), 1))
                QVERIFY2(!text.contains(QString::fromLatin1(kClientKey)), qPrintable(text));
            QVERIFY(!inspector.bodyView()->toPlainText().contains(QString::fromLatin1(kClientKey)));
        }
        // A row's full title is its tooltip (rows may elide in a narrow list).
        const QModelIndex first = inspector.hopList()->model()->index(0, 0);
        QCOMPARE(first.data(Qt::ToolTipRole).toString(),
                 QStringLiteral("Client request \u00b7 POST /v1/responses\n"
                                "POST /v1/responses HTTP/1.1"));
        // The list gets room for its titles (the panel is wide enough here).
        QTRY_VERIFY(inspector.hopList()->width() >= inspector.hopList()->sizeHintForColumn(0));
    }

    void rejectedFlowIsShown() {
        start(QStringLiteral("sk-master-key-1234-5678"));
        QCOMPARE(post(R"({"model":"m"})"), 401);
        const QJsonObject flow = flowOf(0);
        HttpInspector inspector;
        inspector.show();
        inspector.setFlow(flow);
        QCOMPARE(inspector.hopList()->model()->rowCount(), 2);
        QCOMPARE(inspector.statusLineLabel()->text(), QStringLiteral("HTTP/1.1 401 Unauthorized"));
        QVERIFY(inspector.summaryLabel()->text().contains("401 Unauthorized"));
        QVERIFY(inspector.summaryLabel()->text().contains("failed"));
        QVERIFY(!inspector.bodyView()->toPlainText().isEmpty()); // the OpenAI-shaped error
        QCOMPARE(m_upstream->requestCount(), 0);
        inspector.setFlow({});
        QCOMPARE(inspector.hopList()->model()->rowCount(), 0);
        QVERIFY(inspector.statusLineLabel()->text().isEmpty());
    }

    void interceptedFlowShowsCodeRunsAndIterations() {
        FlowStoreOptions options;
        options.inMemory = true;
        m_store = std::make_unique<FlowStore>(options);
        QVERIFY(m_store->open());
        m_store->attach(m_bus.get());
        for (const InspectorEvent &e : sample::fullRequest("req_loop", 1000))
            m_bus->publish(e);
        m_store->flush();
        const QJsonObject flow = m_store->query()->flow("req_loop").value_or(QJsonObject());
        HttpInspector inspector;
        inspector.show();
        inspector.setFlow(flow);
        QStringList titles;
        for (int row = 0; row < inspector.exchangeModel()->rowCount(); ++row)
            titles << inspector.exchangeModel()->index(row).data().toString();
        QCOMPARE(titles.size(), 6);
        QVERIFY(titles.at(1).startsWith("Upstream request 1"));
        QVERIFY(titles.at(4).startsWith("Upstream request 2"));
        QVERIFY(inspector.selectHopOfKind("code_run"));
        QVERIFY(inspector.bodyView()->toPlainText().contains("print(6*7)"));
        QVERIFY(!cell(inspector.timingTable(), "Run time").isEmpty());
        // A live update of the same flow keeps the selected hop.
        const int selected = inspector.currentHop();
        inspector.setFlow(flow);
        QCOMPARE(inspector.currentHop(), selected);
    }

    void copyAsCurlResendsTheRecordedRequest() {
        start();
        const QString input =
            QStringLiteral("it\u0027s \"quoted\"\nline 2 h\u00e9llo \u2713 $HOME `id`");
        const QByteArray body = QJsonDocument(QJsonObject{{"model", "m"}, {"input", input}})
                                    .toJson(QJsonDocument::Compact);
        QCOMPARE(post(body), 200);
        const QJsonObject flow = flowOf(0);
        HttpInspector inspector;
        inspector.setBaseUrl(m_proxy->listenUrl());
        inspector.setFlow(flow);
        QSignalSpy messages(&inspector, &HttpInspector::statusMessage);
        inspector.copyAs(CopyAsCommand::Format::Curl);
        const QString command = QApplication::clipboard()->text();
        QCOMPARE(command, inspector.commandFor(CopyAsCommand::Format::Curl));
        QVERIFY2(command.contains("${OPENAI_API_KEY}"), qPrintable(command));
        QVERIFY(!command.contains(QChar(0x2026)));
        QCOMPARE(messages.size(), 1);

        QProcess curl;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *name : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"})
            env.remove(QLatin1String(name));
        env.insert("OPENAI_API_KEY", QString::fromLatin1(kClientKey));
        curl.setProcessEnvironment(env);
        curl.start("sh", {"-c", command});
        QVERIFY(curl.waitForStarted(10000));
        QVERIFY(QTest::qWaitFor([&] { return curl.state() == QProcess::NotRunning; }, 30000));
        QCOMPARE(curl.exitCode(), 0);
        // The upstream got the same request twice: once from the client, once from curl.
        QCOMPARE(m_upstream->requests().size(), 2);
        QCOMPARE(m_upstream->requests().at(1).json(), m_upstream->requests().at(0).json());
        QCOMPARE(m_upstream->requests().at(1).json().value("input").toString(), input);
        // ...and the proxy recorded it as a new flow with the real key masked again.
        const QJsonObject again = flowOf(1);
        const QJsonObject request = again.value("hops").toArray().first().toObject();
        QCOMPARE(request.value("headers").toObject().value("authorization").toString(),
                 QStringLiteral("Bearer \u2026wxyz"));
    }

    void copyBodyAndCopyMenus() {
        start();
        QCOMPARE(post(R"({"model":"m","input":"copy me"})"), 200);
        HttpInspector inspector;
        inspector.setFlow(flowOf(0));
        QVERIFY(inspector.selectHopOfKind("client_request"));
        inspector.copyBody();
        QVERIFY(QApplication::clipboard()->text().contains("\"copy me\""));
        std::unique_ptr<QMenu> menu(inspector.contextMenu());
        QStringList texts;
        for (QAction *a : menu->actions())
            texts << a->text();
        for (const char *expected :
             {"Copy body", "Copy as curl", "Copy as Python (requests)",
              "Copy as Python (openai SDK)", "Copy as Node (fetch)", "Wrap lines"})
            QVERIFY2(texts.contains(QLatin1String(expected)), expected);
        QVERIFY(inspector.copyAsButton()->menu()->actions().size() == 4);
    }

    void ctrlFInTheBodyOpensItsFindBar() {
        start();
        QCOMPARE(post(R"({"model":"m","input":"needle needle"})"), 200);
        HttpInspector inspector;
        inspector.resize(900, 600);
        inspector.show();
        QApplication::setActiveWindow(&inspector);
        QVERIFY(QTest::qWaitForWindowActive(&inspector));
        inspector.setFlow(flowOf(0));
        QVERIFY(inspector.selectHopOfKind("client_request"));
        inspector.bodyView()->setFocus();
        QTest::keyClick(inspector.bodyView(), Qt::Key_F, Qt::ControlModifier);
        FindBar *bar = FindBar::of(inspector.bodyView());
        QVERIFY(bar);
        QVERIFY(bar->isVisible());
        QTest::keyClicks(bar->field(), "needle");
        QCOMPARE(bar->matchCount(), 2);
        // From the hop list, Ctrl+F goes to the body's bar too.
        QTest::keyClick(bar->field(), Qt::Key_Escape);
        QVERIFY(!bar->isVisible());
        inspector.hopList()->setFocus();
        QTest::keyClick(inspector.hopList(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(bar->isVisible());
        QCOMPARE(inspector.tabs()->currentIndex(), int(HttpInspector::BodyTab));
    }
};

QTEST_MAIN(TstHttpInspector)
#include "tst_httpinspector.moc"
