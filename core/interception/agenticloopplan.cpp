#include "interception/agenticloopplan.h"

namespace loopscope {

QJsonObject AgenticLoopRequestPatch::toJson() const {
    QJsonObject out;
    out.insert(QLatin1String("model"), model ? QJsonValue(*model) : QJsonValue());
    out.insert(QLatin1String("messages"), messages ? QJsonValue(*messages) : QJsonValue());
    out.insert(QLatin1String("tools"), tools ? QJsonValue(*tools) : QJsonValue());
    out.insert(QLatin1String("max_tokens"), maxTokens ? QJsonValue(*maxTokens) : QJsonValue());
    out.insert(QLatin1String("optional_params"), optionalParams);
    out.insert(QLatin1String("kwargs"), kwargs);
    return out;
}

QJsonObject AgenticLoopPlan::toJson() const {
    QJsonObject out;
    out.insert(QLatin1String("run_agentic_loop"), runAgenticLoop);
    out.insert(QLatin1String("request_patch"),
               requestPatch ? QJsonValue(requestPatch->toJson()) : QJsonValue());
    out.insert(QLatin1String("response_override"),
               responseOverride ? *responseOverride : QJsonValue());
    out.insert(QLatin1String("terminate"), terminate);
    out.insert(QLatin1String("stop_reason"), stopReason ? QJsonValue(*stopReason) : QJsonValue());
    out.insert(QLatin1String("metadata"), metadata);
    return out;
}

} // namespace loopscope
