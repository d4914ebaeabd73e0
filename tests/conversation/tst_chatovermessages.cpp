// Chat Completions (and Responses, composed) over an Anthropic upstream (dialects.md §5), one row
// per mapping rule: a chat request as the Messages request it becomes, a Messages answer as the
// chat completion it becomes, Anthropic errors as OpenAI's, and the Messages streams of
// tests/fixtures/dialects as chat chunks — which must add up to the JSON path's completion.
#undef QT_NO_CAST_FROM_ASCII // JSON fixtures as plain literals
#include "conversation/chatcompletionscodec.h"
#include "conversation/chatovermessages.h"
#include "conversation/chattoresponsesstream.h"
#include "conversation/messagestochatstream.h"
#include "conversation/responsesoverchat.h"
#include "conversation/ssedecoder.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QtTest>

using namespace loopscope;

namespace {

QJsonObject obj(const QByteArray &json) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("bad fixture: %s in %s", qPrintable(error.errorString()), json.constData());
    return doc.object();
}

QString text(const QJsonValue &v) {
    return QString::fromUtf8(QJsonDocument(QJsonObject{{"v", v}}).toJson(QJsonDocument::Compact));
}

// `actual` holds every key of `expected` with the same value (other keys are free).
bool hasAll(const QJsonObject &actual, const QJsonObject &expected, QString *why) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
        if (actual.value(it.key()) != it.value()) {
            *why = QStringLiteral("%1: got %2, want %3")
                       .arg(it.key(), text(actual.value(it.key())), text(it.value()));
            return false;
        }
    }
    return true;
}

QString fixtureDir() {
    return qEnvironmentVariable("LOOPSCOPE_SOURCE_DIR") +
           QStringLiteral("/tests/fixtures/dialects");
}

QByteArray readFile(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return file.readAll();
}

// A Messages SSE fixture through MessagesToChatStream, the chunks as decoded chat events.
QJsonArray chatEventsOf(const QByteArray &sse, bool includeUsage) {
    SseDecoder decoder;
    QJsonArray events;
    decoder.feed(sse, events);
    decoder.finish(events);
    MessagesToChatStream stream(includeUsage);
    QJsonArray chat;
    for (const QJsonValue &e : events)
        for (const QJsonObject &chunk : stream.feed(e.toObject().value("data").toObject()))
            chat.append(QJsonObject{{"event", "message"}, {"data", chunk}});
    return chat;
}

} // namespace

class TestChatOverMessages : public QObject {
    Q_OBJECT
private slots:
    void request_data();
    void request();
    void ignoredParametersAreNamed();
    void refused_data();
    void refused();
    void completion_data();
    void completion();
    void errors_data();
    void errors();
    void streamMatchesJson_data();
    void streamMatchesJson();
    void streamEvents();
    void responsesKeepThinkingSignature();
    void responsesStreamKeepsSignature();
};

void TestChatOverMessages::request_data() {
    QTest::addColumn<QByteArray>("chat");
    QTest::addColumn<QByteArray>("expected"); // keys of the Messages body

    QTest::newRow("system and developer text → system, max_tokens defaulted")
        << QByteArray(R"({"model":"m","messages":[{"role":"system","content":"Be brief."},
            {"role":"developer","content":[{"type":"text","text":"Use metric."}]},
            {"role":"user","content":"hi"}]})")
        << QByteArray(R"({"system":"Be brief.\n\nUse metric.","max_tokens":4096,
            "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]})");
    QTest::newRow("max_completion_tokens, stop, temperature, user")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":"hi"}],
            "max_completion_tokens":77,"stop":"END","temperature":0.5,"top_p":0.9,"user":"u1"})")
        << QByteArray(R"({"max_tokens":77,"stop_sequences":["END"],"temperature":0.5,
            "top_p":0.9,"metadata":{"user_id":"u1"}})");
    QTest::newRow("function tools → name, description, input_schema")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":"hi"}],
            "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather",
              "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
              {"type":"function","function":{"name":"now"}}]})")
        << QByteArray(R"({"tools":[{"name":"get_weather","description":"Weather",
              "input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
              {"name":"now","input_schema":{"type":"object","properties":{}}}]})");
    const QByteArray oneTool =
        R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}])";
    QTest::newRow("tool_choice auto → auto")
        << QByteArray(
               R"({"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"auto",)" +
               oneTool + "}")
        << QByteArray(R"({"tool_choice":{"type":"auto"}})");
    QTest::newRow("tool_choice required → any")
        << QByteArray(
               R"({"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"required",)" +
               oneTool + "}")
        << QByteArray(R"({"tool_choice":{"type":"any"}})");
    QTest::newRow("tool_choice none → none")
        << QByteArray(
               R"({"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"none",)" +
               oneTool + "}")
        << QByteArray(R"({"tool_choice":{"type":"none"}})");
    QTest::newRow("tool_choice named → tool, parallel_tool_calls false")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":"x"}],
            "tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false,)" +
                      oneTool + "}")
        << QByteArray(
               R"({"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true}})");
    QTest::newRow("tool calls → tool_use; results → one user turn of tool_result blocks")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":"weather?"},
            {"role":"assistant","content":"Checking.","tool_calls":[
              {"id":"toolu_1","type":"function","function":{"name":"w","arguments":"{\"city\":\"Oslo\"}"}},
              {"id":"toolu_2","type":"function","function":{"name":"w","arguments":"{\"city\":\"Rome\"}"}}]},
            {"role":"tool","tool_call_id":"toolu_1","content":"3C"},
            {"role":"tool","tool_call_id":"toolu_2","content":[{"type":"text","text":"20C"}]},
            {"role":"user","content":"thanks"}]})")
        << QByteArray(R"({"messages":[{"role":"user","content":[{"type":"text","text":"weather?"}]},
            {"role":"assistant","content":[{"type":"text","text":"Checking."},
              {"type":"tool_use","id":"toolu_1","name":"w","input":{"city":"Oslo"}},
              {"type":"tool_use","id":"toolu_2","name":"w","input":{"city":"Rome"}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"3C"},
              {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"20C"}]},
              {"type":"text","text":"thanks"}]}]})");
    QTest::newRow("images: data URL → base64 source, http URL → url source")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":[
            {"type":"text","text":"what is this"},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
            {"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"low"}}]}]})")
        << QByteArray(
               R"({"messages":[{"role":"user","content":[{"type":"text","text":"what is this"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
            {"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}]}]})");
    QTest::newRow("a PDF file part → a document block")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":[
            {"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0="}}]}]})")
        << QByteArray(R"({"messages":[{"role":"user","content":[{"type":"document",
            "source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}]}]})");
    QTest::newRow("reasoning_effort → thinking budget on top of the default max_tokens")
        << QByteArray(
               R"({"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"medium"})")
        << QByteArray(R"({"thinking":{"type":"enabled","budget_tokens":2048},"max_tokens":6144})");
    QTest::newRow("thinking_blocks go back first in their turn, signature kept; bare reasoning not")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":"x"},
            {"role":"assistant","content":null,"reasoning_content":"hmm",
             "thinking_blocks":[{"type":"thinking","thinking":"hmm","signature":"SIG1"},
                                {"type":"redacted_thinking","data":"RED"}],
             "tool_calls":[{"id":"toolu_9","type":"function","function":{"name":"f","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"toolu_9","content":"ok"},
            {"role":"assistant","content":"done","reasoning_content":"unsigned"}]})")
        << QByteArray(R"({"messages":[{"role":"user","content":[{"type":"text","text":"x"}]},
            {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"SIG1"},
              {"type":"redacted_thinking","data":"RED"},
              {"type":"tool_use","id":"toolu_9","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"ok"}]},
            {"role":"assistant","content":[{"type":"text","text":"done"}]}]})");
    QTest::newRow("stream asks Anthropic to stream; stream_options stay out")
        << QByteArray(R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,
            "stream_options":{"include_usage":true}})")
        << QByteArray(R"({"stream":true})");
}

void TestChatOverMessages::request() {
    QFETCH(QByteArray, chat);
    QFETCH(QByteArray, expected);
    const ChatOverMessages::MessagesRequest out = ChatOverMessages::messagesRequest(obj(chat));
    QVERIFY2(out.ok(), qPrintable(out.error));
    QString why;
    QVERIFY2(hasAll(out.body, obj(expected), &why), qPrintable(why));
    QVERIFY(!out.body.contains("stream_options"));
}

// OpenAI-side settings Messages has no place for are left out of the body and named, never
// dropped unsaid; safety_identifier names the end user like `user`.
void TestChatOverMessages::ignoredParametersAreNamed() {
    const ChatOverMessages::MessagesRequest out = ChatOverMessages::messagesRequest(
        obj(R"({"model":"m","messages":[{"role":"user","content":"hi"}],"store":true,
            "metadata":{"k":"v"},"service_tier":"auto","prompt_cache_key":"pck",
            "verbosity":"low","safety_identifier":"hashed-user"})"));
    QVERIFY2(out.ok(), qPrintable(out.error));
    QCOMPARE(out.ignored,
             (QStringList{QStringLiteral("store"), QStringLiteral("metadata"),
                          QStringLiteral("service_tier"), QStringLiteral("prompt_cache_key"),
                          QStringLiteral("verbosity")}));
    for (const char *key : {"store", "service_tier", "prompt_cache_key", "verbosity"})
        QVERIFY2(!out.body.contains(QLatin1String(key)), key);
    QCOMPARE(out.body.value(QStringLiteral("metadata")).toObject(),
             obj(R"({"user_id":"hashed-user"})"));
    const ChatOverMessages::MessagesRequest plain = ChatOverMessages::messagesRequest(
        obj(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})"));
    QVERIFY(plain.ignored.isEmpty());
}

void TestChatOverMessages::refused_data() {
    QTest::addColumn<QByteArray>("chat");
    QTest::addColumn<QString>("param");
    QTest::newRow("n > 1") << QByteArray(R"({"messages":[],"n":2})") << "n";
    QTest::newRow("logprobs") << QByteArray(R"({"messages":[],"logprobs":true})") << "logprobs";
    QTest::newRow("json_schema")
        << QByteArray(
               R"({"messages":[],"response_format":{"type":"json_schema","json_schema":{}}})")
        << "response_format";
    QTest::newRow("seed") << QByteArray(R"({"messages":[],"seed":3})") << "seed";
    QTest::newRow("a hosted tool")
        << QByteArray(R"({"messages":[],"tools":[{"type":"web_search"}]})") << "tools";
    QTest::newRow("audio part")
        << QByteArray(
               R"({"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}]})")
        << "messages";
    QTest::newRow("arguments not an object")
        << QByteArray(
               R"({"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})")
        << "messages";
}

void TestChatOverMessages::refused() {
    QFETCH(QByteArray, chat);
    QFETCH(QString, param);
    const ChatOverMessages::MessagesRequest out = ChatOverMessages::messagesRequest(obj(chat));
    QVERIFY(!out.ok());
    QCOMPARE(out.errorParam, param);
}

void TestChatOverMessages::completion_data() {
    QTest::addColumn<QByteArray>("message");
    QTest::addColumn<QByteArray>("expectedMessage");
    QTest::addColumn<QString>("finish");
    QTest::addColumn<QByteArray>("expectedUsage");

    QTest::newRow("text, end_turn, cache counts")
        << QByteArray(R"({"id":"msg_1","type":"message","role":"assistant","model":"claude",
            "content":[{"type":"text","text":"Hello"},{"type":"text","text":" there"}],
            "stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5,
            "cache_read_input_tokens":100,"cache_creation_input_tokens":20}})")
        << QByteArray(R"({"role":"assistant","content":"Hello there"})") << "stop"
        << QByteArray(R"({"prompt_tokens":130,"completion_tokens":5,"total_tokens":135,
            "prompt_tokens_details":{"cached_tokens":100,"cache_write_tokens":20}})");
    QTest::newRow("thinking + tool_use → reasoning, thinking_blocks, tool_calls")
        << readFile(fixtureDir() + "/messages-thinking-tool-use.json")
        << QByteArray(R"({"content":"Okay, let's check the weather for San Francisco, CA:",
            "reasoning_content":"The user wants the weather in San Francisco. I should call get_weather.",
            "thinking_blocks":[{"type":"thinking","thinking":"The user wants the weather in San Francisco. I should call get_weather.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}],
            "tool_calls":[{"id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}"}}]})")
        << "tool_calls" << QByteArray(R"({"prompt_tokens":1496,"completion_tokens":89,
            "prompt_tokens_details":{"cached_tokens":1024,"cache_write_tokens":0}})");
    QTest::newRow("max_tokens → length; no text → null content")
        << QByteArray(R"({"id":"m","type":"message","content":[],"stop_reason":"max_tokens",
            "usage":{"input_tokens":1,"output_tokens":1}})")
        << QByteArray(R"({"content":null})") << "length" << QByteArray("{}");
    QTest::newRow("refusal → content_filter")
        << QByteArray(R"({"id":"m","type":"message","content":[],"stop_reason":"refusal"})")
        << QByteArray("{}") << "content_filter" << QByteArray("{}");
    QTest::newRow("stop_sequence → stop")
        << QByteArray(R"({"id":"m","type":"message","content":[{"type":"text","text":"a"}],
            "stop_reason":"stop_sequence"})")
        << QByteArray("{}") << "stop" << QByteArray("{}");
}

void TestChatOverMessages::completion() {
    QFETCH(QByteArray, message);
    QFETCH(QByteArray, expectedMessage);
    QFETCH(QString, finish);
    QFETCH(QByteArray, expectedUsage);
    const QJsonObject completion = ChatOverMessages::completionFromMessage(obj(message));
    QCOMPARE(completion.value("object").toString(), QStringLiteral("chat.completion"));
    const QJsonObject choice = completion.value("choices").toArray().first().toObject();
    QCOMPARE(choice.value("finish_reason").toString(), finish);
    QString why;
    QVERIFY2(hasAll(choice.value("message").toObject(), obj(expectedMessage), &why),
             qPrintable(why));
    QVERIFY2(hasAll(completion.value("usage").toObject(), obj(expectedUsage), &why),
             qPrintable(why));
}

void TestChatOverMessages::errors_data() {
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("clientStatus");
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("message");
    QTest::newRow("400 invalid_request_error")
        << 400
        << QByteArray(
               R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}})")
        << 400 << "invalid_request_error"
        << "max_tokens: too big";
    QTest::newRow("529 overloaded → 503")
        << 529
        << QByteArray(
               R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})")
        << 503 << "overloaded_error"
        << "Overloaded";
    QTest::newRow("not JSON") << 502 << QByteArray("<html>bad gateway</html>") << 502
                              << "upstream_error"
                              << "Anthropic upstream answered 502: <html>bad gateway</html>";
}

void TestChatOverMessages::errors() {
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(int, clientStatus);
    QFETCH(QString, type);
    QFETCH(QString, message);
    QCOMPARE(ChatOverMessages::clientStatus(status), clientStatus);
    const QJsonObject error = ChatOverMessages::openAiError(status, body).value("error").toObject();
    QCOMPARE(error.value("type").toString(), type);
    QCOMPARE(error.value("message").toString(), message);
}

void TestChatOverMessages::streamMatchesJson_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("text") << "messages-text";
    QTest::newRow("thinking and tool use") << "messages-thinking-tool-use";
}

// The chunks a Messages stream becomes add up (as the SDK's accumulator adds them) to the
// completion the same message becomes as JSON.
void TestChatOverMessages::streamMatchesJson() {
    QFETCH(QString, name);
    const QJsonArray chat =
        chatEventsOf(readFile(fixtureDir() + u'/' + name + QStringLiteral(".sse")), true);
    QJsonObject streamed = ChatCompletionsCodec::responseFromEvents(chat);
    QJsonObject json = ChatOverMessages::completionFromMessage(
        obj(readFile(fixtureDir() + u'/' + name + QStringLiteral(".json"))));
    const auto messageOf = [](const QJsonObject &c) {
        return c.value("choices").toArray().first().toObject().value("message").toObject();
    };
    const QJsonObject a = messageOf(streamed);
    const QJsonObject b = messageOf(json);
    QCOMPARE(a.value("content"), b.value("content"));
    // Arguments as JSON values: the stream relays the model's own spacing.
    const auto calls = [](const QJsonObject &m) {
        QJsonArray out;
        for (const QJsonValue &c : m.value("tool_calls").toArray()) {
            QJsonObject call = c.toObject();
            QJsonObject fn = call.value("function").toObject();
            fn.insert("arguments",
                      QJsonDocument::fromJson(fn.value("arguments").toString().toUtf8()).object());
            call.insert("function", fn);
            out.append(call);
        }
        return out;
    };
    QCOMPARE(calls(a), calls(b));
    QCOMPARE(a.value("reasoning_content"), b.value("reasoning_content"));
    QCOMPARE(streamed.value("choices").toArray().first().toObject().value("finish_reason"),
             json.value("choices").toArray().first().toObject().value("finish_reason"));
    QCOMPARE(streamed.value("usage").toObject().value("prompt_tokens"),
             json.value("usage").toObject().value("prompt_tokens"));
    QCOMPARE(streamed.value("usage").toObject().value("completion_tokens"),
             json.value("usage").toObject().value("completion_tokens"));
}

void TestChatOverMessages::streamEvents() {
    const QJsonArray chat = chatEventsOf(
        readFile(fixtureDir() + QStringLiteral("/messages-thinking-tool-use.sse")), false);
    // First the role; the signature as thinking_blocks; no usage chunk when not asked for.
    const QJsonObject first = chat.first().toObject().value("data").toObject();
    QCOMPARE(first.value("object").toString(), QStringLiteral("chat.completion.chunk"));
    QCOMPARE(
        first.value("choices").toArray().first().toObject().value("delta").toObject().value("role"),
        QJsonValue("assistant"));
    bool signed_ = false;
    for (const QJsonValue &e : chat) {
        const QJsonObject data = e.toObject().value("data").toObject();
        QVERIFY(!data.contains("usage"));
        const QJsonArray blocks = data.value("choices")
                                      .toArray()
                                      .first()
                                      .toObject()
                                      .value("delta")
                                      .toObject()
                                      .value("thinking_blocks")
                                      .toArray();
        signed_ =
            signed_ || blocks.first().toObject().value("signature").toString() ==
                           QLatin1String("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds");
    }
    QVERIFY(signed_);
    // An error event ends the stream as an OpenAI error chunk.
    MessagesToChatStream s(true);
    const QList<QJsonObject> out = s.feed(
        obj(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out.first().value("error").toObject().value("message").toString(),
             QStringLiteral("Overloaded"));
    QVERIFY(s.failed());
}

// Responses over Anthropic = Responses ⇄ Chat ⇄ Messages: the thinking signature reaches the
// Responses reasoning item as encrypted_content and goes back as the thinking block.
void TestChatOverMessages::responsesKeepThinkingSignature() {
    const QJsonObject completion = ChatOverMessages::completionFromMessage(
        obj(readFile(fixtureDir() + "/messages-thinking-tool-use.json")));
    const QJsonObject request = obj(R"({"model":"m","input":"weather in SF?"})");
    const QJsonObject response =
        ResponsesOverChat::responseFromChat(completion, request, ResponsesOverChat::mintIds(1));
    const QJsonArray output = response.value("output").toArray();
    QCOMPARE(output.at(0).toObject().value("type").toString(), QStringLiteral("reasoning"));
    QCOMPARE(output.at(0).toObject().value("encrypted_content").toString(),
             QStringLiteral("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"));
    QCOMPARE(response.value("usage")
                 .toObject()
                 .value("input_tokens_details")
                 .toObject()
                 .value("cached_tokens"),
             QJsonValue(1024));

    // The next turn: the output as input, then the tool's result.
    QJsonArray input{QJsonObject{{"role", "user"}, {"content", "weather in SF?"}}};
    for (const QJsonValue &item : output)
        input.append(item);
    input.append(QJsonObject{{"type", "function_call_output"},
                             {"call_id", "toolu_01T1x1fJ34qAmk2tNTrN7Up6"},
                             {"output", "61F"}});
    const ResponsesOverChat::ChatRequest chat =
        ResponsesOverChat::chatRequest(QJsonObject{{"model", "m"}, {"input", input}}, {}, true);
    QVERIFY2(chat.ok(), qPrintable(chat.error));
    const ChatOverMessages::MessagesRequest messages = ChatOverMessages::messagesRequest(chat.body);
    QVERIFY2(messages.ok(), qPrintable(messages.error));
    const QJsonArray turns = messages.body.value("messages").toArray();
    QCOMPARE(turns.size(), 3);
    const QJsonArray assistant = turns.at(1).toObject().value("content").toArray();
    QCOMPARE(
        assistant.at(0).toObject(),
        obj(R"({"type":"thinking","thinking":"The user wants the weather in San Francisco. I should call get_weather.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"})"));
    QCOMPARE(assistant.at(2).toObject().value("type").toString(), QStringLiteral("tool_use"));
    QCOMPARE(turns.at(2).toObject().value("content").toArray().first().toObject().value("type"),
             QJsonValue("tool_result"));

    // Without keepThinking (a chat upstream) reasoning stays out, as before.
    const ResponsesOverChat::ChatRequest plain =
        ResponsesOverChat::chatRequest(QJsonObject{{"model", "m"}, {"input", input}});
    QVERIFY(!QJsonDocument(plain.body).toJson().contains("thinking_blocks"));
}

void TestChatOverMessages::responsesStreamKeepsSignature() {
    const QJsonArray chat = chatEventsOf(
        readFile(fixtureDir() + QStringLiteral("/messages-thinking-tool-use.sse")), true);
    ChatToResponsesStream writer(obj(R"({"model":"m","input":"x","stream":true})"));
    writer.begin();
    for (const QJsonValue &e : chat)
        writer.feed(e.toObject().value("data").toObject());
    writer.finish();
    const QJsonArray output = writer.finalResponse().value("output").toArray();
    QCOMPARE(output.first().toObject().value("encrypted_content").toString(),
             QStringLiteral("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"));
    QCOMPARE(output.last().toObject().value("type").toString(), QStringLiteral("function_call"));
}

QTEST_GUILESS_MAIN(TestChatOverMessages)
#include "tst_chatovermessages.moc"
