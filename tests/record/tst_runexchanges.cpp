// FlowQuery::readRun (issue 36): a run read in one query as what the run view needs of each
// flow — the request the client sent and the answer it got — over a real FlowStore fed through
// a real EventBus (which masks, as in the app). Flows of several shapes, each read back as
// FlowQuery::flow would give it; running flows in start order; pages; secrets stay masked.
#undef QT_NO_CAST_FROM_ASCII
#include "models/agentflows.h"
#include "models/conversationflows.h"

#include "record/flowexchange.h"
#include "record/flowquery.h"

#include <QtTest>

using namespace loopscope;
using Kind = InspectorEvent::Kind;

namespace {

const QJsonObject kSession{{"content-type", "application/json"},
                           {"authorization", "Bearer sk-live-0123456789abcdefwxyz"},
                           {"x-claude-code-session-id", "s-1"}};
const QJsonObject kBody{{"model", "claude-sonnet-4-5"},
                        {"max_tokens", 100},
                        {"system", agents::longPrompt("Claude", 60)},
                        {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hi"}}}}};
const QJsonObject kReply{
    {"id", "msg_1"},
    {"type", "message"},
    {"role", "assistant"},
    {"content", QJsonArray{QJsonObject{{"type", "text"}, {"text", "Hello."}}}}};

// The events of one flow, as the proxy publishes them (convo::Recorder's, plus the client's own
// headers and an upstream that fails).
class Events : public convo::Recorder {
public:
    void clientRequest(const QString &id) {
        InspectorEvent e = InspectorEvent::make(
            Kind::ClientRequest, id, -1,
            {{"method", "POST"}, {"path", "/v1/messages"}, {"headers", kSession}});
        e.raw = agents::compact(kBody);
        bus().publish(e);
    }
    void failedUpstream(const QString &id, const QString &error) {
        InspectorEvent e = InspectorEvent::make(Kind::UpstreamRequest, id, 0,
                                                {{"url", "http://127.0.0.1:9/v1/messages"},
                                                 {"method", "POST"},
                                                 {"headers", kSession},
                                                 {"passThrough", true}});
        e.raw = agents::compact(kBody);
        bus().publish(e);
        bus().publish(Kind::UpstreamResponse, id, 0,
                      {{"status", 0}, {"latencyMs", 50.0}, {"stream", false}, {"error", error}});
    }
};

QJsonObject errorBody(const QString &message) {
    return {{"type", "error"}, {"error", QJsonObject{{"type", "api_error"}, {"message", message}}}};
}

} // namespace

class TstRunExchanges : public QObject {
    Q_OBJECT
private slots:
    void shapes_data() {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("answerKind"); // "" when none
        QTest::addColumn<int>("answerStatus");
        QTest::addColumn<QString>("answerText"); // a string the answer holds

        QTest::newRow("pass-through") << "pass-through"
                                      << "client_response" << 200 << "Hello.";
        QTest::newRow("no upstream hop: refused by Loopscope")
            << "no upstream"
            << "client_response" << 400 << "max_tokens is required";
        QTest::newRow("failed answer: upstream unreachable")
            << "failed"
            << "client_response" << 502 << "upstream unreachable";
        QTest::newRow("client gone before the answer")
            << "no client answer"
            << "upstream_response" << 0 << "connection refused";
        QTest::newRow("still running") << "running"
                                       << "" << 0 << "";
    }
    void shapes() {
        QFETCH(QString, shape);
        QFETCH(QString, answerKind);
        QFETCH(int, answerStatus);
        QFETCH(QString, answerText);
        Events events;
        const QString id = "flow_" + shape;
        events.clientRequest(id);
        if (shape == "pass-through") {
            events.passThroughUpstream(id, kBody, false);
            events.clientResponse(id, 200, kReply);
            events.exchangeFinished(id, 200);
        } else if (shape == "no upstream") {
            events.clientResponse(id, 400, errorBody("max_tokens is required"));
            events.exchangeFinished(id, 400);
        } else if (shape == "failed") {
            events.failedUpstream(id, "upstream unreachable: connection refused");
            events.clientResponse(id, 502, errorBody("upstream unreachable"));
            events.exchangeFinished(id, 502);
        } else if (shape == "no client answer") {
            events.failedUpstream(id, "connection refused");
            events.exchangeFinished(id, 499);
        }
        events.store()->flush();
        const FlowQuery *query = events.store()->query();
        const QJsonObject flow = query->flow(id).value_or(QJsonObject());
        const QString runId = flow.value("run_id").toString();
        QVERIFY2(!runId.isEmpty(), "the session header makes a run");

        const QList<FlowExchange> read = query->runExchanges(runId);
        QCOMPARE(read.size(), 1);
        const FlowExchange &x = read.first();
        QCOMPARE(x.id(), id);
        // Exactly what the whole flow says: the summary, the client's request, the answer.
        const FlowExchange whole = FlowExchange::fromFlow(flow);
        QCOMPARE(x.summary, whole.summary);
        QCOMPARE(x.request, whole.request);
        QCOMPARE(x.answer, whole.answer);
        QVERIFY(!x.summary.contains("hops"));
        QCOMPARE(x.request.value("kind").toString(), "client_request");
        QCOMPARE(x.request.value("body").toObject(), kBody);
        QCOMPARE(x.answer.value("kind").toString(), answerKind);
        QCOMPARE(x.answer.value("status").toInt(), answerStatus);
        const QByteArray answer = agents::compact(x.answer);
        QVERIFY2(answer.contains(answerText.toUtf8()), answer.constData());
        // The secret header is stored and read masked; the raw key is nowhere.
        QCOMPARE(x.request.value("headers").toObject().value("authorization").toString(),
                 QString("Bearer …wxyz"));
        for (const QJsonObject &part : {x.summary, x.request, x.answer})
            QVERIFY(!agents::compact(part).contains("0123456789abcdef"));
    }

    void aRunInStartOrderWithRunningFlowsAndPages() {
        agents::AgentRecorder recorder;
        const QList<QJsonObject> flows = recorder.claudeRun(); // 4 flows, one run
        const QString runId = flows.first().value("run_id").toString();
        // The agent's next request is on its way (no answer yet): it joins the run, last.
        EventBus &bus = recorder.bus();
        InspectorEvent next = InspectorEvent::make(
            Kind::ClientRequest, "claude_next", -1,
            {{"method", "POST"},
             {"path", "/v1/messages"},
             {"headers", QJsonObject{{"x-claude-code-session-id", "claude-session"}}}});
        next.raw = agents::compact(kBody);
        bus.publish(next);
        QTRY_COMPARE(recorder.store()->query()->runExchanges(runId).size(), 5);

        const QList<FlowExchange> all = recorder.store()->query()->runExchanges(runId);
        QStringList ids;
        for (const FlowExchange &x : all)
            ids << x.id();
        QCOMPARE(ids,
                 QStringList({"claude_1", "claude_title", "claude_2", "claude_3", "claude_next"}));
        for (int i = 0; i < flows.size(); ++i) { // the stored ones as their whole flows say
            const FlowExchange whole = FlowExchange::fromFlow(flows.at(i));
            QCOMPARE(all.at(i).request, whole.request);
            QCOMPARE(all.at(i).answer, whole.answer);
        }
        QVERIFY(all.last().answer.isEmpty());
        QCOMPARE(all.last().request.value("body").toObject(), kBody);

        // Pages: from the 2nd, two; a page past the end is empty; `take` may stop early.
        const QList<FlowExchange> page = recorder.store()->query()->runExchanges(runId, 1, 2);
        QCOMPARE(page.size(), 2);
        QCOMPARE(page.at(0).id(), "claude_title");
        QCOMPARE(page.at(1).id(), "claude_2");
        QVERIFY(recorder.store()->query()->runExchanges(runId, 5).isEmpty());
        int seen = 0;
        QCOMPARE(recorder.store()->query()->readRun(
                     runId, 0, -1, [&seen](FlowExchange &&) { return ++seen < 2; }),
                 2);
        QVERIFY(recorder.store()->query()->runExchanges("run_unknown").isEmpty());
    }
};

QTEST_GUILESS_MAIN(TstRunExchanges)
#include "tst_runexchanges.moc"
