// The Responses-over-chat bridge's mapping rules (dialects.md §5), one row per rule: a Responses
// request as the Chat Completions request it becomes, a chat.completion as the Responses
// response it becomes, and a chat stream as the Responses events it becomes — whose final
// response must equal the JSON path's for the same completion.
#undef QT_NO_CAST_FROM_ASCII // JSON fixtures as plain literals
#include "conversation/chatcompletionscodec.h"
#include "conversation/chattoresponsesstream.h"
#include "conversation/responsesoverchat.h"
#include "conversation/ssedecoder.h"

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

QJsonArray arr(const char *json) {
    return QJsonDocument::fromJson(json).array();
}

// `actual` holds every key of `expected` with the same value (other keys are free).
bool hasAll(const QJsonObject &actual, const QJsonObject &expected, QString *why) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
        if (actual.value(it.key()) != it.value()) {
            *why =
                QStringLiteral("%1: got %2, want %3")
                    .arg(it.key(),
                         QString::fromUtf8(QJsonDocument(QJsonObject{{"v", actual.value(it.key())}})
                                               .toJson(QJsonDocument::Compact)),
                         QString::fromUtf8(QJsonDocument(QJsonObject{{"v", it.value()}})
                                               .toJson(QJsonDocument::Compact)));
            return false;
        }
    }
    return true;
}

// The response without what two answers of one completion may differ in: ids and times.
QJsonValue withoutIds(const QJsonValue &v) {
    if (v.isArray()) {
        QJsonArray out;
        for (const QJsonValue &e : v.toArray())
            out.append(withoutIds(e));
        return out;
    }
    if (!v.isObject())
        return v;
    QJsonObject out;
    const QJsonObject o = v.toObject();
    for (auto it = o.begin(); it != o.end(); ++it)
        if (it.key() != QLatin1String("id") && it.key() != QLatin1String("created_at"))
            out.insert(it.key(), withoutIds(it.value()));
    return out;
}

} // namespace

class TstResponsesOverChat : public QObject {
    Q_OBJECT

private slots:
    void chatRequest_data() {
        QTest::addColumn<QJsonObject>("request");
        QTest::addColumn<QJsonArray>("history");
        QTest::addColumn<QJsonObject>("expected"); // keys the chat body must have, exactly

        QTest::newRow("instructions and a string input")
            << obj(R"J({"model":"m","instructions":"Be brief.","input":"hi"})J") << QJsonArray()
            << obj(R"J({"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]})J");
        QTest::newRow("developer is system; text parts become one string")
            << obj(R"J({"model":"m","input":[{"role":"developer","content":"rules"},{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}]})J")
            << QJsonArray()
            << obj(R"J({"messages":[{"role":"system","content":"rules"},{"role":"user","content":"a\nb"}]})J");
        QTest::newRow("an image keeps the parts")
            << obj(R"J({"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"what?"},{"type":"input_image","image_url":"data:image/png;base64,AA","detail":"low"}]}]})J")
            << QJsonArray()
            << obj(R"J({"messages":[{"role":"user","content":[{"type":"text","text":"what?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA","detail":"low"}}]}]})J");
        QTest::newRow("a file part")
            << obj(R"J({"model":"m","input":[{"role":"user","content":[{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,AA"}]}]})J")
            << QJsonArray()
            << obj(R"J({"messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:application/pdf;base64,AA","filename":"a.pdf"}}]}]})J");
        QTest::newRow("calls join the assistant text before them; outputs are tool messages")
            << obj(R"J({"model":"m","input":[{"role":"user","content":"go"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"calling"}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call","call_id":"c2","name":"g","arguments":"{\u0022x\u0022:1}"},{"type":"function_call_output","call_id":"c1","output":"one"},{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"two"}]}]})J")
            << QJsonArray()
            << obj(R"J({"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"calling","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{\u0022x\u0022:1}"}}]},{"role":"tool","tool_call_id":"c1","content":"one"},{"role":"tool","tool_call_id":"c2","content":"two"}]})J");
        QTest::newRow("a call with no text before it opens an assistant message")
            << obj(R"J({"model":"m","input":[{"role":"user","content":"go"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]})J")
            << QJsonArray()
            << obj(R"J({"messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]})J");
        QTest::newRow("reasoning does not go back to a chat upstream")
            << obj(R"J({"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"xx"},{"role":"user","content":"hi"}]})J")
            << QJsonArray() << obj(R"J({"messages":[{"role":"user","content":"hi"}]})J");
        QTest::newRow("an earlier code run: its code as a call, its logs as the result")
            << obj(R"J({"model":"m","input":[{"type":"code_interpreter_call","id":"ci_1","code":"print(1)","container_id":"cntr","status":"completed","outputs":[{"type":"logs","logs":"1\n"}]}]})J")
            << QJsonArray()
            << obj(R"J({"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"ci_1","type":"function","function":{"name":"code_interpreter","arguments":"{\u0022code\u0022:\u0022print(1)\u0022}"}}]},{"role":"tool","tool_call_id":"ci_1","content":"1\n"}]})J");
        QTest::newRow("history comes first")
            << obj(R"J({"model":"m","input":"second"})J")
            << arr(R"J([{"type":"message","role":"user","content":"first"},{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}])J")
            << obj(R"J({"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":"second"}]})J");
        QTest::newRow("function and custom tools, a named tool_choice")
            << obj(R"J({"model":"m","input":"x","tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true},{"type":"custom","name":"c","description":"free text"}],"tool_choice":{"type":"function","name":"f"},"parallel_tool_calls":false})J")
            << QJsonArray()
            << obj(R"J({"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"},"strict":true}},{"type":"custom","custom":{"name":"c","description":"free text"}}],"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false})J");
        QTest::newRow("settings: max tokens, format, verbosity, effort, sampling")
            << obj(R"J({"model":"m","input":"x","max_output_tokens":64,"temperature":0.2,"top_p":0.9,"user":"u1","text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object"},"strict":true},"verbosity":"low"},"reasoning":{"effort":"high"}})J")
            << QJsonArray()
            << obj(R"J({"max_tokens":64,"temperature":0.2,"top_p":0.9,"user":"u1","response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object"},"strict":true}},"verbosity":"low","reasoning_effort":"high"})J");
        QTest::newRow("a stream asks for the usage chunk; state keys stay home")
            << obj(R"J({"model":"m","input":"x","stream":true,"store":true,"previous_response_id":"resp_1","include":["reasoning.encrypted_content"],"truncation":"auto"})J")
            << QJsonArray()
            << obj(R"J({"stream":true,"stream_options":{"include_usage":true},"store":null,"previous_response_id":null,"include":null,"truncation":null})J");
    }
    void chatRequest() {
        QFETCH(QJsonObject, request);
        QFETCH(QJsonArray, history);
        QFETCH(QJsonObject, expected);
        const ResponsesOverChat::ChatRequest chat =
            ResponsesOverChat::chatRequest(request, history);
        QVERIFY2(chat.ok(), qPrintable(chat.error));
        // An expected null means "absent".
        QJsonObject body = chat.body;
        for (auto it = expected.begin(); it != expected.end(); ++it)
            if (it.value().isNull() && !body.contains(it.key()))
                body.insert(it.key(), QJsonValue::Null);
        QString why;
        QVERIFY2(hasAll(body, expected, &why), qPrintable(why));
    }

    void chatRequestRefuses_data() {
        QTest::addColumn<QJsonObject>("request");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("named"); // the word the reason must name
        QTest::newRow("a hosted tool")
            << obj(R"J({"model":"m","input":"x","tools":[{"type":"web_search"}]})J") << "tools"
            << "web_search";
        QTest::newRow("an item chat has no place for")
            << obj(R"J({"model":"m","input":[{"type":"web_search_call","id":"ws_1","status":"completed"}]})J")
            << "input"
            << "web_search_call";
    }
    void chatRequestRefuses() {
        QFETCH(QJsonObject, request);
        QFETCH(QString, param);
        QFETCH(QString, named);
        const ResponsesOverChat::ChatRequest chat = ResponsesOverChat::chatRequest(request);
        QVERIFY(!chat.ok());
        QCOMPARE(chat.errorParam, param);
        QVERIFY2(chat.error.contains(named), qPrintable(chat.error));
    }

    void responseFromChat_data() {
        QTest::addColumn<QJsonObject>("completion");
        QTest::addColumn<QJsonArray>("output");    // without ids
        QTest::addColumn<QJsonObject>("expected"); // response keys, exactly

        QTest::newRow("text, usage in Responses' names")
            << obj(R"J({"id":"chatcmpl-1","created":1700000000,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":0}}})J")
            << arr(R"J([{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hi","annotations":[],"logprobs":[]}]}])J")
            << obj(R"J({"object":"response","status":"completed","model":"m1","created_at":1700000000,"incomplete_details":null,"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":1,"cache_write_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":7}})J");
        QTest::newRow("tool calls become function_call items")
            << obj(R"J({"model":"m","choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\u0022q\u0022:1}"}},{"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]})J")
            << arr(R"J([{"type":"function_call","status":"completed","call_id":"call_a","name":"f","arguments":"{\u0022q\u0022:1}"},{"type":"function_call","status":"completed","call_id":"call_b","name":"g","arguments":"{}"}])J")
            << obj(R"J({"status":"completed"})J");
        QTest::newRow("length is incomplete: max_output_tokens")
            << obj(R"J({"model":"m","choices":[{"message":{"role":"assistant","content":"cut"},"finish_reason":"length"}]})J")
            << arr(R"J([{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"cut","annotations":[],"logprobs":[]}]}])J")
            << obj(R"J({"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}})J");
        QTest::newRow("content_filter is incomplete: content_filter")
            << obj(R"J({"model":"m","choices":[{"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}]})J")
            << arr(R"J([{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"","annotations":[],"logprobs":[]}]}])J")
            << obj(R"J({"status":"incomplete","incomplete_details":{"reason":"content_filter"}})J");
        QTest::newRow("reasoning_content first, as reasoning text")
            << obj(R"J({"model":"m","choices":[{"message":{"role":"assistant","reasoning_content":"hmm","content":"ok"},"finish_reason":"stop"}]})J")
            << arr(R"J([{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hmm"}]},{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[],"logprobs":[]}]}])J")
            << obj(R"J({"status":"completed"})J");
        QTest::newRow("a refusal is a refusal part")
            << obj(R"J({"model":"m","choices":[{"message":{"role":"assistant","content":null,"refusal":"no"},"finish_reason":"stop"}]})J")
            << arr(R"J([{"type":"message","role":"assistant","status":"completed","content":[{"type":"refusal","refusal":"no"}]}])J")
            << obj(R"J({"status":"completed"})J");
    }
    void responseFromChat() {
        QFETCH(QJsonObject, completion);
        QFETCH(QJsonArray, output);
        QFETCH(QJsonObject, expected);
        const QJsonObject request =
            obj(R"J({"model":"m","input":"x","previous_response_id":"resp_0"})J");
        const ResponsesOverChat::Ids ids = ResponsesOverChat::mintIds(2);
        const QJsonObject response = ResponsesOverChat::responseFromChat(completion, request, ids);
        QCOMPARE(response.value("id").toString(), ids.response);
        QCOMPARE(response.value("previous_response_id").toString(), QStringLiteral("resp_0"));
        QCOMPARE(withoutIds(response.value("output")), QJsonValue(output));
        for (const QJsonValue &item : response.value("output").toArray())
            QVERIFY(!item.toObject().value("id").toString().isEmpty());
        QString why;
        QVERIFY2(hasAll(response, expected, &why), qPrintable(why));
    }

    // A chat stream through ChatToResponsesStream: OpenAI's event order, and the final
    // response the JSON path gives for the completion the same stream adds up to.
    void stream_data() {
        QTest::addColumn<QJsonArray>("chunks");
        QTest::addColumn<QStringList>("events");
        const char *head =
            R"J("id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m")J";
        const auto chunks = [head](std::initializer_list<const char *> deltas) {
            QJsonArray out;
            for (const char *d : deltas)
                out.append(obj(QByteArray("{") + QByteArray(head) + "," + QByteArray(d) + "}"));
            return out;
        };
        QTest::newRow("text in pieces, then usage")
            << chunks(
                   {R"J("choices":[{"index":0,"delta":{"role":"assistant","content":""}}])J",
                    R"J("choices":[{"index":0,"delta":{"content":"Hel"}}])J",
                    R"J("choices":[{"index":0,"delta":{"content":"lo"}}])J",
                    R"J("choices":[{"index":0,"delta":{},"finish_reason":"stop"}])J",
                    R"J("choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5})J"})
            << QStringList{"response.created",           "response.in_progress",
                           "response.output_item.added", "response.content_part.added",
                           "response.output_text.delta", "response.output_text.delta",
                           "response.output_text.done",  "response.content_part.done",
                           "response.output_item.done",  "response.completed"};
        QTest::newRow("reasoning, text, then a tool call in pieces")
            << chunks(
                   {R"J("choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think"}}])J",
                    R"J("choices":[{"index":0,"delta":{"content":"calling"}}])J",
                    R"J("choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}])J",
                    R"J("choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\u0022a\u0022:"}}]}}])J",
                    R"J("choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}])J",
                    R"J("choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}])J"})
            << QStringList{"response.created",
                           "response.in_progress",
                           "response.output_item.added",
                           "response.content_part.added",
                           "response.reasoning_text.delta",
                           "response.reasoning_text.done",
                           "response.content_part.done",
                           "response.output_item.done",
                           "response.output_item.added",
                           "response.content_part.added",
                           "response.output_text.delta",
                           "response.output_text.done",
                           "response.content_part.done",
                           "response.output_item.done",
                           "response.output_item.added",
                           "response.function_call_arguments.delta",
                           "response.function_call_arguments.delta",
                           "response.function_call_arguments.done",
                           "response.output_item.done",
                           "response.completed"};
        QTest::newRow("cut by length")
            << chunks({R"J("choices":[{"index":0,"delta":{"content":"abc"}}])J",
                       R"J("choices":[{"index":0,"delta":{},"finish_reason":"length"}])J"})
            << QStringList{"response.created",           "response.in_progress",
                           "response.output_item.added", "response.content_part.added",
                           "response.output_text.delta", "response.output_text.done",
                           "response.content_part.done", "response.output_item.done",
                           "response.incomplete"};
    }
    void stream() {
        QFETCH(QJsonArray, chunks);
        QFETCH(QStringList, events);
        const QJsonObject request = obj(R"J({"model":"m","input":"x"})J");
        ChatToResponsesStream writer(request);
        QByteArray bytes = writer.begin();
        QJsonArray chatEvents;
        for (const QJsonValue &c : chunks) {
            bytes += writer.feed(c.toObject());
            chatEvents.append(QJsonObject{{"event", "message"}, {"data", c}});
        }
        bytes += writer.finish();
        QJsonArray decoded;
        SseDecoder decoder;
        decoder.feed(bytes, decoded);
        decoder.finish(decoded);
        QStringList types;
        for (int i = 0; i < decoded.size(); ++i) {
            const QJsonObject data = decoded.at(i).toObject().value("data").toObject();
            types << data.value("type").toString();
            QCOMPARE(data.value("sequence_number").toInt(), i);
            QCOMPARE(decoded.at(i).toObject().value("event").toString(), types.last());
        }
        QCOMPARE(types, events);
        const QJsonObject final =
            decoded.last().toObject().value("data").toObject().value("response").toObject();
        QCOMPARE(final, writer.finalResponse());
        QCOMPARE(final.value("id").toString(), writer.responseId());
        // The terminal response repeats each streamed item's id.
        for (const QJsonValue &e : decoded) {
            const QJsonObject data = e.toObject().value("data").toObject();
            if (data.value("type").toString() != QLatin1String("response.output_item.done"))
                continue;
            const int index = data.value("output_index").toInt();
            QCOMPARE(final.value("output").toArray().at(index).toObject(),
                     data.value("item").toObject());
        }
        const QJsonObject completion = ChatCompletionsCodec::responseFromEvents(chatEvents);
        const QJsonObject json =
            ResponsesOverChat::responseFromChat(completion, request, ResponsesOverChat::mintIds(1));
        QCOMPARE(withoutIds(final), withoutIds(json));
    }
};

QTEST_APPLESS_MAIN(TstResponsesOverChat)
#include "tst_responsesoverchat.moc"
