// The production driver's contract around the sandbox, on every path: one sandbox per request,
// deleted exactly once (post hook on an answer, cleanup hook on a failure or a hang-up), a
// session sandbox kept, and the recorded calls in the order the code ran. The model is a
// ScriptedUpstream, the sandbox a RecordingSandboxBackend, everything else is production code.
#include "http/httpserver.h"
#include "interception/codeinterpreterinterception.h"
#include "loop/loopdriver.h"
#include "loopfixtures.h"
#include "sandbox/sandboxregistry.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"

#include <QJsonArray>
#include <QTest>

using namespace loopscope;
using loopscope::test::LoopDriver;
using loopscope::test::ScriptedUpstream;
using namespace loopfixtures;

namespace {

QJsonObject ciRequest(const QJsonObject &metadata = {}) {
    QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("compute")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")}}}}};
    if (!metadata.isEmpty())
        body.insert(QStringLiteral("metadata"), metadata);
    return body;
}

QStringList codesOf(const QJsonObject &response) {
    QStringList codes;
    for (const QJsonValue &item : response.value(QStringLiteral("output")).toArray())
        if (item.toObject().value(QStringLiteral("type")).toString() ==
            QLatin1String("code_interpreter_call"))
            codes << item.toObject().value(QStringLiteral("code")).toString();
    return codes;
}

ScriptedUpstream::Response upstreamError() {
    return ScriptedUpstream::Response::json(
        500, QByteArray(R"({"error":{"message":"upstream blew up","type":"server_error"}})"));
}

} // namespace

class TestLoopCleanup : public QObject {
    Q_OBJECT

    std::unique_ptr<SandboxRegistry> registry;
    std::unique_ptr<RecordingSandboxBackend> sandbox;
    std::unique_ptr<CodeInterpreterInterception> interception;

private slots:
    void init() {
        registry = std::make_unique<SandboxRegistry>();
        sandbox = std::make_unique<RecordingSandboxBackend>();
        sandbox->uniqueIds = true;
        interception = std::make_unique<CodeInterpreterInterception>(InterceptionSettings{},
                                                                     registry.get(), sandbox.get());
    }
    void cleanup() {
        awaitFuture(registry->removeAll());
        interception.reset();
        sandbox.reset();
        registry.reset();
    }

    // codeRounds: how often the model calls the code tool before it answers (or fails).
    void everyPathDeletesTheSandboxExactlyOnce_data() {
        QTest::addColumn<int>("codeRounds");
        QTest::addColumn<int>("maxLoops");
        QTest::addColumn<bool>("followUpFails");
        QTest::addColumn<bool>("runFails");
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("expectedRuns");
        QTest::newRow("answer without code") << 0 << 3 << false << false << 200 << 0;
        QTest::newRow("one round") << 1 << 3 << false << false << 200 << 1;
        QTest::newRow("three rounds at max 3") << 3 << 3 << false << false << 200 << 3;
        QTest::newRow("ceiling: four rounds at max 3") << 4 << 3 << false << false << 200 << 3;
        QTest::newRow("follow-up call fails") << 1 << 3 << true << false << 500 << 1;
        QTest::newRow("sandbox fails while running") << 1 << 3 << false << true << 502 << 1;
    }
    void everyPathDeletesTheSandboxExactlyOnce() {
        QFETCH(int, codeRounds);
        QFETCH(int, maxLoops);
        QFETCH(bool, followUpFails);
        QFETCH(bool, runFails);
        QFETCH(int, status);
        QFETCH(int, expectedRuns);
        sandbox->failRun = runFails;
        LoopDriver loop(interception.get(), maxLoops);
        for (int round = 1; round <= codeRounds; ++round)
            loop.upstream.enqueue(ScriptedUpstream::Response::json(responsesFunctionCall(
                QStringLiteral("print(%1)").arg(round), QStringLiteral("call_%1").arg(round))));
        loop.upstream.enqueue(followUpFails ? upstreamError()
                                            : ScriptedUpstream::Response::json(
                                                  responsesMessage(QStringLiteral("done"))));

        const auto reply = loop.post("/v1/responses", ciRequest());
        QCOMPARE(reply.status, status);
        QVERIFY(loop.idle());
        QCOMPARE(sandbox->createCount(), codeRounds > 0 ? 1 : 0);
        QCOMPARE(sandbox->runCount(), expectedRuns);
        QTRY_COMPARE_WITH_TIMEOUT(sandbox->removeCount(), codeRounds > 0 ? 1 : 0, 20000);
        QCOMPARE(registry->size(), 0);
        QVERIFY(sandbox->liveIds.isEmpty());
        if (status != 200)
            return;

        // The calls that ran, once each, in the order they ran (never the internal function).
        QStringList expected;
        for (int round = 1; round <= expectedRuns; ++round)
            expected << QStringLiteral("print(%1)").arg(round);
        QCOMPARE(codesOf(reply.json()), expected);
        const bool ceiling = codeRounds > maxLoops;
        QCOMPARE(reply.json().value(QStringLiteral("status")).toString(),
                 ceiling ? QStringLiteral("incomplete") : QStringLiteral("completed"));
        for (const QJsonValue &item : reply.json().value(QStringLiteral("output")).toArray())
            QVERIFY(item.toObject().value(QStringLiteral("type")).toString() !=
                    QLatin1String("function_call"));
    }

    void aSessionSandboxOutlivesTheRequest() {
        LoopDriver loop(interception.get());
        loop.upstream.enqueue(
            ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("x = 1"))));
        loop.upstream.enqueue(
            ScriptedUpstream::Response::json(responsesMessage(QStringLiteral("kept"))));
        const auto reply = loop.post(
            "/v1/responses", ciRequest({{QStringLiteral("session_id"), QStringLiteral("s1")}}));
        QCOMPARE(reply.status, 200);
        QVERIFY(loop.idle());
        QCOMPARE(sandbox->createCount(), 1);
        QCOMPARE(sandbox->removeCount(), 0);
        QCOMPARE(registry->size(), 1);
    }

    void aClientHangingUpWhileTheCodeRunsStillCleansUp() {
        sandbox->deferRuns = true;
        LoopDriver loop(interception.get());
        loop.upstream.enqueue(
            ScriptedUpstream::Response::json(responsesFunctionCall(QStringLiteral("print(1)"))));
        auto client = loop.start("/v1/responses", ciRequest());
        QTRY_COMPARE_WITH_TIMEOUT(sandbox->pendingRunCount(), 1, 30000);
        client->close();
        // The proxy notices the hang-up and cancels the run (it does not wait for the code to
        // finish by itself): the loop stops, no further model call is made for a client that
        // left, and the sandbox is deleted once.
        QTRY_COMPARE_WITH_TIMEOUT(sandbox->cancelledRuns, 1, 30000);
        QCOMPARE(sandbox->pendingRunCount(), 0);
        QVERIFY(loop.idle());
        QTRY_COMPARE_WITH_TIMEOUT(sandbox->removeCount(), 1, 20000);
        QCOMPARE(registry->size(), 0);
        QCOMPARE(loop.upstream.requestCount(), 1);
    }
};

QTEST_GUILESS_MAIN(TestLoopCleanup)
#include "tst_loopcleanup.moc"
