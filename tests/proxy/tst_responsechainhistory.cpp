// previous_response_id and conversation on routes where Loopscope keeps the Responses state
// (a chat-only route, bridged; a stateless Responses route, relayed) resolve from the flow
// history once the in-memory ResponseChainStore does not have them: the first turn is answered,
// the proxy, its stack and the store are stopped, a new one is started on the same SQLite file
// (empty in-memory chains, as after a Loopscope restart), and the second turn must reach the
// upstream with the first turn's messages. Real server, real SQLite file, scripted upstream on
// loopback.
#include "inspect/eventbus.h"
#include "loop/loopfixtures.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "record/flowstore.h"
#include "upstream/responsechainstore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace loopscope;
using namespace loopscope::test;

namespace {

using Api = UpstreamRoute::ResponsesApi;

QJsonObject chatCompletion(const QString &text) {
    return {
        {QStringLiteral("id"), QStringLiteral("chatcmpl-1")},
        {QStringLiteral("object"), QStringLiteral("chat.completion")},
        {QStringLiteral("model"), QStringLiteral("m")},
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                {QStringLiteral("message"),
                                 QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                             {QStringLiteral("content"), text}}},
                                {QStringLiteral("finish_reason"), QStringLiteral("stop")}}}},
        {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), 3},
                                              {QStringLiteral("completion_tokens"), 2},
                                              {QStringLiteral("total_tokens"), 5}}}};
}

QByteArray chatChunk(const QJsonObject &delta, const QJsonValue &finish) {
    const QJsonObject chunk{{QStringLiteral("id"), QStringLiteral("chatcmpl-1")},
                            {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
                            {QStringLiteral("model"), QStringLiteral("m")},
                            {QStringLiteral("choices"),
                             QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                                    {QStringLiteral("delta"), delta},
                                                    {QStringLiteral("finish_reason"), finish}}}}};
    return "data: " + QJsonDocument(chunk).toJson(QJsonDocument::Compact) + "\n\n";
}

// What an Ollama-like stateless /responses answers.
QJsonObject responsesAnswer(const QString &id, const QString &text) {
    QJsonObject response = loopfixtures::responsesMessage(text);
    response.insert(QStringLiteral("id"), id);
    return response;
}

// The response object of a Responses answer: the JSON body, or response.completed's.
QJsonObject responseOf(const RawHttpClient::Response &r) {
    if (!r.body.startsWith("event:") && !r.body.startsWith("data:"))
        return r.json();
    QJsonObject last;
    for (const QByteArray &line : r.body.split('\n')) {
        if (!line.startsWith("data:"))
            continue;
        const QJsonObject event = QJsonDocument::fromJson(line.mid(5).trimmed()).object();
        if (event.value(u"type").toString() == QLatin1String("response.completed"))
            last = event.value(u"response").toObject();
    }
    return last;
}

} // namespace

class TstResponseChainHistory : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::unique_ptr<ScriptedUpstream> m_upstream;
    std::unique_ptr<EventBus> m_bus;
    std::unique_ptr<FlowStore> m_store;
    std::unique_ptr<ProxyServer> m_proxy;
    InterceptionStack *m_stack = nullptr;

    // A Loopscope on the history file `name`: a new server, stack and in-memory chain store.
    void start(Api api, const QString &name) {
        m_bus = std::make_unique<EventBus>();
        FlowStoreOptions options;
        options.path = m_dir.filePath(name);
        options.batchIntervalMs = 20;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        QVERIFY2(m_store->open(&error), qPrintable(error));
        m_store->attach(m_bus.get());
        ProxyConfig config;
        config.host = QStringLiteral("127.0.0.1");
        config.port = 0;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream->baseUrl(), nullptr);
        QVERIFY(config.defaultRoute);
        config.defaultRoute->responsesApi = api;
        m_proxy = std::make_unique<ProxyServer>(config);
        m_proxy->setEventBus(m_bus.get());
        m_proxy->setFlowStore(m_store.get());
        m_stack = new InterceptionStack(m_proxy.get(), m_bus.get(), m_proxy.get());
        LocalSandboxOptions sandbox;
        sandbox.poolSize = 0;
        QVERIFY2(m_stack->init(sandbox, &error), qPrintable(error));
        QVERIFY(m_proxy->listen());
    }
    void stop() {
        if (m_store)
            m_store->flush(); // every finished flow is in the file
        if (m_stack) {
            QFuture<void> done = m_stack->shutdown();
            QTRY_VERIFY_WITH_TIMEOUT(done.isFinished(), 30000);
        }
        m_proxy.reset();
        m_stack = nullptr;
        m_store.reset();
        m_bus.reset();
    }
    RawHttpClient::Response post(const QJsonObject &body) {
        RawHttpClient client(m_proxy->port());
        client.request("POST", "/v1/responses", QJsonDocument(body).toJson(QJsonDocument::Compact),
                       {{"Authorization", "Bearer sk-client"}});
        if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 60000))
            return {};
        return client.take();
    }
    // The upstream's answer for one turn, as the route's upstream speaks.
    void enqueueAnswer(Api api, bool stream, const QString &id, const QString &text) {
        if (api == Api::Stateless) {
            m_upstream->enqueue(ScriptedUpstream::Response::json(responsesAnswer(id, text)));
        } else if (stream) {
            m_upstream->enqueue(ScriptedUpstream::Response::events(
                {chatChunk({{QStringLiteral("role"), QStringLiteral("assistant")},
                            {QStringLiteral("content"), text}},
                           QJsonValue::Null),
                 chatChunk({}, QStringLiteral("stop")), "data: [DONE]\n\n"}));
        } else {
            m_upstream->enqueue(ScriptedUpstream::Response::json(chatCompletion(text)));
        }
    }

private slots:
    void init() {
        QVERIFY(m_dir.isValid());
        m_upstream = std::make_unique<ScriptedUpstream>();
        QVERIFY(m_upstream->listen());
    }
    void cleanup() {
        stop();
        m_upstream.reset();
    }

    void chainResolvesAfterRestart_data() {
        QTest::addColumn<int>("api");
        QTest::addColumn<bool>("stream");
        QTest::addColumn<bool>("byConversation");
        // clang-format off
        QTest::newRow("chat-only, JSON, previous_response_id") << int(Api::ChatOnly) << false << false;
        QTest::newRow("chat-only, streamed, previous_response_id") << int(Api::ChatOnly) << true << false;
        QTest::newRow("chat-only, conversation") << int(Api::ChatOnly) << false << true;
        QTest::newRow("stateless, previous_response_id") << int(Api::Stateless) << false << false;
        QTest::newRow("stateless, conversation") << int(Api::Stateless) << false << true;
        // clang-format on
    }
    void chainResolvesAfterRestart() {
        QFETCH(int, api);
        QFETCH(bool, stream);
        QFETCH(bool, byConversation);
        const Api route = Api(api);
        const QString file = QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'_') +
                             QStringLiteral(".sqlite3");
        const QString conversation = QStringLiteral("conv_history_1");

        start(route, file);
        enqueueAnswer(route, stream, QStringLiteral("resp_upstream_1"),
                      QStringLiteral("Paris is the capital."));
        QJsonObject first{
            {QStringLiteral("model"), QStringLiteral("m")},
            {QStringLiteral("input"), QStringLiteral("What is the capital of France?")},
            {QStringLiteral("stream"), stream}};
        if (byConversation)
            first.insert(QStringLiteral("conversation"), conversation);
        const RawHttpClient::Response one = post(first);
        QCOMPARE(one.status, 200);
        const QString firstId = responseOf(one).value(u"id").toString();
        QVERIFY2(!firstId.isEmpty(), one.body.constData());
        stop();

        start(route, file); // a new Loopscope: nothing in memory, the same history file
        const int before = m_upstream->requestCount();
        enqueueAnswer(route, false, QStringLiteral("resp_upstream_2"),
                      QStringLiteral("2 million."));
        QJsonObject second{{QStringLiteral("model"), QStringLiteral("m")},
                           {QStringLiteral("input"), QStringLiteral("And its population?")}};
        if (byConversation)
            second.insert(QStringLiteral("conversation"), conversation);
        else
            second.insert(QStringLiteral("previous_response_id"), firstId);
        const RawHttpClient::Response two = post(second);
        QVERIFY2(two.status == 200, two.body.constData());
        QCOMPARE(m_upstream->requestCount(), before + 1);
        const QByteArray sent = m_upstream->requests().constLast().body;
        const qsizetype question = sent.indexOf("What is the capital of France?");
        const qsizetype answer = sent.indexOf("Paris is the capital.");
        const qsizetype next = sent.indexOf("And its population?");
        QVERIFY2(question >= 0 && answer > question && next > answer, sent.constData());
        QVERIFY(!sent.contains("previous_response_id"));

        // And the chain goes on from the turn the history gave back (now in memory again).
        enqueueAnswer(route, false, QStringLiteral("resp_upstream_3"), QStringLiteral("Yes."));
        QJsonObject third{{QStringLiteral("model"), QStringLiteral("m")},
                          {QStringLiteral("input"), QStringLiteral("Sure?")}};
        if (byConversation)
            third.insert(QStringLiteral("conversation"), conversation);
        else
            third.insert(QStringLiteral("previous_response_id"),
                         responseOf(two).value(u"id").toString());
        QCOMPARE(post(third).status, 200);
        const QByteArray thirdSent = m_upstream->requests().constLast().body;
        QVERIFY2(thirdSent.contains("What is the capital of France?") &&
                     thirdSent.contains("2 million.") && thirdSent.contains("Sure?"),
                 thirdSent.constData());
    }

    // Within one run: a turn the bounded in-memory store already evicted comes from the history.
    void evictedTurnComesFromHistory() {
        start(Api::ChatOnly, QStringLiteral("evicted.sqlite3"));
        auto chains = std::make_shared<ResponseChainStore>();
        m_proxy->setResponseChains(chains);
        enqueueAnswer(Api::ChatOnly, false, {}, QStringLiteral("Paris is the capital."));
        const RawHttpClient::Response one =
            post({{QStringLiteral("model"), QStringLiteral("m")},
                  {QStringLiteral("input"), QStringLiteral("What is the capital of France?")}});
        QCOMPARE(one.status, 200);
        const QString firstId = responseOf(one).value(u"id").toString();
        QVERIFY(chains->contains(firstId));
        m_store->flush();
        for (int i = 0; i < ResponseChainStore::kMaxResponses; ++i)
            chains->add(QStringLiteral("resp_filler_%1").arg(i), {}, QJsonArray{});
        QVERIFY(!chains->contains(firstId));

        enqueueAnswer(Api::ChatOnly, false, {}, QStringLiteral("2 million."));
        const RawHttpClient::Response two =
            post({{QStringLiteral("model"), QStringLiteral("m")},
                  {QStringLiteral("input"), QStringLiteral("And its population?")},
                  {QStringLiteral("previous_response_id"), firstId}});
        QVERIFY2(two.status == 200, two.body.constData());
        const QByteArray sent = m_upstream->requests().constLast().body;
        QVERIFY2(sent.contains("What is the capital of France?") &&
                     sent.contains("Paris is the capital."),
                 sent.constData());
        QVERIFY(chains->contains(firstId)); // put back in memory
    }

    void unknownIdIsNotFound_data() {
        QTest::addColumn<int>("api");
        QTest::newRow("chat-only") << int(Api::ChatOnly);
        QTest::newRow("stateless") << int(Api::Stateless);
    }
    void unknownIdIsNotFound() {
        QFETCH(int, api);
        start(Api(api),
              QStringLiteral("unknown-") + QString::number(api) + QStringLiteral(".sqlite3"));
        const RawHttpClient::Response r =
            post({{QStringLiteral("model"), QStringLiteral("m")},
                  {QStringLiteral("input"), QStringLiteral("hi")},
                  {QStringLiteral("previous_response_id"), QStringLiteral("resp_never")}});
        QCOMPARE(r.status, 404);
        const QJsonObject error = r.json().value(u"error").toObject();
        QCOMPARE(error.value(u"code").toString(), QStringLiteral("previous_response_not_found"));
        QCOMPARE(error.value(u"param").toString(), QStringLiteral("previous_response_id"));
        QCOMPARE(m_upstream->requestCount(), 0);
    }
};

QTEST_MAIN(TstResponseChainHistory)
#include "tst_responsechainhistory.moc"
