#include "interception/codeexecutiontool.h"

#include "interception/interceptionkeys.h"

namespace loopscope {

namespace {
const QString kType = QStringLiteral("type");
const QString kName = QStringLiteral("name");
const QString kFunction = QStringLiteral("function");
} // namespace

QJsonObject CodeExecutionTool::parameters() {
    return QJsonObject{
        {kType, QStringLiteral("object")},
        {QStringLiteral("properties"),
         QJsonObject{{QStringLiteral("code"), QJsonObject{{kType, QStringLiteral("string")}}}}},
        {QStringLiteral("required"), QJsonArray{QStringLiteral("code")}},
    };
}

QJsonObject CodeExecutionTool::functionTool(ToolShape shape) {
    // Built once per shape (read-only, shared): every intercepted request carries one.
    static const auto build = [](ToolShape toolShape) {
        QJsonObject function{
            {kName, QString(keys::kCodeExecutionToolName)},
            {QStringLiteral("description"), QString(keys::kCodeExecutionToolDescription)},
            {QStringLiteral("parameters"), parameters()},
        };
        if (toolShape == ToolShape::Chat)
            return QJsonObject{{kType, kFunction}, {kFunction, function}};
        function.insert(kType, kFunction);
        return function;
    };
    static const QJsonObject chat = build(ToolShape::Chat);
    static const QJsonObject responses = build(ToolShape::Responses);
    return shape == ToolShape::Chat ? chat : responses;
}

QJsonObject CodeExecutionTool::functionToolChoice(ToolShape shape) {
    if (shape == ToolShape::Chat) {
        return QJsonObject{
            {kType, kFunction},
            {kFunction, QJsonObject{{kName, QString(keys::kCodeExecutionToolName)}}}};
    }
    return QJsonObject{{kType, kFunction}, {kName, QString(keys::kCodeExecutionToolName)}};
}

bool CodeExecutionTool::isNativeCodeInterpreterTool(const QJsonValue &tool) {
    return tool.isObject() &&
           tool.toObject().value(kType).toString() == keys::kNativeCodeInterpreterType;
}

bool CodeExecutionTool::hasNativeCodeInterpreterTool(const QJsonValue &tools) {
    if (!tools.isArray())
        return false;
    const QJsonArray list = tools.toArray();
    for (const QJsonValue &tool : list) {
        if (isNativeCodeInterpreterTool(tool))
            return true;
    }
    return false;
}

QJsonArray CodeExecutionTool::replaceNativeTools(const QJsonArray &tools, ToolShape shape) {
    QJsonArray out;
    for (const QJsonValue &tool : tools)
        out.append(isNativeCodeInterpreterTool(tool) ? QJsonValue(functionTool(shape)) : tool);
    return out;
}

bool CodeExecutionTool::targetsCodeInterpreter(const QJsonValue &toolChoice) {
    if (!toolChoice.isObject())
        return false;
    const QJsonObject choice = toolChoice.toObject();
    const QJsonValue type = choice.value(kType);
    const QJsonValue name = choice.value(kName);
    if (type.isString() && type.toString() == keys::kNativeCodeInterpreterType)
        return true;
    if (name.isString() && (name.toString() == keys::kNativeCodeInterpreterType ||
                            name.toString() == keys::kCodeExecutionToolName))
        return true;
    const QJsonValue function = choice.value(kFunction);
    return function.isObject() &&
           function.toObject().value(kName).toString() == keys::kCodeExecutionToolName;
}

QJsonValue CodeExecutionTool::rewriteToolChoice(const QJsonValue &toolChoice, ToolShape shape) {
    return targetsCodeInterpreter(toolChoice) ? QJsonValue(functionToolChoice(shape)) : toolChoice;
}

} // namespace loopscope
