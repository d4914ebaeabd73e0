// The breakpoint routes of the control API over loopback: the real ProxyServer and
// InterceptionStack (real bubblewrap sandboxes), a scripted upstream, a real SQLite flow store.
// GET|PUT /breakpoints, GET /paused, POST /paused/{id} (200, 404, 409, 400), the flow's
// "paused" state, the code_run hop's decision / edited_from, the aborted flow's 499, and the
// paused / resumed event names.
#include "control/controlapi.h"
#include "control/controleventstream.h"
#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "loop/pausebroker.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowstore.h"
#include "sandbox/local/localsandboxoptions.h"
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

const QByteArray kToken = "tst-breakpoints-token-41c2e7";
const QByteArray kClientKey = "sk-client-key-bp-000111";
using Headers = QList<QPair<QByteArray, QByteArray>>;

QByteArray ciRequest(const QByteArray &model = "gpt-5") {
    return "{\"model\":\"" + model +
           "\",\"input\":\"go\",\"tools\":[{\"type\":\"code_interpreter\","
           "\"container\":{\"type\":\"auto\"}}]}";
}

} // namespace

class TstBreakpointsApi : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<ProxyServer> m_proxy;
    InterceptionStack *m_stack = nullptr;

    std::unique_ptr<RawHttpClient> send(const QByteArray &method, const QByteArray &target,
                                        const QByteArray &body = {}) {
        auto client = std::make_unique<RawHttpClient>(m_proxy->port());
        const QByteArray auth =
            target.startsWith("/loopscope/") ? "Bearer " + kToken : "Bearer " + kClientKey;
        client->request(method, target, body,
                        {{"Authorization", auth}, {"Content-Type", "application/json"}});
        return client;
    }
    RawHttpClient::Response call(const QByteArray &method, const QByteArray &target,
                                 const QByteArray &body = {}) {
        auto client = send(method, target, body);
        if (!QTest::qWaitFor([&] { return client->hasCompleteResponse(); }, 60000))
            return {};
        return client->take();
    }
    static QString errorCode(const RawHttpClient::Response &r) {
        return r.json()[QStringLiteral("error")][QStringLiteral("code")].toString();
    }
    QJsonObject awaitPaused() {
        QJsonObject pause;
        (void)QTest::qWaitFor(
            [&] {
                const QJsonArray data =
                    call("GET", "/loopscope/v1/paused").json()[QStringLiteral("data")].toArray();
                if (data.isEmpty())
                    return false;
                pause = data.first().toObject();
                return true;
            },
            60000);
        return pause;
    }
    QJsonObject flow(const QString &id) {
        m_store->flush();
        return call("GET", "/loopscope/v1/flows/" + id.toUtf8()).json();
    }

private slots:
    void init() {
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
        m_dir = std::make_unique<QTemporaryDir>();
        m_bus = std::make_unique<EventBus>();
        FlowStoreOptions options;
        options.path = m_dir->filePath(QStringLiteral("history.sqlite3"));
        options.batchIntervalMs = 20;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        QVERIFY2(m_store->open(&error), qPrintable(error));
        m_store->attach(m_bus.get());
        ProxyConfig config;
        config.host = QStringLiteral("127.0.0.1");
        config.port = 0;
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
    void cleanup() {
        if (m_stack) {
            QFuture<void> done = m_stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 30000));
        }
        m_proxy.reset();
        m_stack = nullptr;
        m_store.reset();
        m_bus.reset();
        m_upstream.reset();
        m_dir.reset();
    }

    void settingsRoundTrip() {
        const auto initial = call("GET", "/loopscope/v1/breakpoints");
        QCOMPARE(initial.status, 200);
        QCOMPARE(initial.json(), BreakpointSettings().toJson());
        QCOMPARE(initial.json()[QStringLiteral("timeout_s")].toInt(), 600);

        // PUT replaces the whole setting: keys left out take the defaults.
        auto put = call("PUT", "/loopscope/v1/breakpoints",
                        "{\"code\":true,\"match\":{\"model\":\"gpt-5\"},\"timeout_s\":30}");
        QCOMPARE(put.status, 200);
        QCOMPARE(put.json()[QStringLiteral("code")].toBool(), true);
        QCOMPARE(put.json()[QStringLiteral("match")][QStringLiteral("model")].toString(),
                 QStringLiteral("gpt-5"));
        QVERIFY(put.json()[QStringLiteral("match")][QStringLiteral("code_regex")].isNull());
        put = call("PUT", "/loopscope/v1/breakpoints", "{\"upstream_request\":true}");
        QCOMPARE(put.json()[QStringLiteral("code")].toBool(), false);
        QCOMPARE(put.json()[QStringLiteral("timeout_s")].toInt(), 600);
        QCOMPARE(call("GET", "/loopscope/v1/breakpoints").json(), put.json());

        const auto bad = call("PUT", "/loopscope/v1/breakpoints", "{\"on_timeout\":\"never\"}");
        QCOMPARE(bad.status, 400);
        QVERIFY(bad.json()[QStringLiteral("error")][QStringLiteral("message")].isString());
        QCOMPARE(call("PUT", "/loopscope/v1/breakpoints", "not json").status, 400);
        QCOMPARE(call("DELETE", "/loopscope/v1/breakpoints").status, 405);
        QCOMPARE(call("GET", "/loopscope/v1/breakpoints").json(), put.json()); // unchanged
        // The control token is required, as on every control route.
        RawHttpClient anonymous(m_proxy->port());
        anonymous.request("GET", "/loopscope/v1/paused");
        QVERIFY(QTest::qWaitFor([&] { return anonymous.hasCompleteResponse(); }, 20000));
        QCOMPARE(anonymous.take().status, 401);
    }

    void editOverTheApi() {
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("print(6*7)"))));
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("done"))));
        QCOMPARE(call("PUT", "/loopscope/v1/breakpoints", "{\"code\":true}").status, 200);
        auto client = send("POST", "/v1/responses", ciRequest());
        const QJsonObject pause = awaitPaused();
        QCOMPARE(pause[QStringLiteral("kind")].toString(), QStringLiteral("code"));
        QCOMPARE(pause[QStringLiteral("code")].toString(), QStringLiteral("print(6*7)"));
        QCOMPARE(pause[QStringLiteral("iteration")].toInt(), 0);
        const QString flowId = pause[QStringLiteral("flow_id")].toString();
        QVERIFY(QTest::qWaitFor(
            [&] {
                return flow(flowId)[QStringLiteral("state")].toString() == QLatin1String("paused");
            },
            20000));

        const QByteArray target =
            "/loopscope/v1/paused/" + pause[QStringLiteral("id")].toString().toUtf8();
        QCOMPARE(call("POST", target, "{\"action\":\"maybe\"}").status, 400);
        QCOMPARE(call("POST", target, "{\"action\":\"continue\",\"body\":{}}").status, 400);
        QCOMPARE(call("GET", target).status, 405);
        const auto resolved =
            call("POST", target, "{\"action\":\"continue\",\"code\":\"print(7*7)\"}");
        QCOMPARE(resolved.status, 200);
        QCOMPARE(resolved.json()[QStringLiteral("id")], pause[QStringLiteral("id")]);
        QCOMPARE(resolved.json()[QStringLiteral("decision")].toString(), QStringLiteral("edited"));
        QCOMPARE(resolved.json()[QStringLiteral("edited_from")].toString(),
                 QStringLiteral("print(6*7)"));
        const auto again = call("POST", target, "{\"action\":\"abort\"}");
        QCOMPARE(again.status, 409);
        QCOMPARE(errorCode(again), QStringLiteral("already_resolved"));
        QCOMPARE(
            call("POST", "/loopscope/v1/paused/pause_unknown", "{\"action\":\"continue\"}").status,
            404);

        QVERIFY(QTest::qWaitFor([&] { return client->hasCompleteResponse(); }, 60000));
        const auto reply = client->take();
        QCOMPARE(reply.status, 200);
        const QJsonObject item = reply.json()[QStringLiteral("output")][0].toObject();
        QCOMPARE(item[QStringLiteral("code")].toString(), QStringLiteral("print(7*7)"));
        QCOMPARE(item[QStringLiteral("outputs")][0][QStringLiteral("logs")].toString(),
                 QStringLiteral("49\n"));
        QVERIFY(
            call("GET", "/loopscope/v1/paused").json()[QStringLiteral("data")].toArray().isEmpty());

        QJsonObject recorded;
        QVERIFY(QTest::qWaitFor(
            [&] {
                recorded = flow(flowId);
                return recorded[QStringLiteral("state")].toString() == QLatin1String("completed");
            },
            20000));
        QJsonObject hop;
        for (const QJsonValue &h : recorded[QStringLiteral("hops")].toArray())
            if (h[QStringLiteral("kind")].toString() == QLatin1String("code_run"))
                hop = h.toObject();
        QCOMPARE(hop[QStringLiteral("decision")].toString(), QStringLiteral("edited"));
        QCOMPARE(hop[QStringLiteral("edited_from")].toString(), QStringLiteral("print(6*7)"));
        QCOMPARE(hop[QStringLiteral("code")].toString(), QStringLiteral("print(7*7)"));
        QCOMPARE(hop[QStringLiteral("stdout")].toString(), QStringLiteral("49\n"));
    }

    void abortOverTheApi() {
        m_upstream->enqueue(
            ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("print(1)"))));
        QCOMPARE(call("PUT", "/loopscope/v1/breakpoints", "{\"code\":true}").status, 200);
        auto client = send("POST", "/v1/responses", ciRequest());
        const QJsonObject pause = awaitPaused();
        const QString flowId = pause[QStringLiteral("flow_id")].toString();
        QCOMPARE(call("POST",
                      "/loopscope/v1/paused/" + pause[QStringLiteral("id")].toString().toUtf8(),
                      "{\"action\":\"abort\"}")
                     .status,
                 200);
        QVERIFY(QTest::qWaitFor([&] { return client->hasCompleteResponse(); }, 60000));
        const auto reply = client->take();
        QCOMPARE(reply.status, 409);
        QCOMPARE(errorCode(reply), QStringLiteral("aborted_by_user"));
        QCOMPARE(reply.json()[QStringLiteral("error")][QStringLiteral("type")].toString(),
                 QStringLiteral("invalid_request_error"));
        QJsonObject recorded;
        QVERIFY(QTest::qWaitFor(
            [&] {
                recorded = flow(flowId);
                return recorded[QStringLiteral("state")].toString() == QLatin1String("failed");
            },
            20000));
        QCOMPARE(recorded[QStringLiteral("status")].toInt(), 499);
        QVERIFY(QTest::qWaitFor([&] { return m_stack->registry()->size() == 0; }, 20000));
    }

    void eventNames() {
        for (const auto kind : {InspectorEvent::Kind::Paused, InspectorEvent::Kind::Resumed}) {
            const auto mapped = ControlEventStream::map(InspectorEvent::make(
                kind, QStringLiteral("req_1"), 0, {{QStringLiteral("id"), QStringLiteral("p")}}));
            QVERIFY(mapped);
            QCOMPARE(mapped->first, kind == InspectorEvent::Kind::Paused ? QByteArray("paused")
                                                                         : QByteArray("resumed"));
            QCOMPARE(mapped->second[QStringLiteral("flow_id")].toString(), QStringLiteral("req_1"));
        }
    }
};

QTEST_GUILESS_MAIN(TstBreakpointsApi)
#include "tst_breakpointsapi.moc"
