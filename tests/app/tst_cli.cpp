// The CLI contract (docs/architecture.md) against the real binary: the one listening line,
// --port 0, exit codes, config errors, the per-request log with masked keys, the demo default,
// and a clean stop on SIGTERM/SIGINT; issue 18: public-bind refusal, log escaping, and a quit
// that waits for remote sandbox deletes (a real jupyter-server: no kernel left behind).
#include "loop/loopfixtures.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "remote/jupyterserverprocess.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <memory>

using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

// A running loopscope whose output is collected while the test's event loop keeps turning.
class Running {
public:
    explicit Running(const QStringList &arguments, const QProcessEnvironment &environment =
                                                       QProcessEnvironment::systemEnvironment()) {
        process.setProcessEnvironment(environment);
        QObject::connect(&process, &QProcess::readyReadStandardOutput, &process,
                         [this] { out += process.readAllStandardOutput(); });
        QObject::connect(&process, &QProcess::readyReadStandardError, &process,
                         [this] { err += process.readAllStandardError(); });
        process.start(QStringLiteral(LOOPSCOPE_BIN), arguments);
    }
    ~Running() {
        if (process.state() != QProcess::NotRunning) {
            process.kill();
            process.waitForFinished(5000);
        }
    }
    bool waitListening() {
        return QTest::qWaitFor(
                   [this] { return out.contains('\n') || process.state() == QProcess::NotRunning; },
                   20000) &&
               out.contains('\n');
    }
    quint16 port() const {
        static const QRegularExpression line(
            QStringLiteral("^loopscope listening on http://127\\.0\\.0\\.1:(\\d+)\\n$"));
        return quint16(line.match(QString::fromUtf8(out)).captured(1).toUInt());
    }
    bool stop(int signalNumber) {
        ::kill(pid_t(process.processId()), signalNumber);
        return QTest::qWaitFor([this] { return process.state() == QProcess::NotRunning; }, 20000);
    }
    QProcess process;
    QByteArray out;
    QByteArray err;
};

struct Finished {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Finished
runToEnd(const QStringList &arguments,
         const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment()) {
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(QStringLiteral(LOOPSCOPE_BIN), arguments);
    Finished f;
    if (!process.waitForFinished(20000)) {
        process.kill();
        return f;
    }
    f.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    f.out = process.readAllStandardOutput();
    f.err = process.readAllStandardError();
    return f;
}

// Direct children of `pid` whose command line mentions `needle`.
QList<qint64> childrenWith(qint64 pid, const QByteArray &needle) {
    QList<qint64> children;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : entries) {
        bool numeric = false;
        entry.toLongLong(&numeric);
        if (!numeric)
            continue;
        QFile stat(QStringLiteral("/proc/%1/stat").arg(entry));
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(entry));
        if (!stat.open(QIODevice::ReadOnly) || !cmdline.open(QIODevice::ReadOnly))
            continue;
        // "pid (comm) state ppid ...": comm may hold spaces, so split after the last ')'.
        const QByteArray text = stat.readAll();
        const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 1 && fields.at(1).toLongLong() == pid &&
            cmdline.readAll().contains(needle))
            children << entry.toLongLong();
    }
    return children;
}

// Processes anywhere whose command line mentions `needle` (zombies have none).
int processesMentioning(const QByteArray &needle) {
    int count = 0;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : entries) {
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(entry));
        if (entry.toLongLong() > 0 && cmdline.open(QIODevice::ReadOnly) &&
            cmdline.readAll().contains(needle))
            ++count;
    }
    return count;
}

// VmRSS of a process in KiB (0 when unknown).
qint64 residentKiB(qint64 pid) {
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong();
    return 0;
}

RawHttpClient::Response request(quint16 port, const QByteArray &method, const QByteArray &target,
                                const QByteArray &body = {},
                                const QList<QPair<QByteArray, QByteArray>> &headers = {}) {
    RawHttpClient client(port);
    client.request(method, target, body, headers);
    if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 20000))
        return {};
    return client.take();
}

// tests/fixtures/litellm-config.yaml (LiteLLM documentation shape) and the environment its
// os.environ/ keys and the providers' key variables read.
QByteArray litellmFixture() {
    QFile file(QFINDTESTDATA("../fixtures/litellm-config.yaml"));
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QProcessEnvironment litellmEnvironment(const QString &azureBase) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *unset : {"ANTHROPIC_API_KEY", "OLLAMA_API_KEY", "OLLAMA_API_BASE",
                              "HOSTED_VLLM_API_BASE", "OPENROUTER_API_BASE", "DATABASE_URL"})
        env.remove(QString::fromLatin1(unset));
    env.insert(QStringLiteral("OPENAI_API_KEY"), QStringLiteral("sk-openai-test"));
    env.insert(QStringLiteral("AZURE_API_BASE"), azureBase);
    env.insert(QStringLiteral("AZURE_API_KEY"), QStringLiteral("az-test"));
    env.insert(QStringLiteral("OPENROUTER_API_KEY"), QStringLiteral("or-test"));
    env.insert(QStringLiteral("HOSTED_VLLM_API_KEY"), QStringLiteral("vllm-test"));
    env.insert(QStringLiteral("ANTHROPIC_API_KEY"), QStringLiteral("sk-ant-test"));
    return env;
}

bool replaceOnce(QByteArray &text, const QByteArray &from, const QByteArray &to) {
    if (text.count(from) != 1)
        return false;
    text.replace(from, to);
    return true;
}

} // namespace

class TstCli : public QObject {
    Q_OBJECT
private slots:
    void helpAndVersion() {
        const Finished help = runToEnd({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        for (const char *option : {"--headless", "--host", "--port", "--upstream", "--config",
                                   "--max-loops", "--exec-timeout", "--version", "--check-config"})
            QVERIFY2(help.out.contains(option), option);
        const Finished version = runToEnd({QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QCOMPARE(version.out, QByteArray("loopscope " LOOPSCOPE_EXPECTED_VERSION "\n"));
    }

    void usageErrorsExitWith2_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("port not a number")
            << QStringList{QStringLiteral("--port"), QStringLiteral("abc")}
            << QStringLiteral("--port");
        QTest::newRow("port too big")
            << QStringList{QStringLiteral("--port"), QStringLiteral("70000")}
            << QStringLiteral("--port");
        QTest::newRow("max-loops zero")
            << QStringList{QStringLiteral("--max-loops"), QStringLiteral("0")}
            << QStringLiteral("--max-loops");
        QTest::newRow("sandbox-pool negative")
            << QStringList{QStringLiteral("--sandbox-pool"), QStringLiteral("-1")}
            << QStringLiteral("--sandbox-pool");
        QTest::newRow("sandbox-pool not a number")
            << QStringList{QStringLiteral("--sandbox-pool"), QStringLiteral("many")}
            << QStringLiteral("--sandbox-pool");
        QTest::newRow("exec-timeout negative")
            << QStringList{QStringLiteral("--exec-timeout"), QStringLiteral("-1")}
            << QStringLiteral("--exec-timeout");
        QTest::newRow("upstream not a url")
            << QStringList{QStringLiteral("--upstream"), QStringLiteral("ftp://x")}
            << QStringLiteral("--upstream");
        QTest::newRow("unknown option")
            << QStringList{QStringLiteral("--bogus")} << QStringLiteral("bogus");
        QTest::newRow("stray argument")
            << QStringList{QStringLiteral("extra")} << QStringLiteral("extra");
        QTest::newRow("allow-origin not an origin")
            << QStringList{QStringLiteral("--allow-origin"),
                           QStringLiteral("https://x.example/path")}
            << QStringLiteral("--allow-origin");
        QTest::newRow("empty control token")
            << QStringList{QStringLiteral("--control-token"), QString()}
            << QStringLiteral("--control-token");
        QTest::newRow("unknown snippet language")
            << QStringList{QStringLiteral("--print-snippet"), QStringLiteral("cobol")}
            << QStringLiteral("--print-snippet");
        QTest::newRow("missing config file")
            << QStringList{QStringLiteral("--config"), QStringLiteral("/nonexistent/config.yaml")}
            << QStringLiteral("/nonexistent/config.yaml");
    }
    void usageErrorsExitWith2() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, mentions);
        const Finished f = runToEnd(arguments + QStringList{QStringLiteral("--headless")});
        QCOMPARE(f.exitCode, 2);
        QVERIFY(f.out.isEmpty());
        QVERIFY2(f.err.startsWith("loopscope: "), f.err.constData());
        QCOMPARE(f.err.count('\n'), 1); // one clear line
        QVERIFY2(QString::fromUtf8(f.err).contains(mentions), f.err.constData());
    }

    void configErrorNamesKeyAndLine() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            "model_list:\n  - model_name: gpt\n    litellm_params:\n      model: openai/gpt-4o\n"
            "      max_agentic_loops: 0\n");
        file.close();
        const Finished f =
            runToEnd({QStringLiteral("--headless"), QStringLiteral("--config"), path});
        QCOMPARE(f.exitCode, 2);
        QCOMPARE(f.err.count('\n'), 1);
        QVERIFY2(f.err.contains("model_list[0].litellm_params.max_agentic_loops (line 5)"),
                 f.err.constData());
    }

    void allowOriginsConfigErrorNamesKey() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("general_settings:\n  allow_origins: [\"not an origin\"]\n");
        file.close();
        const Finished f =
            runToEnd({QStringLiteral("--headless"), QStringLiteral("--config"), path});
        QCOMPARE(f.exitCode, 2);
        QVERIFY2(f.err.contains("general_settings.allow_origins (line 2)"), f.err.constData());
    }

    void listensLogsAndStopsCleanly_data() {
        QTest::addColumn<int>("signalNumber");
        QTest::newRow("SIGTERM") << int(SIGTERM);
        QTest::newRow("SIGINT") << int(SIGINT);
    }
    void listensLogsAndStopsCleanly() {
        QFETCH(int, signalNumber);
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0")});
        QVERIFY2(app.waitListening(), app.err.constData());
        QVERIFY2(app.port() != 0, app.out.constData()); // exactly the one line, nothing else
        // No upstream and no config: the demo model answers, offline.
        const auto r =
            request(app.port(), "POST", "/v1/chat/completions",
                    "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                    {{"Authorization", "Bearer sk-proj-secretvalue-WXYZ"}});
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value(QStringLiteral("model")).toString(),
                 QStringLiteral("loopscope-demo"));
        QVERIFY(!r.header("x-loopscope-overhead-ms").isEmpty());
        QVERIFY(QTest::qWaitFor([&] { return app.err.contains("/v1/chat/completions"); }, 20000));
        const QString log = QString::fromUtf8(app.err);
        QVERIFY2(log.contains(QStringLiteral("POST /v1/chat/completions model=gpt-4o status=200")),
                 qPrintable(log));
        QVERIFY(log.contains(QStringLiteral("iterations=0")));
        QVERIFY(log.contains(QStringLiteral("duration_ms=")));
        QVERIFY(log.contains(QStringLiteral("key=…WXYZ")));
        QVERIFY(!log.contains(QStringLiteral("secretvalue")));

        QVERIFY(app.stop(signalNumber));
        QCOMPARE(app.process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(app.process.exitCode(), 0);
        QCOMPARE(app.out.count('\n'), 1);
    }

    // --sandbox-pool sets how many warm sandboxes the binary keeps; 0 keeps none. With
    // sandbox.zygote off each is a bwrap child of the app; with the zygote (the default) each is
    // a PID-namespace init forked by the zygote, the app's one bwrap child. SIGTERM leaves no
    // sandbox process behind, pooled ones and the zygote included.
    void sandboxPoolFlagSizesTheWarmPool_data() {
        QTest::addColumn<int>("pool");
        QTest::addColumn<bool>("zygote");
        QTest::newRow("3, one bwrap each") << 3 << false;
        QTest::newRow("0 (off), one bwrap each") << 0 << false;
        QTest::newRow("3, forked") << 3 << true;
        QTest::newRow("0 (off), forked") << 0 << true;
    }
    void sandboxPoolFlagSizesTheWarmPool() {
        QFETCH(int, pool);
        QFETCH(bool, zygote);
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(zygote ? "sandbox:\n  zygote: true\n" : "sandbox:\n  zygote: false\n");
        file.close();
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0"),
                     QStringLiteral("--config"), config, QStringLiteral("--sandbox-pool"),
                     QString::number(pool)});
        QVERIFY2(app.waitListening(), app.err.constData());
        const qint64 pid = app.process.processId();
        const QByteArray marker = "loopscope-sandbox:" + QByteArray::number(pid);
        // The backend says once what its pool holds when the start-up has settled (the driver
        // compiled, the pool full or off): nothing starts on its own after that line.
        const QByteArray settled = pool > 0
                                       ? "sandbox pool: " + QByteArray::number(pool) + " ready\n"
                                       : QByteArray("sandbox pool: off\n");
        QTRY_VERIFY2_WITH_TIMEOUT(app.err.contains("sandbox pool: "), app.err.constData(), 60000);
        QVERIFY2(app.err.contains(settled), app.err.constData());
        // The count is awaited, not read once: the self-test's probe is a bwrap child for a
        // moment (it may still run when the pool has settled).
        const auto pooled = [&]() -> qsizetype {
            const QList<qint64> bwraps = childrenWith(pid, marker);
            if (!zygote)
                return bwraps.size();
            // app → the zygote's bwrap → its PID-namespace init → the zygote → one sandbox
            // init each.
            QList<qint64> level = bwraps;
            for (int depth = 0; depth < 2 && level.size() == 1; ++depth)
                level = childrenWith(level.first(), marker);
            return level.size() == 1 ? childrenWith(level.first(), marker).size()
                                     : (bwraps.isEmpty() ? 0 : -1);
        };
        // Awaited once (QTRY would read it again after the wait, maybe with the probe in it).
        qsizetype seen = -1;
        QVERIFY2(QTest::qWaitFor([&] { return (seen = pooled()) == pool; }, 20000),
                 qPrintable(QStringLiteral("%1 pooled interpreters, not %2").arg(seen).arg(pool)));
        QVERIFY(app.stop(SIGTERM));
        QCOMPARE(app.process.exitCode(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(processesMentioning(marker), 0, 20000);
    }

    void upstreamAndConfigRouting() {
        ScriptedUpstream upstream;
        QVERIFY(upstream.listen());
        upstream.setResponder([](const ScriptedUpstream::Request &) {
            return ScriptedUpstream::Response::json(200, "{\"id\":\"from-upstream\"}");
        });
        {
            Running app({QStringLiteral("--headless"), QStringLiteral("--port"),
                         QStringLiteral("0"), QStringLiteral("--upstream"), upstream.baseUrl()});
            QVERIFY2(app.waitListening(), app.err.constData());
            const auto r = request(app.port(), "POST", "/responses", "{\"model\":\"any\"}",
                                   {{"Authorization", "Bearer sk-client-1234"}});
            QCOMPARE(r.body, QByteArray("{\"id\":\"from-upstream\"}"));
            QCOMPARE(upstream.requests().last().header("authorization"),
                     QByteArray("Bearer sk-client-1234"));
            QVERIFY(app.stop(SIGTERM));
        }
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("model_list:\n  - model_name: fast\n    litellm_params:\n      model: "
                   "openai/gpt-4o-mini\n"
                   "      api_base: " +
                   upstream.baseUrl().toUtf8() +
                   "\n      api_key: os.environ/LOOPSCOPE_TEST_KEY\n"
                   "general_settings:\n  master_key: sk-master-0000\n");
        file.close();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("LOOPSCOPE_TEST_KEY"), QStringLiteral("sk-upstream-5555"));
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0"),
                     QStringLiteral("--config"), path},
                    env);
        QVERIFY2(app.waitListening(), app.err.constData());
        QCOMPARE(request(app.port(), "POST", "/v1/responses", "{\"model\":\"fast\"}").status, 401);
        const auto ok = request(app.port(), "POST", "/v1/responses", "{\"model\":\"fast\"}",
                                {{"Authorization", "Bearer sk-master-0000"}});
        QCOMPARE(ok.status, 200);
        QCOMPARE(upstream.requests().last().header("authorization"),
                 QByteArray("Bearer sk-upstream-5555"));
        QCOMPARE(upstream.requests().last().json().value(QStringLiteral("model")).toString(),
                 QStringLiteral("gpt-4o-mini"));
        QCOMPARE(request(app.port(), "POST", "/v1/responses", "{\"model\":\"unrouted\"}",
                         {{"Authorization", "Bearer sk-master-0000"}})
                     .status,
                 404);
        QVERIFY(app.stop(SIGTERM));
        QCOMPARE(app.process.exitCode(), 0);
    }

    // Issue 18: a bind beyond loopback needs a master key or --insecure-public spelled out.
    void publicBindRefusedWithoutMasterKey_data() {
        QTest::addColumn<QString>("host");
        QTest::newRow("any IPv4") << QStringLiteral("0.0.0.0");
        QTest::newRow("any IPv6") << QStringLiteral("::");
        QTest::newRow("a LAN address") << QStringLiteral("192.168.1.20");
    }
    void publicBindRefusedWithoutMasterKey() {
        QFETCH(QString, host);
        const Finished f = runToEnd({QStringLiteral("--headless"), QStringLiteral("--port"),
                                     QStringLiteral("0"), QStringLiteral("--host"), host});
        QCOMPARE(f.exitCode, 2);
        QVERIFY(f.out.isEmpty());
        QCOMPARE(f.err.count('\n'), 1);
        QVERIFY2(f.err.contains("master_key") && f.err.contains("--insecure-public") &&
                     f.err.contains(host.toUtf8()),
                 f.err.constData());
    }

    // The two ways past the refusal. 192.0.2.1 (TEST-NET-1) is on no interface of this machine,
    // so listen() then fails with exit 1: proof the CLI let it through without this test ever
    // opening a port beyond loopback.
    void publicBindAllowedWithKeyOrInsecureFlag() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("general_settings:\n  master_key: sk-master-0000\n");
        file.close();
        const QStringList base{QStringLiteral("--headless"), QStringLiteral("--port"),
                               QStringLiteral("0"), QStringLiteral("--host"),
                               QStringLiteral("192.0.2.1")};
        const Finished withKey = runToEnd(base + QStringList{QStringLiteral("--config"), path});
        QCOMPARE(withKey.exitCode, 1);
        QVERIFY2(withKey.err.contains("cannot listen"), withKey.err.constData());
        QVERIFY(!withKey.err.contains("insecure"));

        const Finished open = runToEnd(base + QStringList{QStringLiteral("--insecure-public")});
        QCOMPARE(open.exitCode, 1);
        QVERIFY2(open.err.contains("WARNING: --insecure-public"), open.err.constData());
        QVERIFY2(open.err.contains("cannot listen"), open.err.constData());

        // Loopback needs neither.
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0"),
                     QStringLiteral("--host"), QStringLiteral("127.0.0.1")});
        QVERIFY2(app.waitListening(), app.err.constData());
        QVERIFY(!app.err.contains("WARNING"));
        QVERIFY(app.stop(SIGTERM));
    }

    // Issue 18: the decoded path and the client's model are escaped in the request log, so a
    // client cannot forge a line ("/x%0aPOST ...") or a field ("model=a status=200").
    void requestLogEscapesClientFields() {
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0")});
        QVERIFY2(app.waitListening(), app.err.constData());
        // An encoded control byte is refused before routing; its log line shows the target as
        // sent, still percent-encoded.
        const auto refused =
            request(app.port(), "GET", "/x%0aPOST%20/v1/forged%20model=gpt%20status=200%0d%0a");
        QCOMPARE(refused.status, 400);
        // Spaces and Unicode line separators are valid in a path, and escaped in the log.
        const auto r = request(app.port(), "GET",
                               "/x%E2%80%A8POST%20/v1/forged%20model=gpt%20status=200%C2%85");
        QCOMPARE(r.status, 404);
        const auto m = request(app.port(), "POST", "/v1/chat/completions",
                               "{\"model\":\"m\\nPOST /v1/fake status=200\",\"messages\":"
                               "[{\"role\":\"user\",\"content\":\"hi\"}]}");
        QVERIFY(m.status != 0);
        QVERIFY(QTest::qWaitFor([&] { return app.err.contains("model=m\\x0aPOST"); }, 20000));
        QVERIFY(app.stop(SIGTERM));
        QVERIFY2(app.err.contains("invalid_request_target to 127.0.0.1: Invalid request target: "
                                  "the path holds an encoded control character (%0A) (target "
                                  "/x%0aPOST%20/v1/forged%20model=gpt%20status=200%0d%0a)"),
                 app.err.constData());
        const QList<QByteArray> lines = app.err.split('\n');
        for (const QByteArray &line : lines) {
            QVERIFY2(!line.startsWith("POST /v1/forged") && !line.startsWith("POST /v1/fake"),
                     app.err.constData());
        }
        QVERIFY2(app.err.contains("GET /x\\u{2028}POST\\x20/v1/forged\\x20model=gpt\\x20status=200"
                                  "\\u{0085} model=- status=404"),
                 app.err.constData());
        QVERIFY2(app.err.contains("model=m\\x0aPOST\\x20/v1/fake\\x20status=200 "),
                 app.err.constData());
    }

    // Issue 18: quitting waits (bounded) for remote deletes. A session sandbox on a real
    // Jupyter Server is a kernel process; after the signal none may be left. "window" runs the
    // GUI build offscreen, where quit goes through ~ProxyService (as closing the window does).
    void quitDeletesRemoteSandboxes_data() {
        QTest::addColumn<bool>("window");
        QTest::addColumn<int>("signalNumber");
        QTest::newRow("headless SIGTERM") << false << int(SIGTERM);
        QTest::newRow("headless SIGINT") << false << int(SIGINT);
        QTest::newRow("window SIGTERM") << true << int(SIGTERM);
    }
    void quitDeletesRemoteSandboxes() {
        QFETCH(bool, window);
        QFETCH(int, signalNumber);
        if (!loopscope::test::JupyterServerProcess::isInstalled())
            QSKIP("jupyter-server is not installed (scripts/install-deps)");
        loopscope::test::JupyterServerProcess jupyter;
        QVERIFY2(jupyter.start(), qPrintable(jupyter.error()));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("sandbox_tools:\n  - sandbox_tool_name: kernels\n    litellm_params:\n"
                   "      sandbox_provider: jupyter\n      api_base: " +
                   jupyter.baseUrl().toUtf8() + "\n      api_key: " + jupyter.token().toUtf8() +
                   "\nlitellm_settings:\n  callbacks: [\"code_interpreter_interception\"]\n"
                   "  code_interpreter_interception_params:\n    sandbox_tool_name: kernels\n");
        file.close();
        QStringList arguments{QStringLiteral("--port"),     QStringLiteral("0"),
                              QStringLiteral("--upstream"), QStringLiteral("demo"),
                              QStringLiteral("--config"),   path};
        if (!window)
            arguments.prepend(QStringLiteral("--headless"));
        Running app(arguments);
        QVERIFY2(app.waitListening(), app.err.constData());
        const auto r = request(
            app.port(), "POST", "/v1/responses",
            "{\"model\":\"loopscope-demo\",\"input\":\"```python\\nx = 6 * 7\\nprint(x)\\n```\","
            "\"tools\":[{\"type\":\"code_interpreter\"}],\"metadata\":{\"session_id\":\"s1\"}}");
        QCOMPARE(r.status, 200);
        QVERIFY2(QJsonDocument(r.json()).toJson().contains("42"), r.body.constData());
        // The session keeps its sandbox: one live kernel.
        QTRY_COMPARE_WITH_TIMEOUT(jupyter.kernelProcesses().size(), 1, 20000);
        // A remote backend is the one in use: no warm local interpreters were started for it.
        QCOMPARE(childrenWith(app.process.processId(), "bwrap").size(), 0);

        QVERIFY(app.stop(signalNumber));
        QCOMPARE(app.process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(app.process.exitCode(), 0);
        QVERIFY2(app.err.contains("waiting up to 5 s"), app.err.constData());
        // Deleted through the server's API before Loopscope exited, not left to the server.
        QTRY_VERIFY2_WITH_TIMEOUT(jupyter.kernelProcesses().isEmpty(), app.err.constData(), 20000);
        QVERIFY(jupyter.stop());
    }

    // Issue 18: one run's output is capped in what goes back to the model (head, marker,
    // tail); the client's code_interpreter_call logs still carry all of it.
    void fedBackOutputIsCappedForTheModel() {
        ScriptedUpstream upstream;
        QVERIFY(upstream.listen());
        upstream.enqueue(ScriptedUpstream::Response::json(loopfixtures::responsesFunctionCall(
            QStringLiteral("print('A' * 30000 + 'MIDDLE' + 'Z' * 30000)"))));
        upstream.enqueue(
            ScriptedUpstream::Response::json(loopfixtures::responsesMessage(QStringLiteral("ok"))));
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0"),
                     QStringLiteral("--upstream"), upstream.baseUrl()});
        QVERIFY2(app.waitListening(), app.err.constData());
        const auto r = request(app.port(), "POST", "/v1/responses",
                               "{\"model\":\"m\",\"input\":\"go\",\"tools\":[{\"type\":"
                               "\"code_interpreter\"}]}");
        QCOMPARE(r.status, 200);
        QCOMPARE(upstream.requestCount(), 2);
        // The client: the whole output.
        QString logs;
        for (const QJsonValue &item : r.json().value(QStringLiteral("output")).toArray())
            if (item[QStringLiteral("type")].toString() == QLatin1String("code_interpreter_call"))
                logs = item[QStringLiteral("outputs")][0][QStringLiteral("logs")].toString();
        QCOMPARE(logs.size(), 60007);
        QVERIFY(logs.contains(QStringLiteral("MIDDLE")));
        // The model: head and tail around the marker, within the default 20,000 characters.
        QString fedBack;
        for (const QJsonValue &item :
             upstream.requests().at(1).json().value(QStringLiteral("input")).toArray())
            if (item[QStringLiteral("type")].toString() == QLatin1String("function_call_output"))
                fedBack = item[QStringLiteral("output")].toString();
        QVERIFY2(fedBack.size() > 20000 && fedBack.size() < 20400, qPrintable(fedBack.left(200)));
        QVERIFY(fedBack.startsWith(QString(10000, u'A')));
        QVERIFY(fedBack.endsWith(QString(9999, u'Z') + u'\n'));
        QVERIFY(!fedBack.contains(QStringLiteral("MIDDLE")));
        QVERIFY(fedBack.contains(QStringLiteral("40007 characters omitted")));
        QVERIFY(fedBack.contains(QStringLiteral("sandbox.max_output_chars")));
        QVERIFY(app.stop(SIGTERM));
    }

    // Issue 18: a global cap on live sandboxes, 429 with Retry-After beyond it; the sandboxes
    // that exist keep working.
    void sandboxCapAnswers429() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("sandbox:\n  max_live: 1\n  queue_max: 0\n"); // no waiting: refused at once
        file.close();
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0"),
                     QStringLiteral("--upstream"), QStringLiteral("demo"),
                     QStringLiteral("--config"), path});
        QVERIFY2(app.waitListening(), app.err.constData());
        const auto body = [](const char *session) -> QByteArray {
            return QByteArray("{\"model\":\"loopscope-demo\",\"input\":\"```python\\n"
                              "print(6 * 7)\\n```\",\"tools\":[{\"type\":\"code_interpreter\"}],"
                              "\"metadata\":{\"session_id\":\"") +
                   session + "\"}}";
        };
        const auto first = request(app.port(), "POST", "/v1/responses", body("s1"));
        QCOMPARE(first.status, 200);
        // (Also the control for quitDeletesRemoteSandboxes' "no bwrap child": local sandboxes
        // are bwrap children of loopscope.)
        QVERIFY(childrenWith(app.process.processId(), "bwrap").size() >= 1);
        const auto second = request(app.port(), "POST", "/v1/responses", body("s2"));
        QCOMPARE(second.status, 429);
        QCOMPARE(second.header("retry-after"), QByteArray("5"));
        const QJsonObject error = second.json().value(QStringLiteral("error")).toObject();
        QCOMPARE(error.value(QStringLiteral("code")).toString(),
                 QStringLiteral("too_many_sandboxes"));
        QVERIFY(error.value(QStringLiteral("message"))
                    .toString()
                    .contains(QStringLiteral("sandbox.max_live")));
        const auto again = request(app.port(), "POST", "/v1/responses", body("s1"));
        QCOMPARE(again.status, 200);
        QVERIFY(app.stop(SIGTERM));
        QVERIFY(app.err.contains("sandbox refused"));
    }

    // Issue 18: a pass-through stream to a client that reads nothing makes the upstream wait,
    // not Loopscope's memory grow: 96 MiB streamed, the process stays far below that.
    void slowClientStreamIsBackpressured() {
        ScriptedUpstream upstream;
        QVERIFY(upstream.listen());
        QList<QByteArray> chunks;
        const QByteArray event = "data: " + QByteArray(1024 * 1024 - 8, 'x') + "\n\n";
        for (int i = 0; i < 96; ++i)
            chunks << event;
        upstream.enqueue(ScriptedUpstream::Response::events(chunks));
        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0"),
                     QStringLiteral("--upstream"), upstream.baseUrl()});
        QVERIFY2(app.waitListening(), app.err.constData());
        const qint64 before = residentKiB(app.process.processId());
        QVERIFY(before > 0);
        QTcpSocket client;
        client.setReadBufferSize(4096); // Qt stops reading, the kernel's window closes
        client.connectToHost(QHostAddress::LocalHost, app.port());
        QVERIFY(client.waitForConnected(10000));
        const QByteArray body = "{\"model\":\"m\",\"input\":\"hi\",\"stream\":true}";
        client.write("POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     "application/json\r\nContent-Length: " +
                     QByteArray::number(body.size()) + "\r\n\r\n" + body);
        QTRY_COMPARE_WITH_TIMEOUT(upstream.requestCount(), 1, 20000);
        // Long enough for an unbounded relay to pull most of the 96 MiB off loopback.
        qint64 peak = 0;
        for (int i = 0; i < 30; ++i) {
            QTest::qWait(200);
            peak = qMax(peak, residentKiB(app.process.processId()));
        }
        QVERIFY2(peak - before < 40 * 1024,
                 qPrintable(QStringLiteral("RSS grew by %1 MiB").arg((peak - before) / 1024)));
        client.abort();
        QVERIFY(app.stop(SIGTERM));
    }

    // Issue 17: a LiteLLM config mixing providers starts; each OpenAI-compatible model reaches
    // its upstream at the right path with the right key header, the Anthropic one over
    // /v1/messages also for Chat Completions; the others answer 400.
    void litellmConfigRoutesEachModel() {
        ScriptedUpstream upstream;
        QVERIFY(upstream.listen());
        upstream.setResponder([](const ScriptedUpstream::Request &r) {
            if (r.target.endsWith("/v1/messages"))
                return ScriptedUpstream::Response::json(
                    200, R"({"id":"msg_1","type":"message","role":"assistant","model":"c",
                        "content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",
                        "usage":{"input_tokens":1,"output_tokens":1}})");
            return ScriptedUpstream::Response::json(200, "{\"id\":\"ok\"}");
        });
        const QByteArray local = "http://127.0.0.1:" + QByteArray::number(upstream.port());
        // The test copy: every api_base on loopback, one path per provider.
        QByteArray yaml = litellmFixture();
        QVERIFY(!yaml.isEmpty());
        QVERIFY(
            replaceOnce(yaml, "      model: openai/gpt-4o\n",
                        "      model: openai/gpt-4o\n      api_base: " + local + "/openai/v1\n"));
        QVERIFY(replaceOnce(yaml, "api_base: http://vllm.example.internal:8000/v1",
                            "api_base: " + local + "/vllm/v1"));
        QVERIFY(replaceOnce(yaml, "api_base: http://localhost:11434\n",
                            "api_base: " + local + "\n")); // a bare host gets /v1
        QVERIFY(replaceOnce(yaml, "      model: openrouter/anthropic/claude-3.5-sonnet\n",
                            "      model: openrouter/anthropic/claude-3.5-sonnet\n"
                            "      api_base: " +
                                local + "/api/v1\n"));
        QVERIFY(replaceOnce(yaml, "      api_key: os.environ/ANTHROPIC_API_KEY\n",
                            "      api_key: os.environ/ANTHROPIC_API_KEY\n      api_base: " +
                                local + "/anthropic\n"));
        QVERIFY(replaceOnce(yaml, "      model: \"*\"\n",
                            "      model: \"*\"\n      api_base: " + local + "/wild/v1\n"));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("config.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(yaml);
        file.close();

        Running app({QStringLiteral("--headless"), QStringLiteral("--port"), QStringLiteral("0"),
                     QStringLiteral("--config"), path},
                    litellmEnvironment(QString::fromLatin1(local + "/az")));
        QVERIFY2(app.waitListening(), app.err.constData());
        // One warning line per skipped model, at start (lines of the copy: one more than the
        // fixture's for the api_base added to gpt-4o, two more after the one of claude).
        for (const char *line :
             {"loopscope: WARNING: model 'bedrock-claude' (model_list[3], line 24) skipped: "
              "provider 'bedrock' has its own API",
              "loopscope: WARNING: model 'gemini-pro' (model_list[4], line 28) skipped: "
              "provider 'vertex_ai' has its own API"})
            QVERIFY2(app.err.contains(line), app.err.constData());
        QCOMPARE(app.err.count("WARNING: model"), 2);

        struct Expect {
            const char *model, *target, *header, *value, *upstreamModel;
        };
        const QList<Expect> routable = {
            {"gpt-4o", "/openai/v1/chat/completions", "authorization", "Bearer sk-openai-test",
             "gpt-4o"},
            {"azure-gpt-4o", "/az/openai/v1/chat/completions", "api-key", "az-test",
             "my-gpt-4o-deployment"},
            {"qwen", "/vllm/v1/chat/completions", "authorization", "Bearer vllm-test",
             "Qwen/Qwen2.5-7B-Instruct"},
            {"llama3", "/v1/chat/completions", "authorization", "", "llama3.1"},
            {"openrouter-claude", "/api/v1/chat/completions", "authorization", "Bearer or-test",
             "anthropic/claude-3.5-sonnet"},
            {"gpt-4.1-nano", "/wild/v1/chat/completions", "authorization", "", "gpt-4.1-nano"},
        };
        const QList<QPair<QByteArray, QByteArray>> master = {{"Authorization", "Bearer sk-1234"}};
        for (const Expect &x : routable) {
            const auto r =
                request(app.port(), "POST", "/v1/chat/completions",
                        "{\"model\":\"" + QByteArray(x.model) +
                            "\",\"messages\":[{\"role\":\"user\"," + "\"content\":\"hi\"}]}",
                        master);
            QVERIFY2(r.status == 200, x.model);
            const ScriptedUpstream::Request got = upstream.requests().last();
            QCOMPARE(got.target, QByteArray(x.target));
            QCOMPARE(got.header(x.header), QByteArray(x.value));
            QCOMPARE(got.json().value(QStringLiteral("model")).toString(),
                     QString::fromLatin1(x.upstreamModel));
        }
        const int forwarded = upstream.requestCount();
        const QList<QPair<const char *, const char *>> unavailable = {
            {"bedrock-claude", "(config line 24): provider 'bedrock' has its own API"},
            {"gemini-pro", "(config line 28): provider 'vertex_ai' has its own API"}};
        for (const auto &[model, reason] : unavailable) {
            for (const QByteArray path : {"/v1/chat/completions", "/v1/responses"}) {
                const auto r = request(app.port(), "POST", path,
                                       "{\"model\":\"" + QByteArray(model) + "\"}", master);
                QCOMPARE(r.status, 400);
                const QJsonObject error = r.json().value(QStringLiteral("error")).toObject();
                QCOMPARE(error.value(QStringLiteral("type")).toString(),
                         QStringLiteral("invalid_request_error"));
                QCOMPARE(error.value(QStringLiteral("code")).toString(),
                         QStringLiteral("model_not_available"));
                QCOMPARE(error.value(QStringLiteral("param")).toString(), QStringLiteral("model"));
                QVERIFY2(error.value(QStringLiteral("message"))
                             .toString()
                             .contains(QString::fromLatin1(reason)),
                         r.body.constData());
            }
        }
        QCOMPARE(upstream.requestCount(), forwarded); // nothing of theirs left Loopscope

        // The Anthropic entry serves the Messages surface: its api_base (+ /v1), its key in
        // x-api-key, the upstream model name.
        const auto messages =
            request(app.port(), "POST", "/v1/messages",
                    "{\"model\":\"claude-3-5-sonnet\",\"max_tokens\":8,\"messages\":[]}", master);
        QCOMPARE(messages.status, 200);
        const ScriptedUpstream::Request got = upstream.requests().last();
        QCOMPARE(got.target, QByteArray("/anthropic/v1/messages"));
        QCOMPARE(got.header("x-api-key"), QByteArray("sk-ant-test"));
        // Chat Completions on it is translated onto Messages (dialects.md §5).
        const auto chat = request(app.port(), "POST", "/v1/chat/completions",
                                  "{\"model\":\"claude-3-5-sonnet\",\"messages\":[{\"role\":"
                                  "\"user\",\"content\":\"hi\"}]}",
                                  master);
        QCOMPARE(chat.status, 200);
        QCOMPARE(chat.json().value(QStringLiteral("object")).toString(),
                 QStringLiteral("chat.completion"));
        const ScriptedUpstream::Request bridged = upstream.requests().last();
        QCOMPARE(bridged.target, QByteArray("/anthropic/v1/messages"));
        QCOMPARE(bridged.header("x-api-key"), QByteArray("sk-ant-test"));
        QCOMPARE(bridged.json().value(QStringLiteral("max_tokens")).toInt(), 4096);
        QCOMPARE(got.header("authorization"), QByteArray()); // the master key stays here
        QCOMPARE(got.json().value(QStringLiteral("model")).toString(),
                 QStringLiteral("claude-3-5-sonnet-20240620"));

        const auto models = request(app.port(), "GET", "/v1/models", {}, master);
        QStringList ids;
        for (const QJsonValue &m : models.json().value(QStringLiteral("data")).toArray())
            ids << m.toObject().value(QStringLiteral("id")).toString();
        QCOMPARE(ids, QStringList({QStringLiteral("gpt-4o"), QStringLiteral("azure-gpt-4o"),
                                   QStringLiteral("claude-3-5-sonnet"), QStringLiteral("qwen"),
                                   QStringLiteral("llama3"), QStringLiteral("openrouter-claude")}));
        QVERIFY(app.stop(SIGTERM));
        QCOMPARE(app.process.exitCode(), 0);
    }

    // --check-config FILE: per model where it goes (default api_bases resolved) or why not.
    void checkConfigPrintsEachRoute() {
        const Finished f = runToEnd(
            {QStringLiteral("--check-config"), QFINDTESTDATA("../fixtures/litellm-config.yaml")},
            litellmEnvironment(QStringLiteral("https://my-resource.openai.azure.com")));
        QCOMPARE(f.exitCode, 0);
        QVERIFY2(f.err.isEmpty(), f.err.constData());
        const QString skip =
            QStringLiteral(" has its own API, not OpenAI's; Loopscope forwards only "
                           "OpenAI-compatible providers");
        QCOMPARE(
            QString::fromUtf8(f.out).split(u'\n'),
            QStringList(
                {QStringLiteral("gpt-4o: openai → https://api.openai.com/v1/chat/completions "
                                "model=gpt-4o key=api_key from the config (Authorization: Bearer) "
                                "(line 6)"),
                 QStringLiteral("azure-gpt-4o: azure → https://my-resource.openai.azure.com/openai/"
                                "v1/chat/completions model=my-gpt-4o-deployment key=api_key from "
                                "the config (api-key) (line 12)"),
                 QStringLiteral(
                     "claude-3-5-sonnet: anthropic → https://api.anthropic.com/v1/"
                     "messages model=claude-3-5-sonnet-20240620 key=api_key from the "
                     "config (x-api-key) (line 18) Messages native; Chat Completions and "
                     "Responses bridged over /messages"),
                 QStringLiteral("bedrock-claude: skipped (line 22): provider 'bedrock'") + skip,
                 QStringLiteral("gemini-pro: skipped (line 26): provider 'vertex_ai'") + skip,
                 QStringLiteral(
                     "qwen: hosted_vllm → http://vllm.example.internal:8000/v1/chat/"
                     "completions model=Qwen/Qwen2.5-7B-Instruct key=$HOSTED_VLLM_API_KEY "
                     "(Authorization: Bearer) (line 31)"),
                 QStringLiteral("llama3: ollama_chat → http://localhost:11434/v1/chat/completions "
                                "model=llama3.1 key=none (master_key is set) (line 35) "
                                "Responses native, state kept by Loopscope"),
                 QStringLiteral("openrouter-claude: openrouter → https://openrouter.ai/api/v1/chat/"
                                "completions model=anthropic/claude-3.5-sonnet "
                                "key=$OPENROUTER_API_KEY (Authorization: Bearer) (line 39)"),
                 QStringLiteral("*: openai → https://api.openai.com/v1/chat/completions model=* "
                                "key=none (master_key is set) (line 42)"),
                 QStringLiteral("any other model on /v1/messages: https://api.anthropic.com/v1"),
                 QStringLiteral("7 routable, 2 skipped"), QString()}));
        QVERIFY(!f.out.contains("test")); // no key value, only where it comes from

        // A malformed file is still refused, with key and line.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("model_list:\n  - litellm_params:\n      model: anthropic/claude\n");
        file.close();
        const Finished bad = runToEnd({QStringLiteral("--check-config"), path});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("model_list[0].model_name (line 2)"), bad.err.constData());
    }

    void busyPortFailsClearly() {
        QTcpServer blocker;
        QVERIFY(blocker.listen(QHostAddress::LocalHost, 0));
        const Finished f = runToEnd({QStringLiteral("--headless"), QStringLiteral("--port"),
                                     QString::number(blocker.serverPort())});
        QCOMPARE(f.exitCode, 1);
        QVERIFY(f.out.isEmpty());
        QVERIFY2(f.err.contains("cannot listen"), f.err.constData());
    }
};

QTEST_GUILESS_MAIN(TstCli)
#include "tst_cli.moc"
