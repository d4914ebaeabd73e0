#pragma once

// Agent runs as a REAL FlowStore (in memory) records them from the events the pass-through
// proxy publishes: a Codex-like Responses run (instructions, exec_command, reasoning, cached
// input) and a Claude-Code-like Messages run (system prompt, Bash/Read tool_use and
// tool_result, thinking, cache reads and writes, a title request in between). Each turn resends
// the whole history, as the agents do. Read back with FlowQuery::flows — the run view's data.
// Include after `#undef QT_NO_CAST_FROM_ASCII`.

#include "inspect/eventbus.h"
#include "record/flowstore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <memory>

namespace loopscope::agents {

using Kind = InspectorEvent::Kind;

inline QByteArray compact(const QJsonObject &o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

// A long agent prompt: `lines` numbered lines.
inline QString longPrompt(const QString &who, int lines) {
    QStringList out;
    for (int i = 0; i < lines; ++i)
        out << QString("%1 rule %2: keep going and use the tools well.").arg(who).arg(i + 1);
    return out.join('\n');
}

class AgentRecorder {
public:
    // In memory, or in the SQLite file `path` (the benchmark measures what is on disk).
    explicit AgentRecorder(const QString &path = {}) {
        FlowStoreOptions options;
        options.inMemory = path.isEmpty();
        options.path = path;
        options.batchIntervalMs = 10;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        if (!m_store->open(&error))
            qFatal("store: %s", qPrintable(error));
        m_store->attach(&m_bus);
    }

    FlowStore *store() const { return m_store.get(); }
    EventBus &bus() { return m_bus; }

    // One pass-through exchange, answered with `reply` (JSON, not streamed); `replayOf` as a
    // control-API replay of that flow says it.
    void exchange(const QString &id, const QString &path, const QJsonObject &headers,
                  const QJsonObject &body, const QJsonObject &reply, const QString &replayOf = {}) {
        QJsonObject data{{"method", "POST"}, {"path", path}, {"headers", headers}};
        if (!replayOf.isEmpty())
            data.insert("replayOf", replayOf);
        InspectorEvent request = InspectorEvent::make(Kind::ClientRequest, id, -1, data);
        request.raw = compact(body);
        m_bus.publish(request);
        InspectorEvent up = InspectorEvent::make(Kind::UpstreamRequest, id, 0,
                                                 {{"url", QString("http://127.0.0.1:9" + path)},
                                                  {"method", "POST"},
                                                  {"passThrough", true}});
        up.raw = compact(body);
        m_bus.publish(up);
        m_bus.publish(Kind::UpstreamResponse, id, 0,
                      {{"status", 200}, {"latencyMs", 80.0}, {"stream", false}});
        InspectorEvent response =
            InspectorEvent::make(Kind::ClientResponse, id, -1,
                                 {{"status", 200},
                                  {"stream", false},
                                  {"headers", QJsonObject{{"content-type", "application/json"}}}});
        response.raw = compact(reply);
        m_bus.publish(response);
        m_bus.publish(
            Kind::ExchangeFinished, id, -1,
            {{"status", 200}, {"durationMs", 600.0}, {"ttfbMs", 100.0}, {"overheadMs", 1.0}});
        m_ids << id;
    }

    QList<QJsonObject> flows() {
        m_store->flush();
        return m_store->query()->flows(m_ids, {});
    }
    QStringList ids() const { return m_ids; }

    // Codex CLI: `codex exec "list the files"` → exec_command ls → the answer.
    QList<QJsonObject> codexRun(const QString &prefix = "codex",
                                const QString &answer = "There are two files.",
                                int answerTokens = 12) {
        const QJsonObject headers{{"content-type", "application/json"},
                                  {"originator", "codex_exec"},
                                  {"user-agent", "codex_exec/0.169.0 (Debian 13; x86_64)"},
                                  {"session-id", QString(prefix + "-session")}};
        const QJsonArray tools{QJsonObject{
            {"type", "function"},
            {"name", "exec_command"},
            {"parameters", QJsonObject{{"type", "object"}}},
        }};
        QJsonArray input{
            QJsonObject{
                {"type", "message"},
                {"role", "user"},
                {"content", QJsonArray{QJsonObject{
                                {"type", "input_text"},
                                {"text", "<environment_context>cwd=/w</environment_context>"}}}}},
            QJsonObject{{"type", "message"},
                        {"role", "user"},
                        {"content", QJsonArray{QJsonObject{{"type", "input_text"},
                                                           {"text", "list the files"}}}}}};
        auto body = [&] {
            return QJsonObject{{"model", "gpt-5"},
                               {"instructions", longPrompt("Codex", 120)},
                               {"input", input},
                               {"tools", tools},
                               {"stream", false}};
        };
        const QJsonObject reasoning{
            {"type", "reasoning"},
            {"id", "rs_1"},
            {"summary",
             QJsonArray{QJsonObject{{"type", "summary_text"}, {"text", "I should run ls."}}}}};
        const QJsonObject call{{"type", "function_call"},
                               {"call_id", "call_1"},
                               {"name", "exec_command"},
                               {"arguments", "{\"cmd\":[\"bash\",\"-lc\",\"ls\"]}"}};
        exchange(prefix + "_1", "/v1/responses", headers, body(),
                 {{"id", "resp_1"},
                  {"object", "response"},
                  {"status", "completed"},
                  {"model", "gpt-5"},
                  {"output", QJsonArray{reasoning, call}},
                  {"usage", QJsonObject{{"input_tokens", 3000},
                                        {"input_tokens_details", QJsonObject{{"cached_tokens", 0}}},
                                        {"output_tokens", 40},
                                        {"total_tokens", 3040}}}});
        input << reasoning << call
              << QJsonObject{{"type", "function_call_output"},
                             {"call_id", "call_1"},
                             {"output", "a.txt\nb.txt"}};
        const QJsonObject message{
            {"type", "message"},
            {"role", "assistant"},
            {"content", QJsonArray{QJsonObject{{"type", "output_text"}, {"text", answer}}}}};
        exchange(
            prefix + "_2", "/v1/responses", headers, body(),
            {{"id", "resp_2"},
             {"object", "response"},
             {"status", "completed"},
             {"model", "gpt-5"},
             {"output", QJsonArray{message}},
             {"usage", QJsonObject{{"input_tokens", 3100},
                                   {"input_tokens_details", QJsonObject{{"cached_tokens", 2900}}},
                                   {"output_tokens", answerTokens},
                                   {"total_tokens", 3100 + answerTokens}}}});
        return flows();
    }

    // Claude Code: "fix the bug" → Bash cat → Read → "Fixed."; a title request in between.
    QList<QJsonObject> claudeRun() {
        const QJsonObject headers{{"content-type", "application/json"},
                                  {"user-agent", "claude-cli/2.1.0 (external, cli)"},
                                  {"x-claude-code-session-id", "claude-session"}};
        const QJsonArray system{QJsonObject{{"type", "text"}, {"text", "You are Claude Code."}},
                                QJsonObject{{"type", "text"},
                                            {"text", longPrompt("Claude", 80)},
                                            {"cache_control", QJsonObject{{"type", "ephemeral"}}}}};
        const QJsonArray tools{
            QJsonObject{{"name", "Bash"}, {"input_schema", QJsonObject{{"type", "object"}}}},
            QJsonObject{{"name", "Read"}, {"input_schema", QJsonObject{{"type", "object"}}}}};
        QJsonArray messages{QJsonObject{{"role", "user"}, {"content", "fix the bug"}}};
        auto body = [&] {
            return QJsonObject{{"model", "claude-sonnet-4-5"},
                               {"max_tokens", 32000},
                               {"system", system},
                               {"tools", tools},
                               {"messages", messages}};
        };
        auto reply = [](const QString &id, const QJsonArray &content, const QString &stop,
                        const QJsonObject &usage) {
            return QJsonObject{{"id", id},
                               {"type", "message"},
                               {"role", "assistant"},
                               {"model", "claude-sonnet-4-5"},
                               {"content", content},
                               {"stop_reason", stop},
                               {"usage", usage}};
        };
        auto usage = [](int in, int out, int read, int write) {
            return QJsonObject{{"input_tokens", in},
                               {"output_tokens", out},
                               {"cache_read_input_tokens", read},
                               {"cache_creation_input_tokens", write}};
        };
        const QJsonArray turn1{
            QJsonObject{{"type", "thinking"}, {"thinking", "Let me look."}, {"signature", "sig"}},
            QJsonObject{{"type", "tool_use"},
                        {"id", "toolu_1"},
                        {"name", "Bash"},
                        {"input", QJsonObject{{"command", "cat main.py"}}}}};
        exchange("claude_1", "/v1/messages", headers, body(),
                 reply("msg_1", turn1, "tool_use", usage(12, 40, 0, 5000)));
        // Claude Code titles the session with a small model, its own prompt, in between.
        exchange(
            "claude_title", "/v1/messages", headers,
            {{"model", "claude-haiku-4-5"},
             {"max_tokens", 512},
             {"system", "Write a 3-word title."},
             {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "fix the bug"}}}}},
            reply("msg_t", {QJsonObject{{"type", "text"}, {"text", "Fix the bug"}}}, "end_turn",
                  usage(20, 4, 0, 0)));
        messages << QJsonObject{{"role", "assistant"}, {"content", turn1}}
                 << QJsonObject{
                        {"role", "user"},
                        {"content", QJsonArray{QJsonObject{
                                        {"type", "tool_result"},
                                        {"tool_use_id", "toolu_1"},
                                        {"content", "print(1/0)"},
                                        {"cache_control", QJsonObject{{"type", "ephemeral"}}}}}}};
        const QJsonArray turn2{QJsonObject{{"type", "tool_use"},
                                           {"id", "toolu_2"},
                                           {"name", "Read"},
                                           {"input", QJsonObject{{"file_path", "/w/main.py"}}}}};
        exchange("claude_2", "/v1/messages", headers, body(),
                 reply("msg_2", turn2, "tool_use", usage(30, 25, 5000, 60)));
        messages << QJsonObject{{"role", "assistant"}, {"content", turn2}}
                 << QJsonObject{{"role", "user"},
                                {"content", QJsonArray{QJsonObject{{"type", "tool_result"},
                                                                   {"tool_use_id", "toolu_2"},
                                                                   {"content", "1\tprint(1/0)"}}}}};
        exchange("claude_3", "/v1/messages", headers, body(),
                 reply("msg_3", {QJsonObject{{"type", "text"}, {"text", "Fixed."}}}, "end_turn",
                       usage(40, 8, 5060, 0)));
        return flows();
    }

private:
    EventBus m_bus;
    std::unique_ptr<FlowStore> m_store;
    QStringList m_ids;
};

} // namespace loopscope::agents
