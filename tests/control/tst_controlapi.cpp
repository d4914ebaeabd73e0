// The control API (/loopscope/v1) end to end inside one process: the real ProxyServer and
// InterceptionStack (real bubblewrap sandboxes) over loopback, the scripted upstream from
// tests/proxy, and a real SQLite flow store in a temporary directory. Every route, and its bad
// input: unknown ids (404), bad parameters (400), malformed HAR (400), oversized import (413).
#include "control/controlapi.h"
#include "control/controleventstream.h"
#include "inspect/eventbus.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowstore.h"
#include "sandbox/local/localsandboxoptions.h"
#include "sandbox/sandboxregistry.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

const QByteArray kToken = "tst-control-token-5f7d0c1e9a";
const QByteArray kClientKey = "sk-client-key-abcdef123456";
using Headers = QList<QPair<QByteArray, QByteArray>>;

QJsonObject functionCall(const QString &code, const QString &callId) {
    const QString args = QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("code"), code}}).toJson(QJsonDocument::Compact));
    const QJsonObject call{{QStringLiteral("type"), QStringLiteral("function_call")},
                           {QStringLiteral("id"), QString(QStringLiteral("fc_") + callId)},
                           {QStringLiteral("call_id"), callId},
                           {QStringLiteral("name"), QStringLiteral("litellm_code_execution")},
                           {QStringLiteral("arguments"), args},
                           {QStringLiteral("status"), QStringLiteral("completed")}};
    return {{QStringLiteral("id"), QString(QStringLiteral("resp_") + callId)},
            {QStringLiteral("object"), QStringLiteral("response")},
            {QStringLiteral("created_at"), 1},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("model"), QStringLiteral("m")},
            {QStringLiteral("output"), QJsonArray{call}},
            {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 10},
                                                  {QStringLiteral("output_tokens"), 5},
                                                  {QStringLiteral("total_tokens"), 15}}}};
}

QJsonObject message(const QString &text) {
    return QJsonObject{
        {QStringLiteral("id"), QStringLiteral("resp_final")},
        {QStringLiteral("object"), QStringLiteral("response")},
        {QStringLiteral("created_at"), 2},
        {QStringLiteral("status"), QStringLiteral("completed")},
        {QStringLiteral("model"), QStringLiteral("m")},
        {QStringLiteral("output"),
         QJsonArray{QJsonObject{
             {QStringLiteral("type"), QStringLiteral("message")},
             {QStringLiteral("id"), QStringLiteral("msg_1")},
             {QStringLiteral("role"), QStringLiteral("assistant")},
             {QStringLiteral("status"), QStringLiteral("completed")},
             {QStringLiteral("content"),
              QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                     {QStringLiteral("text"), text},
                                     {QStringLiteral("annotations"), QJsonArray()}}}}}}},
        {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 3},
                                              {QStringLiteral("output_tokens"), 2},
                                              {QStringLiteral("total_tokens"), 5}}}};
}

} // namespace

class TstControlApi : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<ProxyServer> m_proxy;
    InterceptionStack *m_stack = nullptr;

    void start(qint64 maxBodyBytes = 32 * 1024 * 1024, qsizetype maxUnwrittenFlows = 20'000) {
        m_dir = std::make_unique<QTemporaryDir>();
        m_bus = std::make_unique<EventBus>();
        FlowStoreOptions options;
        options.path = m_dir->filePath(QStringLiteral("history.sqlite3"));
        options.batchIntervalMs = 20;
        options.maxUnwrittenFlows = maxUnwrittenFlows;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        QVERIFY2(m_store->open(&error), qPrintable(error));
        m_store->attach(m_bus.get());
        ProxyConfig config;
        config.host = QStringLiteral("127.0.0.1");
        config.port = 0;
        config.maxBodyBytes = maxBodyBytes;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        config.controlToken = QString::fromLatin1(kToken);
        m_proxy = std::make_unique<ProxyServer>(config);
        m_stack = new InterceptionStack(m_proxy.get(), m_bus.get(), m_proxy.get());
        LocalSandboxOptions sandbox;
        sandbox.poolSize = 0;
        QVERIFY2(m_stack->init(sandbox, &error), qPrintable(error));
        m_stack->controlApi()->setFlowStore(m_store.get());
        QVERIFY(m_proxy->listen());
    }

    RawHttpClient::Response call(const QByteArray &method, const QByteArray &target,
                                 const QByteArray &body = {}, Headers headers = {}) {
        RawHttpClient client(m_proxy->port());
        if (target.startsWith("/loopscope/"))
            headers.append(qMakePair(QByteArray("Authorization"), "Bearer " + kToken));
        client.request(method, target, body, headers);
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60000))
            return {};
        return client.take();
    }
    RawHttpClient::Response plainTurn(const QByteArray &input, int status = 200) {
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(message(QStringLiteral("ok")), status));
        return call("POST", "/v1/responses", "{\"model\":\"m\",\"input\":\"" + input + "\"}",
                    {{"Authorization", "Bearer " + kClientKey}});
    }
    QJsonArray flows(const QByteArray &query = {}) {
        m_store->flush();
        const auto r = call("GET", "/loopscope/v1/flows" + query);
        if (r.status != 200)
            qWarning() << r.status << r.body;
        return r.json().value(QStringLiteral("data")).toArray();
    }
    static QString errorCode(const RawHttpClient::Response &r) {
        return r.json()[QStringLiteral("error")][QStringLiteral("code")].toString();
    }
    static bool hasOpenAiError(const RawHttpClient::Response &r) {
        return r.json()[QStringLiteral("error")][QStringLiteral("message")].isString();
    }

private slots:
    void init() {
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
    }
    void cleanup() {
        if (m_stack) {
            QFuture<void> done = m_stack->shutdown();
            QTRY_VERIFY_WITH_TIMEOUT(done.isFinished(), 30000);
        }
        m_proxy.reset();
        m_stack = nullptr;
        m_store.reset();
        m_bus.reset();
        m_upstream.reset();
        m_dir.reset();
    }

    void flowsListDetailAndFilters() {
        start();
        QCOMPARE(plainTurn("first").status, 200);
        QCOMPARE(plainTurn("second", 500).status, 500);
        const QJsonArray all = flows();
        QCOMPARE(all.size(), 2);
        const QJsonObject newest = all.at(0).toObject();
        QCOMPARE(newest.value(QStringLiteral("object")).toString(),
                 QStringLiteral("loopscope.flow"));
        QCOMPARE(newest.value(QStringLiteral("status")).toInt(), 500); // newest first
        QCOMPARE(newest.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
        const QString id = newest.value(QStringLiteral("id")).toString();
        QVERIFY(id.startsWith(QStringLiteral("req_")));

        // Filters and paging.
        QCOMPARE(flows("?state=failed").size(), 1);
        QCOMPARE(flows("?state=completed").size(), 1);
        const auto page = call("GET", "/loopscope/v1/flows?limit=1");
        QCOMPARE(page.json().value(QStringLiteral("data")).toArray().size(), 1);
        QCOMPARE(page.json().value(QStringLiteral("has_more")).toBool(), true);
        const QJsonArray older = flows("?before=" + id.toUtf8());
        QCOMPARE(older.size(), 1);
        QCOMPARE(older.at(0)[QStringLiteral("status")].toInt(), 200);

        // Detail with hops; the client's key is masked to its last 4 characters.
        const auto detail = call("GET", "/loopscope/v1/flows/" + id.toUtf8());
        QCOMPARE(detail.status, 200);
        const QJsonObject flow = detail.json();
        QCOMPARE(flow.value(QStringLiteral("id")).toString(), id);
        QStringList kinds;
        for (const QJsonValue &hop : flow.value(QStringLiteral("hops")).toArray())
            kinds << hop[QStringLiteral("kind")].toString();
        QVERIFY2(kinds.contains(QStringLiteral("client_request")), qPrintable(kinds.join(u',')));
        QVERIFY2(kinds.contains(QStringLiteral("client_response")), qPrintable(kinds.join(u',')));
        QVERIFY(!detail.body.contains(kClientKey));
        QVERIFY(detail.body.contains(kClientKey.right(4)));
        QVERIFY(!detail.body.contains(kToken));

        // Bad input.
        const auto unknown = call("GET", "/loopscope/v1/flows/req_doesnotexist");
        QCOMPARE(unknown.status, 404);
        QVERIFY(hasOpenAiError(unknown));
        for (const QByteArray &query : {QByteArray("?limit=0"), QByteArray("?limit=abc"),
                                        QByteArray("?limit=5000"), QByteArray("?state=done")}) {
            const auto bad = call("GET", "/loopscope/v1/flows" + query);
            QCOMPARE(bad.status, 400);
            QVERIFY(hasOpenAiError(bad));
        }
        QCOMPARE(call("PUT", "/loopscope/v1/flows").status, 405);
        QCOMPARE(call("GET", "/loopscope/v1/nothing").status, 404);
        // The control API's own requests are not flows.
        QCOMPARE(flows().size(), 2);
    }

    // A code run's stdout is searchable, the session sandbox is listed (identity masked) and
    // can be deleted through the same registry call as DELETE /v1/containers/{id}.
    void codeRunSearchAndSandboxes() {
        start();
        m_upstream->enqueue(ScriptedUpstream::Response::json(functionCall(
            QStringLiteral("print('zebra-' + 'marker-' + str(6*7))"), QStringLiteral("call_1"))));
        m_upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("done"))));
        const auto r =
            call("POST", "/v1/responses",
                 "{\"model\":\"m\",\"input\":\"run it\",\"metadata\":{\"session_id\":\"sess-1\"},"
                 "\"tools\":[{\"type\":\"code_interpreter\",\"container\":{\"type\":\"auto\"}}]}",
                 {{"Authorization", "Bearer " + kClientKey}});
        QCOMPARE(r.status, 200);
        QVERIFY2(r.body.contains("zebra-marker-42"), r.body.constData());
        QCOMPARE(plainTurn("unrelated").status, 200);

        // "zebra-marker-42" exists only in the code run's stdout (the code builds it).
        const QJsonArray hits = flows("?q=zebra-marker-42");
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits.at(0)[QStringLiteral("code_runs")].toInt(), 1);
        QCOMPARE(flows("?q=no-such-text-anywhere").size(), 0);

        const auto list = call("GET", "/loopscope/v1/sandboxes");
        QCOMPARE(list.status, 200);
        const QJsonArray sandboxes = list.json().value(QStringLiteral("data")).toArray();
        QCOMPARE(sandboxes.size(), 1);
        const QJsonObject sandbox = sandboxes.at(0).toObject();
        for (const char *key : {"id", "session_id", "identity", "backend", "ephemeral",
                                "created_at", "last_used_at", "expires_at", "runs"})
            QVERIFY2(sandbox.contains(QLatin1String(key)), key);
        QCOMPARE(sandbox.value(QStringLiteral("session_id")).toString(), QStringLiteral("sess-1"));
        QCOMPARE(sandbox.value(QStringLiteral("ephemeral")).toBool(), false);
        QCOMPARE(sandbox.value(QStringLiteral("backend")).toString(), QStringLiteral("local"));
        QCOMPARE(sandbox.value(QStringLiteral("runs")).toInt(), 1);
        const QString identity = sandbox.value(QStringLiteral("identity")).toString();
        QVERIFY2(identity.size() <= 5, qPrintable(identity)); // "…" + last 4 of the hash
        const QByteArray id = sandbox.value(QStringLiteral("id")).toString().toUtf8();

        const auto deleted = call("DELETE", "/loopscope/v1/sandboxes/" + id);
        QCOMPARE(deleted.status, 200);
        QCOMPARE(deleted.json().value(QStringLiteral("deleted")).toBool(), true);
        QCOMPARE(m_stack->registry()->size(), 0);
        QCOMPARE(call("DELETE", "/loopscope/v1/sandboxes/" + id).status, 404);
        QCOMPARE(
            call("GET", "/loopscope/v1/sandboxes").json()[QStringLiteral("data")].toArray().size(),
            0);
    }

    void eventsStreamToManySubscribers() {
        start();
        RawHttpClient a(m_proxy->port());
        RawHttpClient b(m_proxy->port());
        const Headers auth{{"Authorization", "Bearer " + kToken}};
        // Nobody listens yet, so the recorder builds no started/updated summaries.
        QVERIFY(!m_store->hasLiveObservers());
        a.request("GET", "/loopscope/v1/events", {}, auth);
        b.request("GET", "/loopscope/v1/events", {}, auth);
        QTRY_VERIFY_WITH_TIMEOUT(a.received().contains(": connected"), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(b.received().contains(": connected"), 20000);
        // Waited for: the client can read ": connected" before subscribe() has returned.
        QTRY_VERIFY_WITH_TIMEOUT(m_store->hasLiveObservers(), 20000);
        QVERIFY(a.received().contains("text/event-stream"));

        m_upstream->enqueue(ScriptedUpstream::Response::json(
            functionCall(QStringLiteral("print('live-output-line')"), QStringLiteral("call_9"))));
        m_upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("fin"))));
        const auto r =
            call("POST", "/v1/responses",
                 "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"code_interpreter\"}]}");
        QCOMPARE(r.status, 200);
        for (RawHttpClient *client : {&a, &b}) {
            QTRY_VERIFY_WITH_TIMEOUT(client->received().contains("event: flow.finished"), 20000);
            const QByteArray text = client->received();
            // code_run.started/output appear once a backend publishes live output (the
            // mapping itself is checked in eventNames below).
            for (const char *name :
                 {"event: flow.started", "event: code_run.finished", "event: sandbox.created"})
                QVERIFY2(text.contains(name), name);
            QVERIFY(text.contains("live-output-line"));
            QVERIFY(text.contains("\"flow_id\":\"req_"));
        }
        QCOMPARE(m_stack->controlApi()->eventStream()->subscriberCount(), 2);
        a.close();
        QTRY_COMPARE_WITH_TIMEOUT(m_stack->controlApi()->eventStream()->subscriberCount(), 1,
                                  20000);
        QVERIFY(m_store->hasLiveObservers());
        b.close();
        QTRY_VERIFY_WITH_TIMEOUT(!m_store->hasLiveObservers(), 20000);
        // A subscriber after a quiet spell gets flows again from its start.
        RawHttpClient c(m_proxy->port());
        c.request("GET", "/loopscope/v1/events", {}, auth);
        QTRY_VERIFY_WITH_TIMEOUT(c.received().contains(": connected"), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(m_store->hasLiveObservers(), 20000);
        m_upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("again"))));
        QCOMPARE(call("POST", "/v1/responses", "{\"model\":\"m\",\"input\":\"y\"}").status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(c.received().contains("event: flow.finished"), 20000);
        QVERIFY(c.received().contains("event: flow.started"));
        QCOMPARE(call("POST", "/loopscope/v1/events").status, 405);
    }

    // InspectorEvents → SSE names of the spec, snake_case data with flow_id.
    void eventNames_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QByteArray>("name");
        using K = InspectorEvent::Kind;
        QTest::newRow("code start") << int(K::CodeRunStarted) << QByteArray("code_run.started");
        QTest::newRow("code output") << int(K::CodeRunOutput) << QByteArray("code_run.output");
        QTest::newRow("code done") << int(K::CodeExecuted) << QByteArray("code_run.finished");
        QTest::newRow("model call sent")
            << int(K::UpstreamCallStarted) << QByteArray("upstream_call.started");
        QTest::newRow("sandbox new") << int(K::SandboxCreated) << QByteArray("sandbox.created");
        QTest::newRow("sandbox gone") << int(K::SandboxDeleted) << QByteArray("sandbox.deleted");
        QTest::newRow("sandbox expired") << int(K::SandboxExpired) << QByteArray("sandbox.deleted");
        QTest::newRow("hop (store's flow.*)") << int(K::ClientRequest) << QByteArray();
        QTest::newRow("chunk (store's flow.*)") << int(K::ClientResponseChunk) << QByteArray();
    }
    void eventNames() {
        QFETCH(int, kind);
        QFETCH(QByteArray, name);
        InspectorEvent event =
            InspectorEvent::make(InspectorEvent::Kind(kind), QStringLiteral("req_1"), 2,
                                 {{QStringLiteral("callId"), QStringLiteral("c1")},
                                  {QStringLiteral("containerId"), QStringLiteral("cntr_1")}});
        const auto sse = ControlEventStream::map(event);
        if (name.isEmpty()) {
            QVERIFY(!sse);
            return;
        }
        QVERIFY(sse);
        QCOMPARE(sse->first, name);
        QCOMPARE(sse->second.value(QStringLiteral("flow_id")).toString(), QStringLiteral("req_1"));
        QCOMPARE(sse->second.value(QStringLiteral("call_id")).toString(), QStringLiteral("c1"));
        QCOMPARE(sse->second.value(QStringLiteral("container_id")).toString(),
                 QStringLiteral("cntr_1"));
        QCOMPARE(sse->second.value(QStringLiteral("iteration")).toInt(), 2);
    }

    // Which model call is out, without its body (that is in the flow, GET /flows/{id}).
    void modelCallStartCarriesNoBody() {
        const auto sse = ControlEventStream::map(InspectorEvent::make(
            InspectorEvent::Kind::UpstreamCallStarted, QStringLiteral("req_1"), 1,
            {{QStringLiteral("request"),
              QJsonObject{{QStringLiteral("input"), QStringLiteral("x")}}},
             {QStringLiteral("url"), QStringLiteral("http://127.0.0.1:1/v1/responses")}}));
        QVERIFY(sse);
        QCOMPARE(sse->first, QByteArray("upstream_call.started"));
        QVERIFY(!sse->second.contains(QStringLiteral("request")));
        QCOMPARE(sse->second.value(QStringLiteral("url")).toString(),
                 QStringLiteral("http://127.0.0.1:1/v1/responses"));
        QCOMPARE(sse->second.value(QStringLiteral("iteration")).toInt(), 1);
    }

    void runsGroupFlows() {
        start();
        m_upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("a"))));
        m_upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("b"))));
        for (int i = 0; i < 2; ++i)
            QCOMPARE(
                call(
                    "POST", "/v1/responses",
                    "{\"model\":\"m\",\"input\":\"hi\",\"metadata\":{\"session_id\":\"run-sess\"}}")
                    .status,
                200);
        m_store->flush();
        const auto r = call("GET", "/loopscope/v1/runs?limit=10");
        QCOMPARE(r.status, 200);
        const QJsonArray runs = r.json().value(QStringLiteral("data")).toArray();
        QVERIFY(!runs.isEmpty());
        const QJsonObject run = runs.at(0).toObject();
        QVERIFY(run.value(QStringLiteral("id")).toString().startsWith(QStringLiteral("run_")));
        QCOMPARE(run.value(QStringLiteral("flows")).toArray().size(), 2);
        const auto one = call("GET", "/loopscope/v1/runs/" +
                                         run.value(QStringLiteral("id")).toString().toUtf8());
        QCOMPARE(one.status, 200);
        QCOMPARE(call("GET", "/loopscope/v1/runs/run_nope").status, 404);
        QCOMPARE(call("GET", "/loopscope/v1/runs?limit=-1").status, 400);
        // The run filter of the flow list.
        QCOMPARE(flows("?run=" + run.value(QStringLiteral("id")).toString().toUtf8()).size(), 2);
    }

    void replayWithCredentialsAndEdits() {
        start();
        QCOMPARE(plainTurn("original input").status, 200);
        const QString original = flows().at(0)[QStringLiteral("id")].toString();

        m_upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("again"))));
        const auto replay = call("POST", "/loopscope/v1/flows/" + original.toUtf8() + "/replay");
        QCOMPARE(replay.status, 200);
        const QString replayed = replay.json().value(QStringLiteral("flow_id")).toString();
        QVERIFY(replayed.startsWith(QStringLiteral("req_")));
        QVERIFY(replayed != original);
        QTRY_COMPARE_WITH_TIMEOUT(m_upstream->requestCount(), 2, 20000);
        const auto sent = m_upstream->requests();
        // The original client's credentials, not the masked copy in the store.
        QCOMPARE(sent.at(1).header("authorization"), "Bearer " + kClientKey);
        QCOMPARE(sent.at(1).json().value(QStringLiteral("input")).toString(),
                 QStringLiteral("original input"));

        // An edited body.
        m_upstream->enqueue(ScriptedUpstream::Response::json(message(QStringLiteral("edited"))));
        const auto edited = call("POST", "/loopscope/v1/flows/" + original.toUtf8() + "/replay",
                                 "{\"body\":{\"model\":\"m\",\"input\":\"edited input\"}}");
        QCOMPARE(edited.status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(m_upstream->requestCount(), 3, 20000);
        QCOMPARE(m_upstream->requests().at(2).json().value(QStringLiteral("input")).toString(),
                 QStringLiteral("edited input"));
        QCOMPARE(m_upstream->requests().at(2).header("authorization"), "Bearer " + kClientKey);

        // The new flows say what they replay.
        m_store->flush();
        QTRY_VERIFY_WITH_TIMEOUT(call("GET", "/loopscope/v1/flows/" + replayed.toUtf8())
                                         .json()
                                         .value(QStringLiteral("state"))
                                         .toString() == QStringLiteral("completed"),
                                 20000);
        const QJsonObject summary = call("GET", "/loopscope/v1/flows/" + replayed.toUtf8()).json();
        QCOMPARE(summary.value(QStringLiteral("replay_of")).toString(), original);

        QCOMPARE(call("POST", "/loopscope/v1/flows/req_unknown/replay").status, 404);
        QCOMPARE(
            call("POST", "/loopscope/v1/flows/" + original.toUtf8() + "/replay", "not json").status,
            400);
        QCOMPARE(call("POST", "/loopscope/v1/flows/" + original.toUtf8() + "/replay",
                      "{\"body\":\"a string\"}")
                     .status,
                 400);
    }

    // A refused target is recorded as a flow like every early rejection. Replaying it skips
    // the HTTP front, so what stops it is the proxy's last check before sending (the upstream
    // path must stay under the route's base path): the replay ends 400 and nothing is sent.
    void replayOfARefusedTargetIsNotForwarded() {
        start();
        const auto refused = call("POST", "/v1/../../admin/keys", "{}");
        QCOMPARE(refused.status, 400);
        QCOMPARE(errorCode(refused), QStringLiteral("invalid_request_target"));
        QJsonArray all;
        QTRY_VERIFY_WITH_TIMEOUT((all = flows()).size() == 1, 20000);
        const QJsonObject flow = all.at(0).toObject();
        QCOMPARE(flow.value(QStringLiteral("path")).toString(),
                 QStringLiteral("/v1/../../admin/keys"));
        QCOMPARE(flow.value(QStringLiteral("status")).toInt(), 400);

        const QByteArray id = flow.value(QStringLiteral("id")).toString().toUtf8();
        const auto replay = call("POST", "/loopscope/v1/flows/" + id + "/replay");
        QCOMPARE(replay.status, 200);
        const QByteArray replayed =
            replay.json().value(QStringLiteral("flow_id")).toString().toUtf8();
        QTRY_VERIFY_WITH_TIMEOUT((m_store->flush(), call("GET", "/loopscope/v1/flows/" + replayed)
                                                            .json()
                                                            .value(QStringLiteral("status"))
                                                            .toInt() == 400),
                                 20000);
        QCOMPARE(m_upstream->requestCount(), 0);
        // The upstream was reachable all along.
        QCOMPARE(plainTurn("after").status, 200);
        QCOMPARE(m_upstream->requestCount(), 1);
        QCOMPARE(m_upstream->requests().at(0).target, QByteArray("/v1/responses"));
    }

    // GET /loopscope/v1: the store's state and every bounded queue's drops, through the real
    // proxy; a disk that refuses writes shows there, and so do the flows it could not keep.
    void statsReportStoreFailureAndDrops() {
        start(32 * 1024 * 1024, /*maxUnwrittenFlows=*/2);
        const auto dropped = [](const RawHttpClient::Response &r) {
            return r.json().value(QStringLiteral("dropped")).toObject();
        };
        auto r = call("GET", "/loopscope/v1");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value(QStringLiteral("object")).toString(),
                 QStringLiteral("loopscope.stats"));
        QStringList queues;
        for (const char *name : {"window_events", "otlp_events", "otlp_flows", "recorder_events",
                                 "sse_events", "flows"})
            queues << QLatin1String(name);
        QCOMPARE(dropped(r).keys(), [&] {
            QStringList sorted = queues;
            sorted.sort();
            return sorted;
        }());
        for (const QString &q : queues)
            QCOMPARE(dropped(r).value(q), QJsonValue(0));
        QJsonObject store = r.json().value(QStringLiteral("store")).toObject();
        QCOMPARE(store.value(QStringLiteral("writing")), QJsonValue(true));
        QVERIFY(store.value(QStringLiteral("problem")).isNull());

        m_store->failWritesForTests(true);
        for (const QByteArray input : {"one", "two", "three", "four", "five"})
            QCOMPARE(plainTurn(input).status, 200);
        m_store->flush();
        r = call("GET", "/loopscope/v1");
        QCOMPARE(r.status, 200);
        store = r.json().value(QStringLiteral("store")).toObject();
        QCOMPARE(store.value(QStringLiteral("writing")), QJsonValue(false));
        QVERIFY2(store.value(QStringLiteral("problem"))
                     .toString()
                     .contains(QStringLiteral("cannot be written")),
                 qPrintable(store.value(QStringLiteral("problem")).toString()));
        QCOMPARE(store.value(QStringLiteral("flows_unwritten")), QJsonValue(2));
        QVERIFY(store.value(QStringLiteral("write_failures")).toDouble() >= 1);
        QCOMPARE(dropped(r).value(QStringLiteral("flows")), QJsonValue(3));

        m_store->failWritesForTests(false);
        QTRY_COMPARE_WITH_TIMEOUT(m_store->counters().flowsUnwritten, quint64(0), 30'000);
        r = call("GET", "/loopscope/v1");
        store = r.json().value(QStringLiteral("store")).toObject();
        QCOMPARE(store.value(QStringLiteral("writing")), QJsonValue(true));
        QCOMPARE(store.value(QStringLiteral("flows_unwritten")), QJsonValue(0));
        QCOMPARE(dropped(r).value(QStringLiteral("flows")), QJsonValue(3)); // counted for good
        QCOMPARE(flows().size(), 2);

        QCOMPARE(call("POST", "/loopscope/v1").status, 405);
    }

    void clearHistory() {
        start();
        QCOMPARE(plainTurn("one").status, 200);
        QCOMPARE(flows().size(), 1);
        const auto cleared = call("DELETE", "/loopscope/v1/flows");
        QCOMPARE(cleared.status, 200);
        QCOMPARE(cleared.json().value(QStringLiteral("count")).toInt(), 1);
        QCOMPARE(flows().size(), 0);
    }

    void harExportAndImport() {
        start();
        QCOMPARE(plainTurn("har me").status, 200);
        m_upstream->enqueue(ScriptedUpstream::Response::events(
            {"event: response.created\ndata: {\"type\":\"response.created\"}\n\n",
             "event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n"}));
        QCOMPARE(call("POST", "/v1/responses", "{\"model\":\"m\",\"input\":\"s\",\"stream\":true}",
                      {{"Authorization", "Bearer " + kClientKey}})
                     .status,
                 200);
        QCOMPARE(flows().size(), 2);

        const auto exported = call("GET", "/loopscope/v1/export.har");
        QCOMPARE(exported.status, 200);
        QVERIFY(!exported.body.contains(kClientKey));
        QVERIFY(!exported.body.contains(kToken));
        const QJsonObject log = exported.json().value(QStringLiteral("log")).toObject();
        QCOMPARE(log.value(QStringLiteral("version")).toString(), QStringLiteral("1.2"));
        const QJsonArray entries = log.value(QStringLiteral("entries")).toArray();
        QCOMPARE(entries.size(), 2);
        for (const QJsonValue &v : entries) {
            const QJsonObject e = v.toObject();
            // Custom data only under "_" keys (HAR 1.2's rule) and ours under _loopscope.
            for (const QString &key : e.keys())
                QVERIFY2(QStringList({QStringLiteral("startedDateTime"), QStringLiteral("time"),
                                      QStringLiteral("request"), QStringLiteral("response"),
                                      QStringLiteral("cache"), QStringLiteral("timings"),
                                      QStringLiteral("_loopscope")})
                             .contains(key),
                         qPrintable(key));
            QVERIFY(e[QStringLiteral("request")][QStringLiteral("url")].toString().endsWith(
                QStringLiteral("/v1/responses")));
        }
        const bool sawStream = exported.body.contains("event: response.completed");
        QVERIFY(sawStream);
        const QByteArray one =
            call("GET", "/loopscope/v1/export.har?ids=" +
                            flows().at(0)[QStringLiteral("id")].toString().toUtf8())
                .body;
        QCOMPARE(QJsonDocument::fromJson(one)[QStringLiteral("log")][QStringLiteral("entries")]
                     .toArray()
                     .size(),
                 1);

        // Round trip: imported copies, read-only, marked.
        const auto imported = call("POST", "/loopscope/v1/import", exported.body);
        QCOMPARE(imported.status, 200);
        QCOMPARE(imported.json().value(QStringLiteral("imported")).toInt(), 2);
        QCOMPARE(flows().size(), 4);
        const QString copy =
            imported.json().value(QStringLiteral("ids")).toArray().at(0).toString();
        const QJsonObject flow = call("GET", "/loopscope/v1/flows/" + copy.toUtf8()).json();
        QCOMPARE(flow.value(QStringLiteral("imported")).toBool(), true);
        QVERIFY(!flow.value(QStringLiteral("hops")).toArray().isEmpty());
        const auto replay = call("POST", "/loopscope/v1/flows/" + copy.toUtf8() + "/replay");
        QCOMPARE(replay.status, 409);
        QVERIFY(hasOpenAiError(replay));
    }

    void importForeignHar() {
        start();
        const QString path = QStringLiteral(LOOPSCOPE_FIXTURES "/chromium-playwright.har");
        QFile file(path);
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
        const QByteArray har = file.readAll();
        const int entries =
            QJsonDocument::fromJson(har)[QStringLiteral("log")][QStringLiteral("entries")]
                .toArray()
                .size();
        QVERIFY(entries > 0);
        const auto r = call("POST", "/loopscope/v1/import", har);
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value(QStringLiteral("imported")).toInt(), entries);
        bool sawChat = false;
        bool sawStream = false;
        for (const QJsonValue &id : r.json().value(QStringLiteral("ids")).toArray()) {
            const auto detail = call("GET", "/loopscope/v1/flows/" + id.toString().toUtf8());
            QCOMPARE(detail.status, 200);
            const QJsonObject flow = detail.json();
            // Credentials in the HAR's headers are masked on import.
            const QJsonObject request =
                flow.value(QStringLiteral("hops")).toArray().at(0).toObject();
            QVERIFY(!QJsonDocument(request.value(QStringLiteral("headers")).toObject())
                         .toJson()
                         .contains("sk-page-secret-0000abcd"));
            QCOMPARE(flow.value(QStringLiteral("imported")).toBool(), true);
            QCOMPARE(flow.value(QStringLiteral("status")).toInt(), 200);
            QCOMPARE(flow.value(QStringLiteral("hops")).toArray().size(), 2);
            const QString path = flow.value(QStringLiteral("path")).toString();
            if (path == QStringLiteral("/v1/chat/completions")) {
                sawChat = true;
                QCOMPARE(flow.value(QStringLiteral("model")).toString(),
                         QStringLiteral("gpt-4o-mini"));
                QCOMPARE(flow.value(QStringLiteral("api")).toString(),
                         QStringLiteral("chat_completions"));
                QVERIFY(detail.body.contains("Hello from the HAR fixture!"));
            }
            if (path == QStringLiteral("/v1/responses")) {
                sawStream = true;
                const QJsonObject response =
                    flow.value(QStringLiteral("hops")).toArray().at(1).toObject();
                QCOMPARE(response.value(QStringLiteral("events")).toArray().size(), 3);
            }
        }
        QVERIFY(sawChat);
        QVERIFY(sawStream);
        QCOMPARE(flows("?q=chatcmpl").size(), 1); // text only in the chat answer
    }

    // A HAR's numbers are whatever the file says: an entry time far beyond any real duration
    // (found by fuzz_har) imports with a bounded duration, its answer after its request.
    void absurdEntryTimesAreBounded_data() {
        QTest::addColumn<QByteArray>("time");
        QTest::newRow("huge") << QByteArray("6.666666666666667e70");
        QTest::newRow("negative") << QByteArray("-5");
    }
    void absurdEntryTimesAreBounded() {
        QFETCH(QByteArray, time);
        start();
        const QByteArray har =
            R"({"log":{"version":"1.2","entries":[{"startedDateTime":"2026-01-01T00:00:00.000Z",)"
            R"("time":)" +
            time +
            R"(,"request":{"method":"GET","url":"http://127.0.0.1/v1/models","headers":[]},)"
            R"("response":{"status":200,"headers":[],"content":{"mimeType":"application/json",)"
            R"("text":"{}"}}}]}})";
        const auto r = call("POST", "/loopscope/v1/import", har);
        QCOMPARE(r.status, 200);
        const QString id = r.json().value(QStringLiteral("ids")).toArray().at(0).toString();
        const QJsonObject flow = call("GET", "/loopscope/v1/flows/" + id.toUtf8()).json();
        const double duration = flow.value(QStringLiteral("duration_ms")).toDouble();
        QVERIFY2(duration >= 0 && duration <= 365.0 * 24 * 3600 * 1000,
                 qPrintable(QString::number(duration)));
        const QJsonArray hops = flow.value(QStringLiteral("hops")).toArray();
        const double sent = hops.first().toObject().value(QStringLiteral("at")).toDouble();
        const double answered = hops.last().toObject().value(QStringLiteral("at")).toDouble();
        QVERIFY2(answered >= sent && answered - sent <= 365.0 * 24 * 3600 * 1000,
                 qPrintable(QStringLiteral("%1 → %2").arg(sent).arg(answered)));
    }

    void malformedHar_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("not json") << QByteArray("this is not json");
        QTest::newRow("no log") << QByteArray("{\"entries\":[]}");
        QTest::newRow("entries not a list") << QByteArray("{\"log\":{\"entries\":{}}}");
        QTest::newRow("entry not an object") << QByteArray("{\"log\":{\"entries\":[1]}}");
        QTest::newRow("request without url") << QByteArray(
            "{\"log\":{\"entries\":[{\"request\":{\"method\":\"GET\"},\"response\":{}}]}}");
    }
    void malformedHar() {
        QFETCH(QByteArray, body);
        start();
        const auto r = call("POST", "/loopscope/v1/import", body);
        QCOMPARE(r.status, 400);
        QVERIFY(hasOpenAiError(r));
        QVERIFY(!r.json()[QStringLiteral("error")][QStringLiteral("message")].toString().isEmpty());
        QCOMPARE(flows().size(), 0);
    }

    void oversizedImportIs413() {
        start(64 * 1024);
        QByteArray big = "{\"log\":{\"version\":\"1.2\",\"entries\":[],\"comment\":\"";
        big += QByteArray(100 * 1024, 'x');
        big += "\"}}";
        const auto r = call("POST", "/loopscope/v1/import", big);
        QCOMPARE(r.status, 413);
        QVERIFY(hasOpenAiError(r));
        QCOMPARE(flows().size(), 0); // control traffic (even rejected) is not a flow
    }
};

QTEST_GUILESS_MAIN(TstControlApi)
#include "tst_controlapi.moc"
