// The conversation model decoded from each dialect: the vendors' sample answers
// (tests/fixtures/dialects) and request bodies written after the API references, read into the
// same items, stop reasons and usage whatever the dialect.
#include "conversation/dialect.h"

#include <QFile>
#include <QJsonDocument>
#include <QtTest>

using namespace loopscope;
using Kind = ConversationItem::Kind;

namespace {

QJsonObject fixture(const QString &name) {
    QFile file(qEnvironmentVariable("LOOPSCOPE_SOURCE_DIR") +
               QStringLiteral("/tests/fixtures/dialects/") + name + QStringLiteral(".json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read fixture %s", qPrintable(name));
    return QJsonDocument::fromJson(file.readAll()).object();
}

QJsonObject json(const char *text) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(text), &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("bad test JSON: %s", qPrintable(error.errorString()));
    return doc.object();
}

QString kindName(Kind kind) {
    switch (kind) {
    case Kind::Message:
        return QStringLiteral("Message");
    case Kind::Reasoning:
        return QStringLiteral("Reasoning");
    case Kind::ToolCall:
        return QStringLiteral("ToolCall");
    case Kind::ToolResult:
        return QStringLiteral("ToolResult");
    case Kind::CodeRun:
        return QStringLiteral("CodeRun");
    case Kind::Opaque:
        return QStringLiteral("Opaque");
    }
    return {};
}

// "Message(assistant),ToolCall(get_weather)" — the shape a test states in one line.
QString shape(const QList<ConversationItem> &items) {
    QStringList out;
    for (const ConversationItem &item : items) {
        QString detail;
        if (item.kind == Kind::Message)
            detail = item.role;
        else if (item.kind == Kind::ToolCall)
            detail = item.name;
        else if (item.kind == Kind::ToolResult || item.kind == Kind::CodeRun)
            detail = item.callId;
        out << (detail.isEmpty() ? kindName(item.kind)
                                 : kindName(item.kind) + u'(' + detail + u')');
    }
    return out.join(u',');
}

} // namespace

class TestConversationDecode : public QObject {
    Q_OBJECT
private slots:
    void vendorAnswers_data();
    void vendorAnswers();
    void requests_data();
    void requests();
    void reasoningKeepsWhatTheVendorNeedsBack();
    void codeExecutionResultsAreCodeRuns();
    void unknownItemsKeepTheirWireJson();
    void errorsAreReadInEveryDialect_data();
    void errorsAreReadInEveryDialect();
    void bodiesWithoutAPathSayTheirDialect_data();
    void bodiesWithoutAPathSayTheirDialect();
};

void TestConversationDecode::vendorAnswers_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("items");
    QTest::addColumn<QString>("stop");
    QTest::addColumn<qint64>("outputTokens");
    QTest::newRow("responses text") << "responses-text"
                                    << "Message(assistant)"
                                    << "completed" << qint64(-1);
    QTest::newRow("responses reasoning + function call")
        << "responses-reasoning-function-call"
        << "Reasoning,Message(assistant),ToolCall(get_weather)"
        << "tool_calls" << qint64(-1);
    QTest::newRow("responses code interpreter")
        << "responses-code-interpreter"
        << "CodeRun(ci_68b1a2c4e5f681a3a0b1c2d3e4f50617),Message(assistant)"
        << "completed" << qint64(-1);
    QTest::newRow("chat text") << "chat-text"
                               << "Message(assistant)"
                               << "completed" << qint64(-1);
    QTest::newRow("chat tool calls")
        << "chat-tool-calls"
        << "ToolCall(get_current_weather),ToolCall(get_current_weather)"
        << "tool_calls" << qint64(-1);
    QTest::newRow("messages text") << "messages-text"
                                   << "Message(assistant)"
                                   << "completed" << qint64(15);
    QTest::newRow("messages thinking + tool use")
        << "messages-thinking-tool-use"
        << "Reasoning,Message(assistant),ToolCall(get_weather)"
        << "tool_calls" << qint64(89);
    QTest::newRow("messages code execution")
        << "messages-code-execution"
        << "ToolCall(bash_code_execution),CodeRun(srvtoolu_01B3C4D5E6F7G8H9I0J1K2L3),"
           "Message(assistant)"
        << "completed" << qint64(120);
}

void TestConversationDecode::vendorAnswers() {
    QFETCH(QString, name);
    QFETCH(QString, items);
    QFETCH(QString, stop);
    QFETCH(qint64, outputTokens);
    const QJsonObject body = fixture(name);
    const Dialect dialect = dialectOfBody(body);
    const ConversationResponse response = decodeResponse(dialect, body);
    QCOMPARE(shape(response.items), items);
    QCOMPARE(stopReasonName(response.stop), stop);
    QVERIFY(response.error.isEmpty());
    if (outputTokens >= 0)
        QCOMPARE(response.usage.output, outputTokens);
    for (const ConversationItem &item : response.items)
        QVERIFY2(!item.wire.isUndefined(), qPrintable(shape({item})));
}

void TestConversationDecode::requests_data() {
    QTest::addColumn<int>("dialect");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("instructions");
    QTest::addColumn<QString>("items");
    QTest::newRow("responses string input")
        << int(Dialect::Responses)
        << QByteArray(R"({"model":"m","instructions":"Be brief.","input":"hi"})") << "Be brief."
        << "Message(user)";
    QTest::newRow("responses follow-up")
        << int(Dialect::Responses) << QByteArray(R"({"input":[{"role":"user","content":"go"},
            {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"42"}]})")
        << ""
        << "Message(user),Reasoning,ToolCall(f),ToolResult(c1)";
    QTest::newRow("chat with system, tools and reasoning_content")
        << int(Dialect::ChatCompletions)
        << QByteArray(R"({"messages":[{"role":"system","content":"sys"},
            {"role":"user","content":[{"type":"text","text":"q"},{"type":"image_url","image_url":{"url":"x"}}]},
            {"role":"assistant","content":"","reasoning_content":"think","tool_calls":[
                {"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"out"},
            {"role":"assistant","content":null}]})")
        << ""
        << "Message(system),Message(user),Reasoning,ToolCall(f),ToolResult(c1),Message(assistant)";
    QTest::newRow("messages as Claude Code sends them")
        << int(Dialect::Messages) << QByteArray(R"({"model":"claude","max_tokens":1024,
            "system":[{"type":"text","text":"You are Claude Code."},{"type":"text","text":"Be careful.","cache_control":{"type":"ephemeral"}}],
            "messages":[{"role":"user","content":"list files"},
              {"role":"assistant","content":[{"type":"thinking","thinking":"use ls","signature":"sig"},
                 {"type":"text","text":"Listing."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},
              {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.txt"}],"is_error":false,"cache_control":{"type":"ephemeral"}},
                 {"type":"text","text":"thanks"}]}]})")
        << "You are Claude Code.\nBe careful."
        << "Message(user),Reasoning,Message(assistant),ToolCall(Bash),ToolResult(toolu_1),Message("
           "user)";
    QTest::newRow("messages empty content")
        << int(Dialect::Messages)
        << QByteArray(R"({"system":"s","messages":[{"role":"assistant","content":[]}]})") << "s"
        << "Message(assistant)";
}

void TestConversationDecode::requests() {
    QFETCH(int, dialect);
    QFETCH(QByteArray, body);
    QFETCH(QString, instructions);
    QFETCH(QString, items);
    const ConversationRequest request = decodeRequest(Dialect(dialect), json(body.constData()));
    QCOMPARE(request.instructions, instructions);
    QCOMPARE(shape(request.items), items);
}

void TestConversationDecode::reasoningKeepsWhatTheVendorNeedsBack() {
    const ConversationResponse responses = decodeResponse(
        Dialect::Responses, fixture(QStringLiteral("responses-reasoning-function-call")));
    const ConversationItem &reasoning = responses.items.first();
    QCOMPARE(reasoning.kind, Kind::Reasoning);
    QVERIFY(!reasoning.encryptedContent.isEmpty());
    QVERIFY(!reasoning.summary.isEmpty());

    const ConversationResponse messages =
        decodeResponse(Dialect::Messages, fixture(QStringLiteral("messages-thinking-tool-use")));
    const ConversationItem &thinking = messages.items.first();
    QCOMPARE(thinking.kind, Kind::Reasoning);
    QVERIFY(!thinking.summary.join(QString()).isEmpty());
    QVERIFY(!thinking.encryptedContent.isEmpty()); // the signature Anthropic checks
    QVERIFY(messages.usage.hasCache);
    QCOMPARE(messages.usage.cacheRead, qint64(1024));

    const ConversationRequest redacted = decodeRequest(
        Dialect::Messages,
        json(
            R"({"messages":[{"role":"assistant","content":[{"type":"redacted_thinking","data":"EmwK"}]}]})"));
    QCOMPARE(redacted.items.size(), 1);
    QVERIFY(redacted.items.first().redacted);
    QCOMPARE(redacted.items.first().encryptedContent, QStringLiteral("EmwK"));
}

void TestConversationDecode::codeExecutionResultsAreCodeRuns() {
    const ConversationResponse messages =
        decodeResponse(Dialect::Messages, fixture(QStringLiteral("messages-code-execution")));
    const ConversationItem &call = messages.items.at(0);
    QCOMPARE(call.toolKind, ConversationItem::ToolKind::Hosted);
    QVERIFY(call.arguments.toObject().value(QStringLiteral("command")).isString());
    const ConversationItem &run = messages.items.at(1);
    QCOMPARE(run.callId, call.callId);
    QVERIFY(!run.stdoutText.isEmpty());
    QCOMPARE(run.returnCode, 0);
    QVERIFY(!run.isError);

    const ConversationRequest failed =
        decodeRequest(Dialect::Messages, json(R"({"messages":[{"role":"assistant","content":[
            {"type":"bash_code_execution_tool_result","tool_use_id":"s1","content":{"type":"bash_code_execution_result","stdout":"","stderr":"boom","return_code":2,"content":[]}},
            {"type":"code_execution_tool_result","tool_use_id":"s2","content":{"type":"code_execution_tool_result_error","error_code":"unavailable"}}]}]})"));
    QCOMPARE(shape(failed.items), QStringLiteral("CodeRun(s1),CodeRun(s2)"));
    QCOMPARE(failed.items.at(0).returnCode, 2);
    QCOMPARE(failed.items.at(0).stderrText, QStringLiteral("boom"));
    QVERIFY(failed.items.at(0).isError);
    QVERIFY(failed.items.at(1).isError);
    QCOMPARE(failed.items.at(1).stderrText, QStringLiteral("unavailable"));

    const ConversationResponse interpreter =
        decodeResponse(Dialect::Responses, fixture(QStringLiteral("responses-code-interpreter")));
    const ConversationItem &ci = interpreter.items.first();
    QVERIFY(!ci.code.isEmpty());
    QVERIFY(!ci.container.isEmpty());
    QVERIFY(!ci.stdoutText.isEmpty());
}

void TestConversationDecode::unknownItemsKeepTheirWireJson() {
    const QByteArray item =
        R"({"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"},"x-vendor":[1,{"deep":true}]})";
    const ConversationRequest request = decodeRequest(
        Dialect::Responses, json(QByteArray("{\"input\":[" + item + "]}").constData()));
    QCOMPARE(request.items.size(), 1);
    QCOMPARE(request.items.first().kind, Kind::Opaque);
    QCOMPARE(request.items.first().wire.toObject(), json(item.constData()));

    const ConversationRequest block = decodeRequest(
        Dialect::Messages,
        json(
            R"({"messages":[{"role":"assistant","content":[{"type":"web_search_tool_result","tool_use_id":"s","content":[]}]}]})"));
    QCOMPARE(shape(block.items), QStringLiteral("Opaque"));
}

void TestConversationDecode::errorsAreReadInEveryDialect_data() {
    QTest::addColumn<int>("dialect");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("message");
    QTest::newRow("openai")
        << int(Dialect::ChatCompletions)
        << QByteArray(R"({"error":{"message":"Invalid API key","type":"invalid_request_error"}})")
        << "Invalid API key";
    QTest::newRow("responses")
        << int(Dialect::Responses)
        << QByteArray(R"({"error":{"message":"No such model","code":"model_not_found"}})")
        << "No such model";
    QTest::newRow("anthropic")
        << int(Dialect::Messages)
        << QByteArray(
               R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}})")
        << "invalid x-api-key";
    QTest::newRow("a string") << int(Dialect::ChatCompletions)
                              << QByteArray(R"({"error":"bad gateway"})") << "bad gateway";
}

void TestConversationDecode::errorsAreReadInEveryDialect() {
    QFETCH(int, dialect);
    QFETCH(QByteArray, body);
    QFETCH(QString, message);
    const ConversationResponse response = decodeResponse(Dialect(dialect), json(body.constData()));
    QCOMPARE(response.error, message);
    QVERIFY(response.items.isEmpty());
}

void TestConversationDecode::bodiesWithoutAPathSayTheirDialect_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("dialect");
    QTest::newRow("responses request")
        << QByteArray(R"({"input":"hi"})") << int(Dialect::Responses);
    QTest::newRow("chat request")
        << QByteArray(R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":5})")
        << int(Dialect::ChatCompletions);
    QTest::newRow("messages request with system")
        << QByteArray(R"({"system":"s","messages":[{"role":"user","content":"hi"}]})")
        << int(Dialect::Messages);
    QTest::newRow("messages request with tool_result")
        << QByteArray(
               R"({"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]})")
        << int(Dialect::Messages);
    QTest::newRow("anthropic error")
        << QByteArray(R"({"type":"error","error":{"type":"overloaded_error","message":"m"}})")
        << int(Dialect::Messages);
    QTest::newRow("chat answer") << QByteArray(R"({"choices":[]})")
                                 << int(Dialect::ChatCompletions);
}

void TestConversationDecode::bodiesWithoutAPathSayTheirDialect() {
    QFETCH(QByteArray, body);
    QFETCH(int, dialect);
    QCOMPARE(int(dialectOfBody(json(body.constData()))), dialect);
}

QTEST_GUILESS_MAIN(TestConversationDecode)
#include "tst_conversationdecode.moc"
