#include "conversation/stopreason.h"

namespace loopscope {

QString stopReasonName(StopReason reason) {
    switch (reason) {
    case StopReason::Completed:
        return QStringLiteral("completed");
    case StopReason::ToolCalls:
        return QStringLiteral("tool_calls");
    case StopReason::Length:
        return QStringLiteral("length");
    case StopReason::ContentFilter:
        return QStringLiteral("content_filter");
    case StopReason::Paused:
        return QStringLiteral("paused");
    case StopReason::Unknown:
        break;
    }
    return QStringLiteral("unknown");
}

StopReason stopReasonFromChat(const QString &r) {
    if (r == QLatin1String("stop"))
        return StopReason::Completed;
    if (r == QLatin1String("tool_calls") || r == QLatin1String("function_call"))
        return StopReason::ToolCalls;
    if (r == QLatin1String("length"))
        return StopReason::Length;
    if (r == QLatin1String("content_filter"))
        return StopReason::ContentFilter;
    return StopReason::Unknown;
}

StopReason stopReasonFromMessages(const QString &r) {
    if (r == QLatin1String("end_turn") || r == QLatin1String("stop_sequence"))
        return StopReason::Completed;
    if (r == QLatin1String("tool_use"))
        return StopReason::ToolCalls;
    if (r == QLatin1String("max_tokens") || r == QLatin1String("model_context_window_exceeded"))
        return StopReason::Length;
    if (r == QLatin1String("refusal"))
        return StopReason::ContentFilter;
    if (r == QLatin1String("pause_turn"))
        return StopReason::Paused;
    return StopReason::Unknown;
}

StopReason stopReasonFromResponses(const QString &status, const QString &incompleteReason,
                                   bool endsInToolCall) {
    if (status == QLatin1String("incomplete"))
        return incompleteReason == QLatin1String("content_filter") ? StopReason::ContentFilter
                                                                   : StopReason::Length;
    if (status == QLatin1String("completed"))
        return endsInToolCall ? StopReason::ToolCalls : StopReason::Completed;
    return StopReason::Unknown;
}

} // namespace loopscope
