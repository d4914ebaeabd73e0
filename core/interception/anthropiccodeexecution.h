#pragma once

#include "sandbox/containerfilestore.h"
#include "sandbox/sandboxtypes.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace loopscope {

// Anthropic's code execution tool served by Loopscope's sandboxes (dialects.md §4), as pure
// functions: which tool versions there are, the client tools the upstream model gets instead
// (bash_code_execution {command}, text_editor_code_execution {command, path, …}, legacy
// code_execution {code}), the Python program each call becomes in the sandbox (bash runs as a
// child process of the sandbox's interpreter, the editor as a small Python function, both in
// /mnt/data), and the result block the client gets back in Anthropic's shape.
class AnthropicCodeExecution {
public:
    static inline const QString kBash = QStringLiteral("bash_code_execution");
    static inline const QString kTextEditor = QStringLiteral("text_editor_code_execution");
    static inline const QString kLegacy = QStringLiteral("code_execution");

    // code_execution_20250522, _20250825, _20260120, _20260521.
    static bool isToolType(const QString &type);
    // The first code execution tool's type in a Messages request's tools, or "".
    static QString declaredToolType(const QJsonArray &tools);
    // The names the model calls for a tool type: {code_execution} for the legacy version, else
    // {bash_code_execution, text_editor_code_execution}.
    static QStringList subToolNames(const QString &toolType);
    // Those sub-tools as ordinary Messages client tools ({name, description, input_schema}).
    static QJsonArray clientTools(const QString &toolType);

    // The program a call runs: `valid` false (and `problem` set) when its input is not what the
    // sub-tool takes; then nothing runs and the client gets invalid_tool_input.
    struct Program {
        bool valid = false;
        QString code;
        QString problem;
    };
    // `keepsShellState` (the 2026 versions' REPL state): bash starts where the container's last
    // command ended — its working directory and exported variables.
    static Program programFor(const QString &name, const QJsonObject &input,
                              bool keepsShellState = false);
    // code_execution_20260120 and _20260521.
    static bool keepsShellState(const QString &toolType);

    // The server_tool_use block the client sees for a call.
    static QJsonObject serverToolUse(const QString &id, const QString &name,
                                     const QJsonObject &input);
    // "srvtoolu_…" for an upstream tool_use id ("toolu_…"), and back.
    static QString serverToolUseId(const QString &toolUseId);
    static QString toolUseIdOf(const QString &serverToolUseId);

    // The result block of one call: `<name>_tool_result` with the run's result, or the error
    // variant (invalid_tool_input when nothing ran, execution_time_exceeded after a timeout,
    // unavailable when the sandbox could not run it; the editor's own codes, e.g.
    // file_not_found). `files` are the container files the run wrote (their ids become
    // *_output blocks).
    static QJsonObject resultBlock(const QString &serverToolUseId, const QString &name,
                                   const ExecutionResult &result, bool executed,
                                   const QList<ContainerFile> &files = {});
    static QJsonObject errorBlock(const QString &serverToolUseId, const QString &name,
                                  const QString &errorCode, const QString &message = {});
    // What the upstream model is told about a result block (a tool_result's text): stdout,
    // stderr, a non-zero exit code and the files written for bash and Python, the editor's
    // result as JSON, or the error.
    static QString modelText(const QJsonObject &resultBlock);
    // True for a block the client got from a code execution call: server_tool_use of a sub-tool
    // or one of the *_code_execution_tool_result blocks.
    static bool isResultBlockType(const QString &type);
};

} // namespace loopscope
