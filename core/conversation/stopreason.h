#pragma once

#include <QString>

namespace loopscope {

// Why a model stopped, in one vocabulary for the three dialects (dialects.md §1): Chat's
// `finish_reason`, Responses' `status` + `incomplete_details.reason`, Messages' `stop_reason`.
enum class StopReason {
    Unknown,       // not given (a stream cut short, an error)
    Completed,     // stop, completed, end_turn, stop_sequence
    ToolCalls,     // tool_calls, function_call, tool_use, or an output that ends in calls
    Length,        // length, max_output_tokens, max_tokens, model_context_window_exceeded
    ContentFilter, // content_filter, refusal
    Paused,        // Messages pause_turn: a server tool's turn to be continued
};

// "completed", "tool_calls", "length", "content_filter", "paused", "unknown".
QString stopReasonName(StopReason reason);
StopReason stopReasonFromChat(const QString &finishReason);
StopReason stopReasonFromMessages(const QString &stopReason);
// `status` and `incomplete_details.reason`; a completed response whose output ends in a
// function call is ToolCalls, as the other dialects say it.
StopReason stopReasonFromResponses(const QString &status, const QString &incompleteReason,
                                   bool endsInToolCall);

// The dialect's own word for `reason`: `detail` (the word it was decoded from) when it reads
// back as `reason` in that dialect, else the dialect's usual word; for Unknown, `detail` as it
// came ("" when none).
QString stopReasonToChat(StopReason reason, const QString &detail);
QString stopReasonToMessages(StopReason reason, const QString &detail);
// Responses' `status` and `incomplete_details.reason` ("" when complete or unknown).
QString stopReasonToResponsesStatus(StopReason reason, const QString &detail);
QString stopReasonToResponsesIncomplete(StopReason reason, const QString &detail);

} // namespace loopscope
