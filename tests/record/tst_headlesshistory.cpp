// --headless records like the window does: the real binary with --data-dir writes every flow to
// DIR/history.sqlite3 (its log line names the flow id), and --no-history writes nothing.
#include "proxy/rawhttpclient.h"
#include "record/flowstore.h"

#include <QDir>
#include <QJsonArray>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using loopscope::FlowStore;
using loopscope::FlowStoreOptions;
using loopscope::test::RawHttpClient;

namespace {

struct Run {
    QByteArray out;
    QByteArray err;
    QString flowId;
    int status = 0;
};

// Starts loopscope, sends one Chat request to the demo model, stops it with SIGTERM.
Run runOnce(const QStringList &extra) {
    Run run;
    QProcess process;
    process.start(
        QStringLiteral(LOOPSCOPE_BIN),
        QStringList{QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0")} +
            extra);
    if (!process.waitForStarted(20000))
        return run;
    if (!QTest::qWaitFor(
            [&] {
                run.out += process.readAllStandardOutput();
                return run.out.contains('\n');
            },
            20000))
        return run;
    static const QRegularExpression line(
        QStringLiteral("listening on http://127\\.0\\.0\\.1:(\\d+)"));
    const quint16 port = quint16(line.match(QString::fromUtf8(run.out)).captured(1).toUInt());
    RawHttpClient client(port);
    client.request("POST", "/v1/chat/completions",
                   R"({"model":"gpt-4o","messages":[{"role":"user","content":"headless marker"}]})",
                   {{"Authorization", "Bearer sk-headless-secret-QRST"}});
    if (QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 20000))
        run.status = client.take().status;
    (void)QTest::qWaitFor(
        [&] {
            run.err += process.readAllStandardError();
            return run.err.contains("/v1/chat/completions");
        },
        20000);
    ::kill(pid_t(process.processId()), SIGTERM);
    process.waitForFinished(20000);
    run.err += process.readAllStandardError();
    static const QRegularExpression id(
        QStringLiteral("/v1/chat/completions .* id=(req_[0-9a-f]+)"));
    run.flowId = id.match(QString::fromUtf8(run.err)).captured(1);
    return run;
}

} // namespace

class TstHeadlessHistory : public QObject {
    Q_OBJECT
private slots:
    void dataDirKeepsEveryFlow() {
        QTemporaryDir dir;
        const Run run = runOnce({QStringLiteral("--data-dir"), dir.path()});
        QCOMPARE(run.status, 200);
        QVERIFY2(!run.flowId.isEmpty(), run.err.constData());
        FlowStoreOptions options;
        options.path = dir.filePath(QStringLiteral("history.sqlite3"));
        QVERIFY(QFileInfo::exists(options.path));
        FlowStore store(options);
        QVERIFY(store.open());
        const auto flow = store.query()->flow(run.flowId);
        QVERIFY2(flow, qPrintable(run.flowId));
        QCOMPARE(flow->value(QStringLiteral("status")).toInt(), 200);
        QCOMPARE(flow->value(QStringLiteral("state")).toString(), QStringLiteral("completed"));
        QCOMPARE(flow->value(QStringLiteral("model")).toString(), QStringLiteral("gpt-4o"));
        QVERIFY(flow->value(QStringLiteral("hops")).toArray().size() >= 2);
        loopscope::FlowFilter q;
        q.q = QStringLiteral("headless marker");
        QCOMPARE(store.query()->list(q).value(QStringLiteral("data")).toArray().size(), 1);
    }

    void noHistoryWritesNothing() {
        QTemporaryDir dir;
        const Run run =
            runOnce({QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--no-history")});
        QCOMPARE(run.status, 200);
        QVERIFY2(!run.flowId.isEmpty(), run.err.constData()); // the log still names the flow
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::NoDotAndDotDot).size(), 0);
    }
};

QTEST_GUILESS_MAIN(TstHeadlessHistory)
#include "tst_headlesshistory.moc"
