// The access rules of control-api.md over real loopback sockets, on proxy and control routes
// alike: foreign Origin → 403 before anything runs, CORS for loopback and --allow-origin pages
// (preflight included, upstream Access-Control-* replaced), 415 for non-JSON model calls, and
// the control token (401 without it or with a wrong one; client keys and master_key are not
// control tokens).
#include "common/futurechain.h"
#include "http/responsesink.h"
#include "loop/requestinterceptor.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"

#include <QJsonDocument>
#include <QtTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

const QByteArray kToken = "control-token-for-tests-0123456789";
const QByteArray kMasterKey = "sk-master-key-for-tests";

// Stands for the code interpreter: anything that would run code goes through here.
class CountingInterceptor : public RequestInterceptor {
public:
    int handled = 0;
    bool accepts(const ProxyRequest &) const override { return true; }
    void handle(ProxyRequest, ResponseSink *sink) override {
        ++handled;
        sink->sendJson(200, {{QStringLiteral("ran"), true}});
    }
};

using Headers = QList<QPair<QByteArray, QByteArray>>;

} // namespace

class TstControlAccess : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<ProxyServer> m_proxy;
    CountingInterceptor m_interceptor;

    void startProxy(const QString &masterKey = {}) {
        ProxyConfig config;
        config.host = QStringLiteral("127.0.0.1");
        config.port = 0;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        config.controlToken = QString::fromLatin1(kToken);
        config.allowOrigins = {QStringLiteral("https://app.example:8443")};
        config.masterKey = masterKey;
        m_proxy = std::make_unique<ProxyServer>(config);
        QVERIFY(m_proxy->listen());
    }
    RawHttpClient::Response roundTrip(const QByteArray &method, const QByteArray &target,
                                      const QByteArray &body = {}, const Headers &headers = {}) {
        RawHttpClient client(m_proxy->port());
        client.request(method, target, body, headers);
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 20000))
            return {};
        return client.take();
    }
    static QString errorCode(const RawHttpClient::Response &r) {
        return r.json()[QStringLiteral("error")][QStringLiteral("code")].toString();
    }
    static bool openAiShaped(const RawHttpClient::Response &r) {
        const QJsonObject e = r.json().value(QStringLiteral("error")).toObject();
        return e.value(QStringLiteral("message")).isString() &&
               e.value(QStringLiteral("type")).isString() && e.contains(QStringLiteral("code"));
    }
    static QByteArray codeRequest() {
        return R"({"model":"x","input":"```python\nprint(1)\n```","tools":[{"type":"code_interpreter"}]})";
    }

private slots:
    void init() {
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
        m_interceptor.handled = 0;
    }
    void cleanup() {
        m_proxy.reset();
        m_upstream.reset();
    }

    // The attack of issue 18: a page's no-cors text/plain POST. Refused before any parsing,
    // nothing reaches the interceptor (no code runs) or the upstream (no credits spent).
    void foreignOriginIsRefusedEverywhere_data() {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("contentType");
        QTest::newRow("responses text/plain")
            << QByteArray("POST") << QByteArray("/v1/responses") << QByteArray("text/plain");
        QTest::newRow("responses json")
            << QByteArray("POST") << QByteArray("/v1/responses") << QByteArray("application/json");
        QTest::newRow("chat form") << QByteArray("POST") << QByteArray("/v1/chat/completions")
                                   << QByteArray("application/x-www-form-urlencoded");
        QTest::newRow("models") << QByteArray("GET") << QByteArray("/v1/models") << QByteArray();
        QTest::newRow("pass-through")
            << QByteArray("GET") << QByteArray("/v1/files") << QByteArray();
        QTest::newRow("health") << QByteArray("GET") << QByteArray("/health") << QByteArray();
        QTest::newRow("control flows")
            << QByteArray("GET") << QByteArray("/loopscope/v1/flows") << QByteArray();
        QTest::newRow("control delete")
            << QByteArray("DELETE") << QByteArray("/loopscope/v1/flows") << QByteArray();
        QTest::newRow("preflight")
            << QByteArray("OPTIONS") << QByteArray("/v1/responses") << QByteArray();
    }
    void foreignOriginIsRefusedEverywhere() {
        QFETCH(QByteArray, method);
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, contentType);
        startProxy();
        m_proxy->addInterceptor(&m_interceptor);
        Headers headers{{"Origin", "https://evil.example"}, {"Authorization", "Bearer " + kToken}};
        if (!contentType.isEmpty())
            headers.append(qMakePair(QByteArray("Content-Type"), contentType));
        if (method == "OPTIONS")
            headers.append(
                qMakePair(QByteArray("Access-Control-Request-Method"), QByteArray("POST")));
        const auto r =
            roundTrip(method, target, method == "POST" ? codeRequest() : QByteArray(), headers);
        QCOMPARE(r.status, 403);
        QVERIFY(openAiShaped(r));
        QCOMPARE(errorCode(r), QStringLiteral("origin_not_allowed"));
        QVERIFY(r.header("access-control-allow-origin").isEmpty());
        QCOMPARE(m_interceptor.handled, 0);
        QCOMPARE(m_upstream->requestCount(), 0);
    }

    void loopbackOriginGetsCors_data() {
        QTest::addColumn<QByteArray>("origin");
        QTest::newRow("localhost") << QByteArray("http://localhost:5173");
        QTest::newRow("127.0.0.1") << QByteArray("http://127.0.0.1:8080");
        QTest::newRow("[::1]") << QByteArray("http://[::1]:3000");
        QTest::newRow("--allow-origin") << QByteArray("https://app.example:8443");
    }
    void loopbackOriginGetsCors() {
        QFETCH(QByteArray, origin);
        startProxy();
        // The preflight the official SDK's browser mode triggers.
        const auto pre = roundTrip(
            "OPTIONS", "/v1/responses", {},
            {{"Origin", origin},
             {"Access-Control-Request-Method", "POST"},
             {"Access-Control-Request-Headers", "authorization, content-type, x-stainless-os, "
                                                "x-stainless-retry-count, x-evil-header"}});
        QCOMPARE(pre.status, 204);
        QCOMPARE(pre.header("access-control-allow-origin"), origin);
        QVERIFY(pre.header("vary").contains("Origin"));
        QVERIFY(pre.header("access-control-allow-methods").contains("POST"));
        const QByteArray allowed = pre.header("access-control-allow-headers");
        QVERIFY(allowed.contains("authorization"));
        QVERIFY(allowed.contains("content-type"));
        QVERIFY(allowed.contains("x-stainless-os"));
        QVERIFY(allowed.contains("x-stainless-retry-count"));
        QVERIFY(!allowed.contains("x-evil-header"));
        QVERIFY(pre.header("access-control-allow-origin") != "*");
        QCOMPARE(m_upstream->requestCount(), 0); // a preflight is answered, never relayed

        // The real request: our CORS headers, the upstream's Access-Control-* replaced.
        ScriptedUpstream::Response answer = ScriptedUpstream::Response::json(200, R"({"id":"r"})");
        answer.headers = {{"Access-Control-Allow-Origin", "*"},
                          {"Access-Control-Allow-Credentials", "true"}};
        m_upstream->enqueue(answer);
        const auto r = roundTrip("POST", "/v1/responses", R"({"model":"m","input":"hi"})",
                                 {{"Origin", origin}});
        QCOMPARE(r.status, 200);
        int allowOrigin = 0;
        for (const auto &h : r.headers) {
            if (h.first == "access-control-allow-origin") {
                ++allowOrigin;
                QCOMPARE(h.second, origin);
            }
            QVERIFY(h.first != "access-control-allow-credentials");
        }
        QCOMPARE(allowOrigin, 1);
        QVERIFY(r.header("vary").contains("Origin"));
    }

    void nonJsonModelCallIs415_data() {
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("contentType");
        QTest::newRow("responses text/plain")
            << QByteArray("/v1/responses") << QByteArray("text/plain");
        QTest::newRow("responses form")
            << QByteArray("/responses") << QByteArray("application/x-www-form-urlencoded");
        QTest::newRow("chat multipart")
            << QByteArray("/v1/chat/completions") << QByteArray("multipart/form-data; boundary=b");
        QTest::newRow("embeddings text")
            << QByteArray("/v1/embeddings") << QByteArray("text/plain;charset=UTF-8");
    }
    void nonJsonModelCallIs415() {
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, contentType);
        startProxy();
        m_proxy->addInterceptor(&m_interceptor);
        // Loopback page (allowed origin) and no origin at all: the body type rule still holds.
        for (const bool withOrigin : {false, true}) {
            Headers headers{{"Content-Type", contentType}};
            if (withOrigin)
                headers.append(
                    qMakePair(QByteArray("Origin"), QByteArray("http://localhost:5173")));
            const auto r = roundTrip("POST", target, codeRequest(), headers);
            QCOMPARE(r.status, 415);
            QVERIFY(openAiShaped(r));
        }
        QCOMPARE(m_interceptor.handled, 0);
        QCOMPARE(m_upstream->requestCount(), 0);
        // The same body as JSON is served.
        QCOMPARE(roundTrip("POST", target, codeRequest()).status, 200);
    }

    void controlTokenRequired_data() {
        QTest::addColumn<Headers>("headers");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("no token") << Headers{} << false;
        QTest::newRow("wrong token") << Headers{{"Authorization", "Bearer wrong"}} << false;
        QTest::newRow("token prefix")
            << Headers{{"Authorization", "Bearer " + kToken.left(10)}} << false;
        QTest::newRow("master key") << Headers{{"Authorization", "Bearer " + kMasterKey}} << false;
        QTest::newRow("token as x-api-key") << Headers{{"x-api-key", kToken}} << false;
        QTest::newRow("token without Bearer") << Headers{{"Authorization", kToken}} << false;
        QTest::newRow("token") << Headers{{"Authorization", "Bearer " + kToken}} << true;
        QTest::newRow("token, loopback page")
            << Headers{{"Authorization", "Bearer " + kToken}, {"Origin", "http://localhost:1"}}
            << true;
    }
    void controlTokenRequired() {
        QFETCH(Headers, headers);
        QFETCH(bool, accepted);
        startProxy(QString::fromLatin1(kMasterKey));
        for (const QByteArray &target :
             {QByteArray("/loopscope/v1/flows"), QByteArray("/loopscope/v1/sandboxes"),
              QByteArray("/loopscope/v1/nope"), QByteArray("/loopscope/mcp")}) {
            const auto r = roundTrip("GET", target, {}, headers);
            if (accepted) {
                QVERIFY2(r.status != 401, target.constData());
            } else {
                QCOMPARE(r.status, 401);
                QVERIFY(openAiShaped(r));
                QCOMPARE(errorCode(r), QStringLiteral("invalid_control_token"));
            }
        }
        QCOMPARE(m_upstream->requestCount(), 0); // control routes never reach the upstream
    }

    // The control token is not a client key either: with a master key set, proxy routes
    // refuse it.
    void controlTokenIsNotAMasterKey() {
        startProxy(QString::fromLatin1(kMasterKey));
        const auto r = roundTrip("GET", "/v1/models", {}, {{"Authorization", "Bearer " + kToken}});
        QCOMPARE(r.status, 401);
        QCOMPARE(
            roundTrip("GET", "/v1/models", {}, {{"Authorization", "Bearer " + kMasterKey}}).status,
            200);
    }

    void noTokenConfiguredFailsClosed() {
        ProxyConfig config;
        config.host = QStringLiteral("127.0.0.1");
        config.port = 0;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        m_proxy = std::make_unique<ProxyServer>(config);
        QVERIFY(m_proxy->listen());
        QCOMPARE(roundTrip("GET", "/loopscope/v1/flows", {}, {{"Authorization", "Bearer "}}).status,
                 401);
        QCOMPARE(roundTrip("GET", "/loopscope/v1/flows").status, 401);
    }
};

QTEST_GUILESS_MAIN(TstControlAccess)
#include "tst_controlaccess.moc"
