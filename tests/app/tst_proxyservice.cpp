// ProxyService's lifetimes and its proxy thread (issue 30), against the real service on its own
// thread behind ServiceProxyControl and a loopback ScriptedUpstream: a restart while a loop is
// paused at a breakpoint with its stream open ends that flow failed with the reason, and a
// resolve sent to the stopped proxy's pause reaches nothing freed; a request is served while
// the start-up sandbox probe is held on its worker, and while the sandbox driver's compile is
// held on its thread (only the request that needs a sandbox waits for it).
#include "commandline.h"
#include "serviceproxycontrol.h"

#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "loop/pausebroker.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowquery.h"
#include "record/flowstore.h"
#include "runtime/proxyservice.h"
#include "sandbox/local/localsandboxoptions.h"
#include "sandbox/local/sandboxdriverpayload.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <QtTest>

#include <memory>

using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

constexpr int kWaitMs = 60000;

QByteArray codeRequest(const QString &code, bool stream) {
    const QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), code}, // the scripted model runs the input as code
        {QStringLiteral("stream"), stream},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

// A test hook that says it got there, then waits to be let go, at the latest when the Hold
// goes: declared after the App, a hook held on the proxy thread cannot hold the app's stop.
struct Hold {
    std::shared_ptr<QSemaphore> entered = std::make_shared<QSemaphore>();
    std::shared_ptr<QSemaphore> released = std::make_shared<QSemaphore>();
    ~Hold() { released->release(1000); }
    std::function<void()> hook() const {
        return [entered = entered, released = released] {
            entered->release();
            released->acquire();
        };
    }
    bool reached() const { return entered->tryAcquire(1, kWaitMs); }
    void release() const { released->release(); }
};

const QList<QPair<QByteArray, QByteArray>> kHeaders{
    {"authorization", "Bearer sk-proxyservice-test-0001"}, {"content-type", "application/json"}};

} // namespace

class TestProxyService : public QObject {
    Q_OBJECT

    QTemporaryDir m_settings;
    ScriptedUpstream m_upstream;

    // The app's start, minus the window: --port 0 on the scripted upstream, no history file.
    struct App {
        loopscope::EventBus events;
        loopscope::ProxyService service{&events};
        loopscope::ProxyConfig config;
        loopscope::SettingsSources sources;
        std::unique_ptr<ServiceProxyControl> control;
        QString pool = QStringLiteral("0"); // --sandbox-pool

        bool start(const QString &upstream, QString *error) {
            const CommandLine cli = CommandLine::parse(
                {QStringLiteral("loopscope"), QStringLiteral("--port"), QStringLiteral("0"),
                 QStringLiteral("--upstream"), upstream, QStringLiteral("--no-history"),
                 QStringLiteral("--sandbox-pool"), pool});
            if (cli.exitCode != 0) {
                *error = cli.error;
                return false;
            }
            sources = cli.settingsInEffect(QSettings());
            config = cli.config;
            if (!CommandLine::applyToConfig(sources, &config, error) ||
                !service.start(config, error))
                return false;
            control = std::make_unique<ServiceProxyControl>(&service, config, sources);
            return true;
        }
        quint16 port() const { return quint16(control->listenUrl().port()); }
    };

private slots:
    void initTestCase() {
        QVERIFY(m_settings.isValid());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settings.path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settings.path());
        QCoreApplication::setOrganizationName(QStringLiteral("LoopscopeProxyServiceTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_proxyservice"));
        m_upstream.setResponder([](const ScriptedUpstream::Request &request) {
            // The input is the code to run; once its output is back, a final answer.
            const QJsonValue input = request.json().value(QStringLiteral("input"));
            for (const QJsonValue &v : input.toArray())
                if (v.toObject().value(QStringLiteral("type")).toString() ==
                    QLatin1String("function_call_output"))
                    return ScriptedUpstream::Response::json(
                        loopfixtures::responsesMessage(QStringLiteral("done")));
            return ScriptedUpstream::Response::json(
                loopfixtures::responsesFunctionCall(input.toString()));
        });
        QVERIFY(m_upstream.listen());
    }

    void init() { QSettings().clear(); }

    void restartWhilePausedFailsTheFlowWithTheReason();
    void requestIsServedWhileTheStartupProbeIsHeld();
    void requestIsServedWhileTheDriverCompileIsHeld();
};

void TestProxyService::restartWhilePausedFailsTheFlowWithTheReason() {
    App app;
    QString error;
    QVERIFY2(app.start(m_upstream.baseUrl(), &error), qPrintable(error));
    // Pauses as the window sees them: from the bus, on this thread.
    QList<QJsonObject> paused;
    QObject context;
    connect(&app.events, &loopscope::EventBus::eventPublished, &context,
            [&paused](const loopscope::InspectorEvent &event) {
                if (event.kind == loopscope::InspectorEvent::Kind::Paused)
                    paused << event.data;
            });
    app.control->setPauseBeforeCode(true);
    // ": paused" every 100 ms instead of 10 s: the open stream shows itself quickly.
    QVERIFY(app.service.withPauseBroker(
        [](loopscope::PauseBroker *broker) { broker->setHeartbeatIntervalMs(100); }));

    RawHttpClient client(app.port());
    client.request("POST", "/v1/responses",
                   codeRequest(QStringLiteral("print('marker-' + 'ran')"), true), kHeaders);
    QTRY_COMPARE_WITH_TIMEOUT(paused.size(), 1, kWaitMs);
    const QString pauseId = paused.at(0).value(QStringLiteral("id")).toString();
    const QString flowId = paused.at(0).value(QStringLiteral("flow_id")).toString();
    QVERIFY(!pauseId.isEmpty() && !flowId.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(client.received().contains(": paused"), kWaitMs); // stream open
    QCOMPARE(client.current().status, 200);
    QVERIFY(!client.hasCompleteResponse());

    // A proxy setting changed in the window: stop, then start again. The resolve right after
    // it finds a proxy that is stopping; the one after the restart a broker that never knew
    // the pause. Neither may reach the old broker.
    QSignalSpy restarted(app.control.get(), &loopscope::ProxyControl::restarted);
    loopscope::AppSettings changed = app.control->settingsInEffect().values();
    changed.maxLoops += 1;
    app.control->applySettings(changed);
    const QJsonObject run{{QStringLiteral("action"), QStringLiteral("continue")}};
    app.control->resolvePause(pauseId, run);
    QVERIFY(restarted.wait(kWaitMs));
    app.control->resolvePause(pauseId, run);

    // The paused request failed, saying why, on its open stream.
    QTRY_VERIFY_WITH_TIMEOUT(client.hasCompleteResponse() || client.isDisconnected(), kWaitMs);
    QVERIFY2(client.received().contains("The proxy stopped while this request was paused"),
             client.received().constData());
    QVERIFY(!client.received().contains("marker-ran")); // the code never ran
    // ... and so does its flow, kept across the restart.
    // Read on a pool of its own that ends, with its read connection, before the store does.
    QThreadPool reads;
    const loopscope::FlowQuery *query = app.service.flowStore()->query();
    const auto flow = [&] {
        return QtConcurrent::run(
                   &reads, [query, flowId] { return query->flow(flowId).value_or(QJsonObject()); })
            .result();
    };
    QTRY_COMPARE_WITH_TIMEOUT(flow().value(QStringLiteral("state")).toString(),
                              QStringLiteral("failed"), kWaitMs);
    QVERIFY2(flow()
                 .value(QStringLiteral("incomplete_reason"))
                 .toString()
                 .contains(QStringLiteral("The proxy stopped")),
             QJsonDocument(flow()).toJson().constData());

    // The restarted proxy pauses and resolves as before (the setting was re-applied).
    paused.clear();
    RawHttpClient next(app.port());
    next.request("POST", "/v1/responses", codeRequest(QStringLiteral("print(6 * 7)"), false),
                 kHeaders);
    QTRY_COMPARE_WITH_TIMEOUT(paused.size(), 1, kWaitMs);
    app.control->resolvePause(paused.at(0).value(QStringLiteral("id")).toString(), run);
    QTRY_VERIFY_WITH_TIMEOUT(next.hasCompleteResponse(), kWaitMs);
    QCOMPARE(next.current().status, 200);
}

void TestProxyService::requestIsServedWhileTheStartupProbeIsHeld() {
    // The probe waits on `release` after saying it got there: a probe on the proxy thread
    // would hold every request below until the end of the test.
    App app;
    const Hold probe;
    app.service.setSandboxOptionsHook(
        [hook = probe.hook()](loopscope::LocalSandboxOptions &o) { o.beforeSelfTestProbe = hook; });
    QString error;
    QVERIFY2(app.start(m_upstream.baseUrl(), &error), qPrintable(error));
    QVERIFY(probe.reached());
    QVERIFY(!app.service.sandboxHealthKnown());

    // A request that needs a sandbox: it waits for that, not for the probe.
    RawHttpClient client(app.port());
    client.request("POST", "/v1/responses", codeRequest(QStringLiteral("print(6 * 7)"), false),
                   kHeaders);
    QTRY_VERIFY_WITH_TIMEOUT(client.hasCompleteResponse(), kWaitMs);
    QCOMPARE(client.current().status, 200);
    QVERIFY2(QJsonDocument(client.current().json()).toJson().contains("42"),
             client.current().body.constData());
    QVERIFY(!app.service.sandboxHealthKnown()); // still held

    QSignalSpy health(&app.service, &loopscope::ProxyService::sandboxHealthChanged);
    probe.release();
    QVERIFY(health.wait(kWaitMs));
    QVERIFY(app.service.sandboxHealthKnown());
}

void TestProxyService::requestIsServedWhileTheDriverCompileIsHeld() {
    // The first sandbox's driver compile waits on `release`: compiled on the proxy thread (by
    // the pool's refill or the first create, as before), it would hold the plain request too.
    loopscope::SandboxDriverPayload::forgetForTests(); // an earlier test compiled it already
    App app;
    const Hold compile;
    app.pool = QStringLiteral("2"); // the refill must not start interpreters before the driver
    app.service.setSandboxOptionsHook([hook = compile.hook()](loopscope::LocalSandboxOptions &o) {
        o.beforeDriverCompile = hook;
    });
    QString error;
    QVERIFY2(app.start(m_upstream.baseUrl(), &error), qPrintable(error));
    QVERIFY(compile.reached());

    // Needs a sandbox, so it waits for the compile: once the model's answer is in, the loop
    // asks for a sandbox (before, that compiled the driver on the proxy thread) ...
    int modelAnswers = 0;
    QObject context;
    connect(&app.events, &loopscope::EventBus::eventPublished, &context,
            [&modelAnswers](const loopscope::InspectorEvent &event) {
                if (event.kind == loopscope::InspectorEvent::Kind::UpstreamCall)
                    ++modelAnswers;
            });
    RawHttpClient code(app.port());
    code.request("POST", "/v1/responses", codeRequest(QStringLiteral("print(6 * 7)"), false),
                 kHeaders);
    QTRY_COMPARE_WITH_TIMEOUT(modelAnswers, 1, kWaitMs);
    // ... while a request that needs none is answered meanwhile.
    RawHttpClient plain(app.port());
    plain.request("POST", "/v1/responses",
                  QJsonDocument(QJsonObject{{QStringLiteral("model"), QStringLiteral("gpt-5")},
                                            {QStringLiteral("input"), QStringLiteral("hi")}})
                      .toJson(QJsonDocument::Compact),
                  kHeaders);
    QTRY_VERIFY_WITH_TIMEOUT(plain.hasCompleteResponse(), kWaitMs);
    QCOMPARE(plain.current().status, 200);
    QVERIFY(!code.hasCompleteResponse()); // the compile is still held: it cannot have run

    compile.release();
    QTRY_VERIFY_WITH_TIMEOUT(code.hasCompleteResponse(), kWaitMs);
    QCOMPARE(code.current().status, 200);
    QVERIFY2(QJsonDocument(code.current().json()).toJson().contains("42"),
             code.current().body.constData());
}

QTEST_GUILESS_MAIN(TestProxyService)
#include "tst_proxyservice.moc"
