// The CLI contract (docs/architecture.md) against the real binary: the one listening line,
// --port 0, exit codes, config errors, the per-request log with masked keys, the demo default,
// and a clean stop on SIGTERM/SIGINT.
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
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

Finished runToEnd(const QStringList &arguments) {
    QProcess process;
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

RawHttpClient::Response request(quint16 port, const QByteArray &method, const QByteArray &target,
                                const QByteArray &body = {},
                                const QList<QPair<QByteArray, QByteArray>> &headers = {}) {
    RawHttpClient client(port);
    client.request(method, target, body, headers);
    if (!QTest::qWaitFor([&] { return client.hasCompleteResponse(); }, 20000))
        return {};
    return client.take();
}

} // namespace

class TstCli : public QObject {
    Q_OBJECT
private slots:
    void helpAndVersion() {
        const Finished help = runToEnd({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        for (const char *option : {"--headless", "--host", "--port", "--upstream", "--config",
                                   "--max-loops", "--exec-timeout", "--version"})
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
