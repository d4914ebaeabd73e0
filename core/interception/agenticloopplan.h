#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <optional>

namespace loopscope {

// What the next request of an agentic loop changes relative to the current one (LiteLLM's
// AgenticLoopRequestPatch). `messages` is the Responses `input` list or the chat `messages`.
struct AgenticLoopRequestPatch {
    std::optional<QString> model;
    std::optional<QJsonArray> messages;
    std::optional<QJsonArray> tools; // nullopt = keep the request's tools
    std::optional<int> maxTokens;
    QJsonObject optionalParams; // provider params overlaid on the request's
    QJsonObject kwargs;         // litellm-level params (markers, surface, call id, ...)

    QJsonObject toJson() const;
    friend bool operator==(const AgenticLoopRequestPatch &,
                           const AgenticLoopRequestPatch &) = default;
};

// Result of a build-plan hook (LiteLLM's AgenticLoopPlan). For the code interpreter,
// `metadata` holds {"tool_type":"code_interpreter","sandbox_key":..,"is_session_scoped":..,
// "code_interpreter_calls":[..]} (+ "response_format":"openai" on the chat surface).
struct AgenticLoopPlan {
    bool runAgenticLoop = false;
    std::optional<AgenticLoopRequestPatch> requestPatch;
    std::optional<QJsonValue> responseOverride;
    bool terminate = false;
    std::optional<QString> stopReason;
    QJsonObject metadata;

    // For the inspector and logs (snake_case keys as in LiteLLM).
    QJsonObject toJson() const;
    friend bool operator==(const AgenticLoopPlan &, const AgenticLoopPlan &) = default;
};

} // namespace loopscope
