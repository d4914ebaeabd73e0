// The conversation view over flows of a REAL session: ProxyServer + InterceptionStack (agentic
// loop, local bubblewrap sandboxes) with the built-in demo model, requests over loopback, the
// flows recorded by a FlowStore on the same EventBus. Proves the decoding against the shapes
// the proxy really records (not only the hand-fed events of conversationflows.h).
#include "inspect/eventbus.h"
#include "models/conversation.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "record/flowstore.h"
#include "sandbox/local/localpythonbackend.h"
#include "widgets/conversationview.h"
#include "widgets/diffview.h"
#include "widgets/injectedpanel.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;

class TstConversationLive : public QObject {
    Q_OBJECT

    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<ProxyServer> m_server;
    std::unique_ptr<InterceptionStack> m_stack;

    // POSTs and returns the flow the store recorded for it (the newest flow).
    QJsonObject roundTrip(const QByteArray &path, const QJsonObject &body) {
        RawHttpClient client(m_server->port());
        client.request("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact),
                       {{"authorization", "Bearer sk-conversation-test-4242"},
                        {"content-type", "application/json"}});
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60'000))
            return {};
        const auto reply = client.take();
        if (reply.status != 200)
            qWarning("status %d", reply.status);
        QJsonObject flow;
        // The flow is finalized after the exchange's last event; wait for it in the store.
        const bool recorded = QTest::qWaitFor(
            [&] {
                m_store->flush();
                FlowFilter newest;
                newest.limit = 1;
                const QJsonArray list =
                    m_store->query()->list(newest).value(QStringLiteral("data")).toArray();
                if (list.isEmpty() ||
                    list.first().toObject().value(QStringLiteral("state")).toString() ==
                        QLatin1String("running"))
                    return false;
                flow = m_store->query()
                           ->flow(list.first().toObject().value(QStringLiteral("id")).toString())
                           .value_or(QJsonObject());
                return true;
            },
            20'000);
        return recorded ? flow : QJsonObject();
    }

    static QJsonObject codeTool() {
        return {{QStringLiteral("type"), QStringLiteral("code_interpreter")}};
    }

private slots:
    void init() {
        m_bus = std::make_unique<EventBus>();
        FlowStoreOptions storeOptions;
        storeOptions.inMemory = true;
        m_store = std::make_unique<FlowStore>(storeOptions);
        QString error;
        QVERIFY2(m_store->open(&error), qPrintable(error));
        m_store->attach(m_bus.get());
        ProxyConfig config;
        config.port = 0;
        config.defaultRoute = ProxyConfig::demoRoute();
        m_server = std::make_unique<ProxyServer>(config);
        m_stack = std::make_unique<InterceptionStack>(m_server.get(), m_bus.get());
        LocalSandboxOptions options;
        options.poolSize = 1;
        QVERIFY2(m_stack->init(options, &error), qPrintable(error));
        QVERIFY2(m_server->listen(), qPrintable(m_server->errorString()));
        if (!m_stack->localBackend()->selfTest().available)
            QSKIP("local sandbox unavailable on this machine (see LocalPythonBackend::selfTest)");
    }

    void cleanup() {
        if (m_stack) {
            auto done = m_stack->shutdown();
            QVERIFY(QTest::qWaitFor([&] { return done.isFinished(); }, 20'000));
        }
        m_stack.reset();
        m_server.reset();
        m_store.reset();
        m_bus.reset();
    }

    void realLoop_data() {
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<bool>("stream");
        QTest::newRow("responses") << QByteArray("/v1/responses") << false;
        QTest::newRow("responses streamed") << QByteArray("/v1/responses") << true;
        QTest::newRow("chat") << QByteArray("/v1/chat/completions") << false;
        QTest::newRow("chat streamed") << QByteArray("/v1/chat/completions") << true;
    }

    void realLoop() {
        QFETCH(QByteArray, path);
        QFETCH(bool, stream);
        const bool chat = path.contains("chat");
        QJsonObject body{{QStringLiteral("model"), QStringLiteral("loopscope-demo")},
                         {QStringLiteral("stream"), stream},
                         {QStringLiteral("tools"), QJsonArray{codeTool()}}};
        if (chat)
            body.insert(QStringLiteral("messages"),
                        QJsonArray{QJsonObject{
                            {QStringLiteral("role"), QStringLiteral("user")},
                            {QStringLiteral("content"), QStringLiteral("What is 17*23?")}}});
        else
            body.insert(QStringLiteral("input"), QStringLiteral("What is 17*23?"));
        const QJsonObject flow = roundTrip(path, body);
        QVERIFY2(!flow.isEmpty(), "the store recorded the flow");

        const Conversation c = Conversation::fromFlow(flow);
        if (qEnvironmentVariableIsSet("LOOPSCOPE_TEST_DUMP")) // to eyeball a real conversation
            qInfo().noquote() << c.text(false);
        QVERIFY2(c.iterations().size() >= 2, qPrintable(c.text()));
        // Iteration 1: the model's code, decoded to Python source.
        const Conversation::Entry *code = nullptr;
        for (const Conversation::Entry &e : c.iterations().at(0).reply)
            if (e.kind == Conversation::Kind::CodeCall)
                code = &e;
        QVERIFY2(code, qPrintable(c.text()));
        QCOMPARE(code->format, Conversation::Format::Python);
        QVERIFY2(code->text.contains(QLatin1String("17")) && !code->text.startsWith(u'{'),
                 qPrintable(code->text));
        // The exact output fed back, and the same text sent at iteration 2.
        QCOMPARE(c.iterations().at(0).fedBack.size(), 1);
        const QString fed = c.iterations().at(0).fedBack.first().text;
        QVERIFY2(fed.contains(QLatin1String("391")), qPrintable(fed));
        bool sentBack = false;
        for (const Conversation::Entry &e : c.iterations().at(1).sent)
            sentBack =
                sentBack || (e.isNew && e.kind == Conversation::Kind::ToolOutput && e.text == fed);
        QVERIFY2(sentBack, qPrintable(c.iterationText(1, false)));
        // The final answer the client got.
        QVERIFY2(c.finalText().contains(QLatin1String("391")), qPrintable(c.finalText()));

        ConversationView view;
        view.setFlow(flow);
        QVERIFY(view.text().contains(QLatin1String("Final answer to the client")));
        QVERIFY(view.text().contains(code->text.section(u'\n', 0, 0)));
        DiffView diff;
        diff.compareIterations(flow, 0, 1);
        QVERIFY(diff.addedCount() > 0);

        InjectedPanel injected;
        injected.setFlow(flow);
        // Only the Responses API carries code_interpreter_call items to the client.
        QCOMPARE(injected.items().size(), chat ? 0 : 1);
    }
};

QTEST_MAIN(TstConversationLive)
#include "tst_conversationlive.moc"
