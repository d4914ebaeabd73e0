// The window's breakpoint controls against the real thing: ProxyServer + InterceptionStack
// (real bubblewrap sandboxes, its PauseBroker), a scripted upstream model, requests over
// loopback. The toolbar toggle turns the `code` breakpoint on; a paused flow shows the banner
// with its code and the Requests row reads "paused"; Run edited runs the edited code; Deny
// feeds the message back to the model.
#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "loop/pausebroker.h"
#include "models/flowlistmodel.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowstore.h"
#include "sandbox/sandboxregistry.h"
#include "widgets/mainwindow.h"
#include "widgets/pausedbanner.h"
#include "widgets/proxycontrol.h"

#include <QAction>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;
using namespace loopfixtures;

namespace {

// The window's ProxyControl over an in-process broker, queued like app/ServiceProxyControl.
class BrokerProxyControl : public ProxyControl {
public:
    explicit BrokerProxyControl(PauseBroker *broker)
        : m_broker(broker) {}
    QUrl listenUrl() const override { return QUrl(QStringLiteral("http://127.0.0.1:1")); }
    QString upstream() const override { return QStringLiteral("scripted"); }
    bool isRunning() const override { return true; }
    QString sandboxBackend() const override { return QStringLiteral("local"); }
    QString sandboxSelfTest() const override { return {}; }
    void start() override {}
    void stop() override {}
    void setPauseBeforeCode(bool on) override {
        QMetaObject::invokeMethod(
            m_broker,
            [b = m_broker, on] {
                BreakpointSettings s = b->settings();
                s.code = on;
                b->setSettings(s);
            },
            Qt::QueuedConnection);
    }
    void resolvePause(const QString &id, const QJsonObject &decision) override {
        QMetaObject::invokeMethod(
            m_broker, [b = m_broker, id, decision] { b->resolve(id, decision); },
            Qt::QueuedConnection);
    }
    void autoApprovePauses(const QString &key) override {
        QMetaObject::invokeMethod(
            m_broker, [b = m_broker, key] { b->setAutoApprove(key, true); }, Qt::QueuedConnection);
    }

private:
    PauseBroker *m_broker;
};

ScriptedUpstream::Response model(const ScriptedUpstream::Request &request) {
    const QJsonValue input = request.json().value(QStringLiteral("input"));
    if (input.isArray()) {
        const QJsonObject last = input.toArray().last().toObject();
        if (last.value(QStringLiteral("type")).toString() == QLatin1String("function_call_output"))
            return ScriptedUpstream::Response::json(responsesMessage(
                QStringLiteral("got: ") + last.value(QStringLiteral("output")).toString()));
    }
    return ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("print(6*7)")));
}

const QByteArray kBody = "{\"model\":\"gpt-5\",\"input\":\"go\",\"tools\":[{\"type\":"
                         "\"code_interpreter\",\"container\":{\"type\":\"auto\"}}]}";

} // namespace

class TstPausedWindow : public QObject {
    Q_OBJECT

    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<ProxyServer> m_server;
    std::unique_ptr<InterceptionStack> m_stack;
    std::unique_ptr<BrokerProxyControl> m_control;
    std::unique_ptr<FlowStore> m_store; // the window's history (in memory)
    std::unique_ptr<MainWindow> m_window;

    std::unique_ptr<RawHttpClient> startRequest() {
        auto client = std::make_unique<RawHttpClient>(m_server->port());
        client->request("POST", "/v1/responses", kBody,
                        {{"authorization", "Bearer sk-window-pause-0001"},
                         {"content-type", "application/json"}});
        return client;
    }
    QString messageText(const RawHttpClient::Response &reply) {
        for (const QJsonValue &item : reply.json()[QStringLiteral("output")].toArray())
            if (item[QStringLiteral("type")].toString() == QLatin1String("message"))
                return item[QStringLiteral("content")][0][QStringLiteral("text")].toString();
        return {};
    }
    // The banner shows the pause, the dock is visible, the row reads "paused".
    void expectBanner() {
        PausedBanner *banner = m_window->pausedBanner();
        QVERIFY(QTest::qWaitFor([&] { return banner->pendingCount() == 1; }, 60000));
        QVERIFY(banner->isVisibleTo(m_window.get()));
        QCOMPARE(banner->editor()->toPlainText(), QStringLiteral("print(6*7)"));
        QVERIFY(!banner->runEditedButton()->isEnabled()); // nothing edited yet
        QVERIFY(QTest::qWaitFor(
            [&] {
                const QModelIndex status =
                    m_window->flowListModel()->index(0, FlowListModel::StatusColumn);
                return status.data().toString() == QLatin1String("paused");
            },
            20000));
    }

private slots:
    void init() {
        m_upstream = std::make_unique<ScriptedUpstream>();
        m_upstream->setResponder(model);
        QVERIFY(m_upstream->listen());
        m_bus = std::make_unique<EventBus>();
        ProxyConfig config;
        config.port = 0;
        QString error;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), &error);
        QVERIFY2(config.defaultRoute, qPrintable(error));
        m_server = std::make_unique<ProxyServer>(config);
        m_stack = std::make_unique<InterceptionStack>(m_server.get(), m_bus.get());
        LocalSandboxOptions options;
        options.poolSize = 1;
        QVERIFY2(m_stack->init(options, &error), qPrintable(error));
        QVERIFY(m_server->listen());
        m_control = std::make_unique<BrokerProxyControl>(m_stack->pauseBroker());
        FlowStoreOptions history;
        history.inMemory = true;
        m_store = std::make_unique<FlowStore>(history);
        QVERIFY(m_store->open());
        m_store->attach(m_bus.get());
        m_window = std::make_unique<MainWindow>(m_bus.get(), m_stack->registry(), m_control.get());
        m_window->setFlowStore(m_store.get());
        m_window->resize(1200, 800);
        m_window->show();
        m_window->pausedBanner()->askDenyMessage = [](const QString &, bool *ok) {
            *ok = true;
            return QStringLiteral("Not from the window.");
        };
    }
    void cleanup() {
        m_window.reset();
        if (m_stack) {
            auto done = m_stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20000));
        }
        m_control.reset();
        m_store.reset();
        m_stack.reset();
        m_server.reset();
        m_upstream.reset();
        m_bus.reset();
    }

    void toggleTurnsTheCodeBreakpointOnAndOff() {
        QAction *toggle = m_window->pauseBeforeCodeAction();
        QVERIFY(toggle->isCheckable());
        QVERIFY(!toggle->isChecked());
        QVERIFY(!m_window->pausedBanner()->isVisibleTo(m_window.get()));
        toggle->trigger();
        QVERIFY(QTest::qWaitFor([&] { return m_stack->pauseBroker()->settings().code; }, 5000));
        toggle->trigger();
        QVERIFY(QTest::qWaitFor([&] { return !m_stack->pauseBroker()->settings().code; }, 5000));
    }

    void runEditedRunsTheEditorsCode() {
        m_window->pauseBeforeCodeAction()->trigger();
        auto client = startRequest();
        expectBanner();
        PausedBanner *banner = m_window->pausedBanner();
        banner->editor()->setPlainText(QStringLiteral("print(7*7)"));
        QVERIFY(banner->runEditedButton()->isEnabled());
        QTest::mouseClick(banner->runEditedButton(), Qt::LeftButton);
        QVERIFY(QTest::qWaitFor([&] { return client->hasCompleteResponse(); }, 60000));
        const auto reply = client->take();
        QCOMPARE(reply.status, 200);
        QCOMPARE(messageText(reply), QStringLiteral("got: 49\n"));
        QVERIFY(QTest::qWaitFor([&] { return banner->pendingCount() == 0; }, 20000));
        QVERIFY(!banner->isVisibleTo(m_window.get()));
    }

    void denyFeedsTheMessageBack() {
        m_window->pauseBeforeCodeAction()->trigger();
        auto client = startRequest();
        expectBanner();
        PausedBanner *banner = m_window->pausedBanner();
        banner->editor()->setFocus();
        QTest::keyClick(banner->editor(), Qt::Key_Backspace, Qt::ControlModifier); // Deny
        QVERIFY(QTest::qWaitFor([&] { return client->hasCompleteResponse(); }, 60000));
        const auto reply = client->take();
        QCOMPARE(reply.status, 200);
        QCOMPARE(messageText(reply), QStringLiteral("got: Not from the window."));
        const QJsonObject call = reply.json()[QStringLiteral("output")][0].toObject();
        QCOMPARE(call[QStringLiteral("status")].toString(), QStringLiteral("failed"));
        QVERIFY(QTest::qWaitFor([&] { return banner->pendingCount() == 0; }, 20000));
    }
};

QTEST_MAIN(TstPausedWindow)
#include "tst_pausedwindow.moc"
