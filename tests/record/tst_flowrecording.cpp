// Every kind of client exchange becomes one flow with the spec's hops and summary fields:
// a real ProxyServer on loopback, a scripted OpenAI-compatible upstream, the real EventBus and
// a FlowStore writing a real SQLite file in a temporary directory.
// JSON fixtures are written as plain literals here.
#undef QT_NO_CAST_FROM_ASCII
#include "config/yamldocument.h"
#include "inspect/eventbus.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowstore.h"
#include "record/recordedflow.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

const QByteArray kClientKey = "sk-client-key-0123456789-wxyz";
const QString kConfiguredKey = QStringLiteral("sk-configured-secret-7788-abcd");

QByteArray sse(const QByteArray &type, const QJsonObject &data) {
    return "event: " + type + "\ndata: " + QJsonDocument(data).toJson(QJsonDocument::Compact) +
           "\n\n";
}

QByteArray chatChunk(const QJsonObject &data) {
    return "data: " + QJsonDocument(data).toJson(QJsonDocument::Compact) + "\n\n";
}

QStringList kinds(const QJsonObject &flow) {
    QStringList out;
    for (const QJsonValue &hop : flow.value(QStringLiteral("hops")).toArray())
        out << hop.toObject().value(QStringLiteral("kind")).toString();
    return out;
}

QJsonObject hop(const QJsonObject &flow, const QString &kind, int nth = 0) {
    for (const QJsonValue &h : flow.value(QStringLiteral("hops")).toArray()) {
        if (h.toObject().value(QStringLiteral("kind")).toString() == kind && nth-- == 0)
            return h.toObject();
    }
    return {};
}

QJsonObject usage(qint64 in, qint64 out) {
    return {{QStringLiteral("input_tokens"), in},
            {QStringLiteral("output_tokens"), out},
            {QStringLiteral("total_tokens"), in + out}};
}

QJsonObject responseObject(const QString &id, const QJsonArray &output, qint64 in, qint64 out) {
    return {{QStringLiteral("id"), id},
            {QStringLiteral("object"), QStringLiteral("response")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("output"), output},
            {QStringLiteral("usage"), usage(in, out)}};
}

QJsonObject message(const QString &role, const QString &text) {
    return {{QStringLiteral("role"), role}, {QStringLiteral("content"), text}};
}

QByteArray json(const QJsonObject &o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

} // namespace

class TstFlowRecording : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<ProxyServer> m_proxy;
    QList<RequestLogEntry> m_log;

    ProxyConfig config(const QByteArray &extraYaml = {}) {
        const QByteArray yaml = "model_list:\n"
                                "  - model_name: gpt-priced\n"
                                "    litellm_params:\n"
                                "      model: openai/gpt-upstream\n"
                                "      api_base: " +
                                m_upstream->baseUrl().toUtf8() +
                                "\n"
                                "      api_key: " +
                                kConfiguredKey.toUtf8() +
                                "\n"
                                "    model_info:\n"
                                "      input_cost_per_token: 0.000002\n"
                                "      output_cost_per_token: 0.00001\n" +
                                extraYaml;
        ProxyConfig c;
        QString error;
        if (!c.loadYaml(YamlDocument::fromText(yaml), QProcessEnvironment(), &error))
            qFatal("config: %s", qPrintable(error));
        c.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        c.host = QStringLiteral("127.0.0.1");
        c.port = 0;
        return c;
    }

    void start(ProxyConfig c) {
        FlowStoreOptions options;
        options.path = m_dir->filePath(QStringLiteral("history.sqlite3"));
        options.prices = c.modelPrices;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        QVERIFY2(m_store->open(&error), qPrintable(error));
        m_store->attach(m_bus.get());
        m_proxy = std::make_unique<ProxyServer>(std::move(c));
        m_proxy->setEventBus(m_bus.get());
        connect(m_proxy.get(), &ProxyServer::requestLogged, this,
                [this](const RequestLogEntry &e) { m_log.append(e); });
        QVERIFY(m_proxy->listen());
    }

    RawHttpClient::Response roundTrip(const QByteArray &method, const QByteArray &target,
                                      const QByteArray &body = {},
                                      QList<QPair<QByteArray, QByteArray>> headers = {}) {
        RawHttpClient client(m_proxy->port());
        headers.append({"Authorization", "Bearer " + kClientKey});
        client.request(method, target, body, headers);
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 20000))
            return {};
        return client.take();
    }

    // The finished flow of the n-th logged request (waits for the log and the store).
    QJsonObject flowOf(int n) {
        if (!QTest::qWaitFor([&] { return m_log.size() > n; }, 20000))
            return {};
        const QString id = m_log.at(n).requestId;
        QJsonObject flow;
        (void)QTest::qWaitFor(
            [&] {
                m_store->flush();
                flow = m_store->query()->flow(id).value_or(QJsonObject());
                return flow.value(QStringLiteral("state")).toString() != QLatin1String("running") &&
                       !flow.isEmpty();
            },
            20000);
        return flow;
    }

private slots:
    // A pass-through flow holds the client's body in two hops; the full-text index gets it
    // once (a search asks only whether a flow holds a word), every other text as before.
    void searchTextHoldsARepeatedBodyOnce() {
        const QJsonObject body{{QStringLiteral("model"), QStringLiteral("gpt-4o")},
                               {QStringLiteral("input"), QStringLiteral("zanzibar")}};
        const QJsonArray hops{
            QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_request")},
                        {QStringLiteral("body"), body}},
            QJsonObject{{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                        {QStringLiteral("body"), body}},
            QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_response")},
                        {QStringLiteral("body"),
                         QJsonObject{{QStringLiteral("output"), QStringLiteral("zanzibar too")}}}}};
        const QString text = loopscope::RecordedFlow::searchText({QStringLiteral("flow_1")}, hops);
        QCOMPARE(text.count(QStringLiteral("zanzibar")), 2); // the request once, the answer
        QCOMPARE(text.count(QStringLiteral("upstream_request")), 1);
        QVERIFY(text.contains(QStringLiteral("zanzibar too")));
    }
    void init() {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
        m_bus = std::make_unique<EventBus>();
        m_log.clear();
    }
    void cleanup() {
        m_proxy.reset();
        m_store.reset();
        m_bus.reset();
        m_upstream.reset();
        m_dir.reset();
    }

    void jsonPassThroughHasEveryHopMaskedWithUsageAndCost() {
        start(config());
        m_upstream->enqueue(ScriptedUpstream::Response::json(responseObject(
            QStringLiteral("resp_a"),
            {QJsonObject{{QStringLiteral("type"), QStringLiteral("message")},
                         {QStringLiteral("role"), QStringLiteral("assistant")},
                         {QStringLiteral("content"), QStringLiteral("hello there")}}},
            100, 20)));
        const auto r =
            roundTrip("POST", "/v1/responses",
                      R"({"model":"gpt-priced","input":"hi","api_key":"sk-in-body-5555"})",
                      {{"Cookie", "session=cookie-value-9999"},
                       {"x-custom", "carries " + kConfiguredKey.toUtf8()}});
        QCOMPARE(r.status, 200);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(kinds(flow), (QStringList{"client_request", "upstream_request",
                                           "upstream_response", "client_response"}));
        QCOMPARE(flow.value("id").toString(), m_log.first().requestId);
        QCOMPARE(flow.value("object").toString(), QStringLiteral("loopscope.flow"));
        QCOMPARE(flow.value("api").toString(), QStringLiteral("responses"));
        QCOMPARE(flow.value("model").toString(), QStringLiteral("gpt-priced"));
        QCOMPARE(flow.value("state").toString(), QStringLiteral("completed"));
        QCOMPARE(flow.value("status").toInt(), 200);
        QCOMPARE(flow.value("intercepted").toBool(), false);
        QCOMPARE(flow.value("stream").toBool(), false);
        QCOMPARE(flow.value("iterations").toInt(), 1);
        QVERIFY(flow.value("duration_ms").toDouble() > 0);
        QVERIFY(flow.value("ttfb_ms").toDouble() > 0);
        QVERIFY(flow.value("overhead_ms").toDouble() > 0);
        QVERIFY(flow.value("run_id").toString().startsWith(QLatin1String("run_")));
        QCOMPARE(flow.value("usage").toObject(), usage(100, 20));
        // 100 * 2e-6 + 20 * 1e-5
        QVERIFY(qAbs(flow.value("cost_usd").toDouble() - 0.0004) < 1e-12);

        const QJsonObject request = hop(flow, "client_request");
        const QJsonObject headers = request.value("headers").toObject();
        QCOMPARE(headers.value("authorization").toString(), QStringLiteral("Bearer …wxyz"));
        QCOMPARE(headers.value("cookie").toString(), QStringLiteral("…9999"));
        QCOMPARE(headers.value("x-custom").toString(), QStringLiteral("…abcd"));
        QCOMPARE(request.value("body").toObject().value("api_key").toString(),
                 QStringLiteral("…5555"));
        const QJsonObject upstreamRequest = hop(flow, "upstream_request");
        QVERIFY(upstreamRequest.value("url").toString().endsWith(QLatin1String("/v1/responses")));
        QCOMPARE(upstreamRequest.value("body").toObject().value("model").toString(),
                 QStringLiteral("gpt-upstream"));
        QCOMPARE(upstreamRequest.value("headers").toObject().value("authorization").toString(),
                 QStringLiteral("Bearer …abcd"));
        const QString everything = QString::fromUtf8(QJsonDocument(flow).toJson());
        QVERIFY(!everything.contains(kConfiguredKey));
        QVERIFY(!everything.contains(QString::fromLatin1(kClientKey)));
        QVERIFY(!everything.contains(QStringLiteral("cookie-value")));
        const QJsonObject upstreamResponse = hop(flow, "upstream_response");
        QCOMPARE(upstreamResponse.value("status").toInt(), 200);
        QCOMPARE(upstreamResponse.value("usage").toObject(), usage(100, 20));
        QCOMPARE(upstreamResponse.value("body").toObject().value("id").toString(),
                 QStringLiteral("resp_a"));
        const QJsonObject response = hop(flow, "client_response");
        QCOMPARE(response.value("status").toInt(), 200);
        QCOMPARE(response.value("body").toObject().value("id").toString(),
                 QStringLiteral("resp_a"));
        QVERIFY(response.value("events").toArray().isEmpty());
        // The per-request log line names the same flow.
        QVERIFY(
            m_log.first().toLine().contains(QStringLiteral("id=") + flow.value("id").toString()));
    }

    void ssePassThroughIsRecordedEventByEvent() {
        start(config());
        const QList<QByteArray> chunks{
            sse("response.created",
                {{"type", "response.created"}, {"response", QJsonObject{{"id", "resp_s"}}}}),
            sse("response.output_text.delta",
                {{"type", "response.output_text.delta"}, {"delta", "Hel"}}),
            // One event split across two chunks: framing is rebuilt on the store thread.
            QByteArray("event: response.output_text.delta\ndata: {\"type\":\"response.output"),
            QByteArray("_text.delta\",\"delta\":\"lo\"}\n\n"),
            sse("response.completed", {{"type", "response.completed"},
                                       {"response", responseObject("resp_s", {}, 7, 3)}})};
        auto answer = ScriptedUpstream::Response::events(chunks);
        m_upstream->enqueue(answer);
        const auto r = roundTrip("POST", "/v1/responses",
                                 R"({"model":"gpt-priced","input":"hi","stream":true})");
        QCOMPARE(r.status, 200);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(kinds(flow), (QStringList{"client_request", "upstream_request",
                                           "upstream_response", "client_response"}));
        QCOMPARE(flow.value("stream").toBool(), true);
        for (const QString &kind :
             {QStringLiteral("upstream_response"), QStringLiteral("client_response")}) {
            const QJsonArray events = hop(flow, kind).value("events").toArray();
            QCOMPARE(events.size(), 4);
            QCOMPARE(events.at(0).toObject().value("event").toString(),
                     QStringLiteral("response.created"));
            QCOMPARE(events.at(2).toObject().value("data").toObject().value("delta").toString(),
                     QStringLiteral("lo"));
            QCOMPARE(events.at(3).toObject().value("event").toString(),
                     QStringLiteral("response.completed"));
        }
        QCOMPARE(flow.value("usage").toObject(), usage(7, 3));
        QVERIFY(flow.value("cost_usd").isDouble());
    }

    // A secret split across two network chunks of one SSE event is masked once the store thread
    // has joined the event (the chunks themselves are never masked, nor need to be).
    void secretSplitAcrossStreamChunksIsMasked() {
        start(config());
        const QByteArray event =
            "event: response.output_text.delta\ndata: " +
            json({{"type", "response.output_text.delta"},
                  {"delta", QString(QStringLiteral("key ") + kConfiguredKey)}}) +
            "\n\n";
        const qsizetype cut = event.indexOf(kConfiguredKey.toUtf8()) + 12;
        const QList<QByteArray> chunks{
            sse("response.created",
                {{"type", "response.created"}, {"response", QJsonObject{{"id", "resp_k"}}}}),
            event.left(cut), event.mid(cut),
            sse("response.completed", {{"type", "response.completed"},
                                       {"response", responseObject("resp_k", {}, 1, 1)}})};
        m_upstream->enqueue(ScriptedUpstream::Response::events(chunks, 50));
        const auto r = roundTrip("POST", "/v1/responses",
                                 R"({"model":"gpt-priced","input":"hi","stream":true})");
        QCOMPARE(r.status, 200);
        QVERIFY(r.body.contains(kConfiguredKey.toUtf8())); // the client got the stream as sent
        const QJsonObject flow = flowOf(0);
        const QByteArray stored = json(flow);
        QVERIFY2(!stored.contains(kConfiguredKey.left(12).toUtf8()), stored.constData());
        const QJsonArray events = hop(flow, "client_response").value("events").toArray();
        QCOMPARE(events.size(), 3);
        QCOMPARE(events.at(1).toObject().value("data").toObject().value("delta").toString(),
                 QStringLiteral("key …abcd"));
    }

    void chatStreamUsageAndUnpricedModel() {
        start(config());
        m_upstream->enqueue(ScriptedUpstream::Response::events(
            {chatChunk(
                 {{"id", "chatcmpl-1"},
                  {"choices", QJsonArray{QJsonObject{{"index", 0},
                                                     {"delta", QJsonObject{{"content", "Hi"}}}}}}}),
             chatChunk({{"id", "chatcmpl-1"},
                        {"choices", QJsonArray()},
                        {"usage", QJsonObject{{"prompt_tokens", 11},
                                              {"completion_tokens", 2},
                                              {"total_tokens", 13}}}}),
             "data: [DONE]\n\n"}));
        const auto r = roundTrip(
            "POST", "/v1/chat/completions",
            R"({"model":"unpriced","stream":true,"messages":[{"role":"user","content":"hi"}]})");
        QCOMPARE(r.status, 200);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(flow.value("api").toString(), QStringLiteral("chat_completions"));
        QCOMPARE(flow.value("usage").toObject(), usage(11, 2));
        QVERIFY(flow.value("cost_usd").isNull());
        const QJsonArray events = hop(flow, "client_response").value("events").toArray();
        QCOMPARE(events.size(), 3);
        QCOMPARE(events.at(2).toObject().value("data").toString(), QStringLiteral("[DONE]"));
    }

    // No model_info, a model the built-in table knows by a dated snapshot: the flow still has
    // a cost, the cached part of the prompt at the cached price.
    void builtInPriceWithoutModelInfo() {
        start(config());
        m_upstream->enqueue(ScriptedUpstream::Response::json(QJsonObject{
            {"id", "chatcmpl-2"},
            {"object", "chat.completion"},
            {"model", "gpt-4o-mini-2024-07-18"},
            {"choices", QJsonArray{QJsonObject{
                            {"index", 0},
                            {"message", QJsonObject{{"role", "assistant"}, {"content", "Hi"}}},
                            {"finish_reason", "stop"}}}},
            {"usage",
             QJsonObject{{"prompt_tokens", 1000},
                         {"completion_tokens", 100},
                         {"total_tokens", 1100},
                         {"prompt_tokens_details", QJsonObject{{"cached_tokens", 400}}}}}}));
        const auto r = roundTrip(
            "POST", "/v1/chat/completions",
            R"({"model":"gpt-4o-mini-2024-07-18","messages":[{"role":"user","content":"hi"}]})");
        QCOMPARE(r.status, 200);
        const QJsonObject flow = flowOf(0);
        // 600 uncached at $0.15/M, 400 cached at $0.075/M, 100 out at $0.60/M.
        QVERIFY2(qAbs(flow.value("cost_usd").toDouble() - 0.00018) < 1e-12,
                 qPrintable(QString::number(flow.value("cost_usd").toDouble(), 'g', 12)));
    }

    void everyPathAndRejectionIsAFlow_data() {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("upstreamStatus"); // 0 = no upstream call expected
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("api");
        QTest::addColumn<QString>("state");
        QTest::addColumn<QStringList>("hops");
        const QStringList local{"client_request", "client_response"};
        const QStringList relayed{"client_request", "upstream_request", "upstream_response",
                                  "client_response"};
        QTest::newRow("models") << QByteArray("GET") << QByteArray("/v1/models") << QByteArray()
                                << 0 << 200 << "models"
                                << "completed" << local;
        QTest::newRow("embeddings")
            << QByteArray("POST") << QByteArray("/v1/embeddings")
            << QByteArray(R"({"model":"text-embedding-3-small","input":"x"})") << 200 << 200
            << "other"
            << "completed" << relayed;
        QTest::newRow("unknown path") << QByteArray("GET") << QByteArray("/v1/whatever?x=1")
                                      << QByteArray() << 404 << 404 << "other"
                                      << "failed" << relayed;
        QTest::newRow("malformed json") << QByteArray("POST") << QByteArray("/v1/responses")
                                        << QByteArray("{nope") << 0 << 400 << "responses"
                                        << "failed" << local;
        QTest::newRow("missing model") << QByteArray("POST") << QByteArray("/v1/chat/completions")
                                       << QByteArray("{}") << 0 << 400 << "chat_completions"
                                       << "failed" << local;
        QTest::newRow("upstream 500")
            << QByteArray("POST") << QByteArray("/v1/responses")
            << QByteArray(R"({"model":"gpt-priced","input":"x"})") << 500 << 500 << "responses"
            << "failed" << relayed;
    }
    void everyPathAndRejectionIsAFlow() {
        QFETCH(QByteArray, method);
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, body);
        QFETCH(int, upstreamStatus);
        QFETCH(int, status);
        QFETCH(QString, api);
        QFETCH(QString, state);
        QFETCH(QStringList, hops);
        ProxyConfig c = config();
        c.modelRoutes.clear(); // /v1/models passes through only with no model list
        if (target == "/v1/models")
            c.defaultRoute = ProxyConfig::demoRoute();
        start(c);
        if (upstreamStatus)
            m_upstream->enqueue(ScriptedUpstream::Response::json(
                upstreamStatus, upstreamStatus == 200
                                    ? QByteArray(R"({"data":[]})")
                                    : QByteArray(R"({"error":{"message":"no"}})")));
        const auto r = roundTrip(method, target, body);
        QCOMPARE(r.status, status);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(kinds(flow), hops);
        QCOMPARE(flow.value("status").toInt(), status);
        QCOMPARE(flow.value("api").toString(), api);
        QCOMPARE(flow.value("state").toString(), state);
        QCOMPARE(hop(flow, "client_response").value("status").toInt(), status);
        if (upstreamStatus)
            QCOMPARE(hop(flow, "upstream_response").value("status").toInt(), upstreamStatus);
    }

    void unauthorizedIsAFlow() {
        ProxyConfig c = config();
        c.masterKey = QStringLiteral("sk-master-key-1234-5678");
        start(c);
        const auto r = roundTrip("POST", "/v1/responses", R"({"model":"gpt-priced"})");
        QCOMPARE(r.status, 401);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(flow.value("status").toInt(), 401);
        QCOMPARE(kinds(flow), (QStringList{"client_request", "client_response"}));
    }

    void earlyRejectionsAreFlows_data() {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<int>("status");
        QTest::newRow("413 declared length")
            << QByteArray("POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                          "999999\r\n\r\n")
            << 413;
        QTest::newRow("403 foreign host")
            << QByteArray("GET /v1/models HTTP/1.1\r\nHost: evil.example\r\n\r\n") << 403;
        QTest::newRow("400 dot segments above /v1")
            << QByteArray("POST /v1/../../admin/keys HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Content-Length: 0\r\n\r\n")
            << 400;
        QTest::newRow("400 bare LF")
            << QByteArray("GET /v1/models HTTP/1.1\nHost: 127.0.0.1\n\n") << 400;
        QTest::newRow("400 HTTP/1.1 without Host")
            << QByteArray("GET /v1/models HTTP/1.1\r\n\r\n") << 400;
    }
    void earlyRejectionsAreFlows() {
        QFETCH(QByteArray, raw);
        QFETCH(int, status);
        ProxyConfig c = config();
        c.maxBodyBytes = 1000;
        start(c);
        RawHttpClient client(m_proxy->port());
        client.send(raw);
        QTRY_VERIFY_WITH_TIMEOUT(client.hasCompleteResponse(), 20000);
        QCOMPARE(client.current().status, status);
        QJsonObject flow;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_store->flush();
                const QJsonArray data = m_store->query()->list({}).value("data").toArray();
                if (data.isEmpty())
                    return false;
                flow = m_store->query()
                           ->flow(data.first().toObject().value("id").toString())
                           .value_or(QJsonObject());
                return flow.value("state").toString() == QLatin1String("failed");
            }(),
            20000);
        QCOMPARE(flow.value("status").toInt(), status);
        QCOMPARE(kinds(flow), (QStringList{"client_request", "client_response"}));
    }

    void unreachableUpstreamIs502() {
        ProxyConfig c = config();
        c.defaultRoute =
            ProxyConfig::routeForUpstream(QStringLiteral("http://127.0.0.1:9/v1"), nullptr);
        start(c);
        const auto r = roundTrip("POST", "/v1/responses", R"({"model":"x","input":"y"})");
        QCOMPARE(r.status, 502);
        const QJsonObject flow = flowOf(0);
        QCOMPARE(flow.value("state").toString(), QStringLiteral("failed"));
        QCOMPARE(hop(flow, "upstream_response").value("status").toInt(), 0);
        QVERIFY(!hop(flow, "upstream_response").value("error").toString().isEmpty());
        QCOMPARE(hop(flow, "client_response").value("status").toInt(), 502);
    }

    // The counters a benchmark uses to prove no event was lost: every published event is
    // received, a stray one (no such flow) is counted as unmatched, every flow is written.
    void countersAccountForEveryEvent() {
        start(config());
        std::atomic<quint64> published{0};
        connect(
            m_bus.get(), &EventBus::eventPublished, this, [&published] { ++published; },
            Qt::DirectConnection);
        m_upstream->enqueue(ScriptedUpstream::Response::json(
            responseObject(QStringLiteral("resp_c"), QJsonArray(), 1, 1)));
        QCOMPARE(roundTrip("POST", "/v1/responses", R"({"model":"x","input":"y"})").status, 200);
        QCOMPARE(roundTrip("POST", "/v1/responses", "{").status, 400);
        QVERIFY(!flowOf(1).isEmpty());
        m_bus->publish(InspectorEvent::Kind::UpstreamCall, QStringLiteral("req_nobody"), 0);
        m_store->flush();
        const FlowStoreCounters c = m_store->counters();
        QCOMPARE(c.eventsReceived, published.load());
        QCOMPARE(c.eventsUnmatched, quint64(1));
        QCOMPARE(c.flowsWritten, quint64(2));
        QCOMPARE(c.flowsFailed, quint64(0));
    }

    void clientHangUpMidStream() {
        start(config());
        auto held = ScriptedUpstream::Response::events(
            {sse("response.created", {{"type", "response.created"}})});
        held.hold = true;
        m_upstream->enqueue(held);
        {
            RawHttpClient client(m_proxy->port());
            client.request("POST", "/v1/responses",
                           R"({"model":"gpt-priced","input":"x","stream":true})");
            QTRY_VERIFY_WITH_TIMEOUT(client.current().body.contains("response.created"), 20000);
            client.close();
        }
        const QJsonObject flow = flowOf(0);
        QCOMPARE(flow.value("status").toInt(), 499);
        QCOMPARE(flow.value("state").toString(), QStringLiteral("failed"));
        QCOMPARE(flow.value("incomplete_reason").toString(), QStringLiteral("client_closed"));
        QCOMPARE(hop(flow, "client_response").value("events").toArray().size(), 1);
        m_upstream->releaseHeld();
    }

    void runningFlowIsVisibleBeforeItEnds() {
        start(config());
        auto held = ScriptedUpstream::Response::events(
            {sse("response.created", {{"type", "response.created"}})});
        held.hold = true;
        m_upstream->enqueue(held);
        RawHttpClient client(m_proxy->port());
        client.request("POST", "/v1/responses", R"({"model":"gpt-priced","stream":true})");
        QTRY_VERIFY_WITH_TIMEOUT(client.current().body.contains("response.created"), 20000);
        QJsonArray data;
        QTRY_VERIFY_WITH_TIMEOUT(
            (data = m_store->query()->list({}).value("data").toArray()).size() == 1 &&
                hop(*m_store->query()->flow(data.first().toObject().value("id").toString()),
                    "client_response")
                        .value("events")
                        .toArray()
                        .size() == 1,
            20000);
        QCOMPARE(data.first().toObject().value("state").toString(), QStringLiteral("running"));
        m_upstream->releaseHeld();
        const QJsonObject flow = flowOf(0);
        QCOMPARE(flow.value("state").toString(), QStringLiteral("completed"));
    }

    // Runs: previous_response_id chains, sessions, Chat prefix continuity, client-side tools.
    void responsesChainAndFunctionCallsFormOneRun() {
        start(config());
        const QJsonObject call{{"type", "function_call"},
                               {"call_id", "call_weather_1"},
                               {"name", "get_weather"},
                               {"arguments", "{\"city\":\"Oslo\"}"}};
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(responseObject("resp_1", {call}, 10, 5)));
        m_upstream->enqueue(ScriptedUpstream::Response::json(responseObject(
            "resp_2", {QJsonObject{{"type", "message"}, {"content", "sunny"}}}, 20, 6)));
        m_upstream->enqueue(ScriptedUpstream::Response::json(responseObject("resp_3", {}, 30, 7)));
        m_upstream->enqueue(ScriptedUpstream::Response::json(responseObject("resp_4", {}, 1, 1)));
        roundTrip("POST", "/v1/responses",
                  json({{"model", "gpt-priced"}, {"input", "weather in Oslo?"}}));
        // Stateless client (store=false, as the Agents SDK can be): full input plus the answer.
        roundTrip("POST", "/v1/responses",
                  json({{"model", "gpt-priced"},
                        {"input", QJsonArray{message("user", "weather in Oslo?"), call,
                                             QJsonObject{{"type", "function_call_output"},
                                                         {"call_id", "call_weather_1"},
                                                         {"output", "sunny"}}}}}));
        roundTrip("POST", "/v1/responses",
                  json({{"model", "gpt-priced"},
                        {"previous_response_id", "resp_2"},
                        {"input", "thanks"}}));
        roundTrip("POST", "/v1/responses", json({{"model", "gpt-priced"}, {"input", "unrelated"}}));
        const QString run = flowOf(0).value("run_id").toString();
        QCOMPARE(flowOf(1).value("run_id").toString(), run);
        QCOMPARE(flowOf(2).value("run_id").toString(), run);
        QVERIFY(flowOf(3).value("run_id").toString() != run);
        QCOMPARE(flowOf(0).value("tool_calls").toInt(), 1);
        const QJsonArray runs = m_store->query()->runs(10);
        QJsonObject r;
        for (const QJsonValue &v : runs)
            if (v.toObject().value("id").toString() == run)
                r = v.toObject();
        QCOMPARE(r.value("flows").toArray().size(), 3);
        QCOMPARE(r.value("flows").toArray().first().toString(), m_log.at(0).requestId);
        QCOMPARE(r.value("usage").toObject(), usage(60, 18));
        QCOMPARE(r.value("tool_calls").toInt(), 1);
        QVERIFY(r.value("cost_usd").isDouble());
        QCOMPARE(runs.size(), 2);
        // run= filters flows.
        FlowFilter filter;
        filter.runId = run;
        QCOMPARE(m_store->query()->list(filter).value("data").toArray().size(), 3);
    }

    void sessionsAndChatContinuityFormRuns() {
        start(config());
        const QJsonObject reply{
            {"role", "assistant"},
            {"content", QJsonValue::Null},
            {"tool_calls",
             QJsonArray{
                 QJsonObject{{"id", "call_c1"},
                             {"type", "function"},
                             {"function", QJsonObject{{"name", "lookup"}, {"arguments", "{}"}}}}}}};
        const auto chat = [](const QJsonObject &m) {
            return ScriptedUpstream::Response::json(QJsonObject{
                {"id", "chatcmpl"},
                {"choices", QJsonArray{QJsonObject{{"index", 0}, {"message", m}}}},
                {"usage", QJsonObject{{"prompt_tokens", 5}, {"completion_tokens", 1}}}});
        };
        m_upstream->enqueue(chat(reply));
        m_upstream->enqueue(chat(message("assistant", "It is 42.")));
        m_upstream->enqueue(chat(message("assistant", "You're welcome.")));
        m_upstream->enqueue(chat(message("assistant", "x")));
        m_upstream->enqueue(chat(message("assistant", "y")));
        const QJsonArray first{message("system", "be brief"), message("user", "answer?")};
        roundTrip("POST", "/v1/chat/completions",
                  json({{"model", "gpt-priced"}, {"messages", first}}));
        QJsonArray second = first;
        // The client echoes the assistant turn with cosmetic differences (refusal: null).
        QJsonObject echoed = reply;
        echoed.insert("refusal", QJsonValue::Null);
        second.append(echoed);
        second.append(
            QJsonObject{{"role", "tool"}, {"tool_call_id", "call_c1"}, {"content", "42"}});
        roundTrip("POST", "/v1/chat/completions",
                  json({{"model", "gpt-priced"}, {"messages", second}}));
        QJsonArray third = second;
        third.append(message("assistant", "It is 42."));
        third.append(message("user", "thanks"));
        roundTrip("POST", "/v1/chat/completions",
                  json({{"model", "gpt-priced"}, {"messages", third}}));
        // Two unrelated requests sharing a session id.
        const QJsonObject meta{{"session_id", "sess-77"}};
        roundTrip("POST", "/v1/chat/completions",
                  json({{"model", "gpt-priced"},
                        {"metadata", meta},
                        {"messages", QJsonArray{message("user", "a")}}}));
        roundTrip("POST", "/v1/chat/completions",
                  json({{"model", "gpt-priced"},
                        {"metadata", meta},
                        {"messages", QJsonArray{message("user", "b")}}}));
        const QString chatRun = flowOf(0).value("run_id").toString();
        QCOMPARE(flowOf(1).value("run_id").toString(), chatRun);
        QCOMPARE(flowOf(2).value("run_id").toString(), chatRun);
        const QString sessionRun = flowOf(3).value("run_id").toString();
        QVERIFY(sessionRun != chatRun);
        QCOMPARE(flowOf(4).value("run_id").toString(), sessionRun);
        QCOMPARE(flowOf(4).value("session_id").toString(), QStringLiteral("sess-77"));
        QCOMPARE(m_store->query()->run(chatRun)->value("tool_calls").toInt(), 1);
        QCOMPARE(m_store->query()->run(chatRun)->value("flows").toArray().size(), 3);
    }

    // Claude Code's traffic, pass-through on /v1/messages: api "messages", usage from the stream
    // (message_start's input and cache counts, message_delta's cumulative output), the tool_use
    // counted, the price applied, the session from x-claude-code-session-id, the next turn's
    // tool_result joining the run, the x-api-key masked wherever the flow shows it.
    void messagesFlowsReadLikeOpenAiOnes() {
        const QByteArray yaml = "  - model_name: claude-sonnet-4-5\n"
                                "    litellm_params:\n"
                                "      model: anthropic/claude-sonnet-4-5-20250929\n"
                                "      api_base: " +
                                m_upstream->baseUrl().chopped(3).toUtf8() +
                                "\n"
                                "    model_info:\n"
                                "      input_cost_per_token: 0.000003\n"
                                "      output_cost_per_token: 0.000015\n";
        start(config(yaml));
        const QJsonObject startMessage{{"id", "msg_1"},
                                       {"type", "message"},
                                       {"role", "assistant"},
                                       {"model", "claude-sonnet-4-5-20250929"},
                                       {"content", QJsonArray()},
                                       {"stop_reason", QJsonValue::Null},
                                       {"usage", QJsonObject{{"input_tokens", 120},
                                                             {"cache_read_input_tokens", 9000},
                                                             {"cache_creation_input_tokens", 300},
                                                             {"output_tokens", 1}}}};
        m_upstream->enqueue(ScriptedUpstream::Response::events(
            {sse("message_start", {{"type", "message_start"}, {"message", startMessage}}),
             sse("content_block_start",
                 {{"type", "content_block_start"},
                  {"index", 0},
                  {"content_block", QJsonObject{{"type", "text"}, {"text", ""}}}}),
             sse("content_block_delta",
                 {{"type", "content_block_delta"},
                  {"index", 0},
                  {"delta", QJsonObject{{"type", "text_delta"}, {"text", "Let me look."}}}}),
             sse("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}),
             sse("content_block_start", {{"type", "content_block_start"},
                                         {"index", 1},
                                         {"content_block", QJsonObject{{"type", "tool_use"},
                                                                       {"id", "toolu_1"},
                                                                       {"name", "Bash"},
                                                                       {"input", QJsonObject()}}}}),
             sse("content_block_delta",
                 {{"type", "content_block_delta"},
                  {"index", 1},
                  {"delta",
                   QJsonObject{{"type", "input_json_delta"}, {"partial_json", "{\"command\":"}}}}),
             sse("content_block_delta", {{"type", "content_block_delta"},
                                         {"index", 1},
                                         {"delta", QJsonObject{{"type", "input_json_delta"},
                                                               {"partial_json", "\"ls\"}"}}}}),
             sse("content_block_stop", {{"type", "content_block_stop"}, {"index", 1}}),
             sse("message_delta", {{"type", "message_delta"},
                                   {"delta", QJsonObject{{"stop_reason", "tool_use"}}},
                                   {"usage", QJsonObject{{"output_tokens", 40}}}}),
             sse("message_stop", {{"type", "message_stop"}})}));
        m_upstream->enqueue(ScriptedUpstream::Response::json(QJsonObject{
            {"id", "msg_2"},
            {"type", "message"},
            {"role", "assistant"},
            {"content", QJsonArray{QJsonObject{{"type", "text"}, {"text", "Two files."}}}},
            {"stop_reason", "end_turn"},
            {"usage", QJsonObject{{"input_tokens", 10}, {"output_tokens", 5}}}}));
        const QList<QPair<QByteArray, QByteArray>> claudeCode{
            {"x-api-key", "sk-ant-api03-client-secret-9876"},
            {"anthropic-version", "2023-06-01"},
            {"x-claude-code-session-id", "5f1c-session"}};
        const QJsonObject user{{"role", "user"}, {"content", "list files"}};
        QCOMPARE(roundTrip("POST", "/v1/messages",
                           json({{"model", "claude-sonnet-4-5"},
                                 {"max_tokens", 1024},
                                 {"stream", true},
                                 {"messages", QJsonArray{user}}}),
                           claudeCode)
                     .status,
                 200);
        const QJsonArray assistant{QJsonObject{{"type", "text"}, {"text", "Let me look."}},
                                   QJsonObject{{"type", "tool_use"},
                                               {"id", "toolu_1"},
                                               {"name", "Bash"},
                                               {"input", QJsonObject{{"command", "ls"}}}}};
        const QJsonObject result{{"role", "user"},
                                 {"content", QJsonArray{QJsonObject{{"type", "tool_result"},
                                                                    {"tool_use_id", "toolu_1"},
                                                                    {"content", "a\nb"}}}}};
        QCOMPARE(
            roundTrip(
                "POST", "/v1/messages",
                json({{"model", "claude-sonnet-4-5"},
                      {"max_tokens", 1024},
                      {"messages",
                       QJsonArray{user, QJsonObject{{"role", "assistant"}, {"content", assistant}},
                                  result}}}),
                {{"x-api-key", "sk-ant-api03-client-secret-9876"}})
                .status,
            200);
        const QJsonObject first = flowOf(0);
        QCOMPARE(first.value("api").toString(), QStringLiteral("messages"));
        QCOMPARE(first.value("stream").toBool(), true);
        QCOMPARE(first.value("tool_calls").toInt(), 1);
        QCOMPARE(first.value("session_id").toString(), QStringLiteral("5f1c-session"));
        const QJsonObject expected{{"input_tokens", 120},
                                   {"output_tokens", 40},
                                   {"total_tokens", 160},
                                   {"cache_read_tokens", 9000},
                                   {"cache_write_tokens", 300}};
        QCOMPARE(first.value("usage").toObject(), expected);
        // 120 * 3e-6 + 40 * 15e-6, and the cache tokens Anthropic counts beside input_tokens at
        // its multipliers of the configured input price (model_info gives none of its own):
        // reads 9000 * 0.3e-6, writes 300 * 3.75e-6.
        QVERIFY(qAbs(first.value("cost_usd").toDouble() - (0.00096 + 0.0027 + 0.001125)) < 1e-12);
        const QJsonObject second = flowOf(1);
        QCOMPARE(second.value("usage").toObject(), usage(10, 5));
        QCOMPARE(second.value("run_id").toString(), first.value("run_id").toString());
        QCOMPARE(
            m_store->query()->run(first.value("run_id").toString())->value("tool_calls").toInt(),
            1);
        for (const QJsonObject &flow : {first, second}) {
            const QString everything = QString::fromUtf8(QJsonDocument(flow).toJson());
            QVERIFY(!everything.contains(QStringLiteral("client-secret-9876")));
            QCOMPARE(hop(flow, "client_request").value("headers").toObject().value("x-api-key"),
                     QJsonValue(QStringLiteral("…9876")));
            QCOMPARE(hop(flow, "upstream_request").value("headers").toObject().value("x-api-key"),
                     QJsonValue(QStringLiteral("…9876")));
        }
        QVERIFY(m_upstream->requests().first().header("x-api-key").endsWith("9876"));
    }

    void searchFindsBodiesAndPagingWorks() {
        start(config());
        for (int i = 0; i < 5; ++i) {
            m_upstream->enqueue(ScriptedUpstream::Response::json(
                QJsonObject{{"id", QStringLiteral("resp_%1").arg(i)},
                            {"output_text", i == 3 ? QStringLiteral("the zanzibar_marker word")
                                                   : QStringLiteral("plain")}}));
            roundTrip("POST", "/v1/responses", json({{"model", "gpt-priced"}, {"input", "q"}}));
            flowOf(i);
        }
        FlowFilter q;
        q.q = QStringLiteral("zanzibar_marker");
        const QJsonArray hits = m_store->query()->list(q).value("data").toArray();
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits.first().toObject().value("id").toString(), m_log.at(3).requestId);
        FlowFilter page;
        page.limit = 2;
        const QJsonObject first = m_store->query()->list(page);
        QCOMPARE(first.value("has_more").toBool(), true);
        QCOMPARE(first.value("data").toArray().first().toObject().value("id").toString(),
                 m_log.at(4).requestId);
        page.before = first.value("data").toArray().last().toObject().value("id").toString();
        page.limit = 10;
        const QJsonObject rest = m_store->query()->list(page);
        QCOMPARE(rest.value("has_more").toBool(), false);
        QCOMPARE(rest.value("data").toArray().size(), 3);
        QCOMPARE(rest.value("data").toArray().last().toObject().value("id").toString(),
                 m_log.at(0).requestId);
        FlowFilter failed;
        failed.state = QStringLiteral("failed");
        QCOMPARE(m_store->query()->list(failed).value("data").toArray().size(), 0);
        QCOMPARE(m_store->clear(), 5);
        QCOMPARE(m_store->query()->list({}).value("data").toArray().size(), 0);
    }
};

QTEST_GUILESS_MAIN(TstFlowRecording)
#include "tst_flowrecording.moc"
