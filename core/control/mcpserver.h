#pragma once

#include "http/httprequest.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPair>
#include <QThreadPool>

#include <functional>

namespace loopscope {

class ControlApi;
class FlowQuery;
class ResponseSink;

// What an MCP tool answers: text written for a model, and whether it reports an error.
struct McpToolText {
    QString text;
    bool isError = false;
};

// MCP (Model Context Protocol) over the Streamable HTTP transport at POST /loopscope/mcp
// (control-api.md "MCP"): JSON-RPC 2.0, answered as application/json (SSE answers are optional
// in the transport; GET gets 405). Each tool is a thin wrapper over what the control routes use
// (FlowQuery, SandboxRegistry, replay) and answers TEXT written for a model to read: a flow is a
// transcript, never a raw JSON dump. Token and Origin were checked before a request gets here,
// exactly as for /loopscope/v1.
//
// Threads: lives on the proxy thread with its ControlApi; store reads run on its own one-thread
// pool and answer through whenFinished.
class McpServer : public QObject {
    Q_OBJECT
public:
    explicit McpServer(ControlApi *api, QObject *parent = nullptr);
    ~McpServer() override;

    // Breakpoints reach list_paused / resolve_paused through these, so this room does not depend
    // on the pause broker: `pending` gives GET /loopscope/v1/paused's "data" array, `resolve`
    // answers as POST /loopscope/v1/paused/{id} (HTTP status + body: the resolved pause, or an
    // OpenAI-shaped error). Unset: both tools say breakpoints are not available.
    struct PauseHooks {
        std::function<QJsonArray()> pending;
        std::function<QPair<int, QJsonObject>(const QString &id, const QJsonObject &request)>
            resolve;
    };
    void setPauseHooks(PauseHooks hooks) { m_pauses = std::move(hooks); }

    static bool matches(const QString &path);
    void handle(const HttpRequest &request, ResponseSink *sink);

    // The tools' descriptors (name, description, inputSchema), as tools/list answers them.
    static QJsonArray tools();
    // A flow (summary + hops, control-api.md shapes) as a transcript a model can read.
    static QString renderFlow(const QJsonObject &flow);
    // One line per flow summary.
    static QString renderFlowLine(const QJsonObject &summary);
    static QString renderRun(const QJsonObject &run);
    static QString renderPause(const QJsonObject &pause);

private:
    using Reply = std::function<void(const QJsonObject &response)>;
    struct ToolCall; // one tools/call: arguments, the store, how to answer
    using Handler = void (McpServer::*)(const ToolCall &call);
    struct Tool {
        QJsonObject descriptor; // name, description, inputSchema, annotations
        Handler handler;
        bool readsStore = false; // refused up front when the process has no flow store
    };
    // The one declaration of every tool (tools/list and tools/call both read it).
    static const QList<Tool> &toolTable();
    // One JSON-RPC message; `reply` is called once with the response (never for notifications).
    void dispatch(const QJsonObject &message, const Reply &reply);
    void callTool(const Tool &tool, const QJsonObject &args, const Reply &reply,
                  const QJsonValue &id);
    void onStore(const ToolCall &call, std::function<McpToolText()> work);
    void listFlows(const ToolCall &call); // and search_flows
    void getFlow(const ToolCall &call);
    void listRuns(const ToolCall &call);
    void listSandboxes(const ToolCall &call);
    void deleteSandbox(const ToolCall &call);
    void listPaused(const ToolCall &call);
    void resolvePaused(const ToolCall &call);
    void replayFlow(const ToolCall &call);

    ControlApi *m_api;
    PauseHooks m_pauses;
    QThreadPool m_pool;
};

} // namespace loopscope
