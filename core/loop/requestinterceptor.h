#pragma once

#include "loop/proxyrequest.h"

namespace loopscope {

class ResponseSink;

// The seam for request handling that is not plain pass-through (issue 5: the agentic loop for
// requests declaring {"type":"code_interpreter"}). Register instances on ProxyServer; for each
// POST /v1/responses and /v1/chat/completions the server asks them in registration order and
// the first that accepts owns the request. None accepts → pass-through.
//
// Contract:
// - Both methods are called on the proxy thread. accepts() must be cheap and side-effect free,
//   and decide without the conversation: pass-through asks it with the body minus "messages"
//   and "input" (ProxyServer::forwardUnparsed), and parses the rest only when it accepts.
// - handle() must eventually answer through the sink exactly once (sendJson/sendError, or
//   beginSse … endStream) unless the client goes away first. Keep a QPointer<ResponseSink>: the
//   sink is deleted when the client disconnects; ResponseSink::clientGone() is the signal to
//   abort work (upstream calls, sandbox runs).
// - Report time spent waiting on upstream and sandboxes with ResponseSink::addExternalTime so
//   x-loopscope-overhead-ms stays honest, and the loop count with setIterations for the log.
// - Upstream calls go through ProxyServer::upstream()->postJson(request.route, ...), which
//   applies the same auth, header hygiene and timeouts as pass-through.
class RequestInterceptor {
public:
    virtual ~RequestInterceptor() = default;
    virtual bool accepts(const ProxyRequest &request) const = 0;
    virtual void handle(ProxyRequest request, ResponseSink *sink) = 0;
};

} // namespace loopscope
