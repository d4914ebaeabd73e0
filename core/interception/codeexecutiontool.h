#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>

namespace loopscope {

// Which request shape a tool or tool_choice takes: Chat Completions nests the name under
// "function", the Responses API keeps it at the top level.
enum class ToolShape { Responses, Chat };

// The function tool `litellm_code_execution` that replaces OpenAI's hosted `code_interpreter`
// tool (spec §2.6), and the rewrite of a forced tool_choice that targets it. Pure functions.
class CodeExecutionTool {
public:
    // {"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}
    static QJsonObject parameters();
    // Responses: {"type":"function","name":...,"description":...,"parameters":...}
    // Chat: {"type":"function","function":{"name":...,"description":...,"parameters":...}}
    static QJsonObject functionTool(ToolShape shape);
    // Responses: {"type":"function","name":"litellm_code_execution"}
    // Chat: {"type":"function","function":{"name":"litellm_code_execution"}}
    static QJsonObject functionToolChoice(ToolShape shape);

    // A map tool with type == "code_interpreter" (container contents do not matter).
    static bool isNativeCodeInterpreterTool(const QJsonValue &tool);
    // True when `tools` is a list holding at least one native code_interpreter map.
    static bool hasNativeCodeInterpreterTool(const QJsonValue &tools);
    // Every native code_interpreter map replaced by the function tool of `shape`; other tools
    // pass through in order.
    static QJsonArray replaceNativeTools(const QJsonArray &tools, ToolShape shape);

    // tool_choice is a map and any of: type == "code_interpreter", name == "code_interpreter",
    // name == "litellm_code_execution", function.name == "litellm_code_execution".
    // Used both to rewrite a forced choice and to drop it from follow-ups.
    static bool targetsCodeInterpreter(const QJsonValue &toolChoice);
    // The function tool_choice of `shape` when `toolChoice` targets the code interpreter,
    // otherwise `toolChoice` unchanged ("auto", "required", unrelated maps).
    static QJsonValue rewriteToolChoice(const QJsonValue &toolChoice, ToolShape shape);
};

} // namespace loopscope
