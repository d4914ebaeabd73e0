// The built-in demo model: what code it writes, how it answers, and that its JSON and SSE
// match OpenAI's shapes on both APIs — directly and through the one QNetworkAccessManager.
#include "demo/demomodel.h"
#include "proxy/proxyconfig.h"
#include "upstream/upstreamclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

using namespace loopscope;

namespace {

const QJsonObject kCodeTool{
    {QStringLiteral("type"), QStringLiteral("function")},
    {QStringLiteral("name"), QStringLiteral("litellm_code_execution")},
    {QStringLiteral("parameters"),
     QJsonObject{
         {QStringLiteral("type"), QStringLiteral("object")},
         {QStringLiteral("properties"),
          QJsonObject{{QStringLiteral("code"),
                       QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}}}}}}}};

QJsonObject chatTool() {
    QJsonObject fn = kCodeTool;
    fn.remove(QStringLiteral("type"));
    return {{QStringLiteral("type"), QStringLiteral("function")}, {QStringLiteral("function"), fn}};
}

QJsonObject call(const QString &path, const QJsonObject &body, int *status = nullptr) {
    const auto reply = DemoModel::handle("POST", path, QJsonDocument(body).toJson());
    if (status)
        *status = reply.status;
    return QJsonDocument::fromJson(reply.chunks.join()).object();
}

// Parses SSE frames into (event, data) pairs.
QList<QPair<QString, QJsonObject>> events(const QList<QByteArray> &chunks,
                                          bool *sawDone = nullptr) {
    QList<QPair<QString, QJsonObject>> out;
    const QList<QByteArray> frames = chunks.join().split('\n');
    QString event;
    for (const QByteArray &line : frames) {
        if (line.startsWith("event: "))
            event = QString::fromUtf8(line.mid(7));
        else if (line == "data: [DONE]") {
            if (sawDone)
                *sawDone = true;
        } else if (line.startsWith("data: ")) {
            out.append({event, QJsonDocument::fromJson(line.mid(6)).object()});
            event.clear();
        }
    }
    return out;
}

} // namespace

class TstDemoModel : public QObject {
    Q_OBJECT
private slots:
    void codeForMessage_data() {
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("code");
        QTest::newRow("product") << QStringLiteral("what is 17*23?")
                                 << QStringLiteral("print(17*23)");
        QTest::newRow("spaces and parens") << QStringLiteral("Compute (2 + 3) * 4 please.")
                                           << QStringLiteral("print((2 + 3) * 4)");
        QTest::newRow("power") << QStringLiteral("what is 2^10") << QStringLiteral("print(2**10)");
        QTest::newRow("times sign")
            << QStringLiteral("12 × 12 = ?") << QStringLiteral("print(12 * 12)");
        QTest::newRow("x as times")
            << QStringLiteral("what's 6 x 7") << QStringLiteral("print(6*7)");
        QTest::newRow("fenced python")
            << QStringLiteral("Run this:\n```python\nimport math\nprint(math.pi)\n```\nthanks")
            << QStringLiteral("import math\nprint(math.pi)");
        QTest::newRow("fenced without language")
            << QStringLiteral("```\nprint('hi')\n```") << QStringLiteral("print('hi')");
        QTest::newRow("fence wins over numbers")
            << QStringLiteral("1+1 but run\n```py\nprint(3)\n```") << QStringLiteral("print(3)");
        QTest::newRow("no computation") << QStringLiteral("hello there") << QString();
        QTest::newRow("a lone number") << QStringLiteral("I am 42") << QString();
        QTest::newRow("unbalanced")
            << QStringLiteral("what is (2+3") << QStringLiteral("print(2+3)");
    }
    void codeForMessage() {
        QFETCH(QString, message);
        QFETCH(QString, code);
        QCOMPARE(DemoModel::codeForMessage(message), code);
    }

    void answerForToolOutput_data() {
        QTest::addColumn<QString>("output");
        QTest::addColumn<QString>("answer");
        QTest::newRow("number") << QStringLiteral("391\n") << QStringLiteral("The result is 391.");
        QTest::newRow("multi-line")
            << QStringLiteral("a\nb") << QStringLiteral("The code printed:\na\nb");
        QTest::newRow("empty") << QString() << QStringLiteral("The code ran and printed nothing.");
        QTest::newRow("error") << QStringLiteral("[execution error] ZeroDivisionError")
                               << QStringLiteral(
                                      "The code failed:\n[execution error] ZeroDivisionError");
        QTest::newRow("error after output")
            << QStringLiteral("step 1\n[execution error] boom")
            << QStringLiteral("The code failed:\nstep 1\n[execution error] boom");
    }
    void answerForToolOutput() {
        QFETCH(QString, output);
        QFETCH(QString, answer);
        QCOMPARE(DemoModel::answerForToolOutput(output), answer);
    }

    void responsesLoopCallsToolThenAnswers() {
        QJsonObject request{{QStringLiteral("model"), QStringLiteral("gpt-4o")},
                            {QStringLiteral("input"), QStringLiteral("what is 17*23?")},
                            {QStringLiteral("tools"), QJsonArray{kCodeTool}}};
        int status = 0;
        const QJsonObject first = call(QStringLiteral("/responses"), request, &status);
        QCOMPARE(status, 200);
        QCOMPARE(first.value(QStringLiteral("object")).toString(), QStringLiteral("response"));
        QCOMPARE(first.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(first.value(QStringLiteral("model")).toString(), QStringLiteral("loopscope-demo"));
        QVERIFY(first.value(QStringLiteral("id")).toString().startsWith(QStringLiteral("resp_")));
        const QJsonObject usage = first.value(QStringLiteral("usage")).toObject();
        QCOMPARE(usage.value(QStringLiteral("total_tokens")).toInt(),
                 usage.value(QStringLiteral("input_tokens")).toInt() +
                     usage.value(QStringLiteral("output_tokens")).toInt());
        const QJsonArray output = first.value(QStringLiteral("output")).toArray();
        QCOMPARE(output.size(), 1);
        const QJsonObject fc = output.first().toObject();
        QCOMPARE(fc.value(QStringLiteral("type")).toString(), QStringLiteral("function_call"));
        QCOMPARE(fc.value(QStringLiteral("name")).toString(),
                 QStringLiteral("litellm_code_execution"));
        QVERIFY(fc.value(QStringLiteral("call_id")).toString().startsWith(QStringLiteral("call_")));
        QCOMPARE(QJsonDocument::fromJson(fc.value(QStringLiteral("arguments")).toString().toUtf8())
                     .object()
                     .value(QStringLiteral("code"))
                     .toString(),
                 QStringLiteral("print(17*23)"));
        // Deterministic: the same request gives the same ids and arguments.
        QCOMPARE(call(QStringLiteral("/responses"), request).value(QStringLiteral("output")),
                 output);

        // Second turn: the tool output is in the input → a text answer using it.
        request.insert(
            QStringLiteral("input"),
            QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                   {QStringLiteral("content"), QStringLiteral("what is 17*23?")}},
                       fc,
                       QJsonObject{{QStringLiteral("type"), QStringLiteral("function_call_output")},
                                   {QStringLiteral("call_id"), fc.value(QStringLiteral("call_id"))},
                                   {QStringLiteral("output"), QStringLiteral("391\n")}}});
        const QJsonObject second = call(QStringLiteral("/responses"), request);
        const QJsonObject message =
            second.value(QStringLiteral("output")).toArray().first().toObject();
        QCOMPARE(message.value(QStringLiteral("type")).toString(), QStringLiteral("message"));
        QCOMPARE(message.value(QStringLiteral("role")).toString(), QStringLiteral("assistant"));
        const QJsonObject part =
            message.value(QStringLiteral("content")).toArray().first().toObject();
        QCOMPARE(part.value(QStringLiteral("type")).toString(), QStringLiteral("output_text"));
        QCOMPARE(part.value(QStringLiteral("text")).toString(),
                 QStringLiteral("The result is 391."));
    }

    void chatLoopCallsToolThenAnswers() {
        QJsonObject request{{QStringLiteral("model"), QStringLiteral("gpt-4o")},
                            {QStringLiteral("messages"),
                             QJsonArray{QJsonObject{
                                 {QStringLiteral("role"), QStringLiteral("user")},
                                 {QStringLiteral("content"), QStringLiteral("what is 17*23?")}}}},
                            {QStringLiteral("tools"), QJsonArray{chatTool()}}};
        const QJsonObject first = call(QStringLiteral("/chat/completions"), request);
        QCOMPARE(first.value(QStringLiteral("object")).toString(),
                 QStringLiteral("chat.completion"));
        const QJsonObject choice =
            first.value(QStringLiteral("choices")).toArray().first().toObject();
        QCOMPARE(choice.value(QStringLiteral("finish_reason")).toString(),
                 QStringLiteral("tool_calls"));
        const QJsonObject message = choice.value(QStringLiteral("message")).toObject();
        QVERIFY(message.value(QStringLiteral("content")).isNull());
        const QJsonObject toolCall =
            message.value(QStringLiteral("tool_calls")).toArray().first().toObject();
        QCOMPARE(toolCall.value(QStringLiteral("type")).toString(), QStringLiteral("function"));
        QVERIFY(
            toolCall.value(QStringLiteral("id")).toString().startsWith(QStringLiteral("call_")));
        const QJsonObject fn = toolCall.value(QStringLiteral("function")).toObject();
        QCOMPARE(fn.value(QStringLiteral("name")).toString(),
                 QStringLiteral("litellm_code_execution"));
        QCOMPARE(fn.value(QStringLiteral("arguments")).toString(),
                 QStringLiteral("{\"code\":\"print(17*23)\"}"));
        const QJsonObject usage = first.value(QStringLiteral("usage")).toObject();
        QVERIFY(usage.value(QStringLiteral("prompt_tokens")).toInt() > 0);

        QJsonArray messages = request.value(QStringLiteral("messages")).toArray();
        messages.append(message);
        messages.append(
            QJsonObject{{QStringLiteral("role"), QStringLiteral("tool")},
                        {QStringLiteral("tool_call_id"), toolCall.value(QStringLiteral("id"))},
                        {QStringLiteral("content"), QStringLiteral("391")}});
        request.insert(QStringLiteral("messages"), messages);
        const QJsonObject second = call(QStringLiteral("/chat/completions"), request);
        const QJsonObject answer =
            second.value(QStringLiteral("choices")).toArray().first().toObject();
        QCOMPARE(answer.value(QStringLiteral("finish_reason")).toString(), QStringLiteral("stop"));
        QCOMPARE(answer.value(QStringLiteral("message"))
                     .toObject()
                     .value(QStringLiteral("content"))
                     .toString(),
                 QStringLiteral("The result is 391."));
    }

    void withoutToolsItJustAnswers() {
        const QJsonObject r = call(QStringLiteral("/responses"),
                                   {{QStringLiteral("model"), QStringLiteral("m")},
                                    {QStringLiteral("input"), QStringLiteral("hello")}});
        const QJsonObject message = r.value(QStringLiteral("output")).toArray().first().toObject();
        QCOMPARE(message.value(QStringLiteral("type")).toString(), QStringLiteral("message"));
        QVERIFY(message.value(QStringLiteral("content"))
                    .toArray()
                    .first()
                    .toObject()
                    .value(QStringLiteral("text"))
                    .toString()
                    .contains(QStringLiteral("demo model")));
    }

    void responsesStreamFollowsOpenAiOrder_data() {
        QTest::addColumn<bool>("withTool");
        QTest::newRow("text") << false;
        QTest::newRow("function call") << true;
    }
    void responsesStreamFollowsOpenAiOrder() {
        QFETCH(bool, withTool);
        QJsonObject request{{QStringLiteral("model"), QStringLiteral("m")},
                            {QStringLiteral("stream"), true},
                            {QStringLiteral("input"), QStringLiteral("what is 17*23?")}};
        if (withTool)
            request.insert(QStringLiteral("tools"), QJsonArray{kCodeTool});
        const auto reply = DemoModel::handle("POST", QStringLiteral("/responses"),
                                             QJsonDocument(request).toJson());
        QCOMPARE(reply.contentType, QByteArray("text/event-stream"));
        QVERIFY(reply.chunks.size() > 3); // one frame per chunk: a real stream
        const auto list = events(reply.chunks);
        QCOMPARE(list.first().first, QStringLiteral("response.created"));
        QCOMPARE(list.last().first, QStringLiteral("response.completed"));
        const QString id = list.first()
                               .second.value(QStringLiteral("response"))
                               .toObject()
                               .value(QStringLiteral("id"))
                               .toString();
        QCOMPARE(list.last()
                     .second.value(QStringLiteral("response"))
                     .toObject()
                     .value(QStringLiteral("id"))
                     .toString(),
                 id);
        QStringList types;
        for (int i = 0; i < list.size(); ++i) {
            QCOMPARE(list[i].second.value(QStringLiteral("type")).toString(), list[i].first);
            QCOMPARE(list[i].second.value(QStringLiteral("sequence_number")).toInt(), i);
            types << list[i].first;
        }
        const qsizetype added = types.indexOf(QStringLiteral("response.output_item.added"));
        QVERIFY(added > 0);
        if (withTool) {
            QVERIFY(types.indexOf(QStringLiteral("response.function_call_arguments.delta")) >
                    added);
            QVERIFY(types.indexOf(QStringLiteral("response.function_call_arguments.done")) > added);
        } else {
            const qsizetype part = types.indexOf(QStringLiteral("response.content_part.added"));
            QVERIFY(part > added);
            QVERIFY(types.indexOf(QStringLiteral("response.output_text.delta")) > part);
            QString text;
            for (const auto &e : list)
                if (e.first == QLatin1String("response.output_text.delta"))
                    text += e.second.value(QStringLiteral("delta")).toString();
            const QJsonObject final =
                list.last().second.value(QStringLiteral("response")).toObject();
            QCOMPARE(text, final.value(QStringLiteral("output"))
                               .toArray()
                               .first()
                               .toObject()
                               .value(QStringLiteral("content"))
                               .toArray()
                               .first()
                               .toObject()
                               .value(QStringLiteral("text"))
                               .toString());
        }
        QVERIFY(types.indexOf(QStringLiteral("response.output_item.done")) < types.size() - 1);
    }

    void chatStreamHasToolCallDeltasAndDone() {
        const QJsonObject request{
            {QStringLiteral("model"), QStringLiteral("m")},
            {QStringLiteral("stream"), true},
            {QStringLiteral("stream_options"),
             QJsonObject{{QStringLiteral("include_usage"), true}}},
            {QStringLiteral("messages"),
             QJsonArray{
                 QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                             {QStringLiteral("content"), QStringLiteral("what is 17*23?")}}}},
            {QStringLiteral("tools"), QJsonArray{chatTool()}}};
        const auto reply = DemoModel::handle("POST", QStringLiteral("/chat/completions"),
                                             QJsonDocument(request).toJson());
        bool done = false;
        const auto list = events(reply.chunks, &done);
        QVERIFY(done);
        QVERIFY(reply.chunks.last() == "data: [DONE]\n\n");
        QString arguments;
        QString finish;
        for (const auto &e : list) {
            QCOMPARE(e.second.value(QStringLiteral("object")).toString(),
                     QStringLiteral("chat.completion.chunk"));
            for (const QJsonValue &c : e.second.value(QStringLiteral("choices")).toArray()) {
                const QJsonObject choice = c.toObject();
                for (const QJsonValue &tc : choice.value(QStringLiteral("delta"))
                                                .toObject()
                                                .value(QStringLiteral("tool_calls"))
                                                .toArray())
                    arguments += tc.toObject()
                                     .value(QStringLiteral("function"))
                                     .toObject()
                                     .value(QStringLiteral("arguments"))
                                     .toString();
                if (choice.value(QStringLiteral("finish_reason")).isString())
                    finish = choice.value(QStringLiteral("finish_reason")).toString();
            }
        }
        QCOMPARE(arguments, QStringLiteral("{\"code\":\"print(17*23)\"}"));
        QCOMPARE(finish, QStringLiteral("tool_calls"));
        QVERIFY(list.last().second.value(QStringLiteral("usage")).isObject()); // include_usage
    }

    void badRequests_data() {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::newRow("not json") << QByteArray("POST") << QStringLiteral("/responses")
                                  << QByteArray("nope") << 400;
        QTest::newRow("unknown path")
            << QByteArray("POST") << QStringLiteral("/embeddings") << QByteArray("{}") << 404;
        QTest::newRow("wrong method")
            << QByteArray("GET") << QStringLiteral("/responses") << QByteArray() << 405;
        QTest::newRow("models") << QByteArray("GET") << QStringLiteral("/models") << QByteArray()
                                << 200;
    }
    void badRequests() {
        QFETCH(QByteArray, method);
        QFETCH(QString, path);
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        const auto reply = DemoModel::handle(method, path, body);
        QCOMPARE(reply.status, status);
        const QJsonObject json = QJsonDocument::fromJson(reply.chunks.join()).object();
        QCOMPARE(json.contains(QStringLiteral("error")), status != 200);
    }

    void reachableThroughTheUpstreamClientOffline() {
        UpstreamClient client;
        UpstreamRoute route = ProxyConfig::demoRoute();
        auto future = client.postJson(
            route, QStringLiteral("/chat/completions"),
            {{QStringLiteral("model"), QStringLiteral("m")},
             {QStringLiteral("messages"),
              QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                     {QStringLiteral("content"), QStringLiteral("hi")}}}}});
        QTRY_VERIFY_WITH_TIMEOUT(future.isFinished(), 20000);
        const UpstreamReply reply = future.result();
        QCOMPARE(reply.status, 200);
        QVERIFY(reply.isJson);
        QCOMPARE(reply.json.value(QStringLiteral("model")).toString(),
                 QStringLiteral("loopscope-demo"));
    }
};

QTEST_GUILESS_MAIN(TstDemoModel)
#include "tst_demomodel.moc"
