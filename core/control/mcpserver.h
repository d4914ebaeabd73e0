#pragma once

#include "http/httprequest.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QThreadPool>

#include <functional>

namespace loopscope {

class ControlApi;
class ResponseSink;

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

    static bool matches(const QString &path);
    void handle(const HttpRequest &request, ResponseSink *sink);

    // The tools' descriptors (name, description, inputSchema), as tools/list answers them.
    static QJsonArray tools();
    // A flow (summary + hops, control-api.md shapes) as a transcript a model can read.
    static QString renderFlow(const QJsonObject &flow);
    // One line per flow summary.
    static QString renderFlowLine(const QJsonObject &summary);
    static QString renderRun(const QJsonObject &run);

private:
    using Reply = std::function<void(const QJsonObject &response)>;
    // One JSON-RPC message; `reply` is called once with the response (never for notifications).
    void dispatch(const QJsonObject &message, const Reply &reply);
    void callTool(const QString &name, const QJsonObject &args, const Reply &reply,
                  const QJsonValue &id);

    ControlApi *m_api;
    QThreadPool m_pool;
};

} // namespace loopscope
