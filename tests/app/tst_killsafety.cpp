// kill -9 safety (issue 16) against the real binary: a loopscope under load (session sandboxes,
// code runs in flight, the warm pool) is killed with SIGKILL. Then no process of its sandboxes
// may survive it (bwrap --die-with-parent and PR_SET_PDEATHSIG), and a new loopscope must listen
// on the same port at once (QTcpServer binds with SO_REUSEADDR, so the dead one's connections in
// TIME_WAIT do not block it). The history-store part of this check lives with the store's tests.
#include "loopfixtures.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <csignal>
#include <memory>

using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

constexpr int kWaitMs = 60000;

// Live (non-zombie) processes whose command line carries the sandbox marker of `appPid`
// ("loopscope-sandbox:<pid>", BubblewrapCommand::processMarker()).
QStringList sandboxProcessesOf(qint64 appPid) {
    const QByteArray marker = "loopscope-sandbox:" + QByteArray::number(appPid);
    QStringList found;
    for (const QString &entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool numeric = false;
        entry.toLongLong(&numeric);
        if (!numeric)
            continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(entry));
        QFile stat(QStringLiteral("/proc/%1/stat").arg(entry));
        if (!cmdline.open(QIODevice::ReadOnly) || !stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray args = cmdline.readAll();
        const QByteArray line = stat.readAll();
        const bool zombie = line.mid(line.lastIndexOf(')') + 2, 1) == "Z";
        if (args.contains(marker) && !zombie)
            found << entry + u' ' + QString::fromLatin1(args.left(40).replace('\0', ' '));
    }
    return found;
}

QByteArray codeRequest(const QString &session) {
    QJsonObject body{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"), QStringLiteral("run it")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")},
                                {QStringLiteral("container"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
    if (!session.isEmpty())
        body.insert(QStringLiteral("metadata"),
                    QJsonObject{{QStringLiteral("session_id"), session}});
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

const QList<QPair<QByteArray, QByteArray>> kHeaders{{"authorization", "Bearer sk-kill-safety-0001"},
                                                    {"content-type", "application/json"}};

} // namespace

class TestKillSafety : public QObject {
    Q_OBJECT
private slots:
    void killNineLeavesNoSandboxAndFreesThePort();
};

void TestKillSafety::killNineLeavesNoSandboxAndFreesThePort() {
    // The model: sessions get a quick print; "sleeper" requests run code that outlives the kill.
    ScriptedUpstream upstream;
    upstream.setRecordRequests(false);
    upstream.setResponder([](const ScriptedUpstream::Request &request) {
        const QJsonObject json = request.json();
        for (const QJsonValue &item : json.value(QStringLiteral("input")).toArray())
            if (item.toObject().value(QStringLiteral("type")).toString() ==
                QLatin1String("function_call_output"))
                return ScriptedUpstream::Response::json(
                    loopfixtures::responsesMessage(QStringLiteral("done")));
        const bool sleeper = json.value(QStringLiteral("metadata"))
                                 .toObject()
                                 .value(QStringLiteral("session_id"))
                                 .toString()
                                 .startsWith(QLatin1String("sleeper"));
        const QString code = sleeper ? QStringLiteral("import time\nprint('busy', flush=True)\n"
                                                      "time.sleep(120)")
                                     : QStringLiteral("print(1)");
        return ScriptedUpstream::Response::json(loopfixtures::responsesFunctionCall(code));
    });
    QVERIFY(upstream.listen());

    quint16 port = 0;
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        port = probe.serverPort();
    }
    const QStringList arguments{QStringLiteral("--headless"), QStringLiteral("--port"),
                                QString::number(port), QStringLiteral("--upstream"),
                                upstream.baseUrl()};
    const auto listening = [port] {
        QTcpSocket socket;
        socket.connectToHost(QStringLiteral("127.0.0.1"), port);
        return socket.waitForConnected(500);
    };

    QProcess first;
    first.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    first.start(QStringLiteral(LOOPSCOPE_BIN), arguments);
    QVERIFY(first.waitForStarted(10000));
    const qint64 firstPid = first.processId();
    QTRY_VERIFY_WITH_TIMEOUT(listening(), kWaitMs);

    // Load: two session sandboxes that stay, two code runs that are still running at the kill,
    // with their clients connected.
    std::vector<std::unique_ptr<RawHttpClient>> clients;
    for (const QString &session : {QStringLiteral("keep-1"), QStringLiteral("keep-2")}) {
        auto client = std::make_unique<RawHttpClient>(port);
        client->request("POST", "/v1/responses", codeRequest(session), kHeaders);
        QTRY_VERIFY_WITH_TIMEOUT(client->hasCompleteResponse(), kWaitMs);
        QCOMPARE(client->current().status, 200);
        clients.push_back(std::move(client));
    }
    for (const QString &session : {QStringLiteral("sleeper-1"), QStringLiteral("sleeper-2")}) {
        auto client = std::make_unique<RawHttpClient>(port);
        client->request("POST", "/v1/responses", codeRequest(session), kHeaders);
        clients.push_back(std::move(client));
    }
    // 4 sandboxes + the warm pool (2), forked by the zygote (the default): 2 processes each (the
    // sandbox's init, python), and the zygote's own 3 (outer bwrap, its init, the zygote). Wait
    // until the sleepers' code is surely running (their sandboxes exist beyond the pool).
    QTRY_VERIFY_WITH_TIMEOUT(sandboxProcessesOf(firstPid).size() >= 2 * 6 + 3, kWaitMs);
    QVERIFY(!clients.at(2)->hasCompleteResponse());
    QVERIFY(!clients.at(3)->hasCompleteResponse());

    ::kill(pid_t(firstPid), SIGKILL);
    QVERIFY(first.waitForFinished(kWaitMs));
    QCOMPARE(first.exitStatus(), QProcess::CrashExit);

    // The port is free again at once: a new instance listens on it while the old one's sockets
    // are still closing.
    QProcess second;
    second.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    second.start(QStringLiteral(LOOPSCOPE_BIN), arguments);
    QVERIFY(second.waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(listening() || second.state() == QProcess::NotRunning, kWaitMs);
    QVERIFY2(second.state() == QProcess::Running, "the restarted loopscope could not listen");

    // Nothing of the killed one's sandboxes survives it.
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxProcessesOf(firstPid).isEmpty(),
                              qPrintable(sandboxProcessesOf(firstPid).join(u'\n')), 20000);

    // And the new instance serves code-interpreter requests.
    RawHttpClient client(port);
    client.request("POST", "/v1/responses", codeRequest(QStringLiteral("after")), kHeaders);
    QTRY_VERIFY_WITH_TIMEOUT(client.hasCompleteResponse(), kWaitMs);
    QCOMPARE(client.current().status, 200);

    const qint64 secondPid = second.processId();
    ::kill(pid_t(secondPid), SIGTERM);
    QVERIFY(second.waitForFinished(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(sandboxProcessesOf(secondPid).isEmpty(), 20000);
}

QTEST_GUILESS_MAIN(TestKillSafety)
#include "tst_killsafety.moc"
