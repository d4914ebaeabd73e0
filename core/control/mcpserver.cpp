#include "control/mcpserver.h"

#include "common/futurechain.h"
#include "control/controlapi.h"
#include "http/responsesink.h"
#include "record/flowquery.h"
#include "record/flowstore.h"
#include "sandbox/sandboxregistry.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonDocument>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <memory>

namespace loopscope {

namespace {

QString S(const char *text) {
    return QString::fromLatin1(text);
}

// Newest first; an older client's version is echoed when we speak it too.
const QStringList kProtocolVersions{S("2025-11-25"), S("2025-06-18"), S("2025-03-26"),
                                    S("2024-11-05")};
const QString kBreakpointsMissing = S("breakpoints are not available in this build");
constexpr int kTextLimit = 2000; // characters per block of a transcript

using ToolText = McpToolText;

QJsonObject rpcResult(const QJsonValue &id, const QJsonObject &result) {
    return {{S("jsonrpc"), S("2.0")}, {S("id"), id}, {S("result"), result}};
}

QJsonObject rpcError(const QJsonValue &id, int code, const QString &message) {
    return {{S("jsonrpc"), S("2.0")},
            {S("id"), id},
            {S("error"), QJsonObject{{S("code"), code}, {S("message"), message}}}};
}

QJsonObject toolResult(const ToolText &t) {
    return {{S("content"), QJsonArray{QJsonObject{{S("type"), S("text")}, {S("text"), t.text}}}},
            {S("isError"), t.isError}};
}

QString clip(QString text, int limit = kTextLimit) {
    text = text.trimmed();
    if (text.size() > limit)
        return text.left(limit) + S(" …[%1 more characters]").arg(text.size() - limit);
    return text;
}

QString indent(const QString &text) {
    QString out = text;
    out.replace(u'\n', S("\n    "));
    return S("    ") + out;
}

QString compactJson(const QJsonValue &v) {
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    if (v.isArray())
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    if (v.isString())
        return v.toString();
    if (v.isDouble())
        return QString::number(v.toDouble());
    if (v.isBool())
        return v.toBool() ? S("true") : S("false");
    return {};
}

// The text of a message "content": a string, or parts with "text".
QString contentText(const QJsonValue &content) {
    if (content.isString())
        return content.toString();
    QStringList parts;
    for (const QJsonValue &p : content.toArray()) {
        const QJsonObject part = p.toObject();
        if (part.contains(S("text")))
            parts << part.value(S("text")).toString();
        else if (part.contains(S("refusal")))
            parts << S("[refusal] ") + part.value(S("refusal")).toString();
        else if (!part.value(S("type")).toString().isEmpty())
            parts << S("[%1]").arg(part.value(S("type")).toString());
    }
    return parts.join(u'\n');
}

// The code inside a tool call's arguments ({"code": "..."} or a bare string).
QString argumentsText(const QString &arguments) {
    const QJsonDocument doc = QJsonDocument::fromJson(arguments.toUtf8());
    if (doc.isObject() && doc.object().value(S("code")).isString())
        return doc.object().value(S("code")).toString();
    return arguments;
}

// What the client sent: instructions, input or messages, tool names.
QStringList describeClientRequest(const QJsonObject &hop) {
    QStringList lines;
    lines << S("[client request] %1 %2")
                 .arg(hop.value(S("method")).toString(), hop.value(S("path")).toString());
    const QJsonObject body = hop.value(S("body")).toObject();
    if (body.isEmpty()) {
        const QString raw = compactJson(hop.value(S("body")));
        if (!raw.isEmpty())
            lines << indent(clip(raw));
        return lines;
    }
    if (body.value(S("instructions")).isString())
        lines << S("  instructions:") << indent(clip(body.value(S("instructions")).toString()));
    const QJsonValue input =
        body.contains(S("input")) ? body.value(S("input")) : body.value(S("messages"));
    if (input.isString()) {
        lines << S("  user:") << indent(clip(input.toString()));
    } else {
        const QJsonArray items = input.toArray();
        // The last few items tell what this turn is about; earlier ones are history.
        const qsizetype from = std::max<qsizetype>(0, items.size() - 6);
        if (from > 0)
            lines << S("  (%1 earlier input items not shown)").arg(from);
        for (qsizetype i = from; i < items.size(); ++i) {
            const QJsonObject item = items.at(i).toObject();
            const QString type = item.value(S("type")).toString();
            if (item.contains(S("role")))
                lines << S("  %1:").arg(item.value(S("role")).toString())
                      << indent(clip(contentText(item.value(S("content"))), 800));
            else if (type == S("function_call_output"))
                lines
                    << S("  function output (call_id %1):").arg(item.value(S("call_id")).toString())
                    << indent(clip(compactJson(item.value(S("output"))), 800));
            else if (!type.isEmpty())
                lines << S("  [%1]").arg(type);
        }
    }
    QStringList tools;
    for (const QJsonValue &t : body.value(S("tools")).toArray()) {
        const QJsonObject tool = t.toObject();
        QString name = tool.value(S("name")).toString();
        if (name.isEmpty())
            name = tool.value(S("function")).toObject().value(S("name")).toString();
        tools << (name.isEmpty() ? tool.value(S("type")).toString() : name);
    }
    if (!tools.isEmpty())
        lines << S("  tools: %1").arg(tools.join(S(", ")));
    return lines;
}

// A Responses or Chat Completions response body: text, tool calls, code.
QStringList describeModelOutput(QJsonObject body, const QJsonArray &events) {
    if (body.isEmpty()) {
        // Streamed: the final event carries the whole response.
        for (const QJsonValue &e : events) {
            const QJsonObject data = e.toObject().value(S("data")).toObject();
            if (data.value(S("response")).isObject())
                body = data.value(S("response")).toObject();
        }
    }
    QStringList lines;
    for (const QJsonValue &o : body.value(S("output")).toArray()) {
        const QJsonObject item = o.toObject();
        const QString type = item.value(S("type")).toString();
        if (type == S("message"))
            lines << S("  assistant says:") << indent(clip(contentText(item.value(S("content")))));
        else if (type == S("function_call"))
            lines << S("  model calls %1 (call_id %2):")
                         .arg(item.value(S("name")).toString(), item.value(S("call_id")).toString())
                  << indent(clip(argumentsText(item.value(S("arguments")).toString())));
        else if (type == S("code_interpreter_call"))
            lines << S("  model runs code (%1):").arg(item.value(S("id")).toString())
                  << indent(clip(item.value(S("code")).toString()));
        else if (type == S("reasoning"))
            lines << S("  [reasoning]");
        else if (!type.isEmpty())
            lines << S("  [%1]").arg(type);
    }
    for (const QJsonValue &c : body.value(S("choices")).toArray()) {
        const QJsonObject message = c.toObject().value(S("message")).toObject();
        const QString text = contentText(message.value(S("content")));
        if (!text.isEmpty())
            lines << S("  assistant says:") << indent(clip(text));
        for (const QJsonValue &t : message.value(S("tool_calls")).toArray()) {
            const QJsonObject call = t.toObject();
            const QJsonObject fn = call.value(S("function")).toObject();
            lines << S("  model calls %1 (call_id %2):")
                         .arg(fn.value(S("name")).toString(), call.value(S("id")).toString())
                  << indent(clip(argumentsText(fn.value(S("arguments")).toString())));
        }
    }
    if (body.value(S("error")).isObject())
        lines << S("  error: %1")
                     .arg(body.value(S("error")).toObject().value(S("message")).toString());
    return lines;
}

QString usageText(const QJsonObject &usage) {
    if (usage.isEmpty())
        return {};
    const int in = usage.value(S("input_tokens")).toInt(usage.value(S("prompt_tokens")).toInt());
    const int out =
        usage.value(S("output_tokens")).toInt(usage.value(S("completion_tokens")).toInt());
    return S("tokens in %1 / out %2").arg(in).arg(out);
}

QString ms(const QJsonValue &v) {
    return S("%1 ms").arg(qRound(v.toDouble()));
}

QString when(const QJsonValue &epochMs) {
    return QDateTime::fromMSecsSinceEpoch(qint64(epochMs.toDouble()), Qt::UTC)
        .toString(Qt::ISODate);
}

QJsonObject schema(const QJsonObject &properties, const QStringList &required = {}) {
    QJsonObject s{{S("type"), S("object")},
                  {S("properties"), properties},
                  {S("additionalProperties"), false}};
    if (!required.isEmpty())
        s.insert(S("required"), QJsonArray::fromStringList(required));
    return s;
}

QJsonObject prop(const char *type, const QString &description) {
    return {{S("type"), S(type)}, {S("description"), description}};
}

QJsonObject limitProp() {
    return {{S("type"), S("integer")},
            {S("minimum"), 1},
            {S("maximum"), 1000},
            {S("description"), S("How many to return, newest first (default 20).")}};
}

QJsonObject tool(const char *name, const QString &description, const QJsonObject &inputSchema,
                 bool readOnly) {
    return {{S("name"), S(name)},
            {S("description"), description},
            {S("inputSchema"), inputSchema},
            {S("annotations"), QJsonObject{{S("readOnlyHint"), readOnly}}}};
}

// limit within 1..1000, default `fallback`; nullopt when present but invalid.
std::optional<int> limitArg(const QJsonObject &args, int fallback) {
    if (!args.contains(S("limit")))
        return fallback;
    const QJsonValue v = args.value(S("limit"));
    const double d = v.toDouble(-1);
    if (!v.isDouble() || d != double(int(d)) || d < 1 || d > 1000)
        return std::nullopt;
    return int(d);
}

QString renderFlowList(const QJsonObject &list, const QString &heading) {
    const QJsonArray data = list.value(S("data")).toArray();
    if (data.isEmpty())
        return heading + S(": none.");
    QStringList lines{S("%1 (%2, newest first):").arg(heading).arg(data.size())};
    for (const QJsonValue &f : data)
        lines << S("- ") + McpServer::renderFlowLine(f.toObject());
    if (list.value(S("has_more")).toBool())
        lines << S("(more exist: raise limit to see them)");
    lines << S("Read one with get_flow {\"flow_id\": \"req_…\"}.");
    return lines.join(u'\n');
}

QString sandboxLine(const QJsonObject &s) {
    QString line = S("%1  backend %2, %3, %4 runs, created %5")
                       .arg(s.value(S("id")).toString(), s.value(S("backend")).toString(),
                            s.value(S("ephemeral")).toBool() ? S("ephemeral") : S("session-scoped"))
                       .arg(s.value(S("runs")).toInt())
                       .arg(when(s.value(S("created_at"))));
    if (!s.value(S("session_id")).toString().isEmpty())
        line += S(", session %1").arg(s.value(S("session_id")).toString());
    return line;
}

} // namespace

McpServer::McpServer(ControlApi *api, QObject *parent)
    : QObject(parent)
    , m_api(api) {
    m_pool.setMaxThreadCount(1);
    m_pool.setExpiryTimeout(-1); // FlowQuery keeps a read connection per thread
    m_pool.setObjectName(S("loopscope-mcp"));
}

McpServer::~McpServer() {
    m_pool.waitForDone();
}

bool McpServer::matches(const QString &path) {
    return path == QLatin1String("/loopscope/mcp");
}

struct McpServer::ToolCall {
    QString name;
    QJsonObject args;
    const FlowQuery *flows = nullptr; // null for a tool that does not read the store
    int limit = 20;                   // the validated "limit" argument
    std::function<void(const ToolText &)> answer;
    std::function<void(const QString &)> fail; // answer() with isError
};

// Every tool once: its descriptor (tools/list) and its handler (tools/call) side by side, so
// the two cannot drift apart.
const QList<McpServer::Tool> &McpServer::toolTable() {
    static const QJsonObject flowId =
        prop("string", S("A flow id, e.g. req_0123abcd (from list_flows or search_flows)."));
    static const QList<Tool> table{
        {tool("list_flows",
              S("List recent flows (one HTTP exchange between the agent and Loopscope each), "
                "newest first: id, path, model, state, status, iterations, code runs, tokens."),
              schema(
                  {{S("limit"), limitProp()},
                   {S("state"), QJsonObject{{S("type"), S("string")},
                                            {S("enum"), QJsonArray{S("running"), S("paused"),
                                                                   S("completed"), S("failed")}}}},
                   {S("run_id"), prop("string", S("Only flows of this agent run (run_…)."))}}),
              true),
         &McpServer::listFlows, true},
        {tool("get_flow",
              S("Read one flow as a transcript: the client's request, each model call, each code "
                "run with its code, stdout/stderr and the output fed back, and the final answer."),
              schema({{S("flow_id"), flowId}}, {S("flow_id")}), true),
         &McpServer::getFlow, true},
        {tool("search_flows",
              S("Full-text search over flows (paths, models, ids, request/response bodies, code, "
                "stdout, stderr, fed-back output); newest first."),
              schema({{S("query"), prop("string", S("Words to find, e.g. ZeroDivisionError."))},
                      {S("limit"), limitProp()}},
                     {S("query")}),
              true),
         &McpServer::listFlows, true},
        {tool("list_runs",
              S("List agent runs: flows grouped into one run (session id, previous_response_id "
                "chains, growing chat histories), with tokens, cost, code runs, tool calls."),
              schema({{S("limit"), limitProp()}}), true),
         &McpServer::listRuns, true},
        {tool("list_sandboxes", S("List the live code sandboxes (containers) and their backends."),
              schema({}), true),
         &McpServer::listSandboxes, false},
        {tool("delete_sandbox", S("Delete a live sandbox by its container id (cntr_…)."),
              schema({{S("sandbox_id"), prop("string", S("The container id, e.g. cntr_…"))}},
                     {S("sandbox_id")}),
              false),
         &McpServer::deleteSandbox, false},
        {tool("list_paused",
              S("List agent loops paused at a breakpoint, with what they wait on (code to run, "
                "an upstream request or response)."),
              schema({}), true),
         &McpServer::listPaused, false},
        {tool("resolve_paused",
              S("Resume a paused loop: action continue (optionally with edited code or body), "
                "deny (code only; the model gets the message) or abort."),
              schema({{S("pause_id"), prop("string", S("The pause id (pause_…)."))},
                      {S("action"),
                       QJsonObject{{S("type"), S("string")},
                                   {S("enum"), QJsonArray{S("continue"), S("deny"), S("abort")}}}},
                      {S("code"), prop("string", S("Edited code to run instead (kind code)."))},
                      {S("body"), prop("object", S("Edited JSON body (upstream kinds)."))},
                      {S("message"), prop("string", S("What the model is told on deny."))}},
                     {S("pause_id"), S("action")}),
              false),
         &McpServer::resolvePaused, false},
        {tool("replay_flow",
              S("Send a recorded flow's client request through Loopscope again (optionally with "
                "an edited JSON body); returns the new flow's id."),
              schema({{S("flow_id"), flowId},
                      {S("body"), prop("object", S("An edited client request body."))}},
                     {S("flow_id")}),
              false),
         &McpServer::replayFlow, true},
    };
    return table;
}

QJsonArray McpServer::tools() {
    QJsonArray descriptors;
    for (const Tool &t : toolTable())
        descriptors.append(t.descriptor);
    return descriptors;
}

QString McpServer::renderFlowLine(const QJsonObject &f) {
    QString line = S("%1  %2 %3")
                       .arg(f.value(S("id")).toString(), f.value(S("method")).toString(),
                            f.value(S("path")).toString());
    if (!f.value(S("model")).toString().isEmpty())
        line += S("  model %1").arg(f.value(S("model")).toString());
    line += S("  %1").arg(f.value(S("state")).toString());
    if (f.value(S("status")).isDouble())
        line += S(" (HTTP %1)").arg(f.value(S("status")).toInt());
    if (f.value(S("iterations")).toInt() > 0)
        line += S(", %1 model calls").arg(f.value(S("iterations")).toInt());
    if (f.value(S("code_runs")).toInt() > 0)
        line += S(", %1 code runs (%2 failed)")
                    .arg(f.value(S("code_runs")).toInt())
                    .arg(f.value(S("code_errors")).toInt());
    line += S(", %1").arg(ms(f.value(S("duration_ms"))));
    const QString usage = usageText(f.value(S("usage")).toObject());
    if (!usage.isEmpty() && f.value(S("usage")).toObject().value(S("total_tokens")).toInt() > 0)
        line += S(", ") + usage;
    if (!f.value(S("run_id")).toString().isEmpty())
        line += S(", run %1").arg(f.value(S("run_id")).toString());
    if (!f.value(S("replay_of")).toString().isEmpty())
        line += S(", replay of %1").arg(f.value(S("replay_of")).toString());
    return line;
}

QString McpServer::renderRun(const QJsonObject &r) {
    const QJsonArray flows = r.value(S("flows")).toArray();
    QStringList ids;
    for (const QJsonValue &f : flows)
        ids << f.toString();
    QString line = S("%1  started %2, %3 flows, %4, %5 code runs, %6 tool calls")
                       .arg(r.value(S("id")).toString(), when(r.value(S("started_at"))))
                       .arg(flows.size())
                       .arg(usageText(r.value(S("usage")).toObject()))
                       .arg(r.value(S("code_runs")).toInt())
                       .arg(r.value(S("tool_calls")).toInt());
    if (r.value(S("cost_usd")).isDouble())
        line += S(", $%1").arg(r.value(S("cost_usd")).toDouble(), 0, 'f', 4);
    return line + S("\n    flows: ") + ids.join(S(", "));
}

QString McpServer::renderPause(const QJsonObject &p) {
    QString line = S("%1  %2 in flow %3, iteration %4")
                       .arg(p.value(S("id")).toString(), p.value(S("kind")).toString(),
                            p.value(S("flow_id")).toString())
                       .arg(p.value(S("iteration")).toInt());
    if (!p.value(S("call_id")).toString().isEmpty())
        line += S(", call_id %1").arg(p.value(S("call_id")).toString());
    if (p.value(S("paused_at")).isDouble())
        line += S(", paused since %1").arg(when(p.value(S("paused_at"))));
    if (!p.value(S("code")).toString().isEmpty())
        line += S("\n  code:\n") + indent(clip(p.value(S("code")).toString()));
    else if (p.value(S("body")).isObject())
        line += S("\n  body:\n") + indent(clip(compactJson(p.value(S("body"))), 800));
    return line;
}

QString McpServer::renderFlow(const QJsonObject &flow) {
    QStringList lines;
    lines << S("Flow ") + renderFlowLine(flow);
    lines << S("Started %1.").arg(when(flow.value(S("started_at"))));
    if (!flow.value(S("incomplete_reason")).toString().isEmpty())
        lines << S("Incomplete: %1").arg(flow.value(S("incomplete_reason")).toString());
    int call = 0;
    for (const QJsonValue &h : flow.value(S("hops")).toArray()) {
        const QJsonObject hop = h.toObject();
        const QString kind = hop.value(S("kind")).toString();
        lines << QString();
        if (kind == S("client_request")) {
            lines << describeClientRequest(hop);
        } else if (kind == S("upstream_request")) {
            ++call;
            lines << S("[model call %1] iteration %2 → %3")
                         .arg(call)
                         .arg(hop.value(S("iteration")).toInt())
                         .arg(hop.value(S("url")).toString());
            lines.removeAll(QString()); // keep a call and its answer together
        } else if (kind == S("upstream_response")) {
            QString head = S("[model answer] HTTP %1, %2")
                               .arg(hop.value(S("status")).toInt())
                               .arg(ms(hop.value(S("latency_ms"))));
            const QString usage = usageText(hop.value(S("usage")).toObject());
            if (!usage.isEmpty())
                head += S(", ") + usage;
            const QString rid = hop.value(S("body")).toObject().value(S("id")).toString();
            if (!rid.isEmpty())
                head += S(", response id %1").arg(rid);
            lines << head
                  << describeModelOutput(hop.value(S("body")).toObject(),
                                         hop.value(S("events")).toArray());
        } else if (kind == S("code_run")) {
            QString head =
                S("[code run] call_id %1 in %2, %3")
                    .arg(hop.value(S("call_id")).toString(),
                         hop.value(S("container_id")).toString(), ms(hop.value(S("duration_ms"))));
            if (hop.value(S("timed_out")).toBool())
                head += S(", TIMED OUT");
            if (!hop.value(S("error")).toString().isEmpty())
                head += S(", error: %1").arg(hop.value(S("error")).toString());
            if (!hop.value(S("decision")).toString().isEmpty())
                head += S(", breakpoint decision: %1").arg(hop.value(S("decision")).toString());
            lines << head;
            if (!hop.value(S("edited_from")).toString().isEmpty())
                lines << S("  original code (edited at a breakpoint):")
                      << indent(clip(hop.value(S("edited_from")).toString()));
            lines << S("  code:") << indent(clip(hop.value(S("code")).toString()));
            if (!hop.value(S("stdout")).toString().trimmed().isEmpty())
                lines << S("  stdout:") << indent(clip(hop.value(S("stdout")).toString()));
            if (!hop.value(S("stderr")).toString().trimmed().isEmpty())
                lines << S("  stderr:") << indent(clip(hop.value(S("stderr")).toString()));
            const QJsonArray images = hop.value(S("images")).toArray();
            if (!images.isEmpty())
                lines << S("  (%1 image(s) produced)").arg(images.size());
            lines << S("  fed back to the model:")
                  << indent(clip(compactJson(hop.value(S("output")))));
        } else if (kind == S("client_response")) {
            lines << S("[final answer to the client] HTTP %1").arg(hop.value(S("status")).toInt());
            const QJsonObject body = hop.value(S("body")).toObject();
            const QStringList out = describeModelOutput(body, hop.value(S("events")).toArray());
            if (!out.isEmpty())
                lines << out;
            else if (!body.isEmpty())
                lines << indent(clip(compactJson(body), 800));
            else if (!compactJson(hop.value(S("body"))).isEmpty())
                lines << indent(clip(compactJson(hop.value(S("body"))), 800));
        } else if (!kind.isEmpty()) {
            lines << S("[%1]").arg(kind);
        }
    }
    return lines.join(u'\n');
}

void McpServer::handle(const HttpRequest &request, ResponseSink *sink) {
    if (request.method != "POST") {
        // No server-initiated stream: the transport lets a server answer GET with 405.
        sink->send(405, {{"Allow", "POST"}, {"Content-Type", "application/json"}},
                   QJsonDocument(rpcError(QJsonValue(), -32000,
                                          S("Method not allowed: POST JSON-RPC messages here.")))
                       .toJson(QJsonDocument::Compact));
        return;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &error);
    if (error.error != QJsonParseError::NoError || (!doc.isObject() && !doc.isArray())) {
        sink->send(400, {{"Content-Type", "application/json"}},
                   QJsonDocument(rpcError(QJsonValue(), -32700,
                                          S("Parse error: %1").arg(error.errorString())))
                       .toJson(QJsonDocument::Compact));
        return;
    }
    const QJsonArray messages = doc.isArray() ? doc.array() : QJsonArray{doc.object()};
    // Requests get answers; notifications and responses only 202.
    struct Pending {
        int waiting = 0;
        QJsonArray answers;
    };
    auto pending = std::make_shared<Pending>();
    QList<QJsonObject> requests;
    for (const QJsonValue &m : messages) {
        const QJsonObject msg = m.toObject();
        if (msg.contains(S("method")) && msg.contains(S("id")))
            requests << msg;
    }
    if (requests.isEmpty()) {
        sink->send(202, {}, {});
        return;
    }
    pending->waiting = int(requests.size());
    QPointer<ResponseSink> guard(sink);
    const bool batch = doc.isArray();
    for (const QJsonObject &msg : std::as_const(requests)) {
        dispatch(msg, [guard, pending, batch](const QJsonObject &response) {
            pending->answers.append(response);
            if (--pending->waiting > 0 || !guard || guard->isClientGone() || guard->isFinished())
                return;
            const QByteArray body =
                batch ? QJsonDocument(pending->answers).toJson(QJsonDocument::Compact)
                      : QJsonDocument(pending->answers.first().toObject())
                            .toJson(QJsonDocument::Compact);
            guard->send(200, {{"Content-Type", "application/json"}}, body);
        });
    }
}

void McpServer::dispatch(const QJsonObject &message, const Reply &reply) {
    const QJsonValue id = message.value(S("id"));
    const QString method = message.value(S("method")).toString();
    const QJsonObject params = message.value(S("params")).toObject();
    if (message.value(S("jsonrpc")).toString() != S("2.0")) {
        reply(rpcError(id, -32600, S("Invalid request: jsonrpc must be \"2.0\"")));
    } else if (method == S("initialize")) {
        const QString asked = params.value(S("protocolVersion")).toString();
        const QString version = kProtocolVersions.contains(asked) ? asked : kProtocolVersions[1];
        QString appVersion = QCoreApplication::applicationVersion();
        reply(rpcResult(
            id,
            {{S("protocolVersion"), version},
             {S("capabilities"), QJsonObject{{S("tools"), QJsonObject{{S("listChanged"), false}}}}},
             {S("serverInfo"),
              QJsonObject{{S("name"), S("loopscope")},
                          {S("version"), appVersion.isEmpty() ? S("dev") : appVersion}}},
             {S("instructions"),
              S("Loopscope records every call an agent makes through it. Start with "
                "list_flows or search_flows, then read a flow with get_flow.")}}));
    } else if (method == S("ping")) {
        reply(rpcResult(id, {}));
    } else if (method == S("tools/list")) {
        reply(rpcResult(id, {{S("tools"), tools()}}));
    } else if (method == S("tools/call")) {
        const QString name = params.value(S("name")).toString();
        const auto &table = toolTable();
        const auto found = std::find_if(table.cbegin(), table.cend(), [&name](const Tool &t) {
            return t.descriptor.value(S("name")).toString() == name;
        });
        if (found == table.cend())
            reply(rpcError(id, -32602, S("Unknown tool: %1").arg(name.left(80))));
        else
            callTool(*found, params.value(S("arguments")).toObject(), reply, id);
    } else {
        reply(rpcError(id, -32601, S("Method not found: %1").arg(method.left(80))));
    }
}

void McpServer::callTool(const Tool &tool, const QJsonObject &args, const Reply &reply,
                         const QJsonValue &id) {
    ToolCall call;
    call.name = tool.descriptor.value(S("name")).toString();
    call.args = args;
    call.answer = [reply, id](const ToolText &t) { reply(rpcResult(id, toolResult(t))); };
    call.fail = [answer = call.answer](const QString &text) { answer({text, true}); };
    FlowStore *store = m_api->flowStore();
    call.flows = store ? store->query() : nullptr;
    if (tool.readsStore && !call.flows) {
        call.fail(
            S("The flow store is not available in this process (started with --no-history?)."));
        return;
    }
    const auto limit = limitArg(args, 20);
    if (!limit) {
        call.fail(S("limit must be an integer from 1 to 1000."));
        return;
    }
    call.limit = *limit;
    (this->*tool.handler)(call);
}

// Runs a store read on the pool and answers on this thread.
void McpServer::onStore(const ToolCall &call, std::function<ToolText()> work) {
    whenFinished(
        QtConcurrent::run(&m_pool, std::move(work)), this,
        [answer = call.answer](const QFuture<ToolText> &f) {
            answer(f.resultCount() ? f.result() : ToolText{S("The store read failed."), true});
        });
}

void McpServer::listFlows(const ToolCall &call) {
    const QJsonObject &args = call.args;
    const auto &fail = call.fail;
    const FlowQuery *flows = call.flows;
    FlowFilter filter;
    filter.limit = call.limit;
    if (call.name == S("search_flows")) {
        filter.q = args.value(S("query")).toString().trimmed();
        if (filter.q.isEmpty()) {
            fail(S("query is required: the words to search for."));
            return;
        }
    } else {
        filter.state = args.value(S("state")).toString();
        filter.runId = args.value(S("run_id")).toString();
        static const QStringList states{S("running"), S("paused"), S("completed"), S("failed")};
        if (!filter.state.isEmpty() && !states.contains(filter.state)) {
            fail(S("state must be one of running, paused, completed, failed."));
            return;
        }
    }
    const QString heading =
        filter.q.isEmpty() ? S("Flows") : S("Flows matching \"%1\"").arg(filter.q);
    onStore(call, [flows, filter, heading] {
        return ToolText{renderFlowList(flows->list(filter), heading)};
    });
}

void McpServer::getFlow(const ToolCall &call) {
    const QJsonObject &args = call.args;
    const auto &fail = call.fail;
    const FlowQuery *flows = call.flows;
    const QString flowId = args.value(S("flow_id")).toString().trimmed();
    if (flowId.isEmpty()) {
        fail(S("flow_id is required, e.g. req_…"));
        return;
    }
    onStore(call, [flows, flowId] {
        const auto flow = flows->flow(flowId);
        return flow ? ToolText{renderFlow(*flow)}
                    : ToolText{S("No flow with id %1. Use list_flows or search_flows to find "
                                 "flow ids.")
                                   .arg(flowId.left(100)),
                               true};
    });
}

void McpServer::listRuns(const ToolCall &call) {
    const FlowQuery *flows = call.flows;
    const int n = call.limit;
    onStore(call, [flows, n] {
        const QJsonArray runs = flows->runs(n);
        if (runs.isEmpty())
            return ToolText{S("Agent runs: none.")};
        QStringList lines{S("Agent runs (%1, newest first):").arg(runs.size())};
        for (const QJsonValue &r : runs)
            lines << S("- ") + renderRun(r.toObject());
        lines << S("List a run's flows with list_flows {\"run_id\": \"run_…\"}.");
        return ToolText{lines.join(u'\n')};
    });
}

void McpServer::listSandboxes(const ToolCall &call) {
    const auto &answer = call.answer;
    const auto &fail = call.fail;
    SandboxRegistry *registry = m_api->registry();
    if (!registry) {
        fail(S("The sandbox registry is not available."));
        return;
    }
    QList<SandboxEntry> entries = registry->entries();
    std::sort(entries.begin(), entries.end(), [](const SandboxEntry &a, const SandboxEntry &b) {
        return a.createdMs > b.createdMs;
    });
    if (entries.isEmpty()) {
        answer({S("Live sandboxes: none.")});
        return;
    }
    QStringList lines{S("Live sandboxes (%1):").arg(entries.size())};
    for (const SandboxEntry &e : std::as_const(entries))
        lines << S("- ") + sandboxLine(ControlApi::sandboxObject(e));
    answer({lines.join(u'\n')});
}

void McpServer::deleteSandbox(const ToolCall &call) {
    const QJsonObject &args = call.args;
    const auto &answer = call.answer;
    const auto &fail = call.fail;
    SandboxRegistry *registry = m_api->registry();
    const QString sandboxId = args.value(S("sandbox_id")).toString().trimmed();
    if (!registry) {
        fail(S("The sandbox registry is not available."));
        return;
    }
    const auto entry = sandboxId.isEmpty() ? std::nullopt : registry->entryByContainerId(sandboxId);
    if (!entry) {
        fail(S("No live sandbox with id %1. Use list_sandboxes to see them.")
                 .arg(sandboxId.left(100)));
        return;
    }
    whenFinished(registry->remove(entry->key, SandboxRemovalReason::Deleted), this,
                 [answer, sandboxId](const QFuture<void> &) {
                     answer({S("Deleted sandbox %1.").arg(sandboxId)});
                 });
}

void McpServer::listPaused(const ToolCall &call) {
    const auto &answer = call.answer;
    const auto &fail = call.fail;
    if (!m_pauses.pending) {
        fail(kBreakpointsMissing);
        return;
    }
    const QJsonArray pauses = m_pauses.pending();
    if (pauses.isEmpty()) {
        answer({S("No loop is paused at a breakpoint.")});
        return;
    }
    QStringList lines{S("Paused loops (%1, oldest first):").arg(pauses.size())};
    for (const QJsonValue &p : pauses)
        lines << S("- ") + renderPause(p.toObject());
    lines << S("Resume one with resolve_paused {\"pause_id\": \"pause_…\", \"action\": "
               "\"continue\" | \"deny\" | \"abort\"}.");
    answer({lines.join(u'\n')});
}

void McpServer::resolvePaused(const ToolCall &call) {
    const QJsonObject &args = call.args;
    const auto &answer = call.answer;
    const auto &fail = call.fail;
    if (!m_pauses.resolve) {
        fail(kBreakpointsMissing);
        return;
    }
    const QString pauseId = args.value(S("pause_id")).toString().trimmed();
    const QString action = args.value(S("action")).toString();
    if (pauseId.isEmpty() || !QStringList{S("continue"), S("deny"), S("abort")}.contains(action)) {
        fail(S("pause_id is required and action must be continue, deny or abort."));
        return;
    }
    QJsonObject request{{S("action"), action}};
    for (const char *key : {"code", "body", "message"})
        if (args.contains(QLatin1String(key)))
            request.insert(QLatin1String(key), args.value(QLatin1String(key)));
    const auto [status, body] = m_pauses.resolve(pauseId, request);
    if (status == 200) {
        const QString decision = body.value(S("resolved_decision")).toString(action);
        answer({S("Resolved %1 (%2) of flow %3.")
                    .arg(pauseId, decision, body.value(S("flow_id")).toString())});
    } else if (status == 404) {
        fail(S("No pause with id %1. Use list_paused to see them.").arg(pauseId.left(100)));
    } else if (status == 409) {
        fail(S("Pause %1 was already resolved.").arg(pauseId.left(100)));
    } else {
        fail(S("Could not resolve %1: %2")
                 .arg(pauseId.left(100),
                      body.value(S("error")).toObject().value(S("message")).toString()));
    }
}

void McpServer::replayFlow(const ToolCall &call) {
    const QJsonObject &args = call.args;
    const auto &answer = call.answer;
    const auto &fail = call.fail;
    const FlowQuery *flows = call.flows;
    const QString flowId = args.value(S("flow_id")).toString().trimmed();
    const QJsonValue body = args.value(S("body"));
    if (flowId.isEmpty() || (!body.isUndefined() && !body.isNull() && !body.isObject())) {
        fail(S("flow_id is required; body, when given, must be a JSON object."));
        return;
    }
    QPointer<ControlApi> api = m_api;
    whenFinished(QtConcurrent::run(&m_pool, [flows, flowId] { return flows->flow(flowId); }), this,
                 [api, answer, fail, flowId, body](const QFuture<std::optional<QJsonObject>> &f) {
                     const auto flow = f.resultCount() ? f.result() : std::nullopt;
                     if (!flow || !api) {
                         fail(S("No flow with id %1.").arg(flowId.left(100)));
                         return;
                     }
                     const auto result = api->replayRecorded(*flow, body);
                     if (result.status != 200)
                         fail(S("Replay of %1 refused: %2").arg(flowId, result.message));
                     else
                         answer({S("Replaying %1 as new flow %2. Read it with get_flow once "
                                   "it has finished.")
                                     .arg(flowId, result.flowId)});
                 });
}

} // namespace loopscope
