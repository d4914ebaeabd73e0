#pragma once

#include "upstream/upstreamroute.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace loopscope {

enum class ApiSurface { Responses, ChatCompletions, Messages };

// One client model request after the HTTP front has checked it: the body is a JSON object
// already stripped of client-forged control keys, the route is resolved, and the caller is known
// only by a hash. This is what a RequestInterceptor receives (contract for issue 5).
struct ProxyRequest {
    ApiSurface surface = ApiSurface::Responses;
    QString path;               // client path as received, e.g. "/v1/responses"
    QJsonObject body;           // parsed, stripped; "model" is the client's name:
                                // send route.upstreamModel upstream
    UpstreamRoute route;        // where/how to call upstream (auth already chosen)
    QString callerIdentity;     // SHA-256 hex of the bearer token; "anonymous" without one
    int maxLoops = 3;           // --max-loops, else the route's max_agentic_loops, else 3
    int execTimeoutSeconds = 0; // --exec-timeout (0 = the interception layer's default)
    QString requestId;          // "req_<hex>", also sent back as x-request-id
    QDateTime startedAt;        // wall clock, UTC
    QElapsedTimer elapsed;      // monotonic, started when the request was fully received

    bool wantsStream() const { return body.value(QStringLiteral("stream")).toBool(); }
    // True when body.tools contains an object with "type": `type` (e.g. "code_interpreter").
    bool declaresToolType(const QString &type) const {
        const QJsonArray tools = body.value(QStringLiteral("tools")).toArray();
        for (const QJsonValue &tool : tools)
            if (tool.toObject().value(QStringLiteral("type")).toString() == type)
                return true;
        return false;
    }
};

} // namespace loopscope
