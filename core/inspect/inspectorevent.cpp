#include "inspect/inspectorevent.h"

namespace loopscope {

InspectorEvent InspectorEvent::make(Kind kind, const QString &requestId, int iteration,
                                    const QJsonObject &data) {
    InspectorEvent event;
    event.kind = kind;
    event.requestId = requestId;
    event.iteration = iteration;
    event.data = data;
    return event;
}

QString InspectorEvent::kindName(Kind kind) {
    switch (kind) {
    case Kind::RequestStarted:
        return QStringLiteral("request.started");
    case Kind::UpstreamCall:
        return QStringLiteral("upstream.call");
    case Kind::CodeRunStarted:
        return QStringLiteral("code_run.started");
    case Kind::CodeRunOutput:
        return QStringLiteral("code_run.output");
    case Kind::CodeExecuted:
        return QStringLiteral("code.executed");
    case Kind::SandboxCreated:
        return QStringLiteral("sandbox.created");
    case Kind::SandboxReused:
        return QStringLiteral("sandbox.reused");
    case Kind::SandboxDeleted:
        return QStringLiteral("sandbox.deleted");
    case Kind::SandboxEvicted:
        return QStringLiteral("sandbox.evicted");
    case Kind::SandboxExpired:
        return QStringLiteral("sandbox.expired");
    case Kind::SandboxDeleteFailed:
        return QStringLiteral("sandbox.delete_failed");
    case Kind::OutputsInjected:
        return QStringLiteral("outputs.injected");
    case Kind::RequestFinished:
        return QStringLiteral("request.finished");
    case Kind::RequestFailed:
        return QStringLiteral("request.failed");
    case Kind::Log:
        return QStringLiteral("log");
    case Kind::ClientRequest:
        return QStringLiteral("client.request");
    case Kind::UpstreamRequest:
        return QStringLiteral("upstream.request");
    case Kind::UpstreamResponse:
        return QStringLiteral("upstream.response");
    case Kind::ClientResponse:
        return QStringLiteral("client.response");
    case Kind::ClientResponseChunk:
        return QStringLiteral("client.response_chunk");
    case Kind::ExchangeFinished:
        return QStringLiteral("exchange.finished");
    case Kind::Paused:
        return QStringLiteral("paused");
    case Kind::Resumed:
        return QStringLiteral("resumed");
    case Kind::UpstreamCallStarted:
        return QStringLiteral("upstream_call.started");
    case Kind::SandboxWaiting:
        return QStringLiteral("sandbox.waiting");
    case Kind::SandboxWaitEnded:
        return QStringLiteral("sandbox.wait_ended");
    }
    return QStringLiteral("unknown");
}

bool InspectorEvent::isSandboxEvent() const {
    switch (kind) {
    case Kind::SandboxCreated:
    case Kind::SandboxReused:
    case Kind::SandboxDeleted:
    case Kind::SandboxEvicted:
    case Kind::SandboxExpired:
    case Kind::SandboxDeleteFailed:
        return true;
    default:
        return false;
    }
}

} // namespace loopscope
