// "Copy as curl / Python / Node": the quoting primitives are checked by the real interpreters
// (sh, python3, node) printing back what they parsed, and the generated commands are run for
// real (curl, python3 + requests, node's fetch) against a loopback server that records what
// it received. Secrets: a masked credential becomes an environment variable, never text.
#include "models/copyascommand.h"
#include "proxy/scriptedupstream.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace loopscope;
using loopscope::test::ScriptedUpstream;
using Format = CopyAsCommand::Format;

Q_DECLARE_METATYPE(loopscope::CopyAsCommand::Format)

namespace {

const QString kRealKey = QStringLiteral("sk-real-key-for-the-test-0001");

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs a process while the event loop keeps serving (the loopback server lives in this thread).
Run run(const QString &program, const QStringList &args) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name :
         {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"})
        env.remove(QLatin1String(name));
    env.insert(QStringLiteral("NO_PROXY"), QStringLiteral("*"));
    env.insert(QStringLiteral("OPENAI_API_KEY"), kRealKey);
    env.insert(QStringLiteral("X_API_KEY"), QStringLiteral("x-api-secret-value"));
    process.setProcessEnvironment(env);
    process.start(program, args);
    if (!process.waitForStarted(10000))
        return {};
    if (!QTest::qWaitFor([&] { return process.state() == QProcess::NotRunning; }, 60000)) {
        process.kill();
        process.waitForFinished();
        return {};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

QJsonObject clientRequestFlow(const QJsonObject &headers, const QJsonValue &body,
                              const QString &path = QStringLiteral("/v1/responses"),
                              const QString &api = QStringLiteral("responses")) {
    return {{QStringLiteral("id"), QStringLiteral("req_copy")},
            {QStringLiteral("method"), QStringLiteral("POST")},
            {QStringLiteral("path"), path},
            {QStringLiteral("api"), api},
            {QStringLiteral("hops"),
             QJsonArray{QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_request")},
                                    {QStringLiteral("method"), QStringLiteral("POST")},
                                    {QStringLiteral("path"), path},
                                    {QStringLiteral("headers"), headers},
                                    {QStringLiteral("body"), body}}}}};
}

QString tricky() {
    return QStringLiteral("it's \"quoted\" \\ back\\slash\nnew line\ttab $HOME `id` $(id) "
                          "h\u00e9llo \u2713 \U0001D11E \u65e5\u672c \u2028");
}

} // namespace

class TstCopyAsCommand : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString writeScript(const QString &name, const QString &text) {
        const QString path = m_dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            return {};
        file.write(text.toUtf8());
        return path;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        for (const char *tool : {"sh", "curl", "python3", "node"})
            QVERIFY2(!QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty(), tool);
    }

    void quotingSurvivesTheInterpreter_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("plain") << QStringLiteral("hello");
        QTest::newRow("empty") << QString();
        QTest::newRow("single quote") << QStringLiteral("it's");
        QTest::newRow("double quotes") << QStringLiteral("say \"hi\"");
        QTest::newRow("backslashes") << QStringLiteral("C:\\path\\n not a newline \\\\");
        QTest::newRow("newlines and tabs") << QStringLiteral("a\nb\r\nc\td");
        QTest::newRow("shell expansions") << QStringLiteral("$HOME ${PATH} `id` $(id) !! *");
        QTest::newRow("unicode") << QStringLiteral("h\u00e9llo \u2713 \U0001D11E \u65e5\u672c");
        QTest::newRow("line separators") << QStringLiteral("a\u2028b\u2029c");
        QTest::newRow("control chars") << QStringLiteral("bell\u0007 esc\u001b del\u007f");
        QTest::newRow("everything") << tricky();
    }
    void quotingSurvivesTheInterpreter() {
        QFETCH(QString, text);
        const QByteArray expected = text.toUtf8();

        const Run shell =
            run(QStringLiteral("sh"), {QStringLiteral("-c"), QStringLiteral("printf %s ") +
                                                                 CopyAsCommand::shellQuote(text)});
        QCOMPARE(shell.exitCode, 0);
        QCOMPARE(shell.out, expected);

        const Run python =
            run(QStringLiteral("python3"),
                {QStringLiteral("-c"), QStringLiteral("import sys; sys.stdout.buffer.write(") +
                                           CopyAsCommand::pythonString(text) +
                                           QStringLiteral(".encode('utf-8'))")});
        QVERIFY2(python.exitCode == 0, python.err.constData());
        QCOMPARE(python.out, expected);

        const Run node =
            run(QStringLiteral("node"),
                {QStringLiteral("-e"), QStringLiteral("process.stdout.write(") +
                                           CopyAsCommand::jsString(text) + QStringLiteral(")")});
        QVERIFY2(node.exitCode == 0, node.err.constData());
        QCOMPARE(node.out, expected);
    }

    void literalsParseBackToTheSameJson() {
        const QJsonObject value{
            {QStringLiteral("model"), QStringLiteral("gpt-5")},
            {tricky(), tricky()},
            {QStringLiteral("numbers"), QJsonArray{0, 42, -3, 1.5, 1e21, 0.1, 9007199254740991.0}},
            {QStringLiteral("flags"), QJsonArray{true, false, QJsonValue::Null}},
            {QStringLiteral("empty"), QJsonObject()},
            {QStringLiteral("nested"),
             QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                    {QStringLiteral("content"), QJsonArray()}}}}};
        const Run python = run(
            QStringLiteral("python3"),
            {QStringLiteral("-c"), QStringLiteral("import json, sys\nvalue = ") +
                                       CopyAsCommand::pythonLiteral(value) +
                                       QStringLiteral("\nsys.stdout.write(json.dumps(value))")});
        QVERIFY2(python.exitCode == 0, python.err.constData());
        QCOMPARE(QJsonDocument::fromJson(python.out).object(), value);

        const Run node = run(QStringLiteral("node"),
                             {QStringLiteral("-e"), QStringLiteral("const value = ") +
                                                        CopyAsCommand::jsLiteral(value) +
                                                        QStringLiteral(";\nprocess.stdout.write("
                                                                       "JSON.stringify(value));")});
        QVERIFY2(node.exitCode == 0, node.err.constData());
        QCOMPARE(QJsonDocument::fromJson(node.out).object(), value);
    }

    void fromFlowKeepsSecretsMaskedAndDropsTransportHeaders() {
        const QJsonObject flow = clientRequestFlow(
            {{QStringLiteral("host"), QStringLiteral("127.0.0.1:5555")},
             {QStringLiteral("content-length"), QStringLiteral("17")},
             {QStringLiteral("connection"), QStringLiteral("keep-alive")},
             {QStringLiteral("authorization"), QStringLiteral("Bearer \u2026wxyz")},
             {QStringLiteral("x-api-key"), QStringLiteral("\u20261234")},
             {QStringLiteral("openai-beta"), QStringLiteral("assistants=v2")}},
            QJsonObject{{QStringLiteral("model"), QStringLiteral("m")}});
        const auto request = CopyAsCommand::fromFlow(flow);
        QVERIFY(request);
        QCOMPARE(request->url, QStringLiteral("http://127.0.0.1:5555/v1/responses"));
        QStringList names;
        for (const CopyAsCommand::Header &h : request->headers)
            names << h.name;
        QCOMPARE(names, (QStringList{QStringLiteral("authorization"), QStringLiteral("openai-beta"),
                                     QStringLiteral("x-api-key")}));
        QCOMPARE(request->headers.at(0).variable, QStringLiteral("OPENAI_API_KEY"));
        QCOMPARE(request->headers.at(0).variablePrefix, QStringLiteral("Bearer "));
        QCOMPARE(request->headers.at(2).variable, QStringLiteral("X_API_KEY"));
        QCOMPARE(request->headers.at(2).variablePrefix, QString());

        for (Format format :
             {Format::Curl, Format::PythonRequests, Format::PythonOpenAi, Format::NodeFetch}) {
            const QString text = CopyAsCommand::generate(format, *request);
            QVERIFY2(!text.contains(QChar(0x2026)), qPrintable(text)); // no masked value pasted
            QVERIFY2(text.contains(QStringLiteral("OPENAI_API_KEY")), qPrintable(text));
            QVERIFY2(!text.contains(QStringLiteral("content-length")), qPrintable(text));
        }
        // An explicit base URL wins over the Host header, without doubling /v1.
        QCOMPARE(CopyAsCommand::fromFlow(flow, QStringLiteral("http://127.0.0.1:4000/v1/"))->url,
                 QStringLiteral("http://127.0.0.1:4000/v1/responses"));
        QVERIFY(!CopyAsCommand::fromFlow(QJsonObject{{QStringLiteral("hops"), QJsonArray()}}));
        QCOMPARE(CopyAsCommand::forFlow({}, Format::Curl), QString());
    }

    void openAiScriptIsValidPython_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("api");
        QTest::addColumn<bool>("stream");
        QTest::addColumn<QString>("expected");
        QTest::newRow("responses") << QStringLiteral("/v1/responses") << QStringLiteral("responses")
                                   << false << QStringLiteral("client.responses.create(**body");
        QTest::newRow("responses stream")
            << QStringLiteral("/v1/responses") << QStringLiteral("responses") << true
            << QStringLiteral("for event in client.responses.create(**body");
        QTest::newRow("chat") << QStringLiteral("/v1/chat/completions")
                              << QStringLiteral("chat_completions") << false
                              << QStringLiteral("client.chat.completions.create(**body");
        QTest::newRow("other path falls back to requests")
            << QStringLiteral("/v1/embeddings") << QStringLiteral("other") << false
            << QStringLiteral("requests.request(");
    }
    void openAiScriptIsValidPython() {
        QFETCH(QString, path);
        QFETCH(QString, api);
        QFETCH(bool, stream);
        QFETCH(QString, expected);
        const QJsonObject flow = clientRequestFlow(
            {{QStringLiteral("authorization"), QStringLiteral("Bearer \u2026wxyz")},
             {QStringLiteral("x-trace"), tricky()},
             {QStringLiteral("x-stainless-lang"), QStringLiteral("python")}},
            QJsonObject{{QStringLiteral("model"), QStringLiteral("gpt-5")},
                        {QStringLiteral("input"), tricky()},
                        {QStringLiteral("stream"), stream}},
            path, api);
        const QString script = CopyAsCommand::forFlow(flow, Format::PythonOpenAi,
                                                      QStringLiteral("http://127.0.0.1:4000"));
        QVERIFY2(script.contains(expected), qPrintable(script));
        if (api != QLatin1String("other")) // the SDK sends its own x-stainless-* headers
            QVERIFY(!script.contains(QStringLiteral("x-stainless")));
        const QString file = writeScript(QStringLiteral("resend_openai.py"), script);
        // The openai package is not installed here: the script is checked by Python's parser.
        const Run parse =
            run(QStringLiteral("python3"), {QStringLiteral("-c"),
                                            QStringLiteral("import ast, sys; "
                                                           "ast.parse(open(sys.argv[1]).read())"),
                                            file});
        QVERIFY2(parse.exitCode == 0, parse.err.constData());
    }

    void generatedCommandReachesTheServer_data() {
        QTest::addColumn<Format>("format");
        QTest::addColumn<QJsonValue>("body");
        const QJsonValue json = QJsonObject{
            {QStringLiteral("model"), QStringLiteral("gpt-5")},
            {QStringLiteral("input"), tricky()},
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("it's"), tricky()}}},
            {QStringLiteral("temperature"), 0.5},
            {QStringLiteral("tools"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("x")}}}}};
        const QJsonValue text = QJsonValue(tricky());
        const QList<QPair<const char *, Format>> formats{{"curl", Format::Curl},
                                                         {"python", Format::PythonRequests},
                                                         {"node", Format::NodeFetch}};
        for (const auto &[name, format] : formats) {
            QTest::addRow("%s json", name) << format << json;
            QTest::addRow("%s text", name) << format << text;
        }
    }
    void generatedCommandReachesTheServer() {
        QFETCH(Format, format);
        QFETCH(QJsonValue, body);
        ScriptedUpstream server;
        QVERIFY(server.listen());
        QJsonObject headers{{QStringLiteral("host"), QStringLiteral("example.invalid")},
                            {QStringLiteral("authorization"), QStringLiteral("Bearer \u2026wxyz")},
                            {QStringLiteral("x-api-key"), QStringLiteral("\u20261234")},
                            {QStringLiteral("x-trace"), QStringLiteral("it's \"q\" $HOME `id`")}};
        if (body.isString())
            headers.insert(QStringLiteral("content-type"), QStringLiteral("text/plain"));
        QJsonObject flow = clientRequestFlow(headers, body);
        QJsonObject hop = flow.value(QStringLiteral("hops")).toArray().first().toObject();
        hop.insert(QStringLiteral("query"), QStringLiteral("a=1&b=two"));
        flow.insert(QStringLiteral("hops"), QJsonArray{hop});

        const QString origin = QStringLiteral("http://127.0.0.1:%1").arg(server.port());
        const QString command = CopyAsCommand::forFlow(flow, format, origin);
        QVERIFY(!command.isEmpty());
        QString program;
        QString file;
        switch (format) {
        case Format::Curl:
            program = QStringLiteral("sh");
            file = writeScript(QStringLiteral("resend.sh"), command);
            break;
        case Format::PythonRequests:
            program = QStringLiteral("python3");
            file = writeScript(QStringLiteral("resend.py"), command);
            break;
        default:
            program = QStringLiteral("node");
            file = writeScript(QStringLiteral("resend.js"), command);
            break;
        }
        const Run result = run(program, {file});
        QVERIFY2(result.exitCode == 0, qPrintable(QString::fromUtf8(result.err) + u'\n' + command));
        QCOMPARE(server.requests().size(), 1);
        const ScriptedUpstream::Request got = server.requests().first();
        QCOMPARE(got.method, QByteArray("POST"));
        QCOMPARE(got.target, QByteArray("/v1/responses?a=1&b=two"));
        // The placeholder was filled from the environment: the real key reached the server.
        QCOMPARE(got.header("authorization"), QByteArray("Bearer ") + kRealKey.toUtf8());
        QCOMPARE(got.header("x-api-key"), QByteArray("x-api-secret-value"));
        QCOMPARE(got.header("x-trace"), QByteArray("it's \"q\" $HOME `id`"));
        if (body.isString()) {
            QCOMPARE(got.body, tricky().toUtf8());
            QCOMPARE(got.header("content-type"), QByteArray("text/plain"));
        } else {
            QCOMPARE(QJsonDocument::fromJson(got.body).object(), body.toObject());
            QVERIFY(got.header("content-type").startsWith("application/json"));
            if (format == Format::Curl) // curl sends exactly the recorded bytes
                QCOMPARE(got.body, CopyAsCommand::bodyBytes(body));
        }
        QVERIFY2(result.out.contains("{}"), result.out.constData()); // the server's answer
        if (format != Format::Curl) // the scripts print the status too
            QVERIFY2(result.out.contains("200"), result.out.constData());
    }
};

QTEST_GUILESS_MAIN(TstCopyAsCommand)
#include "tst_copyascommand.moc"
