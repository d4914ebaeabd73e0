// MessagesLoopBridge, the Messages edges of an AgenticLoop running Anthropic's code execution
// tool: what the upstream model is sent (sub-tools as client tools, its own turn replayed, the
// results as tool_result blocks), what the loop's hooks read (a chat completion), and what the
// client gets — a message whose Anthropic stream adds back up to the same message, block for
// block (MessagesCodec::responseFromEvents is the SDK's accumulator).
#include "conversation/messagescodec.h"
#include "loop/messagesloopbridge.h"
#include "sseparser.h"

#include <QJsonDocument>
#include <QTest>

using loopscope::MessagesCodec;
using loopscope::MessagesLoopBridge;
using loopscope::ToolCallRun;

namespace {

QJsonObject json(const char *text) {
    return QJsonDocument::fromJson(QByteArray(text)).object();
}

QJsonObject clientBody(const char *toolType) {
    QJsonObject body = json(R"({"model":"claude-x","max_tokens":100,"stream":true,
        "system":"be brief","container":"cntr_abc",
        "messages":[{"role":"user","content":"go"}],
        "tools":[{"name":"lookup","input_schema":{"type":"object"}}]})");
    QJsonArray tools = body.value(QStringLiteral("tools")).toArray();
    tools.prepend(QJsonObject{{QStringLiteral("type"), QLatin1String(toolType)},
                              {QStringLiteral("name"), QStringLiteral("code_execution")}});
    body.insert(QStringLiteral("tools"), tools);
    return body;
}

ToolCallRun ran(const QString &out, bool executed = true) {
    ToolCallRun run;
    run.executed = executed;
    run.result.stdoutText = out;
    return run;
}

QJsonArray events(const QByteArray &sse) {
    QJsonArray out;
    for (const SseFrame &frame : parseSse(sse))
        out.append(QJsonObject{{QStringLiteral("event"), frame.event},
                               {QStringLiteral("data"), frame.json()}});
    return out;
}

} // namespace

class TestMessagesLoopBridge : public QObject {
    Q_OBJECT
private slots:
    void internalRequestHostsTheTool() {
        const QJsonObject body = clientBody("code_execution_20250825");
        QCOMPARE(MessagesLoopBridge::requestedContainer(body), QStringLiteral("cntr_abc"));
        const QJsonObject internal = MessagesLoopBridge::internalRequest(body);
        QVERIFY(!internal.contains(QStringLiteral("container")));
        QCOMPARE(internal.value(QStringLiteral("tools")).toArray().first().toObject(),
                 json(R"({"type":"code_interpreter"})"));
        QCOMPARE(internal.value(QStringLiteral("messages")),
                 body.value(QStringLiteral("messages")));
    }

    void upstreamToolsPerVersion_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<QStringList>("names");
        QTest::newRow("20250825") << "code_execution_20250825"
                                  << QStringList{QStringLiteral("bash_code_execution"),
                                                 QStringLiteral("text_editor_code_execution"),
                                                 QStringLiteral("lookup")};
        QTest::newRow("20260120") << "code_execution_20260120"
                                  << QStringList{QStringLiteral("bash_code_execution"),
                                                 QStringLiteral("text_editor_code_execution"),
                                                 QStringLiteral("lookup")};
        QTest::newRow("legacy") << "code_execution_20250522"
                                << QStringList{QStringLiteral("code_execution"),
                                               QStringLiteral("lookup")};
    }
    void upstreamToolsPerVersion() {
        QFETCH(QString, type);
        QFETCH(QStringList, names);
        const QJsonObject body = clientBody(type.toLatin1().constData());
        MessagesLoopBridge bridge(body, nullptr, false);
        // The loop's body after the pre-call hook: the hosted tool became the function tool.
        QJsonObject loopBody = MessagesLoopBridge::internalRequest(body);
        QJsonArray tools = loopBody.value(QStringLiteral("tools")).toArray();
        tools[0] = json(R"({"type":"function","function":{"name":"litellm_code_execution"}})");
        loopBody.insert(QStringLiteral("tools"), tools);
        const QJsonObject upstream = bridge.upstreamBody(loopBody);
        QStringList sent;
        for (const QJsonValue &t : upstream.value(QStringLiteral("tools")).toArray())
            sent << t.toObject().value(QStringLiteral("name")).toString();
        QCOMPARE(sent, names);
        QVERIFY(!upstream.contains(QStringLiteral("stream")));
        QCOMPARE(upstream.value(QStringLiteral("system")).toString(), QStringLiteral("be brief"));
    }

    void roundTripsAndStreamsTheSameMessage() {
        MessagesLoopBridge bridge(clientBody("code_execution_20250825"), nullptr, true);
        const QByteArray start = bridge.streamStart();
        const QJsonObject round1 = json(R"({"id":"msg_u1","type":"message","role":"assistant",
            "model":"claude-x","stop_reason":"tool_use",
            "usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":2},
            "content":[{"type":"thinking","thinking":"hm","signature":"sig"},
                       {"type":"text","text":"Let me look."},
                       {"type":"tool_use","id":"toolu_1","name":"bash_code_execution",
                        "input":{"command":"echo hi"}},
                       {"type":"tool_use","id":"toolu_2","name":"bash_code_execution",
                        "input":{"nope":true}}]})");
        // The hooks see litellm_code_execution calls: a program for valid input, arguments
        // the plan refuses to run for invalid input.
        const QJsonObject chat = bridge.roundAnswered(round1);
        const QJsonArray calls = chat.value(QStringLiteral("choices"))[0]
                                     .toObject()
                                     .value(QStringLiteral("message"))
                                     .toObject()
                                     .value(QStringLiteral("tool_calls"))
                                     .toArray();
        QCOMPARE(calls.size(), 2);
        const QJsonObject fn1 = calls[0].toObject().value(QStringLiteral("function")).toObject();
        QCOMPARE(fn1.value(QStringLiteral("name")).toString(),
                 QStringLiteral("litellm_code_execution"));
        QVERIFY(QJsonDocument::fromJson(fn1.value(QStringLiteral("arguments")).toString().toUtf8())
                    .object()
                    .value(QStringLiteral("code"))
                    .toString()
                    .contains(QStringLiteral("echo hi")));
        const QJsonObject fn2 = calls[1].toObject().value(QStringLiteral("function")).toObject();
        QVERIFY(QJsonDocument::fromJson(fn2.value(QStringLiteral("arguments")).toString().toUtf8())
                    .isNull());

        bridge.planStarted();
        bridge.codeRunStarted(QStringLiteral("toolu_1"));
        bridge.callExecuted(QStringLiteral("cntr_abc"), QStringLiteral("toolu_1"),
                            ran(QStringLiteral("hi\n")));
        bridge.callExecuted(QStringLiteral("cntr_abc"), QStringLiteral("toolu_2"), ran({}, false));
        bridge.planFinished();

        // The follow-up the plan builds (chat shape) goes upstream as Messages: the model's turn
        // exactly as it answered, then one user message with both results.
        const QJsonObject loopBody{
            {QStringLiteral("model"), QStringLiteral("claude-x")},
            {QStringLiteral("messages"),
             QJsonArray{
                 json(R"({"role":"user","content":"go"})"),
                 json(R"({"role":"assistant","tool_calls":[{"id":"toolu_1"},{"id":"toolu_2"}]})"),
                 json(R"({"role":"tool","tool_call_id":"toolu_1","content":"ignored"})"),
                 json(R"({"role":"tool","tool_call_id":"toolu_2","content":"ignored"})")}}};
        const QJsonArray sent =
            bridge.upstreamBody(loopBody).value(QStringLiteral("messages")).toArray();
        QCOMPARE(sent.size(), 3);
        QCOMPARE(sent[1].toObject().value(QStringLiteral("content")),
                 round1.value(QStringLiteral("content")));
        QCOMPARE(sent[2].toObject(), json(R"({"role":"user","content":[
                    {"type":"tool_result","tool_use_id":"toolu_1","content":"hi\n"},
                    {"type":"tool_result","tool_use_id":"toolu_2",
                     "content":"[error] invalid_tool_input: command must be a non-empty string"}]})"));

        bridge.roundAnswered(json(R"({"id":"msg_u2","type":"message","role":"assistant",
            "model":"claude-x","stop_reason":"end_turn","stop_sequence":null,
            "usage":{"input_tokens":20,"output_tokens":7},
            "content":[{"type":"text","text":"It printed hi."}]})"));
        const QJsonObject message = bridge.finalMessage(false);
        QCOMPARE(message.value(QStringLiteral("content")).toArray(), QJsonDocument::fromJson(R"([
            {"type":"thinking","thinking":"hm","signature":"sig"},
            {"type":"text","text":"Let me look."},
            {"type":"server_tool_use","id":"srvtoolu_1","name":"bash_code_execution",
             "input":{"command":"echo hi"},"caller":{"type":"direct"}},
            {"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_1",
             "content":{"type":"bash_code_execution_result","stdout":"hi\n","stderr":"",
                        "return_code":0,"content":[]}},
            {"type":"server_tool_use","id":"srvtoolu_2","name":"bash_code_execution",
             "input":{"nope":true},"caller":{"type":"direct"}},
            {"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_2",
             "content":{"type":"bash_code_execution_tool_result_error",
                        "error_code":"invalid_tool_input"}},
            {"type":"text","text":"It printed hi."}])")
                                                                         .array());
        QCOMPARE(message.value(QStringLiteral("stop_reason")).toString(),
                 QStringLiteral("end_turn"));
        QCOMPARE(message.value(QStringLiteral("usage")).toObject(),
                 json(R"({"input_tokens":30,"output_tokens":12,"cache_read_input_tokens":2,
                          "cache_creation_input_tokens":0})"));
        QCOMPARE(message.value(QStringLiteral("container"))[QStringLiteral("id")].toString(),
                 QStringLiteral("cntr_abc"));

        // Streamed: Anthropic's event order, and the events add up to the same message.
        const QByteArray stream = start + bridge.streamEnd(message);
        const QJsonArray decoded = events(stream);
        QStringList names;
        for (const QJsonValue &e : decoded)
            names << e[QStringLiteral("event")].toString();
        QCOMPARE(names.first(), QStringLiteral("message_start"));
        QCOMPARE(names.mid(names.size() - 2),
                 (QStringList{QStringLiteral("message_delta"), QStringLiteral("message_stop")}));
        QCOMPARE(names.count(QStringLiteral("content_block_start")), 7);
        QCOMPARE(MessagesCodec::responseFromEvents(decoded), message);
        // The server_tool_use's input arrives as input_json_delta; a result block whole.
        QVERIFY(stream.contains("\"partial_json\":\"{\\\"command\\\":\\\"echo hi\\\"}\""));
        QVERIFY(stream.contains("\"content_block\":{\"content\":{\"content\":[]"));
    }

    // A note the sandbox made for the model (output cut at its cap) reaches the model's
    // tool_result; the client's result block holds only what the program wrote.
    void notesGoToTheModelOnly() {
        MessagesLoopBridge bridge(clientBody("code_execution_20250825"), nullptr, false);
        bridge.roundAnswered(json(R"({"id":"msg_n1","type":"message","role":"assistant",
            "model":"claude-x","stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1},
            "content":[{"type":"tool_use","id":"toolu_n","name":"bash_code_execution",
                        "input":{"command":"yes | head -c 99999999"}}]})"));
        bridge.planStarted();
        ToolCallRun run = ran(QStringLiteral("y\ny\n"));
        run.result.stdoutTruncated = true;
        run.result.notes = {QStringLiteral("[loopscope] stdout truncated: 9 more bytes not shown")};
        bridge.callExecuted(QStringLiteral("cntr_n"), QStringLiteral("toolu_n"), run);
        bridge.planFinished();
        const QJsonObject loopBody{
            {QStringLiteral("model"), QStringLiteral("claude-x")},
            {QStringLiteral("messages"),
             QJsonArray{json(R"({"role":"user","content":"go"})"),
                        json(R"({"role":"assistant","tool_calls":[{"id":"toolu_n"}]})"),
                        json(R"({"role":"tool","tool_call_id":"toolu_n","content":"x"})")}}};
        const QJsonArray sent =
            bridge.upstreamBody(loopBody).value(QStringLiteral("messages")).toArray();
        QCOMPARE(sent.last().toObject(), json(R"({"role":"user","content":[
                    {"type":"tool_result","tool_use_id":"toolu_n",
                     "content":"y\ny\n\n[loopscope] stdout truncated: 9 more bytes not shown"}]})"));
        bridge.roundAnswered(json(R"({"id":"msg_n2","type":"message","role":"assistant",
            "model":"claude-x","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1},
            "content":[{"type":"text","text":"ok"}]})"));
        const QJsonArray content =
            bridge.finalMessage(false).value(QStringLiteral("content")).toArray();
        const QJsonObject result =
            content.at(1).toObject().value(QStringLiteral("content")).toObject();
        QCOMPARE(result.value(QStringLiteral("stdout")).toString(), QStringLiteral("y\ny\n"));
    }

    void ceilingPausesTheTurn() {
        MessagesLoopBridge bridge(clientBody("code_execution_20250825"), nullptr, false);
        bridge.roundAnswered(json(R"({"id":"m","stop_reason":"tool_use","usage":{},
            "content":[{"type":"text","text":"again"},
                       {"type":"tool_use","id":"toolu_9","name":"bash_code_execution",
                        "input":{"command":"ls"}}]})"));
        const QJsonObject message = bridge.finalMessage(true);
        QCOMPARE(message.value(QStringLiteral("content")).toArray(),
                 QJsonArray{json(R"({"type":"text","text":"again"})")});
        QCOMPARE(message.value(QStringLiteral("stop_reason")).toString(),
                 QStringLiteral("pause_turn"));
        QVERIFY(message.value(QStringLiteral("container")).isNull());
    }

    void replayedAnswersBecomeClientToolTurns() {
        // A client sends back an earlier answer: its server blocks become tool_use/tool_result.
        QJsonObject body = clientBody("code_execution_20250825");
        MessagesLoopBridge bridge(body, nullptr, false);
        const QJsonObject loopBody{
            {QStringLiteral("messages"),
             QJsonArray{
                 json(R"({"role":"user","content":[{"type":"container_upload","file_id":"cfile_1"},
                                                    {"type":"text","text":"go"}]})"),
                 json(R"({"role":"assistant","content":[
                    {"type":"text","text":"ok"},
                    {"type":"server_tool_use","id":"srvtoolu_7","name":"bash_code_execution",
                     "input":{"command":"ls"}},
                    {"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_7",
                     "content":{"type":"bash_code_execution_result","stdout":"a\n","stderr":"",
                                "return_code":0,"content":[]}},
                    {"type":"text","text":"done"}]})"),
                 json(R"({"role":"user","content":"more"})")}}};
        const QJsonArray sent =
            bridge.upstreamBody(loopBody).value(QStringLiteral("messages")).toArray();
        QCOMPARE(QJsonValue(sent), QJsonValue(QJsonDocument::fromJson(R"([
            {"role":"user","content":[{"type":"text","text":"go"}]},
            {"role":"assistant","content":[{"type":"text","text":"ok"},
                {"type":"tool_use","id":"toolu_7","name":"bash_code_execution","input":{"command":"ls"}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_7","content":"a\n"}]},
            {"role":"assistant","content":[{"type":"text","text":"done"}]},
            {"role":"user","content":"more"}])")
                                                  .array()));
    }

    void errorsInAnthropicShape_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("type");
        QTest::newRow("400") << 400 << "invalid_request_error";
        QTest::newRow("401") << 401 << "authentication_error";
        QTest::newRow("404") << 404 << "not_found_error";
        QTest::newRow("429") << 429 << "rate_limit_error";
        QTest::newRow("502") << 502 << "api_error";
    }
    void errorsInAnthropicShape() {
        QFETCH(int, status);
        QFETCH(QString, type);
        const QJsonObject body = MessagesLoopBridge::errorBody(
            json(R"({"error":{"message":"bad","type":"x","code":"y"}})"), status);
        QCOMPARE(body.value(QStringLiteral("type")).toString(), QStringLiteral("error"));
        QCOMPARE(body.value(QStringLiteral("error")).toObject(),
                 (QJsonObject{{QStringLiteral("type"), type},
                              {QStringLiteral("message"), QStringLiteral("bad")}}));
        // An upstream's own Anthropic error passes as it is.
        const QJsonObject upstream =
            json(R"({"type":"error","error":{"type":"overloaded_error","message":"busy"}})");
        QCOMPARE(MessagesLoopBridge::errorBody(upstream, status), upstream);
        const QList<SseFrame> frames = parseSse(MessagesLoopBridge::errorEvent(body));
        QCOMPARE(frames.size(), 1);
        QCOMPARE(frames[0].event, QStringLiteral("error"));
        QCOMPARE(frames[0].json(), body);
    }
};

QTEST_MAIN(TestMessagesLoopBridge)
#include "tst_messagesloopbridge.moc"
