// The conversation per iteration, built from flows recorded by a real in-memory FlowStore
// (tests/models/conversationflows.h), and ConversationModel under QAbstractItemModelTester.
// JSON fixtures are written as plain literals here.
#undef QT_NO_CAST_FROM_ASCII
#include "models/conversationflows.h"

#include "models/conversation.h"
#include "models/conversationmodel.h"

#include <QAbstractItemModelTester>
#include <QtTest>

using namespace loopscope;
using Entry = Conversation::Entry;
using EKind = Conversation::Kind;

namespace {

QJsonObject scenario(convo::Recorder &r, const QString &name) {
    if (name == "responses loop")
        return r.responsesLoop();
    if (name == "responses loop streamed")
        return r.responsesLoop("req_stream", true);
    if (name == "chat loop")
        return r.chatLoop();
    if (name == "client function call")
        return r.clientFunctionCall();
    if (name == "pass-through")
        return r.passThrough();
    if (name == "pass-through chat streamed")
        return r.passThroughChatStream();
    if (name == "claude code")
        return r.passThroughMessagesStream();
    if (name == "upstream error")
        return r.upstreamError();
    if (name == "odd replies")
        return r.oddReplies();
    if (name == "rejected")
        return r.rejected();
    qFatal("unknown scenario");
}

QStringList titles(const QList<Entry> &entries) {
    QStringList out;
    for (const Entry &e : entries)
        out << e.title;
    return out;
}

const Entry *find(const QList<Entry> &entries, EKind kind) {
    for (const Entry &e : entries)
        if (e.kind == kind)
            return &e;
    return nullptr;
}

} // namespace

class TstConversationModel : public QObject {
    Q_OBJECT
private slots:
    void conversation_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QList<int>>("newPerIteration");
        QTest::addColumn<QStringList>("replyTitles"); // per iteration, joined with "|"
        QTest::addColumn<QStringList>("fedBack");     // per iteration, the fed-back text
        QTest::addColumn<QString>("finalContains");

        QTest::newRow("responses loop")
            << "responses loop" << QList<int>{2, 2} << QStringList{"code (call_1)", "assistant"}
            << QStringList{"42\n", ""} << "6*7 = 42";
        QTest::newRow("responses loop streamed")
            << "responses loop streamed" << QList<int>{2, 2}
            << QStringList{"code (call_1)", "assistant"} << QStringList{"42\n", ""}
            << "[code_interpreter_call (ci_1)]\nx = 6 * 7\nprint(x)";
        QTest::newRow("chat loop")
            << "chat loop" << QList<int>{2, 2} << QStringList{"code (call_c1)", "assistant"}
            << QStringList{"120\n", ""} << "5! = 120";
        QTest::newRow("client function call")
            << "client function call" << QList<int>{1}
            << QStringList{"function call get_weather (call_w)"} << QStringList{""}
            << "[function call get_weather (call_w)] → client";
        QTest::newRow("pass-through") << "pass-through" << QList<int>{1} << QStringList{"assistant"}
                                      << QStringList{""} << "hi";
        QTest::newRow("pass-through chat streamed")
            << "pass-through chat streamed" << QList<int>{1}
            << QStringList{"assistant|function call lookup (call_s)"} << QStringList{""}
            << "Hello there";
        QTest::newRow("upstream error")
            << "upstream error" << QList<int>{1} << QStringList{"error"} << QStringList{""}
            << "HTTP 502: Upstream error: upstream exploded";
        QTest::newRow("rejected") << "rejected" << QList<int>{} << QStringList{} << QStringList{}
                                  << "[error]\nHTTP 401: Invalid API key";
        QTest::newRow("odd replies") << "odd replies" << QList<int>{1, 0}
                                     << QStringList{"", "function call get_weather (call_b)"}
                                     << QStringList{"", ""} << "arguments are not valid JSON";
    }

    void conversation() {
        QFETCH(QString, name);
        QFETCH(QList<int>, newPerIteration);
        QFETCH(QStringList, replyTitles);
        QFETCH(QStringList, fedBack);
        QFETCH(QString, finalContains);

        convo::Recorder recorder;
        const QJsonObject flow = scenario(recorder, name);
        QVERIFY2(!flow.isEmpty(), "the store has the flow");
        const Conversation c = Conversation::fromFlow(flow);
        QCOMPARE(c.iterations().size(), newPerIteration.size());
        for (int i = 0; i < c.iterations().size(); ++i) {
            const Conversation::Iteration &it = c.iterations().at(i);
            QCOMPARE(it.newCount(), newPerIteration.at(i));
            QCOMPARE(titles(it.reply).join("|"), replyTitles.at(i));
            QString fed;
            for (const Entry &e : it.fedBack)
                fed += e.text;
            QCOMPARE(fed, fedBack.at(i));
        }
        QVERIFY2(c.finalText().contains(finalContains), qPrintable(c.finalText()));
    }

    // The code the model wrote is Python source, not escaped JSON; the output fed back is the
    // code_run's and reappears as the next request's function_call_output.
    void decodesCodeAndFedBackOutput() {
        convo::Recorder recorder;
        const Conversation c = Conversation::fromFlow(recorder.responsesLoop());
        const Entry *code = find(c.iterations().at(0).reply, EKind::CodeCall);
        QVERIFY(code);
        QCOMPARE(code->text, QString("x = 6 * 7\nprint(x)"));
        QCOMPARE(code->format, Conversation::Format::Python);
        QVERIFY(!code->text.contains("\\n"));
        QVERIFY(!code->clientSide);
        const Entry *run = find(c.iterations().at(0).fedBack, EKind::CodeRun);
        QVERIFY(run);
        QCOMPARE(run->callId, QString("call_1"));
        // Iteration 2's new items: the model's own call echoed back and the output.
        QList<Entry> fresh;
        for (const Entry &e : c.iterations().at(1).sent)
            if (e.isNew)
                fresh << e;
        QCOMPARE(titles(fresh), (QStringList{"code (call_1)", "tool output (call_1)"}));
        QCOMPARE(fresh.at(1).text, run->text);
        // Everything sent is still there when asked for.
        QCOMPARE(titles(c.iterations().at(1).sent),
                 (QStringList{"instructions", "user", "code (call_1)", "tool output (call_1)"}));
        QVERIFY(c.iterationText(1, false).contains("[tool output (call_1)]\n42"));
        QVERIFY(!c.iterationText(1, false).contains("[instructions]"));
        QVERIFY(c.iterationText(1, true).contains("[instructions]\nUse python."));
    }

    void chatToolCallsAreDecoded() {
        convo::Recorder recorder;
        const Conversation c = Conversation::fromFlow(recorder.chatLoop());
        const Entry *code = find(c.iterations().at(0).reply, EKind::CodeCall);
        QVERIFY(code);
        QCOMPARE(code->text, QString("import math\nprint(math.factorial(5))"));
        QCOMPARE(titles(c.iterations().at(0).sent), (QStringList{"system", "user"}));
        const Entry *tool = find(c.iterations().at(1).sent, EKind::ToolOutput);
        QVERIFY(tool);
        QVERIFY(tool->isNew);
        QCOMPARE(tool->text, QString("120\n"));
    }

    void clientSideArgumentsArePrettyJson() {
        convo::Recorder recorder;
        const Conversation c = Conversation::fromFlow(recorder.clientFunctionCall());
        const Entry *call = find(c.iterations().at(0).reply, EKind::ToolCall);
        QVERIFY(call);
        QVERIFY(call->clientSide);
        QCOMPARE(call->format, Conversation::Format::Json);
        QVERIFY2(call->text.contains("\"city\": \"Paris\""), qPrintable(call->text));
        QVERIFY(call->text.contains('\n')); // indented, one key a line
    }

    void streamedChatAssemblesSplitArguments() {
        convo::Recorder recorder;
        const Conversation c = Conversation::fromFlow(recorder.passThroughChatStream());
        const Entry *call = find(c.iterations().at(0).reply, EKind::ToolCall);
        QVERIFY(call);
        QVERIFY2(call->text.contains("\"q\": \"cats\""), qPrintable(call->text));
        QVERIFY(call->note.isEmpty());
    }

    void unparsableArgumentsShownRaw() {
        convo::Recorder recorder;
        const Conversation c = Conversation::fromFlow(recorder.oddReplies());
        QVERIFY(c.iterations().at(0).reply.isEmpty()); // an empty reply stays empty
        const Entry *call = find(c.iterations().at(1).reply, EKind::ToolCall);
        QVERIFY(call);
        QCOMPARE(call->text, QString("{city: Paris"));
        QCOMPARE(call->format, Conversation::Format::Text);
        QCOMPARE(call->note, QString("arguments are not valid JSON"));
    }

    void codeErrorAndToolOutputJson_data() {
        QTest::addColumn<QJsonValue>("output");
        QTest::addColumn<int>("format");
        QTest::addColumn<QString>("text");
        QTest::newRow("plain") << QJsonValue("42\n") << int(Conversation::Format::Text) << "42\n";
        QTest::newRow("json string")
            << QJsonValue("{\"a\":1}") << int(Conversation::Format::Json) << "{\n    \"a\": 1\n}";
        QTest::newRow("not json") << QJsonValue("{oops") << int(Conversation::Format::Text)
                                  << "{oops";
        QTest::newRow("array") << QJsonValue(QJsonArray{1, 2}) << int(Conversation::Format::Json)
                               << "[\n    1,\n    2\n]";
    }

    void codeErrorAndToolOutputJson() {
        QFETCH(QJsonValue, output);
        QFETCH(int, format);
        QFETCH(QString, text);
        // Hand-written hops: one code_run whose output has the given shape, and an error.
        const QJsonObject flow{
            {"id", "req_h"},
            {"api", "responses"},
            {"hops",
             QJsonArray{QJsonObject{{"kind", "upstream_request"},
                                    {"iteration", 0},
                                    {"body", QJsonObject{{"input", "x"}}}},
                        QJsonObject{{"kind", "code_run"},
                                    {"iteration", 0},
                                    {"call_id", "c"},
                                    {"output", output},
                                    {"error", QJsonObject{{"name", "ZeroDivisionError"}}}}}}};
        const Conversation c = Conversation::fromFlow(flow);
        const Entry &e = c.iterations().at(0).fedBack.at(0);
        QCOMPARE(int(e.format), format);
        QCOMPARE(e.text, text);
        QCOMPARE(e.note, QString("ZeroDivisionError"));
    }

    // A pass-through call whose answer has not arrived: the iteration exists, no reply yet.
    void runningPassThroughHasNoReplyYet() {
        const QJsonObject flow{
            {"id", "req_run"},
            {"api", "chat_completions"},
            {"state", "running"},
            {"hops",
             QJsonArray{
                 QJsonObject{{"kind", "client_request"},
                             {"body", QJsonObject{{"messages", QJsonArray()}}}},
                 QJsonObject{{"kind", "upstream_request"},
                             {"iteration", 0},
                             {"body", QJsonObject{{"messages",
                                                   QJsonArray{QJsonObject{
                                                       {"role", "user"}, {"content", "hi"}}}}}}}}}};
        const Conversation c = Conversation::fromFlow(flow);
        QCOMPARE(c.iterations().size(), 1);
        QCOMPARE(c.iterations().at(0).status, 0);
        QVERIFY(c.iterations().at(0).reply.isEmpty());
        QVERIFY(c.finalAnswer().isEmpty());
        QCOMPARE(titles(c.iterations().at(0).sent), QStringList{"user"});
    }

    // Claude Code's traffic reads as a conversation, not JSON: the system prompt, the tool_use
    // as a function call, its tool_result as the tool's output, and the streamed answer (the
    // thinking, the text, the next tool_use) rebuilt by the Messages codec.
    void messagesReadAsAConversation() {
        convo::Recorder r;
        const Conversation c = Conversation::fromFlow(scenario(r, "claude code"));
        QCOMPARE(c.api(), QString("messages"));
        QCOMPARE(c.iterations().size(), 1);
        const Conversation::Iteration &it = c.iterations().first();
        QCOMPARE(titles(it.sent), (QStringList{"system", "user", "function call Bash (toolu_a)",
                                               "tool output (toolu_a)"}));
        QCOMPARE(it.sent.at(0).text, QString("You are Claude Code.\nUse the tools."));
        QCOMPARE(it.sent.at(2).text, QString("{\n    \"command\": \"date\"\n}"));
        QCOMPARE(it.sent.at(3).text, QString("Thu Dec  4"));
        const QList<Entry> &final = c.finalAnswer();
        QCOMPARE(titles(final),
                 (QStringList{"reasoning", "assistant",
                              "function call get_weather (toolu_01T1x1fJ34qAmk2tNTrN7Up6)"}));
        QVERIFY(!final.at(0).text.isEmpty());
        QVERIFY(!final.at(1).text.isEmpty());
        QVERIFY2(final.at(2).text.contains("San Francisco"), qPrintable(final.at(2).text));
        QVERIFY(find(final, EKind::Other) == nullptr);
    }

    void emptyFlowIsEmpty() {
        QVERIFY(Conversation::fromFlow({}).isEmpty());
        ConversationModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFlow({});
        QCOMPARE(model.rowCount(), 0);
    }

    void modelTreeAndShowAllToggle() {
        convo::Recorder recorder;
        ConversationModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setFlow(recorder.responsesLoop());
        QCOMPARE(model.rowCount(), 3); // two iterations and the final answer
        QCOMPARE(model.index(0, 0).data().toString(), QString("Iteration 1"));
        QCOMPARE(model.index(2, 0).data().toString(), QString("Final answer"));
        QCOMPARE(model.finalRow(), 2);
        QCOMPARE(model.index(2, 0).data(ConversationModel::IterationRole).toInt(), -1);
        const QModelIndex second = model.index(1, 0);
        // Only new: code call + output sent, the reply.
        QCOMPARE(model.rowCount(second), 3);
        const QModelIndex first = model.index(0, 0, second);
        QCOMPARE(first.parent(), second);
        QCOMPARE(first.data(ConversationModel::SectionRole).toInt(),
                 int(Conversation::Section::Sent));
        QCOMPARE(first.data(ConversationModel::FormatRole).toInt(),
                 int(Conversation::Format::Python));
        QCOMPARE(first.data(ConversationModel::TextRole).toString(),
                 QString("x = 6 * 7\nprint(x)"));
        QVERIFY(first.data(ConversationModel::IsNewRole).toBool());
        model.setShowAllSent(true);
        QCOMPARE(model.rowCount(model.index(1, 0)), 5);
        QCOMPARE(model.index(0, 0, model.index(1, 0)).data(ConversationModel::SpeakerRole),
                 QVariant("instructions"));
        QVERIFY(!model.index(0, 0, model.index(1, 0)).data(ConversationModel::IsNewRole).toBool());
        model.setShowAllSent(true); // no change, no reset
        QCOMPARE(resets.size(), 2);
        model.setFlow(recorder.chatLoop());
        QCOMPARE(model.rowCount(), 3);
        model.setFlow({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TstConversationModel)
#include "tst_conversationmodel.moc"
