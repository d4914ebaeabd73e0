#pragma once

#include "telemetry/otlpspan.h"

#include <QJsonObject>
#include <QList>

namespace loopscope {

// Turns one finished flow (summary + hops, control-api.md shapes) into spans per the
// OpenTelemetry GenAI semantic conventions (development status; attribute names as of
// semantic-conventions v1.37+, gen_ai.provider.name): a SERVER root span per flow named
// "{gen_ai.operation.name} {gen_ai.request.model}", a CLIENT span per upstream model call, an
// INTERNAL "execute_tool code_interpreter" span per code run, and `extraEvents` (sandbox
// events of the flow) as span events. The trace id is derived from the run id, so every flow of
// one agent run lands in one trace; span ids from the flow id, so a re-export is idempotent.
// Message and code contents only with `captureContent`; headers never.
class OtlpSpanBuilder {
public:
    static QList<OtlpSpan> build(const QJsonObject &flow, bool captureContent,
                                 const QList<OtlpEvent> &extraEvents = {});
    // Whether a flow is a model call worth a trace (Responses, Chat Completions, ...).
    static bool exports(const QJsonObject &flow);
    static QByteArray traceIdFor(const QString &runOrFlowId);
    static QByteArray spanIdFor(const QString &flowId, const QString &part);
};

} // namespace loopscope
