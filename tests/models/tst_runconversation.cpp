// A whole agent run as one conversation (issue 36), over runs recorded by a real in-memory
// FlowStore (tests/models/agentflows.h): each turn only what it added, tool calls paired with
// their results by call id, prompts and tool lists collapsed, tokens per turn and per run.
#undef QT_NO_CAST_FROM_ASCII
#include "models/agentflows.h"

#include "models/runconversation.h"

#include <QtTest>

using namespace loopscope;
using Step = RunConversation::Step;
using EKind = Conversation::Kind;

namespace {

QString gist(const QString &text) {
    const QString s = text.simplified();
    return s.size() > 40 ? s.left(40) : s;
}

// A step as one short word: "system*" (collapsed), "user:fix the bug", "call[ls]=>a b".
QString stepSig(const Step &s) {
    const Conversation::Entry &e = s.entry;
    QString out;
    switch (e.kind) {
    case EKind::Instructions:
        out = e.role;
        break;
    case EKind::ToolCall:
    case EKind::CodeCall:
        out = "call[" + s.label + "]";
        break;
    case EKind::Reasoning:
        out = "reasoning:" + gist(e.text);
        break;
    case EKind::ToolOutput:
        out = "result:" + gist(e.text);
        break;
    default:
        out = e.role + ":" + gist(e.text);
    }
    if (s.collapsed)
        out += "*";
    if (s.hasResult)
        out += "=>" + gist(s.result.text);
    return out;
}

QString turnSig(const RunConversation::Turn &t) {
    QStringList added, reply;
    for (const Step &s : t.added)
        added << stepSig(s);
    for (const Step &s : t.reply)
        reply << stepSig(s);
    return added.join(", ") + " | " + reply.join(", ");
}

QString tokensSig(const RunConversation::Tokens &t) {
    return QString("%1/%2/%3/%4").arg(t.input).arg(t.output).arg(t.cacheRead).arg(t.cacheWrite);
}

} // namespace

class TestRunConversation : public QObject {
    Q_OBJECT
private slots:
    void turns_data() {
        QTest::addColumn<QString>("run");
        QTest::addColumn<QStringList>("turns");  // turnSig per turn
        QTest::addColumn<QList<int>>("extends"); // the earlier turn each one resent
        QTest::addColumn<QStringList>("tokens"); // in/out/cache read/cache write per turn
        QTest::addColumn<QString>("totalTokens");
        QTest::addColumn<int>("toolCalls");
        QTest::addColumn<QString>("title");
        QTest::addColumn<bool>("fromStore"); // read as the run view does (FlowQuery::readRun)
        // Each run from its whole flows, and from the store in one read: the same turns.
        const auto newRow = [](const char *name, bool fromStore) -> QTestData & {
            return QTest::newRow(
                QByteArray(QByteArray(name) + (fromStore ? ", read from the store" : ""))
                    .constData());
        };
        for (const bool fromStore : {false, true}) {

            newRow("codex responses", fromStore)
                << "codex"
                << QStringList{"instructions*, tools*, "
                               "user:<environment_context>cwd=/w</environment, "
                               "user:list the files | reasoning:I should run ls., "
                               "call[bash -lc ls]=>a.txt b.txt",
                               // The second request resent everything; its only new item, the
                               // command's output, is shown with the call.
                               " | assistant:There are two files."}
                << QList<int>{-1, 0} << QStringList{"3000/40/0/0", "3100/12/2900/0"}
                << "6100/52/2900/0" << 1 << "list the files — codex_exec · gpt-5" << fromStore;
            newRow("claude code messages", fromStore)
                << "claude"
                << QStringList{"system*, tools*, user:fix the bug | reasoning:Let me look., "
                               "call[cat main.py]=>print(1/0)",
                               // The title request in between extends nothing.
                               "system, user:fix the bug | assistant:Fix the bug",
                               " | call[/w/main.py]=>1 print(1/0)", " | assistant:Fixed."}
                << QList<int>{-1, -1, 0, 2}
                << QStringList{"12/40/0/5000", "20/4/0/0", "30/25/5000/60", "40/8/5060/0"}
                << "102/77/10060/5060" << 2 << "fix the bug — claude-cli/2.1.0 · claude-sonnet-4-5"
                << fromStore;
        }
    }
    void turns() {
        QFETCH(QString, run);
        QFETCH(QStringList, turns);
        QFETCH(QList<int>, extends);
        QFETCH(QStringList, tokens);
        QFETCH(QString, totalTokens);
        QFETCH(int, toolCalls);
        QFETCH(QString, title);
        QFETCH(bool, fromStore);
        agents::AgentRecorder recorder;
        const QList<QJsonObject> flows =
            run == "codex" ? recorder.codexRun() : recorder.claudeRun();
        RunConversation c;
        if (fromStore) {
            QCOMPARE(c.appendRun(*recorder.store()->query(),
                                 flows.first().value("run_id").toString(), 0),
                     flows.size());
            c.finish();
        } else {
            c = RunConversation::fromFlows(flows);
        }
        QCOMPARE(c.turns().size(), turns.size());
        for (int i = 0; i < turns.size(); ++i) {
            const RunConversation::Turn &t = c.turns().at(i);
            QCOMPARE(t.flowId, recorder.ids().at(i));
            QCOMPARE(turnSig(t), turns.at(i));
            QCOMPARE(t.extends, extends.at(i));
            QCOMPARE(tokensSig(t.tokens), tokens.at(i));
        }
        QCOMPARE(c.totals().turns, turns.size());
        QCOMPARE(tokensSig(c.totals().tokens), totalTokens);
        QCOMPARE(c.totals().toolCalls, toolCalls);
        QCOMPARE(c.totals().errors, 0);
        QVERIFY(c.totals().tokens.costKnown); // built-in prices for both models
        QVERIFY(c.totals().tokens.cost > 0);
        QCOMPARE(c.title(), title);
        // A result shown with its call says which turn carried it.
        const Step &call = c.turns().constFirst().reply.constLast();
        QVERIFY(call.hasResult);
        QCOMPARE(call.resultTurn, run == "codex" ? 1 : 2);
    }

    void textIsPerTurn() {
        agents::AgentRecorder recorder;
        const RunConversation c = RunConversation::fromFlows(recorder.claudeRun());
        const QString text = c.text();
        QVERIFY(text.startsWith("Turn 1\n"));
        QVERIFY(text.contains("Turn 4\n"));
        // The long system prompt appears once, in the turn that added it.
        QCOMPARE(text.count("Claude rule 80:"), 1);
        QVERIFY(c.turnText(3).contains("Fixed."));
        QVERIFY(c.turnText(4).isEmpty());
    }

    void titleSkipsSystemReminders() {
        // Claude Code's first user message: reminder blocks, then what the user asked.
        agents::AgentRecorder recorder;
        recorder.exchange(
            "claude_r", "/v1/messages",
            {{"user-agent", "claude-cli/2.1.3 (external, sdk-cli)"},
             {"x-claude-code-session-id", "s-r"}},
            {{"model", "claude-sonnet-4-5"},
             {"max_tokens", 100},
             {"messages",
              QJsonArray{QJsonObject{
                  {"role", "user"},
                  {"content",
                   QJsonArray{QJsonObject{{"type", "text"},
                                          {"text", "<system-reminder>\n# Environment\ncwd: "
                                                   "/w\n</system-reminder>"}},
                              QJsonObject{{"type", "text"},
                                          {"text", "List the Python files here by size"}}}}}}}},
            {{"id", "msg_r"},
             {"type", "message"},
             {"role", "assistant"},
             {"content", QJsonArray{QJsonObject{{"type", "text"}, {"text", "Two."}}}}});
        const RunConversation c = RunConversation::fromFlows(recorder.flows());
        QCOMPARE(c.title(),
                 "List the Python files here by size — claude-cli/2.1.3 · claude-sonnet-4-5");
    }

    void emptyRun() {
        const RunConversation c = RunConversation::fromFlows({});
        QVERIFY(c.isEmpty());
        QCOMPARE(c.totals().turns, 0);
        QCOMPARE(c.title(), QString());
    }
};

QTEST_GUILESS_MAIN(TestRunConversation)
#include "tst_runconversation.moc"
