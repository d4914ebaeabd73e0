#include "e2bstandin.h"
#include "sandbox/remote/e2bbackend.h"
#include "sandbox/sandboxoutputcoalescer.h"
#include "support/futurewait.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QtTest>

using namespace loopscope;
using loopscope::awaitFuture;
using loopscope::test::E2bStandIn;

namespace {
QByteArray ndjson(std::initializer_list<QJsonObject> messages) {
    QByteArray out;
    for (const QJsonObject &m : messages)
        out += QJsonDocument(m).toJson(QJsonDocument::Compact) + '\n';
    return out;
}
QJsonObject out(const QString &type, const QString &text) {
    return QJsonObject{{QStringLiteral("type"), type}, {QStringLiteral("text"), text}};
}
} // namespace

class TestE2bBackend : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();

    void createRunDeleteWireExactness();
    void parseRules_data();
    void parseRules();
    void pngResultsBecomeImages();
    void linesAreParsedWhileTheStreamIsOpen();
    void liveOutputReachesTheSinkBeforeTheResult();
    void liveOutputIsCoalescedAndCapped();
    void outputCapAbortsTheRun();
    void deleteOfMissingSandboxIsFalse();
    void badKeyIsUnauthorisedAndMasked();
    void missingKeyIsReported();
    void wrongAccessTokenIsUnauthorised();
    void expiredSandboxIsRecreated();
    void expiryFoundByRenewalIsRecreated();
    void lifetimeIsRenewedWhenHalfUsed();
    void transientBadGatewayIsAnErrorNotARecreation();
    void runTimeout();
    void probe_data();
    void probe();
    void unreachableApiFailsQuickly();
    void destroyingTheBackendSettlesRunningWork();

private:
    SandboxParams params(const QString &key = QString::fromLatin1(E2bStandIn::kApiKey)) const {
        return SandboxParams{QStringLiteral("e2b"), key, m_standIn->baseUrl()};
    }
    E2bBackend::Options options() const {
        E2bBackend::Options o;
        o.executeUrlTemplate = m_standIn->executeUrlTemplate();
        return o;
    }
    SandboxHandle createOk(E2bBackend &backend) {
        const auto created = awaitFuture(backend.create(params()));
        if (!created.ok())
            qWarning() << created.error;
        return created.value;
    }

    std::unique_ptr<E2bStandIn> m_standIn;
};

void TestE2bBackend::init() {
    m_standIn = std::make_unique<E2bStandIn>();
    QVERIFY(m_standIn->listen());
}

void TestE2bBackend::cleanup() {
    m_standIn.reset();
}

void TestE2bBackend::createRunDeleteWireExactness() {
    E2bBackend backend(options());
    const SandboxHandle handle = createOk(backend);
    QVERIFY(handle.isValid());
    QCOMPARE(handle.provider, QStringLiteral("e2b"));
    QCOMPARE(handle.details.value(QStringLiteral("domain")).toString(),
             QString::fromLatin1(E2bStandIn::kDomain));

    const auto creates = m_standIn->requestsTo("POST", "/sandboxes");
    QCOMPARE(creates.size(), 1);
    QCOMPARE(creates[0].path, QByteArray("/sandboxes"));
    QCOMPARE(creates[0].headers.value("x-api-key"), QByteArray(E2bStandIn::kApiKey));
    QCOMPARE(creates[0].headers.value("content-type"), QByteArray("application/json"));
    const QJsonObject createBody = QJsonDocument::fromJson(creates[0].body).object();
    QCOMPARE(createBody,
             (QJsonObject{{QStringLiteral("templateID"), QStringLiteral("code-interpreter-v1")},
                          {QStringLiteral("timeout"), 300},
                          {QStringLiteral("secure"), true},
                          {QStringLiteral("allow_internet_access"), false}}));

    const QString code = QStringLiteral("print(\"hé\")\nx = 1");
    const auto ran = awaitFuture(backend.run(handle, code, params()));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("ran: ") + code + QLatin1Char('\n'));
    QCOMPARE(ran.value.executionCount, 1);
    QVERIFY(!ran.value.error);
    QVERIFY(!ran.value.timedOut);

    const auto executes = m_standIn->requestsTo("POST", "/sandbox/");
    QCOMPARE(executes.size(), 1);
    QCOMPARE(executes[0].path, QStringLiteral("/sandbox/%1/%2/execute")
                                   .arg(handle.id, QString::fromLatin1(E2bStandIn::kDomain))
                                   .toUtf8());
    QCOMPARE(executes[0].headers.value("x-access-token"),
             (QStringLiteral("envd-") + handle.id).toUtf8());
    QCOMPARE(executes[0].headers.value("e2b-traffic-access-token"),
             (QStringLiteral("traffic-") + handle.id).toUtf8());
    QCOMPARE(executes[0].headers.value("content-type"), QByteArray("application/json"));
    QVERIFY(!executes[0].headers.contains("x-api-key")); // the API key never goes to the sandbox
    const QJsonDocument runBody = QJsonDocument::fromJson(executes[0].body);
    QCOMPARE(runBody.object(), (QJsonObject{{QStringLiteral("code"), code},
                                            {QStringLiteral("context_id"), QJsonValue::Null},
                                            {QStringLiteral("env_vars"), QJsonValue::Null}}));

    const auto second = awaitFuture(backend.run(handle, QStringLiteral("y"), params()));
    QVERIFY(second.ok());
    QCOMPARE(second.value.executionCount, 2);

    const auto removed = awaitFuture(backend.remove(handle, params()));
    QVERIFY2(removed.ok(), qPrintable(removed.error));
    QCOMPARE(removed.value, true);
    const auto deletes = m_standIn->requestsTo("DELETE", "/sandboxes/");
    QCOMPARE(deletes.size(), 1);
    QCOMPARE(deletes[0].path, (QStringLiteral("/sandboxes/") + handle.id).toUtf8());
    QCOMPARE(deletes[0].headers.value("x-api-key"), QByteArray(E2bStandIn::kApiKey));
    QVERIFY(!m_standIn->isAlive(handle.id));
}

void TestE2bBackend::parseRules_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("fragmentBytes");
    QTest::addColumn<QString>("stdoutText");
    QTest::addColumn<QString>("stderrText");
    QTest::addColumn<QStringList>("error"); // name, value, traceback; empty = none
    QTest::addColumn<int>("count");
    QTest::addColumn<QString>("failure"); // non-empty: the run must fail with this substring

    const QByteArray mixed =
        ndjson({out(QStringLiteral("stdout"), QStringLiteral("héllo 😀\n")),
                out(QStringLiteral("stderr"), QStringLiteral("wärning 世界\n")),
                out(QStringLiteral("stdout"), QStringLiteral("second\n"))});
    for (int every : {1, 3, 7, 0})
        QTest::addRow("stdout/stderr separated, %d-byte fragments", every)
            << mixed << every << QStringLiteral("héllo 😀\nsecond\n")
            << QStringLiteral("wärning 世界\n") << QStringList() << 0 << QString();

    const QJsonObject err1{
        {QStringLiteral("type"), QStringLiteral("error")},
        {QStringLiteral("name"), QStringLiteral("ZeroDivisionError")},
        {QStringLiteral("value"), QStringLiteral("division by zero")},
        {QStringLiteral("traceback"), QStringLiteral("Traceback...\nZeroDivisionError")}};
    const QJsonObject err2{{QStringLiteral("type"), QStringLiteral("error")},
                           {QStringLiteral("name"), QStringLiteral("Second")},
                           {QStringLiteral("value"), QStringLiteral("ignored")}};
    const QJsonObject count3{{QStringLiteral("type"), QStringLiteral("number_of_executions")},
                             {QStringLiteral("execution_count"), 3}};
    const QJsonObject count9{{QStringLiteral("type"), QStringLiteral("number_of_executions")},
                             {QStringLiteral("execution_count"), 9}};
    QTest::newRow("first error and first count win")
        << ndjson({out(QStringLiteral("stdout"), QStringLiteral("before\n")), err1, err2, count3,
                   count9})
        << 4 << QStringLiteral("before\n") << QString()
        << QStringList{QStringLiteral("ZeroDivisionError"), QStringLiteral("division by zero"),
                       QStringLiteral("Traceback...\nZeroDivisionError")}
        << 3 << QString();

    const QJsonObject result{{QStringLiteral("type"), QStringLiteral("result")},
                             {QStringLiteral("text"), QStringLiteral("2")},
                             {QStringLiteral("is_main_result"), true}};
    QTest::newRow("result messages are not tool output")
        << ndjson({result, out(QStringLiteral("stdout"), QStringLiteral("x\n"))}) << 0
        << QStringLiteral("x\n") << QString() << QStringList() << 0 << QString();

    QTest::newRow("blank, whitespace, invalid JSON, null and unknown types are skipped")
        << QByteArray("\n   \nnot json\n{broken\nnull\n  {\"type\":\"stdout\",\"text\":\"a\"}  \r\n"
                      "{\"type\":\"mystery\",\"text\":\"zzz\"}\n{\"text\":\"no type\"}\n"
                      "{\"type\":\"stdout\",\"text\":\"b\"}")
        << 5 << QStringLiteral("ab") << QString() << QStringList() << 0 << QString();

    QTest::newRow("a list line aborts the run")
        << QByteArray("{\"type\":\"stdout\",\"text\":\"a\"}\n[1,2]\n") << 0 << QString()
        << QString() << QStringList() << 0 << QStringLiteral("not an object");
    QTest::newRow("a number line aborts the run")
        << QByteArray("42\n") << 0 << QString() << QString() << QStringList() << 0
        << QStringLiteral("not an object");
    QTest::newRow("non-string stdout text aborts the run")
        << QByteArray("{\"type\":\"stdout\",\"text\":5}\n") << 0 << QString() << QString()
        << QStringList() << 0 << QStringLiteral("text is not a string");
}

void TestE2bBackend::parseRules() {
    QFETCH(QByteArray, body);
    QFETCH(int, fragmentBytes);
    QFETCH(QString, stdoutText);
    QFETCH(QString, stderrText);
    QFETCH(QStringList, error);
    QFETCH(int, count);
    QFETCH(QString, failure);

    m_standIn->setExecuteHandler(
        [&](const E2bStandIn::Request &, const QString &, E2bStandIn::Sandbox &) {
            E2bStandIn::ExecuteReply reply;
            reply.body = body;
            reply.fragmentBytes = fragmentBytes;
            return reply;
        });
    E2bBackend backend(options());
    const SandboxHandle handle = createOk(backend);
    QVERIFY(handle.isValid());
    const auto ran = awaitFuture(backend.run(handle, QStringLiteral("whatever"), params()));
    if (fragmentBytes > 0 && body.size() > fragmentBytes)
        QVERIFY(m_standIn->fragmentsWritten() > 1);
    if (!failure.isEmpty()) {
        QVERIFY(!ran.ok());
        QVERIFY2(ran.error.contains(failure), qPrintable(ran.error));
        return;
    }
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, stdoutText);
    QCOMPARE(ran.value.stderrText, stderrText);
    QCOMPARE(ran.value.executionCount, count);
    QCOMPARE(ran.value.error.has_value(), !error.isEmpty());
    if (!error.isEmpty()) {
        QCOMPARE(ran.value.error->name, error[0]);
        QCOMPARE(ran.value.error->value, error[1]);
        QCOMPARE(ran.value.error->traceback, error[2]);
    }
}

void TestE2bBackend::pngResultsBecomeImages() {
    // e2b sends a figure as a result with a base64 "png" (plus its text form).
    const QByteArray png("\x89PNG\r\n\x1a\nfake-png-body", 21);
    const QJsonObject figure{{QStringLiteral("type"), QStringLiteral("result")},
                             {QStringLiteral("text"), QStringLiteral("<Figure size 640x480>")},
                             {QStringLiteral("png"), QString::fromLatin1(png.toBase64())}};
    const QJsonObject big{
        {QStringLiteral("type"), QStringLiteral("result")},
        {QStringLiteral("png"),
         QString::fromLatin1(QByteArray(SandboxImageLimits::kMaxImageBytes + 1, 'x').toBase64())}};
    QByteArray body;
    for (const QJsonObject &line : {figure, big, figure})
        body += QJsonDocument(line).toJson(QJsonDocument::Compact) + '\n';
    m_standIn->setExecuteHandler(
        [body](const E2bStandIn::Request &, const QString &, E2bStandIn::Sandbox &) {
            E2bStandIn::ExecuteReply reply;
            reply.body = body;
            return reply;
        });
    E2bBackend backend(options());
    const SandboxHandle handle = createOk(backend);
    const auto ran = awaitFuture(backend.run(handle, QStringLiteral("plt.show()"), params()));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.images.size(), 2);
    QCOMPARE(ran.value.images.at(0).data, png);
    QCOMPARE(ran.value.images.at(0).name, QStringLiteral("image-1.png"));
    QCOMPARE(ran.value.images.at(1).name, QStringLiteral("image-3.png"));
    QCOMPARE(ran.value.notes.size(), 1);
    QVERIFY2(ran.value.notes.at(0).contains(QStringLiteral("image-2.png not returned")),
             qPrintable(ran.value.notes.at(0)));
    QVERIFY2(!ran.value.stdoutText.contains(QStringLiteral("not returned")),
             qPrintable(ran.value.stdoutText));
}

void TestE2bBackend::linesAreParsedWhileTheStreamIsOpen() {
    m_standIn->setExecuteHandler(
        [](const E2bStandIn::Request &, const QString &, E2bStandIn::Sandbox &) {
            E2bStandIn::ExecuteReply reply;
            reply.body = ndjson({out(QStringLiteral("stdout"), QStringLiteral("early\n")),
                                 out(QStringLiteral("stdout"), QStringLiteral("late\n"))});
            reply.fragmentBytes = 10;
            reply.holdAfter = 4; // the first line (37 bytes) is complete after 4 fragments
            return reply;
        });
    E2bBackend backend(options());
    QSignalSpy live(&backend, &E2bBackend::outputReceived);
    const SandboxHandle handle = createOk(backend);
    const auto future = backend.run(handle, QStringLiteral("x"), params());
    QTRY_VERIFY_WITH_TIMEOUT(live.size() == 1, 10000);
    QCOMPARE(live[0][0].toString(), handle.id);
    QCOMPARE(live[0][1].toString(), QStringLiteral("stdout"));
    QCOMPARE(live[0][2].toString(), QStringLiteral("early\n"));
    QVERIFY(!future.isFinished()); // the stream is still held open by the stand-in
    m_standIn->release();
    const auto ran = awaitFuture(future);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("early\nlate\n"));
}

void TestE2bBackend::liveOutputReachesTheSinkBeforeTheResult() {
    m_standIn->setExecuteHandler([](const E2bStandIn::Request &, const QString &,
                                    E2bStandIn::Sandbox &) {
        E2bStandIn::ExecuteReply reply;
        reply.body =
            ndjson({out(QStringLiteral("stdout"), QStringLiteral("0\n")),
                    out(QStringLiteral("stderr"), QStringLiteral("warn é\n")),
                    out(QStringLiteral("stdout"), QStringLiteral("1\n")),
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("number_of_executions")},
                                {QStringLiteral("execution_count"), 1}}});
        reply.fragmentBytes = 16; // lines and the UTF-8 "é" split across reads
        // Held after the first two lines (31 + 37 bytes), as a slow run would.
        reply.holdAfter = 5;
        return reply;
    });
    E2bBackend backend(options());
    const SandboxHandle handle = createOk(backend);
    QList<QStringList> chunks; // stream, text, whether the run had finished
    QFuture<Outcome<ExecutionResult>> future;
    future = backend.run(handle, QStringLiteral("x"), params(),
                         [&](const QString &stream, const QString &text) {
                             chunks.append({stream, text,
                                            future.isFinished() ? QStringLiteral("finished")
                                                                : QStringLiteral("running")});
                         });
    QTRY_VERIFY_WITH_TIMEOUT(chunks.size() == 2, 10000);
    QCOMPARE(chunks[0], (QStringList{QStringLiteral("stdout"), QStringLiteral("0\n"),
                                     QStringLiteral("running")}));
    QCOMPARE(chunks[1], (QStringList{QStringLiteral("stderr"), QStringLiteral("warn é\n"),
                                     QStringLiteral("running")}));
    QVERIFY(!future.isFinished()); // the stand-in still holds the stream open
    m_standIn->release();
    const auto ran = awaitFuture(future);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("0\n1\n")); // the result is unchanged
    QCOMPARE(ran.value.stderrText, QStringLiteral("warn é\n"));
    QCOMPARE(chunks.size(), 3);
    QCOMPARE(chunks[2], (QStringList{QStringLiteral("stdout"), QStringLiteral("1\n"),
                                     QStringLiteral("running")}));
}

void TestE2bBackend::liveOutputIsCoalescedAndCapped() {
    // 3,000 one-line messages arriving in 2 KiB reads: far fewer sink calls than lines, the
    // live total capped with a notice, the result complete.
    QByteArray body;
    QString expected;
    for (int i = 0; i < 3000; ++i) {
        const QString line = QStringLiteral("line %1\n").arg(i);
        expected += line;
        body += ndjson({out(QStringLiteral("stdout"), line)});
    }
    m_standIn->setExecuteHandler(
        [&](const E2bStandIn::Request &, const QString &, E2bStandIn::Sandbox &) {
            E2bStandIn::ExecuteReply reply;
            reply.body = body;
            reply.fragmentBytes = 2048;
            reply.pauseMs = 1;
            return reply;
        });
    E2bBackend::Options o = options();
    o.liveOutputCapBytes = 16 * 1024;
    E2bBackend backend(o);
    const SandboxHandle handle = createOk(backend);
    QStringList chunks;
    QFuture<Outcome<ExecutionResult>> future;
    bool afterResult = false;
    QElapsedTimer clock;
    clock.start();
    future = backend.run(handle, QStringLiteral("x"), params(),
                         [&](const QString &stream, const QString &text) {
                             QCOMPARE(stream, QStringLiteral("stdout"));
                             afterResult = afterResult || future.isFinished();
                             chunks << text;
                         });
    const auto ran = awaitFuture(future, 60000);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(ran.value.stdoutText, expected);
    QVERIFY(!afterResult);
    const QString live = chunks.join(QString());
    const QString notice = SandboxOutputCoalescer::capNotice(16 * 1024);
    QVERIFY2(live.endsWith(notice), qPrintable(live.right(200)));
    QCOMPARE(live.chopped(notice.size()), expected.left(16 * 1024));
    // Each delivery is >= 4 KiB or the first after 50 ms: a bound however slowly lines came.
    const qint64 bound = 16 * 1024 / 4096 + clock.elapsed() / 50 + 2;
    QVERIFY2(chunks.size() <= bound, qPrintable(QString::number(chunks.size())));
    QVERIFY(chunks.size() < 100); // and nowhere near one per line
}

void TestE2bBackend::outputCapAbortsTheRun() {
    // 170 lines of 64 KiB: 10.6 MiB of text, past LiteLLM's 10 MiB cap.
    const QString text(64 * 1024, QLatin1Char('x'));
    QByteArray body;
    for (int i = 0; i < 170; ++i)
        body += ndjson({out(QStringLiteral("stdout"), text)});
    m_standIn->setExecuteHandler(
        [&](const E2bStandIn::Request &, const QString &, E2bStandIn::Sandbox &) {
            E2bStandIn::ExecuteReply reply;
            reply.body = body;
            reply.fragmentBytes = 256 * 1024;
            reply.pauseMs = 1;
            return reply;
        });
    E2bBackend backend(options());
    const SandboxHandle handle = createOk(backend);
    const auto ran =
        awaitFuture(backend.run(handle, QStringLiteral("print('x' * 10**8)"), params()), 60000);
    QVERIFY(!ran.ok());
    QCOMPARE(ran.error, QStringLiteral("Sandbox output exceeded 10485760 bytes; aborting to avoid "
                                       "unbounded memory use."));
    // The backend hung up instead of reading the rest.
    QTRY_VERIFY_WITH_TIMEOUT(m_standIn->clientAbortedStream(), 10000);
    QVERIFY(!m_standIn->streamFinished());
}

void TestE2bBackend::deleteOfMissingSandboxIsFalse() {
    E2bBackend backend(options());
    const SandboxHandle handle = createOk(backend);
    QCOMPARE(awaitFuture(backend.remove(handle, params())).value, true);
    const auto again = awaitFuture(backend.remove(handle, params()));
    QVERIFY2(again.ok(), qPrintable(again.error));
    QCOMPARE(again.value, false);
}

void TestE2bBackend::badKeyIsUnauthorisedAndMasked() {
    E2bBackend backend(options());
    const QString badKey = QStringLiteral("e2b_wrong_secret_WXYZ");
    const auto created = awaitFuture(backend.create(params(badKey)));
    QVERIFY(!created.ok());
    QVERIFY2(created.error.contains(QLatin1String("unauthorised")), qPrintable(created.error));
    QVERIFY2(created.error.contains(QLatin1String("HTTP 401")), qPrintable(created.error));
    QVERIFY2(created.error.contains(QStringLiteral("\u2026WXYZ")), qPrintable(created.error));
    QVERIFY(!created.error.contains(QLatin1String("wrong_secret")));

    // Delete with a bad key is an error too (not a silent false).
    const SandboxHandle handle = createOk(backend);
    const auto removed = awaitFuture(backend.remove(handle, params(badKey)));
    QVERIFY(!removed.ok());
    QVERIFY(removed.error.contains(QLatin1String("unauthorised")));
    QVERIFY(!removed.error.contains(QLatin1String("wrong_secret")));
}

void TestE2bBackend::missingKeyIsReported() {
    qunsetenv("E2B_API_KEY");
    E2bBackend backend(options());
    const auto created = awaitFuture(backend.create(params(QString())));
    QVERIFY(!created.ok());
    QCOMPARE(created.error,
             QStringLiteral("E2B API key not set. Set E2B_API_KEY or pass api_key=..."));
    QVERIFY(m_standIn->requests().isEmpty());
}

void TestE2bBackend::wrongAccessTokenIsUnauthorised() {
    E2bBackend backend(options());
    QSignalSpy recreated(&backend, &E2bBackend::sandboxRecreated);
    SandboxHandle handle = createOk(backend);
    handle.details.insert(QStringLiteral("envdAccessToken"), QStringLiteral("forged"));
    const auto ran = awaitFuture(backend.run(handle, QStringLiteral("x"), params()));
    QVERIFY(!ran.ok());
    QVERIFY2(ran.error.contains(QStringLiteral("e2b sandbox %1 rejected its access token "
                                               "(unauthorised, HTTP 401")
                                    .arg(handle.id)),
             qPrintable(ran.error));
    QCOMPARE(recreated.size(), 0);
    // A handle without a token is refused before any request.
    handle.details.remove(QStringLiteral("envdAccessToken"));
    const qsizetype before = m_standIn->requests().size();
    const auto bare = awaitFuture(backend.run(handle, QStringLiteral("x"), params()));
    QVERIFY(!bare.ok());
    QVERIFY2(bare.error.startsWith(QLatin1String("Cannot run code from a sandbox id alone")),
             qPrintable(bare.error));
    QCOMPARE(m_standIn->requests().size(), before);
}

void TestE2bBackend::expiredSandboxIsRecreated() {
    E2bBackend backend(options());
    QSignalSpy recreated(&backend, &E2bBackend::sandboxRecreated);
    const SandboxHandle handle = createOk(backend);
    QVERIFY(awaitFuture(backend.run(handle, QStringLiteral("x = 1"), params())).ok());

    m_standIn->expire(handle.id); // e2b's lifetime ran out
    const auto ran = awaitFuture(backend.run(handle, QStringLiteral("print(x)"), params()));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(recreated.size(), 1);
    QCOMPARE(recreated[0][0].toString(), handle.id);
    const auto replacement = recreated[0][1].value<SandboxHandle>();
    QVERIFY(replacement.isValid());
    QVERIFY(replacement.id != handle.id);
    QVERIFY(m_standIn->isAlive(replacement.id));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("ran: print(x)\n"));
    QCOMPARE(ran.value.executionCount, 1); // a fresh interpreter
    QVERIFY2(ran.value.stderrText.startsWith(
                 QStringLiteral("[loopscope] e2b sandbox %1 had expired").arg(handle.id)),
             qPrintable(ran.value.stderrText));
    QVERIFY(ran.value.stderrText.contains(QLatin1String("state (variables, files) was lost")));
    // Existence was confirmed with the API before recreating.
    QCOMPARE(m_standIn->requestsTo("GET", "/sandboxes/" + handle.id.toUtf8()).size(), 1);

    // The caller keeps the old handle: later runs and the delete follow the replacement.
    QCOMPARE(backend.currentHandle(handle).id, replacement.id);
    const auto later = awaitFuture(backend.run(handle, QStringLiteral("y"), params()));
    QVERIFY(later.ok());
    QCOMPARE(later.value.executionCount, 2);
    QVERIFY(!later.value.stderrText.contains(QLatin1String("[loopscope]")));
    QCOMPARE(m_standIn->requestsTo("POST", "/sandbox/" + replacement.id.toUtf8()).size(), 2);
    QCOMPARE(awaitFuture(backend.remove(handle, params())).value, true);
    QVERIFY(!m_standIn->isAlive(replacement.id));
    QCOMPARE(recreated.size(), 1);
}

void TestE2bBackend::expiryFoundByRenewalIsRecreated() {
    qint64 now = 1'000'000;
    E2bBackend backend(options());
    backend.setClock([&now] { return now; });
    QSignalSpy recreated(&backend, &E2bBackend::sandboxRecreated);
    const SandboxHandle handle = createOk(backend);
    m_standIn->expire(handle.id);
    now += 400'000; // past the 300 s lifetime
    const auto ran = awaitFuture(backend.run(handle, QStringLiteral("z"), params()));
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QCOMPARE(recreated.size(), 1);
    QCOMPARE(m_standIn->requestsTo("POST", "/sandboxes/" + handle.id.toUtf8() + "/timeout").size(),
             1);
    // No /execute went to the dead sandbox.
    QCOMPARE(m_standIn->requestsTo("POST", "/sandbox/" + handle.id.toUtf8()).size(), 0);
}

void TestE2bBackend::lifetimeIsRenewedWhenHalfUsed() {
    qint64 now = 1'000'000;
    E2bBackend backend(options());
    backend.setClock([&now] { return now; });
    const SandboxHandle handle = createOk(backend);
    const QByteArray renewPath = "/sandboxes/" + handle.id.toUtf8() + "/timeout";

    now += 100'000; // 200 s left of 300: no renewal yet
    QVERIFY(awaitFuture(backend.run(handle, QStringLiteral("a"), params())).ok());
    QCOMPARE(m_standIn->requestsTo("POST", renewPath).size(), 0);

    now += 100'000; // 100 s left: renew first
    QVERIFY(awaitFuture(backend.run(handle, QStringLiteral("b"), params())).ok());
    const auto renewals = m_standIn->requestsTo("POST", renewPath);
    QCOMPARE(renewals.size(), 1);
    QCOMPARE(renewals[0].headers.value("x-api-key"), QByteArray(E2bStandIn::kApiKey));
    QCOMPARE(QJsonDocument::fromJson(renewals[0].body).object(),
             (QJsonObject{{QStringLiteral("timeout"), 300}}));

    now += 100'000; // renewed to 300 s from the renewal: 200 s left, no renewal
    QVERIFY(awaitFuture(backend.run(handle, QStringLiteral("c"), params())).ok());
    QCOMPARE(m_standIn->requestsTo("POST", renewPath).size(), 1);
}

void TestE2bBackend::transientBadGatewayIsAnErrorNotARecreation() {
    E2bBackend backend(options());
    QSignalSpy recreated(&backend, &E2bBackend::sandboxRecreated);
    const SandboxHandle handle = createOk(backend);
    m_standIn->setExecuteBadGateway(true);
    const auto ran = awaitFuture(backend.run(handle, QStringLiteral("x"), params()));
    QVERIFY(!ran.ok());
    QVERIFY2(ran.error.contains(QLatin1String("HTTP 502")), qPrintable(ran.error));
    QVERIFY(ran.error.contains(handle.id));
    QCOMPARE(recreated.size(), 0);
    QCOMPARE(m_standIn->requestsTo("POST", "/sandboxes").size(), 1); // only the original create
}

void TestE2bBackend::runTimeout() {
    m_standIn->setExecuteHandler(
        [](const E2bStandIn::Request &, const QString &, E2bStandIn::Sandbox &) {
            E2bStandIn::ExecuteReply reply;
            reply.body = ndjson({out(QStringLiteral("stdout"), QStringLiteral("started\n")),
                                 out(QStringLiteral("stdout"), QStringLiteral("never\n"))});
            reply.fragmentBytes = 0;
            reply.body = ndjson({out(QStringLiteral("stdout"), QStringLiteral("started\n"))}) +
                         ndjson({out(QStringLiteral("stdout"), QStringLiteral("never\n"))});
            reply.fragmentBytes = int(reply.body.indexOf('\n') + 1);
            reply.holdAfter = 1; // like `while True: pass` after the first print
            return reply;
        });
    E2bBackend::Options o = options();
    o.runTimeoutMs = 1500;
    E2bBackend backend(o);
    const SandboxHandle handle = createOk(backend);
    const auto ran =
        awaitFuture(backend.run(handle, QStringLiteral("while True: pass"), params()), 30000);
    QVERIFY2(ran.ok(), qPrintable(ran.error));
    QVERIFY(ran.value.timedOut);
    QVERIFY(ran.value.error);
    QCOMPARE(ran.value.error->name, QStringLiteral("TimeoutError"));
    QCOMPARE(ran.value.stdoutText, QStringLiteral("started\n"));
    QTRY_VERIFY_WITH_TIMEOUT(m_standIn->clientAbortedStream(), 10000);
}

void TestE2bBackend::probe_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<bool>("available");
    QTest::addColumn<QString>("problem");
    QTest::newRow("good key") << QString::fromLatin1(E2bStandIn::kApiKey) << true << QString();
    QTest::newRow("bad key") << QStringLiteral("nope_nope_ABCD") << false
                             << QStringLiteral("rejected the API key \u2026ABCD (unauthorised");
}

void TestE2bBackend::probe() {
    QFETCH(QString, key);
    QFETCH(bool, available);
    QFETCH(QString, problem);
    E2bBackend backend(options());
    QVERIFY(backend.selfTest().problems.isEmpty()); // not probed: a warning only
    QVERIFY(!backend.selfTest().warnings.isEmpty());
    const SandboxSelfTest result = awaitFuture(backend.probe(params(key)));
    QCOMPARE(result.available, available);
    QCOMPARE(backend.selfTest().available, available);
    if (!problem.isEmpty()) {
        QCOMPARE(result.problems.size(), 1);
        QVERIFY2(result.problems[0].contains(problem), qPrintable(result.problems[0]));
    }
    QCOMPARE(m_standIn->requestsTo("GET", "/sandboxes").size(), 1);
}

void TestE2bBackend::unreachableApiFailsQuickly() {
    quint16 closedPort = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        closedPort = probe.serverPort();
    }
    const SandboxParams dead{QStringLiteral("e2b"), QString::fromLatin1(E2bStandIn::kApiKey),
                             QStringLiteral("http://127.0.0.1:%1").arg(closedPort)};
    E2bBackend backend(options());
    const auto created = awaitFuture(backend.create(dead), 10000);
    QVERIFY(!created.ok());
    QVERIFY2(created.error.contains(QStringLiteral("127.0.0.1:%1").arg(closedPort)),
             qPrintable(created.error));
    QVERIFY2(created.error.contains(QLatin1String("refused"), Qt::CaseInsensitive),
             qPrintable(created.error));
    const SandboxSelfTest probed = awaitFuture(backend.probe(dead), 10000);
    QVERIFY(!probed.available);
    QVERIFY2(probed.problems.value(0).contains(QLatin1String("unreachable")),
             qPrintable(probed.problems.value(0)));
}

void TestE2bBackend::destroyingTheBackendSettlesRunningWork() {
    m_standIn->setExecuteHandler(
        [](const E2bStandIn::Request &, const QString &, E2bStandIn::Sandbox &) {
            E2bStandIn::ExecuteReply reply;
            reply.body = ndjson({out(QStringLiteral("stdout"), QStringLiteral("x\n"))});
            reply.fragmentBytes = 4;
            reply.holdAfter = 1; // never finishes on its own
            return reply;
        });
    auto backend = std::make_unique<E2bBackend>(options());
    const SandboxHandle handle = createOk(*backend);
    const auto future = backend->run(handle, QStringLiteral("x"), params());
    QTRY_VERIFY_WITH_TIMEOUT(m_standIn->fragmentsWritten() == 1, 10000);
    QVERIFY(!future.isFinished());
    backend.reset();
    QVERIFY(future.isFinished());
    QVERIFY(!future.isCanceled());
    QCOMPARE(future.resultCount(), 1);
    QVERIFY(!future.result().ok());
}

QTEST_GUILESS_MAIN(TestE2bBackend)
#include "tst_e2bbackend.moc"
