// The HTTP inspector's models (ExchangeModel: a flow's hops; SseEventsModel: a streamed side's
// events) over flows made by a real in-memory FlowStore fed InspectorEvents, under
// QAbstractItemModelTester.
#undef QT_NO_CAST_FROM_ASCII // JSON fixtures and expectations as plain literals
#include "inspect/eventbus.h"
#include "models/exchangemodel.h"
#include "models/sampleevents.h"
#include "models/sseeventsmodel.h"
#include "record/flowstore.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace loopscope;
using Kind = InspectorEvent::Kind;

namespace {

QStringList kinds(const ExchangeModel &model) {
    QStringList out;
    for (int row = 0; row < model.rowCount(); ++row)
        out << model.data(model.index(row), ExchangeModel::KindRole).toString();
    return out;
}

} // namespace

class TstExchangeModel : public QObject {
    Q_OBJECT

    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;

    QJsonObject flow(const QString &id) {
        m_store->flush();
        return m_store->query()->flow(id).value_or(QJsonObject());
    }

    void publishPassThrough(const QString &id, int status, bool reachUpstream) {
        InspectorEvent request = InspectorEvent::make(
            Kind::ClientRequest, id, -1,
            {{QStringLiteral("method"), QStringLiteral("POST")},
             {QStringLiteral("path"), QStringLiteral("/v1/responses")},
             {QStringLiteral("headers"),
              QJsonObject{{QStringLiteral("authorization"), QStringLiteral("Bearer \u2026abcd")},
                          {QStringLiteral("content-type"), QStringLiteral("application/json")}}}});
        request.raw = R"({"model":"m","input":"hi"})";
        m_bus->publish(request);
        if (reachUpstream) {
            InspectorEvent upstream = InspectorEvent::make(
                Kind::UpstreamRequest, id, 0,
                {{QStringLiteral("url"), QStringLiteral("http://127.0.0.1:9/v1/responses")},
                 {QStringLiteral("method"), QStringLiteral("POST")},
                 {QStringLiteral("passThrough"), true}});
            upstream.raw = request.raw;
            m_bus->publish(upstream);
            m_bus->publish(Kind::UpstreamResponse, id, 0,
                           {{QStringLiteral("status"), status},
                            {QStringLiteral("latencyMs"), 1.5},
                            {QStringLiteral("headers"), QJsonObject{{QStringLiteral("x-request-id"),
                                                                     QStringLiteral("up_1")}}}});
        }
        InspectorEvent response = InspectorEvent::make(
            Kind::ClientResponse, id, -1,
            {{QStringLiteral("status"), status}, {QStringLiteral("stream"), false}});
        response.raw = R"({"id":"resp_1","output_text":"hello"})";
        m_bus->publish(response);
        m_bus->publish(Kind::ExchangeFinished, id, -1,
                       {{QStringLiteral("status"), status},
                        {QStringLiteral("durationMs"), 3.0},
                        {QStringLiteral("ttfbMs"), 2.0},
                        {QStringLiteral("overheadMs"), 0.25}});
    }

private slots:
    void init() {
        m_bus = std::make_unique<EventBus>();
        FlowStoreOptions options;
        options.inMemory = true;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        QVERIFY2(m_store->open(&error), qPrintable(error));
        m_store->attach(m_bus.get());
    }
    void cleanup() {
        m_store.reset();
        m_bus.reset();
    }

    void interceptedFlowListsEveryHopWithItsIteration() {
        for (const InspectorEvent &e : sample::fullRequest(QStringLiteral("req_i"), 1000))
            m_bus->publish(e);
        const QJsonObject f = flow(QStringLiteral("req_i"));
        QVERIFY(!f.isEmpty());
        ExchangeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFlow(f);
        QCOMPARE(kinds(model),
                 (QStringList{"client_request", "upstream_request", "upstream_response", "code_run",
                              "upstream_request", "upstream_response"}));
        QCOMPARE(model.data(model.index(2)).toString(),
                 QStringLiteral("Upstream response 1 \u00b7 200 OK \u00b7 290 ms"));
        QCOMPARE(model.data(model.index(3)).toString(), QStringLiteral("Code run (iteration 1)"));
        QCOMPARE(model.data(model.index(5)).toString(),
                 QStringLiteral("Upstream response 2 \u00b7 200 OK \u00b7 260 ms"));
        QCOMPARE(model.data(model.index(4), ExchangeModel::IterationRole).toInt(), 1);
        QCOMPARE(ExchangeModel::statusLine(model.hop(0), f),
                 QStringLiteral("POST /v1/responses HTTP/1.1"));
        QCOMPARE(ExchangeModel::statusLine(model.hop(2), f), QStringLiteral("HTTP/1.1 200 OK"));
        QVERIFY(ExchangeModel::statusLine(model.hop(3), f).contains(QStringLiteral("call_0")));
        // The code run shows its code and what it printed.
        const QString code = ExchangeModel::bodyText(model.hop(3));
        QVERIFY(code.contains(QStringLiteral("print(6*7)")));
        QVERIFY(code.contains(QStringLiteral("42")));
        // The upstream request body went through the store's masking: no key in full.
        const QString upstream = ExchangeModel::bodyText(model.hop(1));
        QVERIFY(upstream.contains(QStringLiteral("gpt-4.1-mini")));
        QVERIFY(!upstream.contains(QStringLiteral("sk-test-1234567890abcd")));
        // Per-hop latency and tokens; the flow is still running (no ExchangeFinished).
        const auto timings = ExchangeModel::timings(model.hop(2), f);
        QVERIFY(timings.contains(
            qMakePair(QStringLiteral("Upstream latency"), QStringLiteral("290 ms"))));
        QVERIFY(timings.contains(
            qMakePair(QStringLiteral("Tokens"), QStringLiteral("100 in \u00b7 20 out"))));
        QVERIFY(
            timings.contains(qMakePair(QStringLiteral("Flow total"), QStringLiteral("running…"))));
    }

    void passThroughShowsMaskedHeadersStatusAndTimings() {
        publishPassThrough(QStringLiteral("req_p"), 200, true);
        const QJsonObject f = flow(QStringLiteral("req_p"));
        QCOMPARE(f.value(QStringLiteral("state")).toString(), QStringLiteral("completed"));
        ExchangeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFlow(f);
        QCOMPARE(kinds(model), (QStringList{"client_request", "upstream_request",
                                            "upstream_response", "client_response"}));
        const auto headers = ExchangeModel::headers(model.hop(0));
        QVERIFY(headers.contains(
            qMakePair(QStringLiteral("authorization"), QStringLiteral("Bearer \u2026abcd"))));
        QVERIFY(ExchangeModel::headers(model.hop(2))
                    .contains(qMakePair(QStringLiteral("x-request-id"), QStringLiteral("up_1"))));
        QCOMPARE(ExchangeModel::statusLine(model.hop(1), f),
                 QStringLiteral("POST http://127.0.0.1:9/v1/responses HTTP/1.1"));
        QCOMPARE(ExchangeModel::statusLine(model.hop(3), f), QStringLiteral("HTTP/1.1 200 OK"));
        QVERIFY(ExchangeModel::bodyText(model.hop(3)).contains(QStringLiteral("\"hello\"")));
        const auto timings = ExchangeModel::timings(model.hop(2), f);
        QVERIFY(timings.contains(
            qMakePair(QStringLiteral("Upstream latency"), QStringLiteral("1.5 ms"))));
        QVERIFY(
            timings.contains(qMakePair(QStringLiteral("Flow total"), QStringLiteral("3.0 ms"))));
        QVERIFY(timings.contains(
            qMakePair(QStringLiteral("Time to first byte"), QStringLiteral("2.0 ms"))));
        QVERIFY(timings.contains(
            qMakePair(QStringLiteral("Loopscope overhead"), QStringLiteral("0.3 ms"))));
    }

    // A Responses request detected as chat-only: the failed /v1/responses attempt, then the
    // bridged chat call; the flow says "bridged" and each upstream request its dialect.
    void bridgedFlowShowsEachHopsDialect() {
        const QString id = QStringLiteral("req_b");
        InspectorEvent request =
            InspectorEvent::make(Kind::ClientRequest, id, -1,
                                 {{QStringLiteral("method"), QStringLiteral("POST")},
                                  {QStringLiteral("path"), QStringLiteral("/v1/responses")}});
        request.raw = R"({"model":"m","input":"hi"})";
        m_bus->publish(request);
        InspectorEvent attempt = InspectorEvent::make(
            Kind::UpstreamRequest, id, 0,
            {{QStringLiteral("url"), QStringLiteral("http://127.0.0.1:9/v1/responses")},
             {QStringLiteral("method"), QStringLiteral("POST")}});
        attempt.raw = request.raw;
        m_bus->publish(attempt);
        m_bus->publish(Kind::UpstreamResponse, id, 0, {{QStringLiteral("status"), 404}});
        const QJsonObject chat =
            QJsonDocument::fromJson(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})")
                .object();
        m_bus->publish(
            Kind::UpstreamCallStarted, id, 1,
            {{QStringLiteral("request"), chat},
             {QStringLiteral("url"), QStringLiteral("http://127.0.0.1:9/v1/chat/completions")},
             {QStringLiteral("dialect"), QStringLiteral("chat_completions")},
             {QStringLiteral("bridged"), true}});
        m_bus->publish(
            Kind::UpstreamCall, id, 1,
            {{QStringLiteral("request"), chat},
             {QStringLiteral("status"), 200},
             {QStringLiteral("url"), QStringLiteral("http://127.0.0.1:9/v1/chat/completions")},
             {QStringLiteral("dialect"), QStringLiteral("chat_completions")},
             {QStringLiteral("bridged"), true},
             {QStringLiteral("response"),
              QJsonDocument::fromJson(R"({"choices":[{"message":{"content":"yo"}}]})").object()},
             {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), 3},
                                                   {QStringLiteral("completion_tokens"), 2}}}});
        InspectorEvent response = InspectorEvent::make(
            Kind::ClientResponse, id, -1,
            {{QStringLiteral("status"), 200}, {QStringLiteral("stream"), false}});
        response.raw = R"({"id":"resp_1","object":"response","output":[],)"
                       R"("usage":{"input_tokens":3,"output_tokens":2}})";
        m_bus->publish(response);
        m_bus->publish(Kind::ExchangeFinished, id, -1, {{QStringLiteral("status"), 200}});

        const QJsonObject f = flow(id);
        QCOMPARE(f.value(QStringLiteral("state")).toString(), QStringLiteral("completed"));
        QCOMPARE(f.value(QStringLiteral("bridged")).toBool(), true);
        // Counted once: the bridged call's usage, not the client answer's again.
        QCOMPARE(f.value(QStringLiteral("usage")).toObject().value(u"total_tokens").toInt(), 5);
        ExchangeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFlow(f);
        QCOMPARE(kinds(model),
                 (QStringList{"client_request", "upstream_request", "upstream_response",
                              "upstream_request", "upstream_response", "client_response"}));
        QCOMPARE(model.data(model.index(0)).toString(),
                 QStringLiteral("Client request \u00b7 POST /v1/responses \u00b7 bridged"));
        QCOMPARE(model.data(model.index(1)).toString(),
                 QStringLiteral("Upstream request 1 \u00b7 Responses"));
        QCOMPARE(model.data(model.index(3)).toString(),
                 QStringLiteral("Upstream request 2 \u00b7 Chat Completions"));
        // The 404 attempt's hop keeps no client body; the chat hop holds what it answered.
        QVERIFY(model.hop(2).value(u"body").isNull());
        QVERIFY(ExchangeModel::bodyText(model.hop(4)).contains(QStringLiteral("\"yo\"")));
    }

    void rejectedFlowHasRequestAndResponse() {
        publishPassThrough(QStringLiteral("req_401"), 401, false);
        const QJsonObject f = flow(QStringLiteral("req_401"));
        ExchangeModel model;
        model.setFlow(f);
        QCOMPARE(kinds(model), (QStringList{"client_request", "client_response"}));
        QCOMPARE(model.data(model.index(1)).toString(),
                 QStringLiteral("Client response \u00b7 401 Unauthorized"));
        QCOMPARE(ExchangeModel::statusLine(model.hop(1), f),
                 QStringLiteral("HTTP/1.1 401 Unauthorized"));
        model.setFlow({});
        QCOMPARE(model.rowCount(), 0);
    }

    void liveUpdateOfTheSameFlowAppendsRows() {
        const QList<InspectorEvent> events = sample::fullRequest(QStringLiteral("req_live"), 5000);
        ExchangeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        m_bus->publish(events.at(0));
        m_bus->publish(events.at(1));
        model.setFlow(flow(QStringLiteral("req_live")));
        QCOMPARE(model.rowCount(), 3);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        for (qsizetype i = 2; i < events.size(); ++i)
            m_bus->publish(events.at(i));
        model.setFlow(flow(QStringLiteral("req_live")));
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(resets.size(), 0); // a view keeps its selection
        QCOMPARE(inserts.size(), 1);
        // Another flow replaces the rows.
        publishPassThrough(QStringLiteral("req_other"), 200, true);
        model.setFlow(flow(QStringLiteral("req_other")));
        QCOMPARE(resets.size(), 1);
        QCOMPARE(model.rowCount(), 4);
    }

    void sseEventsAsATable() {
        const QJsonArray events{
            QJsonObject{{QStringLiteral("event"), QStringLiteral("response.created")},
                        {QStringLiteral("data"),
                         QJsonObject{{QStringLiteral("type"), QStringLiteral("response.created")}}},
                        {QStringLiteral("at"), 1005}},
            QJsonObject{{QStringLiteral("event"), QStringLiteral("response.output_text.delta")},
                        {QStringLiteral("data"),
                         QJsonObject{{QStringLiteral("delta"), QStringLiteral("line1\nline2")}}}},
            QJsonObject{{QStringLiteral("data"), QStringLiteral("[DONE]")}}};
        SseEventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setEvents(events, 1000);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), int(SseEventsModel::ColumnCount));
        QCOMPARE(model.data(model.index(0, SseEventsModel::TimeColumn)).toString(),
                 QStringLiteral("+5.0 ms"));
        QCOMPARE(model.data(model.index(1, SseEventsModel::TimeColumn)).toString(), QString());
        QCOMPARE(model.data(model.index(2, SseEventsModel::EventColumn)).toString(),
                 QStringLiteral("message"));
        QCOMPARE(model.data(model.index(2, SseEventsModel::DataColumn)).toString(),
                 QStringLiteral("[DONE]"));
        // One line in the table; decoded (pretty, the escaped newline readable) for the pane.
        const QString cell = model.data(model.index(1, SseEventsModel::DataColumn)).toString();
        QVERIFY(!cell.contains(u'\n'));
        const QString decoded =
            model.data(model.index(1, 0), SseEventsModel::DecodedRole).toString();
        QVERIFY(decoded.contains(QStringLiteral("\"delta\"")));
        QCOMPARE(SseEventsModel::decoded(QStringLiteral("plain")), QStringLiteral("plain"));
        model.setEvents({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TstExchangeModel)
#include "tst_exchangemodel.moc"
