// ProxyServer end to end over real loopback sockets against a scripted upstream that speaks the
// OpenAI wire protocol: byte-exact JSON, live SSE, aborts, errors, auth, routing, hygiene, and
// the interceptor seam.
#include "common/futurechain.h"
#include "http/responsesink.h"
#include "inspect/eventbus.h"
#include "loop/requestinterceptor.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "upstream/upstreamclient.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTcpServer>
#include <QThread>
#include <QtTest>

#include <algorithm>
#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

// Accepts requests declaring the code_interpreter tool, records what it got, and answers either
// directly or by relaying one upstream call made through UpstreamClient::postJson.
class RecordingInterceptor : public RequestInterceptor {
public:
    UpstreamClient *upstream = nullptr;
    bool callUpstream = false;
    QList<ProxyRequest> handled;

    bool accepts(const ProxyRequest &request) const override {
        return request.declaresToolType(QStringLiteral("code_interpreter"));
    }
    void handle(ProxyRequest request, ResponseSink *sink) override {
        handled.append(request);
        if (!callUpstream) {
            sink->setIterations(2);
            sink->sendJson(200, {{QStringLiteral("intercepted"), true}});
            return;
        }
        QJsonObject body = request.body;
        body.insert(QStringLiteral("model"), request.route.upstreamModel);
        body.remove(QStringLiteral("tools"));
        QPointer<ResponseSink> guard(sink);
        whenFinished(upstream->postJson(request.route, QStringLiteral("/responses"), body), sink,
                     [guard](const QFuture<UpstreamReply> &future) {
                         if (!guard || future.resultCount() == 0)
                             return;
                         const UpstreamReply reply = future.result();
                         guard->addExternalTime(qint64(reply.latencyMs * 1e6));
                         guard->sendJson(reply.clientStatus(),
                                         {{QStringLiteral("status"), reply.status},
                                          {QStringLiteral("upstream"), reply.json}});
                     });
    }
};

QByteArray sseFrame(const QByteArray &type, const QByteArray &json) {
    return "event: " + type + "\ndata: " + json + "\n\n";
}

// The two answers a pass-through relays differently: a whole JSON body, and an SSE stream.
void addJsonAndStreamRows() {
    QTest::addColumn<bool>("stream");
    QTest::newRow("json") << false;
    QTest::newRow("sse") << true;
}

} // namespace

class TstProxyPassThrough : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<ProxyServer> m_proxy;
    QList<RequestLogEntry> m_log;

    void startProxy(ProxyConfig config) {
        config.host = QStringLiteral("127.0.0.1");
        config.port = 0;
        m_proxy = std::make_unique<ProxyServer>(std::move(config));
        connect(m_proxy.get(), &ProxyServer::requestLogged, this,
                [this](const RequestLogEntry &e) { m_log.append(e); });
        QVERIFY(m_proxy->listen());
    }
    ProxyConfig upstreamConfig(int timeoutMs = 600000) const {
        ProxyConfig config;
        config.requestTimeoutMs = timeoutMs;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        config.defaultRoute->timeoutMs = timeoutMs;
        return config;
    }
    RawHttpClient::Response roundTrip(const QByteArray &method, const QByteArray &target,
                                      const QByteArray &body = {},
                                      const QList<QPair<QByteArray, QByteArray>> &headers = {}) {
        RawHttpClient client(m_proxy->port());
        client.request(method, target, body, headers);
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 20000))
            return {};
        return client.take();
    }
    static QString errorCode(const RawHttpClient::Response &r) {
        return r.json()
            .value(QStringLiteral("error"))
            .toObject()
            .value(QStringLiteral("code"))
            .toString();
    }
    static bool hasOpenAiErrorShape(const RawHttpClient::Response &r) {
        const QJsonObject e = r.json().value(QStringLiteral("error")).toObject();
        return e.value(QStringLiteral("message")).isString() &&
               e.value(QStringLiteral("type")).isString() && e.contains(QStringLiteral("param")) &&
               e.contains(QStringLiteral("code"));
    }

private slots:
    void init() {
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
        m_log.clear();
    }
    void cleanup() {
        m_proxy.reset();
        m_upstream.reset();
    }

    void jsonPassThroughIsByteExact_data() {
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("upstreamTarget");
        QTest::newRow("responses") << QByteArray("/v1/responses") << QByteArray("/v1/responses");
        QTest::newRow("responses without /v1")
            << QByteArray("/responses") << QByteArray("/v1/responses");
        QTest::newRow("chat") << QByteArray("/v1/chat/completions")
                              << QByteArray("/v1/chat/completions");
        QTest::newRow("chat without /v1")
            << QByteArray("/chat/completions") << QByteArray("/v1/chat/completions");
    }
    void jsonPassThroughIsByteExact() {
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, upstreamTarget);
        startProxy(upstreamConfig());
        // Odd spacing and key order must survive: nothing is re-serialised on the way.
        const QByteArray answer = "{ \"id\" :\"resp_1\",  \"output\":[ ],\"z\":1 ,\"a\":2}";
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, answer));
        const QByteArray body = "{\"model\": \"gpt-4o\",  \"input\":\"hi\"}";
        const auto r = roundTrip("POST", target, body,
                                 {{"Authorization", "Bearer sk-client-key-9876"},
                                  {"OpenAI-Beta", "assistants=v2"},
                                  {"Accept-Encoding", "br"}});
        QCOMPARE(r.status, 200);
        QCOMPARE(r.body, answer);
        bool ok = false;
        QVERIFY(r.header("x-loopscope-overhead-ms").toDouble(&ok) >= 0 && ok);
        QCOMPARE(m_upstream->requestCount(), 1);
        const auto sent = m_upstream->requests().first();
        QCOMPARE(sent.target, upstreamTarget);
        QCOMPARE(sent.body, body);
        QCOMPARE(sent.header("authorization"), QByteArray("Bearer sk-client-key-9876"));
        QCOMPARE(sent.header("openai-beta"), QByteArray("assistants=v2"));
        QCOMPARE(sent.header("host"), "127.0.0.1:" + QByteArray::number(m_upstream->port()));
        QVERIFY(sent.header("accept-encoding") != "br");
        QTRY_COMPARE(m_log.size(), 1);
        QCOMPARE(m_log.first().status, 200);
        QCOMPARE(m_log.first().model, QStringLiteral("gpt-4o"));
        QCOMPARE(m_log.first().keyHint, QStringLiteral("…9876"));
    }

    void overheadHeaderExcludesUpstreamTime() {
        startProxy(upstreamConfig());
        auto slow = ScriptedUpstream::Response::json(200, "{}");
        slow.headerDelayMs = 600;
        m_upstream->enqueue(slow);
        QElapsedTimer clock;
        clock.start();
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}");
        QVERIFY(clock.elapsed() >= 600);
        bool ok = false;
        const double overhead = r.header("x-loopscope-overhead-ms").toDouble(&ok);
        QVERIFY(ok);
        QVERIFY2(overhead < 300, r.header("x-loopscope-overhead-ms").constData()); // not the 600 ms
        QTRY_COMPARE(m_log.size(), 1);
        QVERIFY(m_log.first().durationMs >= 600);
    }

    void sseChunkReachesClientBeforeUpstreamFinishes() {
        startProxy(upstreamConfig());
        auto response = ScriptedUpstream::Response::events(
            {sseFrame("response.created", "{\"type\":\"response.created\"}")});
        response.hold = true;
        m_upstream->enqueue(response);
        RawHttpClient client(m_proxy->port());
        client.request("POST", "/v1/responses", "{\"model\":\"m\",\"stream\":true}");
        QTRY_VERIFY_WITH_TIMEOUT(client.current().body.contains("response.created"), 20000);
        // The upstream has not finished: the first event was relayed while it still streams.
        QCOMPARE(m_upstream->heldStreams(), 1);
        QVERIFY(!client.hasCompleteResponse());
        QCOMPARE(client.current().header("content-type"), QByteArray("text/event-stream"));
        QVERIFY(!client.current().header("x-loopscope-overhead-ms").isEmpty());
        m_upstream->writeToHeld(
            sseFrame("response.completed", "{\"type\":\"response.completed\"}"));
        QTRY_VERIFY_WITH_TIMEOUT(client.current().body.contains("response.completed"), 20000);
        QVERIFY(!client.hasCompleteResponse());
        m_upstream->releaseHeld();
        QTRY_VERIFY_WITH_TIMEOUT(client.hasCompleteResponse(), 20000);
        QCOMPARE(client.current().body,
                 sseFrame("response.created", "{\"type\":\"response.created\"}") +
                     sseFrame("response.completed", "{\"type\":\"response.completed\"}"));
    }

    void clientAbortMidStreamAbortsUpstream() {
        startProxy(upstreamConfig());
        auto response = ScriptedUpstream::Response::events({"data: {\"n\":1}\n\n"});
        response.hold = true;
        m_upstream->enqueue(response);
        auto client = std::make_unique<RawHttpClient>(m_proxy->port());
        client->request("POST", "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}");
        QTRY_VERIFY_WITH_TIMEOUT(client->current().body.contains("\"n\":1"), 20000);
        QCOMPARE(m_upstream->abortedStreams(), 0);
        client->close();
        QTRY_COMPARE_WITH_TIMEOUT(m_upstream->abortedStreams(), 1, 20000);
        QTRY_COMPARE(m_log.size(), 1);
        QCOMPARE(m_log.first().status, 499);
    }

    // Twenty 100 KB bodies through the real server and upstream client, against the same
    // exchanges sent to the upstream directly, each on one keep-alive connection. A body sent
    // as a small head segment plus the rest with Nagle's algorithm on waits for the upstream's
    // delayed ACK, a fixed ~40 ms timer per request; the 30 ms bound on the difference of the
    // medians sits below it, far above anything a loaded machine adds to a loopback hop.
    void largeBodiesPassWithoutAStall() {
        startProxy(upstreamConfig());
        m_upstream->setRecordRequests(false);
        m_upstream->setResponder([](const ScriptedUpstream::Request &) {
            return ScriptedUpstream::Response::json(200, "{\"object\":\"response\"}");
        });
        const QByteArray body =
            "{\"model\":\"m\",\"input\":\"" + QByteArray(100 * 1024, 'x') + "\"}";
        auto medianMs = [&](quint16 port) {
            RawHttpClient client(port);
            QList<double> times;
            for (int i = 0; i < 21; ++i) { // the first opens the connections: not counted
                QElapsedTimer clock;
                clock.start();
                client.request("POST", "/v1/responses", body);
                // An event loop woken by the bytes: qWaitFor sleeps 10 ms between polls, and
                // with client, proxy and upstream on this thread that is 10 ms per hop.
                QEventLoop loop;
                connect(&client, &RawHttpClient::bytesArrived, &loop, [&] {
                    if (client.hasCompleteResponse())
                        loop.quit();
                });
                QTimer::singleShot(20000, &loop, &QEventLoop::quit);
                if (!client.hasCompleteResponse())
                    loop.exec();
                if (!client.hasCompleteResponse())
                    return -1.0;
                const double ms = double(clock.nsecsElapsed()) / 1e6;
                if (client.take().status != 200)
                    return -1.0;
                if (i > 0)
                    times << ms;
            }
            std::sort(times.begin(), times.end());
            return (times.at(9) + times.at(10)) / 2;
        };
        const double direct = medianMs(m_upstream->port());
        const double proxied = medianMs(m_proxy->port());
        QVERIFY2(direct >= 0 && proxied >= 0, "an exchange failed or timed out");
        QVERIFY2(proxied - direct < 30.0,
                 qPrintable(QStringLiteral("median %1 ms through Loopscope, %2 ms direct")
                                .arg(proxied)
                                .arg(direct)));
    }

    void manyConcurrentStreamsReachUpstreamTogether() {
        // Qt 6.4's QNAM alone would hold the 7th concurrent call to one http host back until
        // one of the first six finished; long model calls must not queue like that.
        startProxy(upstreamConfig());
        auto response = ScriptedUpstream::Response::events({"data: {\"n\":1}\n\n"});
        response.hold = true;
        m_upstream->setResponder(
            [response](const ScriptedUpstream::Request &) { return response; });
        std::vector<std::unique_ptr<RawHttpClient>> clients;
        for (int i = 0; i < 20; ++i) {
            clients.push_back(std::make_unique<RawHttpClient>(m_proxy->port()));
            clients.back()->request("POST", "/v1/chat/completions",
                                    "{\"model\":\"m\",\"stream\":true}");
        }
        QTRY_COMPARE_WITH_TIMEOUT(m_upstream->heldStreams(), 20, 30000);
        for (const auto &client : clients)
            QTRY_VERIFY_WITH_TIMEOUT(client->current().body.contains("\"n\":1"), 20000);
        m_upstream->releaseHeld();
        for (const auto &client : clients)
            QTRY_VERIFY_WITH_TIMEOUT(client->hasCompleteResponse(), 20000);
    }

    void callTakesAFreeLaneNotOneFullOfHeldStreams() {
        // Six slow answers fill lane 0, six held streams then fill lane 1; once the slow ones
        // are done, a new call must go out on lane 0's free connections, not queue on lane 1
        // behind streams that may stay open for minutes.
        startProxy(upstreamConfig());
        m_upstream->setResponder([](const ScriptedUpstream::Request &r) {
            if (r.body.contains("\"slow\"")) {
                auto slow = ScriptedUpstream::Response::json({{QStringLiteral("slow"), true}});
                slow.headerDelayMs = 4000;
                return slow;
            }
            if (r.body.contains("\"held\"")) {
                auto held = ScriptedUpstream::Response::events({"data: {\"n\":1}\n\n"});
                held.hold = true;
                return held;
            }
            return ScriptedUpstream::Response::json({{QStringLiteral("quick"), true}});
        });
        const auto send = [this](const QByteArray &body) {
            auto client = std::make_unique<RawHttpClient>(m_proxy->port());
            client->request("POST", "/v1/chat/completions", body);
            return client;
        };
        std::vector<std::unique_ptr<RawHttpClient>> slow, held;
        for (int i = 0; i < 6; ++i)
            slow.push_back(send(R"({"model":"m","tag":"slow"})"));
        QTRY_COMPARE_WITH_TIMEOUT(m_upstream->requestCount(), 6, 20000);
        for (int i = 0; i < 6; ++i)
            held.push_back(send(R"({"model":"m","stream":true,"tag":"held"})"));
        QTRY_COMPARE_WITH_TIMEOUT(m_upstream->heldStreams(), 6, 20000);
        // The setup only means something if lane 0 was still busy when lane 1 filled.
        QVERIFY(std::none_of(slow.cbegin(), slow.cend(),
                             [](const auto &c) { return c->hasCompleteResponse(); }));
        for (const auto &c : slow)
            QTRY_VERIFY_WITH_TIMEOUT(c->hasCompleteResponse(), 20000);

        auto quick = send(R"({"model":"m","tag":"quick"})");
        QTRY_VERIFY_WITH_TIMEOUT(quick->hasCompleteResponse(), 10000);
        QVERIFY(quick->take().body.contains("\"quick\""));
        QCOMPARE(m_upstream->heldStreams(), 6); // answered while the streams were still held
        m_upstream->releaseHeld();
        for (const auto &c : held)
            QTRY_VERIFY_WITH_TIMEOUT(c->hasCompleteResponse(), 20000);
    }

    void badBodiesGet400_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("code");
        QTest::newRow("not json") << QByteArray("model=gpt") << QStringLiteral("invalid_json");
        QTest::newRow("truncated json")
            << QByteArray("{\"model\":") << QStringLiteral("invalid_json");
        QTest::newRow("array") << QByteArray("[1,2]") << QStringLiteral("invalid_json");
        QTest::newRow("string") << QByteArray("\"hi\"") << QStringLiteral("invalid_json");
        QTest::newRow("empty") << QByteArray() << QStringLiteral("invalid_json");
        QTest::newRow("no model") << QByteArray("{\"input\":\"hi\"}")
                                  << QStringLiteral("missing_required_parameter");
        QTest::newRow("model not a string")
            << QByteArray("{\"model\":5}") << QStringLiteral("missing_required_parameter");
    }
    void badBodiesGet400() {
        QFETCH(QByteArray, body);
        QFETCH(QString, code);
        startProxy(upstreamConfig());
        for (const QByteArray &target :
             {QByteArray("/v1/responses"), QByteArray("/chat/completions")}) {
            const auto r = roundTrip("POST", target, body);
            QCOMPARE(r.status, 400);
            QVERIFY(hasOpenAiErrorShape(r));
            QCOMPARE(errorCode(r), code);
        }
        QCOMPARE(m_upstream->requestCount(), 0);
    }

    void unknownModelGets404() {
        ProxyConfig config;
        UpstreamRoute route = *ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        route.modelName = QStringLiteral("known");
        route.upstreamModel = QStringLiteral("gpt-4o");
        config.modelRoutes << route;
        startProxy(config);
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"unknown\"}");
        QCOMPARE(r.status, 404);
        QVERIFY(hasOpenAiErrorShape(r));
        QCOMPARE(errorCode(r), QStringLiteral("model_not_found"));
        QCOMPARE(m_upstream->requestCount(), 0);
        // The configured alias routes, with the upstream model name swapped in.
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{}"));
        QCOMPARE(roundTrip("POST", "/v1/responses", "{\"model\":\"known\",\"input\":\"x\"}").status,
                 200);
        QCOMPARE(m_upstream->requests().first().json().value(QStringLiteral("model")).toString(),
                 QStringLiteral("gpt-4o"));
    }

    void upstreamDownGets502() {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const quint16 deadPort = probe.serverPort();
        probe.close(); // nothing listens there now
        ProxyConfig config;
        config.defaultRoute = ProxyConfig::routeForUpstream(
            QStringLiteral("http://127.0.0.1:%1/v1").arg(deadPort), nullptr);
        startProxy(config);
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}");
        QCOMPARE(r.status, 502);
        QVERIFY(hasOpenAiErrorShape(r));
        QCOMPARE(errorCode(r), QStringLiteral("upstream_unreachable"));
    }

    void upstreamDroppingTheConnectionGets502() {
        startProxy(upstreamConfig());
        ScriptedUpstream::Response drop;
        drop.dropConnection = true;
        m_upstream->setResponder([drop](const ScriptedUpstream::Request &) { return drop; });
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}");
        QCOMPARE(r.status, 502);
        QVERIFY(hasOpenAiErrorShape(r));
    }

    void upstreamErrorsAreRelayed_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::newRow("500") << 500
                             << QByteArray("{\"error\":{\"message\":\"boom\",\"type\":\"server_"
                                           "error\",\"param\":null,\"code\":null}}");
        QTest::newRow("503 plain text") << 503 << QByteArray("upstream overloaded");
        QTest::newRow("429") << 429
                             << QByteArray("{\"error\":{\"message\":\"slow "
                                           "down\",\"type\":\"rate_limit\",\"param\":null,\"code\":"
                                           "\"rate_limit_exceeded\"}}");
        QTest::newRow("401") << 401
                             << QByteArray("{\"error\":{\"message\":\"bad "
                                           "key\",\"type\":\"invalid_request_error\",\"param\":"
                                           "null,\"code\":\"invalid_api_key\"}}");
    }
    void upstreamErrorsAreRelayed() {
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        startProxy(upstreamConfig());
        m_upstream->enqueue(ScriptedUpstream::Response::json(status, body));
        const auto r = roundTrip("POST", "/v1/chat/completions", "{\"model\":\"m\"}");
        QCOMPARE(r.status, status);
        QCOMPARE(r.body, body);
    }

    // Issue 18: which browser origins may read an answer is never the provider's call.
    void upstreamCorsHeadersAreNotRelayed_data() { addJsonAndStreamRows(); }
    void upstreamCorsHeadersAreNotRelayed() {
        QFETCH(bool, stream);
        startProxy(upstreamConfig());
        auto answer = stream ? ScriptedUpstream::Response::events(
                                   {sseFrame("response.completed", "{\"type\":\"done\"}")})
                             : ScriptedUpstream::Response::json(200, "{\"id\":\"r\"}");
        answer.headers = {{"Access-Control-Allow-Origin", "*"},
                          {"Access-Control-Allow-Credentials", "true"},
                          {"Access-Control-Expose-Headers", "x-secret"},
                          {"X-Request-Id", "req_kept"}};
        m_upstream->enqueue(answer);
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.header("x-request-id"), QByteArray("req_kept"));
        QCOMPARE(r.header("access-control-allow-origin"), QByteArray());
        QCOMPARE(r.header("access-control-allow-credentials"), QByteArray());
        QCOMPARE(r.header("access-control-expose-headers"), QByteArray());
    }

    // Issue 18: a hostile upstream cannot fill this process's memory with one reply.
    void upstreamBodyIsCapped() {
        ProxyConfig config = upstreamConfig();
        config.maxUpstreamBodyBytes = 256 * 1024;
        startProxy(config);
        m_upstream->enqueue(ScriptedUpstream::Response::json(
            200, "{\"junk\":\"" + QByteArray(1024 * 1024, 'x') + "\"}"));
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}");
        QCOMPARE(r.status, 502);
        QVERIFY(hasOpenAiErrorShape(r));
        QCOMPARE(errorCode(r), QStringLiteral("upstream_reply_too_large"));
        // Within the cap: relayed as before.
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{\"id\":\"small\"}"));
        const auto ok = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}");
        QCOMPARE(ok.status, 200);
        QCOMPARE(ok.body, QByteArray("{\"id\":\"small\"}"));
    }

    void slowUpstreamGets504() {
        startProxy(upstreamConfig(400));
        auto slow = ScriptedUpstream::Response::json(200, "{}");
        slow.headerDelayMs = 5000;
        m_upstream->enqueue(slow);
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}");
        QCOMPARE(r.status, 504);
        QVERIFY(hasOpenAiErrorShape(r));
        QCOMPARE(errorCode(r), QStringLiteral("upstream_timeout"));
    }

    void streamThatKeepsFlowingIsNotTimedOut() {
        startProxy(upstreamConfig(1500));
        QList<QByteArray> chunks;
        for (int i = 0; i < 6; ++i)
            chunks << "data: {\"n\":" + QByteArray::number(i) + "}\n\n";
        m_upstream->enqueue(ScriptedUpstream::Response::events(chunks, 400)); // 2.4 s in total
        const auto r =
            roundTrip("POST", "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true}");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.body, chunks.join());
    }

    void controlKeysAreStripped() {
        startProxy(upstreamConfig());
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{}"));
        const QJsonObject body{{QStringLiteral("model"), QStringLiteral("m")},
                               {QStringLiteral("input"), QStringLiteral("hi")},
                               {QStringLiteral("_agentic_loop_depth"), 5},
                               {QStringLiteral("_agentic_loop_fingerprints"), QJsonArray()},
                               {QStringLiteral("max_agentic_loops"), 50},
                               {QStringLiteral("_code_interpreter_interception_active"), true},
                               {QStringLiteral("_code_interpreter_interception_stream_options"), 1},
                               {QStringLiteral("_websearch_interception_converted_stream"), true},
                               {QStringLiteral("_compression_interception_x"), true},
                               {QStringLiteral("_headroom_interception_stream_options"), 1},
                               {QStringLiteral("_private_but_allowed"), 1},
                               {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("k"), 1}}}};
        QCOMPARE(roundTrip("POST", "/v1/responses", QJsonDocument(body).toJson()).status, 200);
        const QJsonObject sent = m_upstream->requests().first().json();
        const QStringList keys = sent.keys();
        QCOMPARE(
            QSet<QString>(keys.cbegin(), keys.cend()),
            QSet<QString>({QStringLiteral("model"), QStringLiteral("input"),
                           QStringLiteral("_private_but_allowed"), QStringLiteral("metadata")}));
        // Also on paths that only pass through.
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{}"));
        QCOMPARE(roundTrip("POST", "/v1/embeddings",
                           "{\"model\":\"m\",\"input\":\"x\",\"_agentic_loop_depth\":1}")
                     .status,
                 200);
        QVERIFY(
            !m_upstream->requests().last().json().contains(QStringLiteral("_agentic_loop_depth")));
    }

    void masterKeyIsRequired_data() {
        QTest::addColumn<QByteArray>("authorization");
        QTest::addColumn<int>("status");
        QTest::newRow("missing") << QByteArray() << 401;
        QTest::newRow("wrong") << QByteArray("Bearer sk-wrong") << 401;
        QTest::newRow("prefix of the key") << QByteArray("Bearer sk-master") << 401;
        QTest::newRow("right") << QByteArray("Bearer sk-master-1234") << 200;
    }
    void masterKeyIsRequired() {
        QFETCH(QByteArray, authorization);
        QFETCH(int, status);
        ProxyConfig config = upstreamConfig();
        config.masterKey = QStringLiteral("sk-master-1234");
        startProxy(config);
        m_upstream->setResponder([](const ScriptedUpstream::Request &) {
            return ScriptedUpstream::Response::json(200, "{}");
        });
        QList<QPair<QByteArray, QByteArray>> headers;
        if (!authorization.isEmpty())
            headers.append({"Authorization", authorization});
        const auto r = roundTrip("POST", "/v1/responses", "{\"model\":\"m\"}", headers);
        QCOMPARE(r.status, status);
        if (status == 401) {
            QVERIFY(hasOpenAiErrorShape(r));
            QCOMPARE(m_upstream->requestCount(), 0);
        } else {
            // The master key is Loopscope's own credential: it never goes upstream.
            QCOMPARE(m_upstream->requests().first().header("authorization"), QByteArray());
        }
        QCOMPARE(roundTrip("GET", "/health").status, 200); // health stays open
    }

    void configuredKeyReplacesClientAuthorization() {
        ProxyConfig config;
        UpstreamRoute route = *ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        route.modelName = QStringLiteral("gpt");
        route.upstreamModel = QStringLiteral("gpt-4o");
        route.apiKey = QStringLiteral("sk-route-key");
        config.modelRoutes << route;
        UpstreamRoute azure = route;
        azure.modelName = QStringLiteral("az");
        azure.provider = UpstreamRoute::Provider::Azure;
        config.modelRoutes << azure;
        startProxy(config);
        m_upstream->setResponder([](const ScriptedUpstream::Request &) {
            return ScriptedUpstream::Response::json(200, "{}");
        });
        QCOMPARE(roundTrip("POST", "/v1/responses", "{\"model\":\"gpt\"}",
                           {{"Authorization", "Bearer sk-client"}})
                     .status,
                 200);
        QCOMPARE(m_upstream->requests().at(0).header("authorization"),
                 QByteArray("Bearer sk-route-key"));
        QCOMPARE(roundTrip("POST", "/v1/responses", "{\"model\":\"az\"}",
                           {{"Authorization", "Bearer sk-client"}})
                     .status,
                 200);
        QCOMPARE(m_upstream->requests().at(1).header("api-key"), QByteArray("sk-route-key"));
        QCOMPARE(m_upstream->requests().at(1).header("authorization"), QByteArray());
    }

    // Every provider shape the config table knows authenticates with what its clients send:
    // OpenAI-style Bearer, Azure's api-key, Anthropic's x-api-key with its version and beta
    // headers. Without a configured key the client's credential goes upstream as sent; with
    // one, only the configured key goes (in the provider's header); with a master key, the
    // client's credential is Loopscope's own and never leaves.
    void credentialsReachTheUpstream_data() {
        QTest::addColumn<int>("provider"); // UpstreamRoute::Provider
        QTest::addColumn<QString>("apiKey");
        QTest::addColumn<QString>("masterKey");
        QTest::addColumn<QByteArray>("clientHeader");
        QTest::addColumn<QByteArray>("clientValue");
        QTest::addColumn<QByteArray>("upstreamHeader");
        QTest::addColumn<QByteArray>("upstreamValue");
        const int openai = int(UpstreamRoute::Provider::OpenAi);
        const int azure = int(UpstreamRoute::Provider::Azure);
        const int anthropic = int(UpstreamRoute::Provider::Anthropic);
        QTest::newRow("anthropic x-api-key, no configured key")
            << anthropic << QString() << QString() << QByteArray("x-api-key")
            << QByteArray("sk-ant-client-1") << QByteArray("x-api-key")
            << QByteArray("sk-ant-client-1");
        QTest::newRow("anthropic bearer, no configured key")
            << anthropic << QString() << QString() << QByteArray("Authorization")
            << QByteArray("Bearer sk-ant-client-2") << QByteArray("authorization")
            << QByteArray("Bearer sk-ant-client-2");
        QTest::newRow("configured anthropic key replaces a client's bearer")
            << anthropic << QStringLiteral("sk-ant-route-3") << QString()
            << QByteArray("Authorization") << QByteArray("Bearer sk-client-3")
            << QByteArray("x-api-key") << QByteArray("sk-ant-route-3");
        QTest::newRow("azure api-key, no configured key")
            << azure << QString() << QString() << QByteArray("api-key") << QByteArray("az-client-4")
            << QByteArray("api-key") << QByteArray("az-client-4");
        QTest::newRow("x-api-key to an OpenAI-style route, no configured key")
            << openai << QString() << QString() << QByteArray("x-api-key")
            << QByteArray("sk-client-5") << QByteArray("x-api-key") << QByteArray("sk-client-5");
        QTest::newRow("configured key replaces a client's x-api-key")
            << openai << QStringLiteral("sk-route-6") << QString() << QByteArray("x-api-key")
            << QByteArray("sk-ant-client-6") << QByteArray("authorization")
            << QByteArray("Bearer sk-route-6");
        QTest::newRow("configured azure key replaces a client's bearer")
            << azure << QStringLiteral("az-route-7") << QString() << QByteArray("Authorization")
            << QByteArray("Bearer sk-client-7") << QByteArray("api-key")
            << QByteArray("az-route-7");
        QTest::newRow("master key sent as x-api-key stays here")
            << anthropic << QString() << QStringLiteral("sk-master-8") << QByteArray("x-api-key")
            << QByteArray("sk-master-8") << QByteArray() << QByteArray();
    }
    void credentialsReachTheUpstream() {
        QFETCH(int, provider);
        QFETCH(QString, apiKey);
        QFETCH(QString, masterKey);
        QFETCH(QByteArray, clientHeader);
        QFETCH(QByteArray, clientValue);
        QFETCH(QByteArray, upstreamHeader);
        QFETCH(QByteArray, upstreamValue);
        // Anthropic's shape on its own surface (/v1/messages, routed by --anthropic-upstream);
        // the others through an OpenAI-style default route.
        const bool anthropic = provider == int(UpstreamRoute::Provider::Anthropic);
        ProxyConfig config = upstreamConfig();
        if (anthropic) {
            config.anthropicUpstream =
                ProxyConfig::routeForAnthropicUpstream(m_upstream->baseUrl(), nullptr);
            config.anthropicUpstream->apiKey = apiKey;
        } else {
            config.defaultRoute->provider = UpstreamRoute::Provider(provider);
            config.defaultRoute->apiKey = apiKey;
        }
        config.masterKey = masterKey;
        startProxy(config);
        EventBus events;
        m_proxy->setEventBus(&events);
        QList<InspectorEvent> upstreamRequests;
        connect(&events, &EventBus::eventPublished, this, [&](const InspectorEvent &e) {
            if (e.kind == InspectorEvent::Kind::UpstreamRequest)
                upstreamRequests << e;
        });
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{\"type\":\"message\"}"));
        const QByteArray path = anthropic ? "/v1/messages" : "/v1/responses";
        const auto r = roundTrip("POST", path, "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":8}",
                                 {{clientHeader, clientValue},
                                  {"anthropic-version", "2023-06-01"},
                                  {"anthropic-beta", "code-execution-2025-08-25"},
                                  {"Connection", "keep-alive, x-hop-only"},
                                  {"x-hop-only", "1"},
                                  {"x-loopscope-internal", "1"}});
        QCOMPARE(r.status, 200);
        QCOMPARE(m_upstream->requestCount(), 1);
        const auto sent = m_upstream->requests().first();
        QCOMPARE(sent.target, QByteArray(anthropic ? "/v1/messages" : "/v1/responses"));
        for (const char *credential : {"authorization", "x-api-key", "api-key"})
            QCOMPARE(sent.header(credential),
                     credential == upstreamHeader ? upstreamValue : QByteArray());
        QCOMPARE(sent.header("anthropic-version"), QByteArray("2023-06-01"));
        QCOMPARE(sent.header("anthropic-beta"), QByteArray("code-execution-2025-08-25"));
        QCOMPARE(sent.header("x-hop-only"), QByteArray()); // named in Connection: hop-by-hop
        QCOMPARE(sent.header("x-loopscope-internal"), QByteArray());
        // What is shown and stored of the hop has the key masked.
        QTRY_COMPARE(upstreamRequests.size(), 1);
        const QJsonObject shown =
            upstreamRequests.first().data.value(QStringLiteral("headers")).toObject();
        const QByteArray secret =
            upstreamValue.startsWith("Bearer ") ? upstreamValue.mid(7) : upstreamValue;
        if (!secret.isEmpty()) {
            QVERIFY(!QJsonDocument(shown).toJson().contains(secret));
            QVERIFY(shown.contains(QString::fromLatin1(upstreamHeader).toLower()));
        }
    }

    // A pass-through's flow events are built on the bus's own thread (the proxy thread only
    // relays), in the flow's order, JSON and streamed alike; the store's barrier waits for them.
    void passThroughEventsAreBuiltOffTheProxyThreadInOrder_data() { addJsonAndStreamRows(); }
    void passThroughEventsAreBuiltOffTheProxyThreadInOrder() {
        QFETCH(bool, stream);
        startProxy(upstreamConfig());
        EventBus events;
        m_proxy->setEventBus(&events);
        QMutex mutex;
        QList<QPair<InspectorEvent::Kind, QThread *>> seen;
        connect(
            &events, &EventBus::eventPublished, this,
            [&](const InspectorEvent &e) {
                QMutexLocker lock(&mutex);
                seen.append({e.kind, QThread::currentThread()});
            },
            Qt::DirectConnection);
        m_upstream->enqueue(
            stream ? ScriptedUpstream::Response::events(
                         {sseFrame("response.created", "{\"type\":\"response.created\"}"),
                          sseFrame("response.completed", "{\"type\":\"response.completed\"}")})
                   : ScriptedUpstream::Response::json(200, "{\"id\":\"r\"}"));
        const auto r = roundTrip("POST", "/v1/responses",
                                 stream ? "{\"model\":\"m\",\"stream\":true}" : "{\"model\":\"m\"}",
                                 {{"Authorization", "Bearer sk-client-order"}});
        QCOMPARE(r.status, 200);
        events.waitForDeferred(); // the flow store's barrier: every deferred event is out
        QMutexLocker lock(&mutex);
        QList<InspectorEvent::Kind> kinds;
        for (const auto &[kind, thread] : std::as_const(seen)) {
            if (kind == InspectorEvent::Kind::ClientResponseChunk)
                continue; // published by the relay itself, queued behind the deferred ones
            kinds << kind;
            QVERIFY2(thread != m_proxy->thread(), "built on the proxy thread");
        }
        using K = InspectorEvent::Kind;
        QCOMPARE(kinds, (QList<K>{K::ClientRequest, K::UpstreamRequest, K::UpstreamResponse,
                                  K::ClientResponse, K::ExchangeFinished}));
        if (stream) {
            // Chunks come after the answer's head and before the end.
            qsizetype head = -1, firstChunk = -1, end = -1;
            for (qsizetype i = 0; i < seen.size(); ++i) {
                if (seen[i].first == K::ClientResponse)
                    head = i;
                else if (seen[i].first == K::ClientResponseChunk && firstChunk < 0)
                    firstChunk = i;
                else if (seen[i].first == K::ExchangeFinished)
                    end = i;
            }
            QVERIFY(head >= 0 && firstChunk > head && end > firstChunk);
        }
    }

    // The Messages surface speaks Anthropic's errors, its own and the early ones alike.
    void messagesErrorsAreAnthropicShaped_data() {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("masterKey");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("type");
        QTest::newRow("not json") << QByteArray("{nope") << QString() << 400
                                  << QStringLiteral("invalid_request_error");
        QTest::newRow("no model") << QByteArray("{\"max_tokens\":1}") << QString() << 400
                                  << QStringLiteral("invalid_request_error");
        QTest::newRow("wrong master key")
            << QByteArray("{\"model\":\"m\"}") << QStringLiteral("sk-master") << 401
            << QStringLiteral("authentication_error");
    }
    void messagesErrorsAreAnthropicShaped() {
        QFETCH(QByteArray, body);
        QFETCH(QString, masterKey);
        QFETCH(int, status);
        QFETCH(QString, type);
        ProxyConfig config = upstreamConfig();
        config.anthropicUpstream =
            ProxyConfig::routeForAnthropicUpstream(m_upstream->baseUrl(), nullptr);
        config.masterKey = masterKey;
        startProxy(config);
        const auto r = roundTrip("POST", "/v1/messages", body, {{"x-api-key", "sk-wrong"}});
        QCOMPARE(r.status, status);
        const QJsonObject json = r.json();
        QCOMPARE(json.value(QStringLiteral("type")).toString(), QStringLiteral("error"));
        QCOMPARE(
            json.value(QStringLiteral("error")).toObject().value(QStringLiteral("type")).toString(),
            type);
        QVERIFY(!json.value(QStringLiteral("error"))
                     .toObject()
                     .value(QStringLiteral("message"))
                     .toString()
                     .isEmpty());
        QVERIFY(
            json.value(QStringLiteral("request_id")).toString().startsWith(QStringLiteral("req_")));
        QCOMPARE(m_upstream->requestCount(), 0);
        // An upstream's own error is relayed as it came.
        if (masterKey.isEmpty()) {
            m_upstream->enqueue(ScriptedUpstream::Response::json(
                401, "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
                     "\"message\":\"invalid x-api-key\"}}"));
            const auto relayed = roundTrip("POST", "/v1/messages", "{\"model\":\"m\"}");
            QCOMPARE(relayed.status, 401);
            QVERIFY(relayed.body.contains("invalid x-api-key"));
        }
    }

    // The demo model answers the Messages surface offline: text, and a tool_use for a tool.
    void demoAnswersMessages() {
        ProxyConfig config;
        config.defaultRoute = ProxyConfig::demoRoute();
        startProxy(config);
        const auto text = roundTrip(
            "POST", "/v1/messages",
            "{\"model\":\"loopscope-demo\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\","
            "\"content\":\"hello\"}]}");
        QCOMPARE(text.status, 200);
        QCOMPARE(text.json().value(QStringLiteral("type")).toString(), QStringLiteral("message"));
        QCOMPARE(text.json().value(QStringLiteral("stop_reason")).toString(),
                 QStringLiteral("end_turn"));
        const auto tool = roundTrip(
            "POST", "/v1/messages",
            "{\"model\":\"loopscope-demo\",\"max_tokens\":64,\"stream\":true,\"tools\":[{\"name\":"
            "\"run_python\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"code\":{"
            "\"type\":\"string\"}}}}],\"messages\":[{\"role\":\"user\",\"content\":\"what is "
            "17*23?\"}]}");
        QCOMPARE(tool.status, 200);
        QCOMPARE(tool.header("content-type"), QByteArray("text/event-stream"));
        for (const char *event :
             {"event: message_start", "event: content_block_start", "\"type\":\"tool_use\"",
              "\"partial_json\"", "\"stop_reason\":\"tool_use\"", "event: message_stop"})
            QVERIFY2(tool.body.contains(event), event);
    }

    void otherPathsPassThrough() {
        startProxy(upstreamConfig());
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(200, "{\"object\":\"list\",\"data\":[]}"));
        const auto r = roundTrip("GET", "/v1/files?purpose=assistants&limit=2");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.body, QByteArray("{\"object\":\"list\",\"data\":[]}"));
        QCOMPARE(m_upstream->requests().first().method, QByteArray("GET"));
        QCOMPARE(m_upstream->requests().first().target,
                 QByteArray("/v1/files?purpose=assistants&limit=2"));
        // GET /v1/models with only --upstream asks the upstream.
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{\"data\":[{\"id\":\"up\"}]}"));
        QCOMPARE(roundTrip("GET", "/models").body, QByteArray("{\"data\":[{\"id\":\"up\"}]}"));
    }

    // The issue's reproductions: with a configured key each reached the upstream (as
    // POST /admin/keys, GET /etc/passwd, ...) carrying that key. Each is answered 400 here and
    // never forwarded. The 400 is made locally, so no forward preceded it; the good request after
    // it shows the upstream was reachable and recording all along.
    void hostileTargetsAreNeverForwarded_data() {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QByteArray>("target");
        QTest::newRow("dot-dot") << QByteArray("POST") << QByteArray("/v1/../../admin/keys");
        QTest::newRow("encoded dot-dot")
            << QByteArray("POST") << QByteArray("/v1/%2e%2e/%2e%2e/admin/keys");
        QTest::newRow("double-encoded dot-dot")
            << QByteArray("POST") << QByteArray("/v1/%252e%252e/%252e%252e/admin/keys");
        QTest::newRow("dot-dot above the root")
            << QByteArray("GET") << QByteArray("/../../../etc/passwd");
        QTest::newRow("absolute-form") << QByteArray("POST") << QByteArray("http://evil/x");
        QTest::newRow("encoded slashes")
            << QByteArray("GET") << QByteArray("/v1/files/a%2f..%2f..%2fadmin");
        QTest::newRow("backslashes") << QByteArray("GET") << QByteArray("/v1\\..\\..\\admin");
        QTest::newRow("encoded NUL") << QByteArray("GET") << QByteArray("/v1/files/a%00.json");
    }
    void hostileTargetsAreNeverForwarded() {
        QFETCH(QByteArray, method);
        QFETCH(QByteArray, target);
        ProxyConfig config = upstreamConfig();
        config.defaultRoute->apiKey = QStringLiteral("sk-route-key");
        startProxy(config);
        m_upstream->setResponder([](const ScriptedUpstream::Request &) {
            return ScriptedUpstream::Response::json(200, "{}");
        });
        const auto r = roundTrip(method, target, method == "POST" ? QByteArray("{}") : QByteArray(),
                                 {{"Content-Type", "application/json"}});
        QCOMPARE(r.status, 400);
        QCOMPARE(errorCode(r), QStringLiteral("invalid_request_target"));
        QVERIFY(hasOpenAiErrorShape(r));
        QCOMPARE(roundTrip("GET", "/v1/files/file-abc/content").status, 200);
        QCOMPARE(m_upstream->requests().size(), 1);
        QCOMPARE(m_upstream->requests().first().target, QByteArray("/v1/files/file-abc/content"));
        QCOMPARE(m_upstream->requests().first().header("authorization"),
                 QByteArray("Bearer sk-route-key"));
    }

    // Ordinary targets reach the upstream as sent (dot segments inside /v1 resolved), the query
    // untouched, and the path decoded exactly once: an escaped "?" or "%" stays escaped.
    void legitimateTargetsPassUntouched_data() {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("upstreamTarget");
        QTest::newRow("responses")
            << QByteArray("POST") << QByteArray("/v1/responses") << QByteArray("/v1/responses");
        QTest::newRow("file content")
            << QByteArray("GET") << QByteArray("/v1/files/file-abc/content")
            << QByteArray("/v1/files/file-abc/content");
        QTest::newRow("without /v1") << QByteArray("GET") << QByteArray("/files/file-abc")
                                     << QByteArray("/v1/files/file-abc");
        QTest::newRow("encoded slash in the query")
            << QByteArray("GET") << QByteArray("/v1/files?purpose=a%2Fb&after=file%3D1")
            << QByteArray("/v1/files?purpose=a%2Fb&after=file%3D1");
        QTest::newRow("dot segments inside /v1")
            << QByteArray("GET") << QByteArray("/v1/files/./file-abc/../file-abc/content")
            << QByteArray("/v1/files/file-abc/content");
        QTest::newRow("escaped ? stays in the path")
            << QByteArray("GET") << QByteArray("/v1/files/a%3Fb") << QByteArray("/v1/files/a%3Fb");
        QTest::newRow("escaped % stays escaped")
            << QByteArray("GET") << QByteArray("/v1/files/x%2541")
            << QByteArray("/v1/files/x%2541");
        QTest::newRow("escaped space")
            << QByteArray("GET") << QByteArray("/v1/files/a%20b") << QByteArray("/v1/files/a%20b");
    }
    void legitimateTargetsPassUntouched() {
        QFETCH(QByteArray, method);
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, upstreamTarget);
        ProxyConfig config = upstreamConfig();
        config.defaultRoute->apiKey = QStringLiteral("sk-route-key");
        startProxy(config);
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{\"ok\":true}"));
        const QByteArray body =
            method == "POST" ? QByteArray("{\"model\":\"gpt-4o\"}") : QByteArray();
        const auto r = roundTrip(method, target, body, {{"Content-Type", "application/json"}});
        QCOMPARE(r.status, 200);
        QCOMPARE(r.body, QByteArray("{\"ok\":true}"));
        QCOMPARE(m_upstream->requests().size(), 1);
        QCOMPARE(m_upstream->requests().first().method, method);
        QCOMPARE(m_upstream->requests().first().target, upstreamTarget);
        QCOMPARE(m_upstream->requests().first().header("authorization"),
                 QByteArray("Bearer sk-route-key"));
    }

    void healthAndConfiguredModels() {
        ProxyConfig config;
        for (const QString &name : {QStringLiteral("a"), QStringLiteral("b")}) {
            UpstreamRoute route = *ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
            route.modelName = name;
            config.modelRoutes << route;
        }
        startProxy(config);
        const auto health = roundTrip("GET", "/health");
        QCOMPARE(health.status, 200);
        QCOMPARE(health.json().value(QStringLiteral("status")).toString(),
                 QStringLiteral("healthy"));
        const auto models = roundTrip("GET", "/v1/models");
        QCOMPARE(models.status, 200);
        QStringList ids;
        for (const QJsonValue &m : models.json().value(QStringLiteral("data")).toArray())
            ids << m.toObject().value(QStringLiteral("id")).toString();
        QCOMPARE(ids, QStringList({QStringLiteral("a"), QStringLiteral("b")}));
        QCOMPARE(m_upstream->requestCount(), 0);
    }

    void interceptorReceivesCodeInterpreterRequests() {
        ProxyConfig config = upstreamConfig();
        config.defaultRoute->maxAgenticLoops = 0;
        config.execTimeoutSeconds = 7;
        startProxy(config);
        RecordingInterceptor interceptor;
        m_proxy->addInterceptor(&interceptor);
        const QJsonObject body{
            {QStringLiteral("model"), QStringLiteral("gpt-4o")},
            {QStringLiteral("input"), QStringLiteral("what is 17*23?")},
            {QStringLiteral("max_agentic_loops"), 99},
            {QStringLiteral("tools"),
             QJsonArray{
                 QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                             {QStringLiteral("container"),
                              QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
        const auto r = roundTrip("POST", "/v1/responses", QJsonDocument(body).toJson(),
                                 {{"Authorization", "Bearer sk-caller-0001"}});
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value(QStringLiteral("intercepted")).toBool(), true);
        QVERIFY(!r.header("x-loopscope-overhead-ms").isEmpty());
        QCOMPARE(m_upstream->requestCount(), 0);
        QCOMPARE(interceptor.handled.size(), 1);
        const ProxyRequest &got = interceptor.handled.first();
        QCOMPARE(got.surface, ApiSurface::Responses);
        QVERIFY(!got.body.contains(QStringLiteral("max_agentic_loops"))); // forged ceiling gone
        QCOMPARE(got.maxLoops, 3);
        QCOMPARE(got.execTimeoutSeconds, 7);
        QCOMPARE(
            got.callerIdentity,
            QString::fromLatin1(
                QCryptographicHash::hash("sk-caller-0001", QCryptographicHash::Sha256).toHex()));
        QVERIFY(got.requestId.startsWith(QStringLiteral("req_")));
        QCOMPARE(headerValue(got.route.clientCredentials, "authorization"),
                 QByteArray("Bearer sk-caller-0001"));
        QTRY_COMPARE(m_log.size(), 1);
        QCOMPARE(m_log.first().iterations, 2);
        QCOMPARE(m_log.first().requestId, got.requestId);

        // Without the hosted tool the request passes through as before.
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{\"plain\":true}"));
        QCOMPARE(roundTrip("POST", "/v1/chat/completions",
                           "{\"model\":\"m\",\"tools\":[{\"type\":\"function\"}]}")
                     .body,
                 QByteArray("{\"plain\":true}"));
        QCOMPARE(interceptor.handled.size(), 1);
    }

    void interceptorCanCallUpstreamWithTheRouteAuth() {
        ProxyConfig config;
        UpstreamRoute route = *ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        route.modelName = QStringLiteral("alias");
        route.upstreamModel = QStringLiteral("gpt-4o");
        route.apiKey = QStringLiteral("sk-config");
        route.maxAgenticLoops = 5;
        config.modelRoutes << route;
        startProxy(config);
        RecordingInterceptor interceptor;
        interceptor.upstream = m_proxy->upstream();
        interceptor.callUpstream = true;
        m_proxy->addInterceptor(&interceptor);
        m_upstream->enqueue(ScriptedUpstream::Response::json(200, "{\"id\":\"resp_up\"}"));
        const auto r = roundTrip(
            "POST", "/v1/chat/completions",
            "{\"model\":\"alias\",\"messages\":[],\"tools\":[{\"type\":\"code_interpreter\"}]}");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json()
                     .value(QStringLiteral("upstream"))
                     .toObject()
                     .value(QStringLiteral("id"))
                     .toString(),
                 QStringLiteral("resp_up"));
        QCOMPARE(interceptor.handled.first().surface, ApiSurface::ChatCompletions);
        QCOMPARE(interceptor.handled.first().maxLoops, 5);
        const auto sent = m_upstream->requests().first();
        QCOMPARE(sent.header("authorization"), QByteArray("Bearer sk-config"));
        QCOMPARE(sent.json().value(QStringLiteral("model")).toString(), QStringLiteral("gpt-4o"));

        // postJson reports transport failures as data, never by hanging or throwing.
        UpstreamRoute dead = route;
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        dead.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(probe.serverPort()));
        probe.close();
        auto future = m_proxy->upstream()->postJson(dead, QStringLiteral("/responses"), {});
        QTRY_VERIFY_WITH_TIMEOUT(future.isFinished(), 20000);
        QCOMPARE(future.result().status, 0);
        QCOMPARE(future.result().clientStatus(), 502);
        QVERIFY(future.result().networkError != QNetworkReply::NoError);
    }

    void demoModelAnswersOverHttp() {
        ProxyConfig config;
        config.defaultRoute = ProxyConfig::demoRoute();
        startProxy(config);
        const QByteArray request =
            "{\"model\":\"gpt-4o\",\"input\":\"what is 17*23?\",\"tools\":[{\"type\":\"function\","
            "\"name\":\"litellm_code_execution\",\"parameters\":{\"type\":\"object\","
            "\"properties\":{\"code\":{\"type\":\"string\"}}}}]}";
        const auto r = roundTrip("POST", "/v1/responses", request);
        QCOMPARE(r.status, 200);
        const QJsonObject call =
            r.json().value(QStringLiteral("output")).toArray().first().toObject();
        QCOMPARE(call.value(QStringLiteral("type")).toString(), QStringLiteral("function_call"));
        QCOMPARE(call.value(QStringLiteral("arguments")).toString(),
                 QStringLiteral("{\"code\":\"print(17*23)\"}"));
        const auto models = roundTrip("GET", "/v1/models");
        QCOMPARE(models.json()
                     .value(QStringLiteral("data"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QStringLiteral("id"))
                     .toString(),
                 QStringLiteral("loopscope-demo"));
        // Streams arrive as SSE through the same pass-through path.
        const auto stream = roundTrip("POST", "/v1/chat/completions",
                                      "{\"model\":\"x\",\"stream\":true,\"messages\":[{\"role\":"
                                      "\"user\",\"content\":\"hi\"}]}");
        QCOMPARE(stream.header("content-type"), QByteArray("text/event-stream"));
        QVERIFY(stream.body.endsWith("data: [DONE]\n\n"));
    }

    void proxyRunsOnItsOwnThread() {
        QThread thread;
        thread.start();
        ProxyConfig config = upstreamConfig();
        config.port = 0;
        ProxyServer *proxy = nullptr;
        quint16 port = 0;
        QObject anchor;
        anchor.moveToThread(&thread);
        QMetaObject::invokeMethod(
            &anchor,
            [&] {
                proxy = new ProxyServer(config);
                if (proxy->listen())
                    port = proxy->port();
            },
            Qt::BlockingQueuedConnection);
        QVERIFY(port != 0);
        m_upstream->setResponder([](const ScriptedUpstream::Request &) {
            return ScriptedUpstream::Response::json(200, "{\"ok\":1}");
        });
        for (int i = 0; i < 3; ++i) {
            RawHttpClient client(port);
            client.request("POST", "/v1/responses", "{\"model\":\"m\"}");
            QTRY_VERIFY_WITH_TIMEOUT(client.hasCompleteResponse(), 20000);
            QCOMPARE(client.current().body, QByteArray("{\"ok\":1}"));
        }
        QSignalSpy stopped(proxy, &ProxyServer::stopped);
        QMetaObject::invokeMethod(proxy, [proxy] { proxy->shutdown(); });
        QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 20000);
        QMetaObject::invokeMethod(
            &anchor, [proxy] { delete proxy; }, Qt::BlockingQueuedConnection);
        thread.quit();
        thread.wait();
    }
};

QTEST_GUILESS_MAIN(TstProxyPassThrough)
#include "tst_proxypassthrough.moc"
