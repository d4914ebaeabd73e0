// Intercepted flows: the code-interpreter loop with real bubblewrap Python sandboxes, a scripted
// upstream and the flow store. Every upstream call and code run is a hop; usage sums every
// upstream call; code_errors counts runs that raised.
#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowstore.h"
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/sandboxregistry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;
using namespace loopfixtures;

namespace {

QJsonObject ciRequest(const QString &input, bool stream) {
    QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), input},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    if (stream)
        body.insert(QStringLiteral("stream"), true);
    return body;
}

QStringList kinds(const QJsonObject &flow) {
    QStringList out;
    for (const QJsonValue &hop : flow.value(QStringLiteral("hops")).toArray())
        out << hop.toObject().value(QStringLiteral("kind")).toString();
    return out;
}

QList<QJsonObject> hopsOf(const QJsonObject &flow, const QString &kind) {
    QList<QJsonObject> out;
    for (const QJsonValue &hop : flow.value(QStringLiteral("hops")).toArray())
        if (hop.toObject().value(QStringLiteral("kind")).toString() == kind)
            out << hop.toObject();
    return out;
}

} // namespace

class TstInterceptedFlows : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> dir;
    std::unique_ptr<ScriptedUpstream> upstream;
    std::unique_ptr<EventBus> bus;
    std::unique_ptr<FlowStore> store;
    std::unique_ptr<ProxyServer> server;
    std::unique_ptr<InterceptionStack> stack;
    QList<RequestLogEntry> log;

private slots:
    void init() {
        dir = std::make_unique<QTemporaryDir>();
        upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(upstream->listen());
        bus = std::make_unique<EventBus>();
        FlowStoreOptions options;
        options.path = dir->filePath(QStringLiteral("history.sqlite3"));
        options.prices.insert(QStringLiteral("gpt-5"), {1e-6, 2e-6});
        store = std::make_unique<FlowStore>(options);
        QVERIFY(store->open());
        store->attach(bus.get());
        ProxyConfig config;
        config.port = 0;
        QString error;
        config.defaultRoute = ProxyConfig::routeForUpstream(upstream->baseUrl(), &error);
        server = std::make_unique<ProxyServer>(config);
        stack = std::make_unique<InterceptionStack>(server.get(), bus.get());
        LocalSandboxOptions sandbox;
        sandbox.poolSize = 1;
        QVERIFY2(stack->init(sandbox, &error), qPrintable(error));
        connect(server.get(), &ProxyServer::requestLogged, this,
                [this](const RequestLogEntry &e) { log.append(e); });
        QVERIFY(server->listen());
    }

    void cleanup() {
        if (stack) {
            auto done = stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20000));
        }
        stack.reset();
        server.reset();
        store.reset();
        bus.reset();
        upstream.reset();
        dir.reset();
        log.clear();
    }

    void codeRunsAreHopsAndErrorsAreCounted_data() {
        QTest::addColumn<bool>("stream");
        QTest::newRow("json") << false;
        QTest::newRow("sse") << true;
    }
    void codeRunsAreHopsAndErrorsAreCounted() {
        QFETCH(bool, stream);
        upstream->enqueue(ScriptedUpstream::Response::json(
            responsesFunctionCall(QStringLiteral("print(6*7)"), QStringLiteral("call_a"))));
        upstream->enqueue(ScriptedUpstream::Response::json(responsesFunctionCall(
            QStringLiteral("raise ValueError('boom_marker')"), QStringLiteral("call_b"))));
        upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("It is 42."))));
        RawHttpClient client(server->port());
        client.request(
            "POST", "/v1/responses",
            QJsonDocument(ciRequest(QStringLiteral("6*7?"), stream)).toJson(QJsonDocument::Compact),
            {{"authorization", "Bearer sk-intercepted-0001"}});
        QVERIFY(QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60000));
        QCOMPARE(client.take().status, 200);
        QVERIFY(QTest::qWaitFor([&] { return !log.isEmpty(); }, 20000));
        const QString id = log.first().requestId;
        QJsonObject flow;
        QVERIFY(QTest::qWaitFor(
            [&] {
                store->flush();
                flow = store->query()->flow(id).value_or(QJsonObject());
                return flow.value(QStringLiteral("state")).toString() == QLatin1String("completed");
            },
            20000));
        QCOMPARE(flow.value(QStringLiteral("intercepted")).toBool(), true);
        QCOMPARE(flow.value(QStringLiteral("stream")).toBool(), stream);
        // Hops are in time order: a streamed answer starts (its head is sent) before the loop.
        QStringList expected = QStringLiteral("client_request upstream_request upstream_response "
                                              "code_run upstream_request upstream_response "
                                              "code_run upstream_request upstream_response")
                                   .split(u' ');
        expected.insert(stream ? 1 : expected.size(), QStringLiteral("client_response"));
        QCOMPARE(kinds(flow), expected);
        QCOMPARE(flow.value(QStringLiteral("iterations")).toInt(), 3);
        QCOMPARE(flow.value(QStringLiteral("code_runs")).toInt(), 2);
        QCOMPARE(flow.value(QStringLiteral("code_errors")).toInt(), 1);
        // 10+10+20 in, 5+5+8 out: every upstream call, not only the last.
        const QJsonObject usage = flow.value(QStringLiteral("usage")).toObject();
        QCOMPARE(usage.value(QStringLiteral("input_tokens")).toInt(), 40);
        QCOMPARE(usage.value(QStringLiteral("output_tokens")).toInt(), 18);
        QCOMPARE(usage.value(QStringLiteral("total_tokens")).toInt(), 58);
        QVERIFY(qAbs(flow.value(QStringLiteral("cost_usd")).toDouble() - (40e-6 + 36e-6)) < 1e-12);
        const QList<QJsonObject> runs = hopsOf(flow, QStringLiteral("code_run"));
        QCOMPARE(runs.at(0).value(QStringLiteral("call_id")).toString(), QStringLiteral("call_a"));
        QCOMPARE(runs.at(0).value(QStringLiteral("code")).toString(), QStringLiteral("print(6*7)"));
        QCOMPARE(runs.at(0).value(QStringLiteral("stdout")).toString(), QStringLiteral("42\n"));
        QVERIFY(runs.at(0).value(QStringLiteral("error")).isNull());
        QCOMPARE(runs.at(0).value(QStringLiteral("iteration")).toInt(), 0);
        QVERIFY(runs.at(0)
                    .value(QStringLiteral("container_id"))
                    .toString()
                    .startsWith(QLatin1String("cntr_")));
        QVERIFY(runs.at(1).value(QStringLiteral("error")).isObject());
        QVERIFY(runs.at(1)
                    .value(QStringLiteral("error"))
                    .toObject()
                    .value(QStringLiteral("value"))
                    .toString()
                    .contains(QLatin1String("boom_marker")));
        QVERIFY(flow.value(QStringLiteral("container_id"))
                    .toString()
                    .startsWith(QLatin1String("cntr_")));
        const QJsonObject last = hopsOf(flow, QStringLiteral("upstream_response")).last();
        QCOMPARE(last.value(QStringLiteral("iteration")).toInt(), 2);
        QCOMPARE(last.value(QStringLiteral("usage"))
                     .toObject()
                     .value(QStringLiteral("total_tokens"))
                     .toInt(),
                 28);
        const QJsonObject response = hopsOf(flow, QStringLiteral("client_response")).first();
        if (stream) {
            const QJsonArray events = response.value(QStringLiteral("events")).toArray();
            QVERIFY(events.size() > 3);
            QCOMPARE(events.first().toObject().value(QStringLiteral("event")).toString(),
                     QStringLiteral("response.created"));
            QCOMPARE(events.last().toObject().value(QStringLiteral("event")).toString(),
                     QStringLiteral("response.completed"));
        } else {
            QVERIFY(response.value(QStringLiteral("body")).isObject());
        }
        // The code's own output is searchable.
        FlowFilter q;
        q.q = QStringLiteral("boom_marker");
        QCOMPARE(store->query()->list(q).value(QStringLiteral("data")).toArray().size(), 1);
    }

    // A model call is a hop from the moment it is sent: the running flow's snapshot holds the
    // upstream_request while the model thinks, and the answer completes that iteration without
    // a second request hop. A publisher that reports only the answer still gets both hops.
    void aModelCallIsAHopWhileTheModelThinks_data() {
        QTest::addColumn<bool>("announced");
        QTest::newRow("started then answered") << true;
        QTest::newRow("answer only") << false;
    }
    void aModelCallIsAHopWhileTheModelThinks() {
        QFETCH(bool, announced);
        using Kind = InspectorEvent::Kind;
        const QString id = QStringLiteral("req_thinking_1");
        const QJsonObject sent{{QStringLiteral("model"), QStringLiteral("gpt-5")},
                               {QStringLiteral("input"), QStringLiteral("think")},
                               {QStringLiteral("api_key"), QStringLiteral("sk-secret-body-9999")}};
        const QString url = QStringLiteral("http://127.0.0.1:1/v1/responses");
        const auto snapshot = [&] {
            store->flush();
            return store->query()->flow(id).value_or(QJsonObject());
        };
        bus->publish(Kind::RequestStarted, id, -1,
                     {{QStringLiteral("path"), QStringLiteral("/v1/responses")},
                      {QStringLiteral("model"), QStringLiteral("gpt-5")},
                      {QStringLiteral("request"), sent}});
        QVERIFY(QTest::qWaitFor([&] { return !snapshot().isEmpty(); }, 20000));
        if (announced) {
            bus->publish(Kind::UpstreamCallStarted, id, 0,
                         {{QStringLiteral("request"), sent}, {QStringLiteral("url"), url}});
            QVERIFY(QTest::qWaitFor(
                [&] { return kinds(snapshot()).contains(QStringLiteral("upstream_request")); },
                20000));
            const QJsonObject waiting = snapshot();
            QCOMPARE(waiting.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
            QCOMPARE(kinds(waiting), QStringList({QStringLiteral("client_request"),
                                                  QStringLiteral("upstream_request")}));
            const QJsonObject request = hopsOf(waiting, QStringLiteral("upstream_request")).first();
            QCOMPARE(request.value(QStringLiteral("iteration")).toInt(), 0);
            QCOMPARE(request.value(QStringLiteral("url")).toString(), url);
            const QByteArray body = QJsonDocument(request.value(QStringLiteral("body")).toObject())
                                        .toJson(QJsonDocument::Compact);
            QVERIFY(body.contains("think"));
            QVERIFY(!body.contains("sk-secret-body-9999")); // masked like every other hop
        }
        bus->publish(Kind::UpstreamCall, id, 0,
                     {{QStringLiteral("request"), sent},
                      {QStringLiteral("url"), url},
                      {QStringLiteral("status"), 200},
                      {QStringLiteral("latencyMs"), 5.0},
                      {QStringLiteral("response"), responsesMessage(QStringLiteral("Done."))},
                      {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 3},
                                                            {QStringLiteral("output_tokens"), 2},
                                                            {QStringLiteral("total_tokens"), 5}}}});
        QVERIFY(QTest::qWaitFor(
            [&] { return kinds(snapshot()).contains(QStringLiteral("upstream_response")); },
            20000));
        const QJsonObject answered = snapshot();
        QCOMPARE(kinds(answered),
                 QStringList({QStringLiteral("client_request"), QStringLiteral("upstream_request"),
                              QStringLiteral("upstream_response")}));
        QCOMPARE(answered.value(QStringLiteral("iterations")).toInt(), 1);
        const QJsonObject request = hopsOf(answered, QStringLiteral("upstream_request")).first();
        QVERIFY(QJsonDocument(request.value(QStringLiteral("body")).toObject())
                    .toJson()
                    .contains("think"));
        bus->publish(Kind::RequestFinished, id, -1, {{QStringLiteral("iterations"), 1}});
        bus->publish(Kind::ExchangeFinished, id, -1,
                     {{QStringLiteral("status"), 200}, {QStringLiteral("durationMs"), 6.0}});
        QVERIFY(QTest::qWaitFor(
            [&] {
                return snapshot().value(QStringLiteral("state")).toString() ==
                       QLatin1String("completed");
            },
            20000));
        QCOMPARE(hopsOf(snapshot(), QStringLiteral("upstream_request")).size(), 1);
    }

    // A running code_run hop says which live chunk it holds last (output_seq), so a window
    // that loads the snapshot skips those chunks when their batch arrives; final hops do not.
    void runningCodeHopTellsItsLastChunk() {
        using Kind = InspectorEvent::Kind;
        const QString id = QStringLiteral("req_chunks_1");
        const auto snapshot = [&] {
            store->flush();
            return store->query()->flow(id).value_or(QJsonObject());
        };
        bus->publish(Kind::RequestStarted, id, -1,
                     {{QStringLiteral("path"), QStringLiteral("/v1/responses")}});
        bus->publish(Kind::CodeRunStarted, id, 0,
                     {{QStringLiteral("callId"), QStringLiteral("call_1")},
                      {QStringLiteral("code"), QStringLiteral("print(1)")}});
        bus->publish(Kind::CodeRunOutput, id, 0,
                     {{QStringLiteral("callId"), QStringLiteral("call_1")},
                      {QStringLiteral("stream"), QStringLiteral("stdout")},
                      {QStringLiteral("text"), QStringLiteral("a\n")}});
        const InspectorEvent last =
            bus->publish(Kind::CodeRunOutput, id, 0,
                         {{QStringLiteral("callId"), QStringLiteral("call_1")},
                          {QStringLiteral("stream"), QStringLiteral("stdout")},
                          {QStringLiteral("text"), QStringLiteral("b\n")}});
        QJsonObject run;
        QVERIFY(QTest::qWaitFor(
            [&] {
                const QList<QJsonObject> runs = hopsOf(snapshot(), QStringLiteral("code_run"));
                run = runs.value(0);
                return run.value(QStringLiteral("stdout")).toString() == QLatin1String("a\nb\n");
            },
            20000));
        QCOMPARE(run.value(QStringLiteral("output_seq")).toDouble(), double(last.sequence));
        bus->publish(Kind::CodeExecuted, id, 0,
                     {{QStringLiteral("callId"), QStringLiteral("call_1")},
                      {QStringLiteral("code"), QStringLiteral("print(1)")},
                      {QStringLiteral("stdout"), QStringLiteral("a\nb\n")},
                      {QStringLiteral("output"), QStringLiteral("a\nb\n")},
                      {QStringLiteral("durationMs"), 3.0}});
        QVERIFY(QTest::qWaitFor(
            [&] {
                run = hopsOf(snapshot(), QStringLiteral("code_run")).value(0);
                return !run.value(QStringLiteral("output")).isNull();
            },
            20000));
        QVERIFY(!run.contains(QStringLiteral("output_seq")));
    }
};

QTEST_GUILESS_MAIN(TstInterceptedFlows)
#include "tst_interceptedflows.moc"
