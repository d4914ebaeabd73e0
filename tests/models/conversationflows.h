#pragma once

// Recorded flows for the conversation model, the diff and their views: a REAL FlowStore (in
// memory) fed the InspectorEvents the proxy and the agentic loop publish (shapes as in
// inspectorevent.h and core/interception: litellm_code_execution calls, function_call_output /
// tool messages fed back, code_interpreter_call items injected), read back with
// FlowQuery::flow — the window's data contract. Include after `#undef QT_NO_CAST_FROM_ASCII`.

#include "inspect/eventbus.h"
#include "record/flowstore.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <memory>

namespace loopscope::convo {

using Kind = InspectorEvent::Kind;

inline QByteArray compact(const QJsonObject &o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

inline QByteArray sse(const QString &type, const QJsonObject &data) {
    QJsonObject d = data;
    d.insert("type", type);
    return "event: " + type.toUtf8() + "\ndata: " + compact(d) + "\n\n";
}

inline QByteArray chatChunk(const QJsonObject &data) {
    return "data: " + compact(data) + "\n\n";
}

inline QJsonObject userMessage(const QString &text) {
    return {{"type", "message"}, {"role", "user"}, {"content", text}};
}

inline QJsonObject codeCall(const QString &callId, const QString &code) {
    return {{"type", "function_call"},
            {"call_id", callId},
            {"name", "litellm_code_execution"},
            {"arguments", QString::fromUtf8(compact({{"code", code}}))}};
}

inline QJsonObject callOutput(const QString &callId, const QString &output) {
    return {{"type", "function_call_output"}, {"call_id", callId}, {"output", output}};
}

inline QJsonObject assistantText(const QString &text) {
    return {{"type", "message"},
            {"role", "assistant"},
            {"content", QJsonArray{QJsonObject{{"type", "output_text"}, {"text", text}}}}};
}

inline QJsonObject ciItem(const QString &code, const QString &logs) {
    return {{"id", "ci_1"},
            {"type", "code_interpreter_call"},
            {"status", "completed"},
            {"code", code},
            {"container_id", "cntr_1"},
            {"outputs", QJsonArray{QJsonObject{{"type", "logs"}, {"logs", logs}}}}};
}

inline QJsonObject response(const QString &id, const QJsonArray &output) {
    return {
        {"id", id},
        {"object", "response"},
        {"status", "completed"},
        {"output", output},
        {"usage", QJsonObject{{"input_tokens", 50}, {"output_tokens", 10}, {"total_tokens", 60}}}};
}

inline QJsonObject chatCompletion(const QJsonObject &message) {
    return {{"id", "chatcmpl_1"},
            {"object", "chat.completion"},
            {"choices", QJsonArray{QJsonObject{
                            {"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
            {"usage",
             QJsonObject{{"prompt_tokens", 40}, {"completion_tokens", 8}, {"total_tokens", 48}}}};
}

inline QJsonObject chatToolCall(const QString &id, const QString &name, const QString &arguments) {
    return {{"id", id},
            {"type", "function"},
            {"function", QJsonObject{{"name", name}, {"arguments", arguments}}}};
}

// One store for a test: publish a scenario, then flow(id).
class Recorder {
public:
    Recorder() {
        FlowStoreOptions options;
        options.inMemory = true;
        options.batchIntervalMs = 10;
        m_store = std::make_unique<FlowStore>(options);
        QString error;
        if (!m_store->open(&error))
            qFatal("store: %s", qPrintable(error));
        m_store->attach(&m_bus);
    }

    EventBus &bus() { return m_bus; }
    FlowStore *store() const { return m_store.get(); }

    QJsonObject flow(const QString &id) {
        m_store->flush();
        return m_store->query()->flow(id).value_or(QJsonObject());
    }

    void clientRequest(const QString &id, const QString &path, const QJsonObject &body) {
        InspectorEvent e =
            InspectorEvent::make(Kind::ClientRequest, id, -1,
                                 {{"method", "POST"},
                                  {"path", path},
                                  {"headers", QJsonObject{{"content-type", "application/json"}}}});
        e.raw = compact(body);
        m_bus.publish(e);
    }
    void loopStarted(const QString &id, const QString &api, const QString &model, bool stream) {
        m_bus.publish(Kind::RequestStarted, id, -1,
                      {{"api", api}, {"model", model}, {"stream", stream}, {"intercepted", true}});
    }
    void upstreamCall(const QString &id, int iteration, const QJsonObject &request,
                      const QJsonValue &reply, int status = 200) {
        QJsonObject data{{"request", request},
                         {"status", status},
                         {"latencyMs", 120.0},
                         {"url", "http://127.0.0.1:9/v1/responses"}};
        if (reply.isObject()) {
            data.insert("response", reply);
            data.insert("usage", reply.toObject().value("usage"));
        } else {
            data.insert("error", reply);
        }
        m_bus.publish(Kind::UpstreamCall, id, iteration, data);
    }
    void codeRun(const QString &id, int iteration, const QString &callId, const QString &code,
                 const QString &stdoutText, const QString &output, const QJsonValue &error = {}) {
        QJsonObject data{{"callId", callId},        {"code", code},
                         {"stdout", stdoutText},    {"stderr", ""},
                         {"output", output},        {"durationMs", 20.0},
                         {"containerId", "cntr_1"}, {"truncated", false},
                         {"timedOut", false}};
        if (error.isObject())
            data.insert("error", error);
        m_bus.publish(Kind::CodeExecuted, id, iteration, data);
    }
    void loopFinished(const QString &id, int iterations, const QJsonObject &finalBody) {
        m_bus.publish(Kind::RequestFinished, id, -1,
                      {{"status", 200},
                       {"iterations", iterations},
                       {"durationMs", 500},
                       {"response", finalBody}});
    }
    void clientResponse(const QString &id, int status, const QJsonObject &body) {
        InspectorEvent e =
            InspectorEvent::make(Kind::ClientResponse, id, -1,
                                 {{"status", status},
                                  {"stream", false},
                                  {"headers", QJsonObject{{"content-type", "application/json"}}}});
        e.raw = compact(body);
        m_bus.publish(e);
    }
    void clientStream(const QString &id, const QList<QByteArray> &chunks) {
        m_bus.publish(Kind::ClientResponse, id, -1,
                      {{"status", 200},
                       {"stream", true},
                       {"headers", QJsonObject{{"content-type", "text/event-stream"}}}});
        for (const QByteArray &chunk : chunks) {
            InspectorEvent e = InspectorEvent::make(Kind::ClientResponseChunk, id, -1, {});
            e.raw = chunk;
            m_bus.publish(e);
        }
    }
    void passThroughUpstream(const QString &id, const QJsonObject &body, bool stream) {
        InspectorEvent up = InspectorEvent::make(
            Kind::UpstreamRequest, id, 0,
            {{"url", "http://127.0.0.1:9/v1"}, {"method", "POST"}, {"passThrough", true}});
        up.raw = compact(body);
        m_bus.publish(up);
        m_bus.publish(Kind::UpstreamResponse, id, 0,
                      {{"status", 200}, {"latencyMs", 80.0}, {"stream", stream}});
    }
    void exchangeFinished(const QString &id, int status) {
        m_bus.publish(
            Kind::ExchangeFinished, id, -1,
            {{"status", status}, {"durationMs", 600.0}, {"ttfbMs", 100.0}, {"overheadMs", 1.0}});
    }

    // --- scenarios -------------------------------------------------------------------------

    // Responses, intercepted: the model writes code, Loopscope runs it, feeds "42\n" back,
    // the model answers; the client gets the code_interpreter_call item plus the answer.
    QJsonObject responsesLoop(const QString &id = "req_loop", bool streamed = false) {
        const QString code = "x = 6 * 7\nprint(x)";
        const QJsonObject tool{{"type", "function"}, {"name", "litellm_code_execution"}};
        const QJsonObject client{{"model", "gpt-test"},
                                 {"instructions", "Use python."},
                                 {"input", "What is 6*7?"},
                                 {"stream", streamed},
                                 {"tools", QJsonArray{QJsonObject{{"type", "code_interpreter"}}}}};
        clientRequest(id, "/v1/responses", client);
        loopStarted(id, "responses", "gpt-test", streamed);
        upstreamCall(id, 0,
                     {{"model", "gpt-test"},
                      {"instructions", "Use python."},
                      {"input", QJsonArray{userMessage("What is 6*7?")}},
                      {"tools", QJsonArray{tool}}},
                     response("resp_0", {codeCall("call_1", code)}));
        codeRun(id, 0, "call_1", code, "42\n", "42\n");
        upstreamCall(id, 1,
                     {{"model", "gpt-test"},
                      {"instructions", "Use python."},
                      {"input", QJsonArray{userMessage("What is 6*7?"), codeCall("call_1", code),
                                           callOutput("call_1", "42\n")}},
                      {"tools", QJsonArray{tool}}},
                     response("resp_1", {assistantText("6*7 = 42")}));
        const QJsonObject final =
            response("resp_1", {ciItem(code, "42\n"), assistantText("6*7 = 42")});
        loopFinished(id, 2, final);
        if (streamed) {
            QJsonObject created = final;
            created.insert("output", QJsonArray());
            created.insert("status", "in_progress");
            clientStream(id, {sse("response.created", {{"response", created}}),
                              sse("response.output_item.done",
                                  {{"output_index", 0}, {"item", ciItem(code, "42\n")}}),
                              sse("response.output_text.delta", {{"delta", "6*7 = "}}),
                              sse("response.output_text.delta", {{"delta", "42"}}),
                              sse("response.completed", {{"response", final}})});
        } else {
            clientResponse(id, 200, final);
        }
        exchangeFinished(id, 200);
        return flow(id);
    }

    // Chat Completions, intercepted: assistant tool_calls → tool message → answer.
    QJsonObject chatLoop(const QString &id = "req_chat") {
        const QString code = "import math\nprint(math.factorial(5))";
        const QString args = QString::fromUtf8(compact({{"code", code}}));
        const QJsonArray tools{QJsonObject{
            {"type", "function"}, {"function", QJsonObject{{"name", "litellm_code_execution"}}}}};
        const QJsonObject system{{"role", "system"}, {"content", "You run code."}};
        const QJsonObject user{{"role", "user"}, {"content", "5! ?"}};
        clientRequest(id, "/v1/chat/completions",
                      {{"model", "gpt-test"}, {"messages", QJsonArray{system, user}}});
        loopStarted(id, "chat_completions", "gpt-test", false);
        const QJsonObject asked{
            {"role", "assistant"},
            {"content", QJsonValue::Null},
            {"tool_calls", QJsonArray{chatToolCall("call_c1", "litellm_code_execution", args)}}};
        upstreamCall(
            id, 0,
            {{"model", "gpt-test"}, {"messages", QJsonArray{system, user}}, {"tools", tools}},
            chatCompletion(asked));
        codeRun(id, 0, "call_c1", code, "120\n", "120\n");
        const QJsonObject toolMessage{
            {"role", "tool"}, {"tool_call_id", "call_c1"}, {"content", "120\n"}};
        const QJsonObject answer{{"role", "assistant"}, {"content", "5! = 120"}};
        upstreamCall(id, 1,
                     {{"model", "gpt-test"},
                      {"messages", QJsonArray{system, user, asked, toolMessage}},
                      {"tools", tools}},
                     chatCompletion(answer));
        loopFinished(id, 2, chatCompletion(answer));
        clientResponse(id, 200, chatCompletion(answer));
        exchangeFinished(id, 200);
        return flow(id);
    }

    // Responses, intercepted, the model calls a function the CLIENT runs: the loop ends there.
    QJsonObject clientFunctionCall(const QString &id = "req_fn") {
        const QJsonObject fn{{"type", "function_call"},
                             {"call_id", "call_w"},
                             {"name", "get_weather"},
                             {"arguments", "{\"city\":\"Paris\",\"unit\":\"C\"}"}};
        const QJsonObject client{{"model", "gpt-test"}, {"input", "Weather in Paris?"}};
        clientRequest(id, "/v1/responses", client);
        loopStarted(id, "responses", "gpt-test", false);
        upstreamCall(
            id, 0, {{"model", "gpt-test"}, {"input", QJsonArray{userMessage("Weather in Paris?")}}},
            response("resp_fn", {fn}));
        loopFinished(id, 1, response("resp_fn", {fn}));
        clientResponse(id, 200, response("resp_fn", {fn}));
        exchangeFinished(id, 200);
        return flow(id);
    }

    // Pass-through (not intercepted) Responses call, one exchange.
    QJsonObject passThrough(const QString &id = "req_pass") {
        const QJsonObject body{{"model", "gpt-test"}, {"input", "Say hi"}};
        clientRequest(id, "/v1/responses", body);
        passThroughUpstream(id, body, false);
        clientResponse(id, 200, response("resp_p", {assistantText("hi")}));
        exchangeFinished(id, 200);
        return flow(id);
    }

    // Pass-through streamed Chat Completions with a streamed tool call split over chunks.
    QJsonObject passThroughChatStream(const QString &id = "req_pstream") {
        const QJsonObject body{
            {"model", "gpt-test"},
            {"stream", true},
            {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "Hi"}}}}};
        clientRequest(id, "/v1/chat/completions", body);
        passThroughUpstream(id, body, true);
        auto delta = [](const QJsonObject &d) {
            return chatChunk({{"id", "c1"},
                              {"object", "chat.completion.chunk"},
                              {"choices", QJsonArray{QJsonObject{{"index", 0}, {"delta", d}}}}});
        };
        const QJsonObject call1{
            {"index", 0},
            {"id", "call_s"},
            {"type", "function"},
            {"function", QJsonObject{{"name", "lookup"}, {"arguments", "{\"q\":"}}}};
        const QJsonObject call2{{"index", 0},
                                {"function", QJsonObject{{"arguments", "\"cats\"}"}}}};
        clientStream(id,
                     {delta({{"role", "assistant"}, {"content", "Hello"}}),
                      delta({{"content", " there"}}), delta({{"tool_calls", QJsonArray{call1}}}),
                      delta({{"tool_calls", QJsonArray{call2}}}), "data: [DONE]\n\n"});
        exchangeFinished(id, 200);
        return flow(id);
    }

    // Claude Code through the pass-through: a Messages request with a cached system prompt,
    // a tool_use turn and its tool_result, answered by the vendor's streamed thinking + text +
    // tool_use sample (tests/fixtures/dialects), split into uneven chunks as a socket splits it.
    QJsonObject passThroughMessagesStream(const QString &id = "req_claude") {
        const QJsonObject body{
            {"model", "claude-sonnet-4-5"},
            {"max_tokens", 32000},
            {"stream", true},
            {"system",
             QJsonArray{QJsonObject{{"type", "text"}, {"text", "You are Claude Code."}},
                        QJsonObject{{"type", "text"},
                                    {"text", "Use the tools."},
                                    {"cache_control", QJsonObject{{"type", "ephemeral"}}}}}},
            {"messages",
             QJsonArray{
                 QJsonObject{{"role", "user"}, {"content", "What is the weather?"}},
                 QJsonObject{{"role", "assistant"},
                             {"content", QJsonArray{QJsonObject{
                                             {"type", "tool_use"},
                                             {"id", "toolu_a"},
                                             {"name", "Bash"},
                                             {"input", QJsonObject{{"command", "date"}}}}}}},
                 QJsonObject{
                     {"role", "user"},
                     {"content", QJsonArray{QJsonObject{
                                     {"type", "tool_result"},
                                     {"tool_use_id", "toolu_a"},
                                     {"content", QJsonArray{QJsonObject{{"type", "text"},
                                                                        {"text", "Thu Dec  4"}}}},
                                     {"cache_control", QJsonObject{{"type", "ephemeral"}}}}}}}}}};
        clientRequest(id, "/v1/messages", body);
        passThroughUpstream(id, body, true);
        QFile sample(qEnvironmentVariable("LOOPSCOPE_SOURCE_DIR") +
                     "/tests/fixtures/dialects/messages-thinking-tool-use.sse");
        if (!sample.open(QIODevice::ReadOnly))
            qFatal("cannot read the Messages sample stream");
        const QByteArray bytes = sample.readAll();
        QList<QByteArray> chunks;
        for (qsizetype at = 0; at < bytes.size(); at += 97)
            chunks << bytes.mid(at, 97);
        clientStream(id, chunks);
        exchangeFinished(id, 200);
        return flow(id);
    }

    // The upstream failed (HTTP 500 with an OpenAI error body); the client got a 502.
    QJsonObject upstreamError(const QString &id = "req_err") {
        clientRequest(id, "/v1/responses", {{"model", "gpt-test"}, {"input", "boom"}});
        loopStarted(id, "responses", "gpt-test", false);
        upstreamCall(id, 0, {{"model", "gpt-test"}, {"input", QJsonArray{userMessage("boom")}}},
                     QJsonObject{{"error", QJsonObject{{"message", "upstream exploded"},
                                                       {"type", "server_error"}}}},
                     500);
        m_bus.publish(Kind::RequestFailed, id, -1,
                      {{"status", 502}, {"message", "upstream exploded"}, {"iterations", 1}});
        clientResponse(id, 502,
                       {{"error", QJsonObject{{"message", "Upstream error: upstream exploded"},
                                              {"type", "upstream_error"}}}});
        exchangeFinished(id, 502);
        return flow(id);
    }

    // The model answered with nothing (empty output) and arguments that are not JSON in
    // another call of the same flow.
    QJsonObject oddReplies(const QString &id = "req_odd") {
        clientRequest(id, "/v1/responses", {{"model", "gpt-test"}, {"input", "odd"}});
        loopStarted(id, "responses", "gpt-test", false);
        const QJsonObject broken{{"type", "function_call"},
                                 {"call_id", "call_b"},
                                 {"name", "get_weather"},
                                 {"arguments", "{city: Paris"}};
        upstreamCall(id, 0, {{"model", "gpt-test"}, {"input", QJsonArray{userMessage("odd")}}},
                     response("resp_e", {}));
        upstreamCall(id, 1, {{"model", "gpt-test"}, {"input", QJsonArray{userMessage("odd")}}},
                     response("resp_b", {broken}));
        loopFinished(id, 2, response("resp_b", {broken}));
        clientResponse(id, 200, response("resp_b", {broken}));
        exchangeFinished(id, 200);
        return flow(id);
    }

    // Rejected before any model call (bad key): no iteration, only the error the client got.
    QJsonObject rejected(const QString &id = "req_401") {
        clientRequest(id, "/v1/responses", {{"model", "gpt-test"}, {"input", "hi"}});
        clientResponse(id, 401,
                       {{"error", QJsonObject{{"message", "Invalid API key"},
                                              {"type", "invalid_request_error"}}}});
        exchangeFinished(id, 401);
        return flow(id);
    }

private:
    EventBus m_bus;
    std::unique_ptr<FlowStore> m_store;
};

} // namespace loopscope::convo
