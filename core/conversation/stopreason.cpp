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

QString stopReasonToChat(StopReason reason, const QString &detail) {
    if (!detail.isEmpty() && stopReasonFromChat(detail) == reason)
        return detail;
    switch (reason) {
    case StopReason::Completed:
    case StopReason::Paused: // Chat has no pause; the turn ended
        return QStringLiteral("stop");
    case StopReason::ToolCalls:
        return QStringLiteral("tool_calls");
    case StopReason::Length:
        return QStringLiteral("length");
    case StopReason::ContentFilter:
        return QStringLiteral("content_filter");
    case StopReason::Unknown:
        break;
    }
    return detail; // a word the model has no name for goes back as it came
}

QString stopReasonToMessages(StopReason reason, const QString &detail) {
    if (!detail.isEmpty() && stopReasonFromMessages(detail) == reason)
        return detail;
    switch (reason) {
    case StopReason::Completed:
        return QStringLiteral("end_turn");
    case StopReason::ToolCalls:
        return QStringLiteral("tool_use");
    case StopReason::Length:
        return QStringLiteral("max_tokens");
    case StopReason::ContentFilter:
        return QStringLiteral("refusal");
    case StopReason::Paused:
        return QStringLiteral("pause_turn");
    case StopReason::Unknown:
        break;
    }
    return detail; // a word the model has no name for goes back as it came
}

QString stopReasonToResponsesStatus(StopReason reason, const QString &detail) {
    switch (reason) {
    case StopReason::Completed:
    case StopReason::ToolCalls:
    case StopReason::Paused:
        return QStringLiteral("completed");
    case StopReason::Length:
    case StopReason::ContentFilter:
        return QStringLiteral("incomplete");
    case StopReason::Unknown:
        break;
    }
    // failed, in_progress, cancelled, queued: the word as it came
    return detail;
}

QString stopReasonToResponsesIncomplete(StopReason reason, const QString &detail) {
    if (reason == StopReason::ContentFilter)
        return QStringLiteral("content_filter");
    if (reason != StopReason::Length)
        return {};
    return stopReasonFromResponses(QStringLiteral("incomplete"), detail, false) == reason &&
                   !detail.isEmpty() && detail != QLatin1String("incomplete")
               ? detail
               : QStringLiteral("max_output_tokens");
}

} // namespace loopscope
