#include "interception/anthropiccodeexecution.h"

#include <QJsonDocument>

namespace loopscope {

namespace {

const QString kType = QStringLiteral("type");
const QString kContent = QStringLiteral("content");
const QString kErrorCode = QStringLiteral("error_code");
const QString kEditorMarker = QStringLiteral("\x1eloopscope-editor ");

// A Python string literal for any text: a JSON string is one (escapes included).
QString pyString(const QString &text) {
    const QByteArray json = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(json.mid(1, json.size() - 2));
}

// The first line of a command, for the comment that heads its program (what a breakpoint and
// the window show first).
QString headline(const QString &text) {
    const QString first = text.section(u'\n', 0, 0);
    return first.size() > 200 ? first.left(200) + QStringLiteral("…") : first;
}

// The editor in the sandbox: one function, printing its result as one marked JSON line. Paths
// are relative to /mnt/data, the container's files directory, unless absolute.
const char kEditorProgram[] = R"PY(
def _loopscope_editor(a):
    import json, os
    def emit(o):
        print("\x1eloopscope-editor " + json.dumps(o))
    def fail(code, message):
        emit({"type": "text_editor_code_execution_tool_result_error", "error_code": code,
              "error_message": message})
    command, path = a.get("command"), a.get("path")
    full = path if os.path.isabs(path) else os.path.join("/mnt/data", path)
    try:
        if command == "view":
            if not os.path.exists(full):
                return fail("file_not_found", "File not found: " + path)
            if os.path.isdir(full):
                lines = sorted(os.listdir(full))
            else:
                with open(full, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
            total, start, end = len(lines), 1, len(lines)
            r = a.get("view_range")
            if r is not None:
                start = max(1, r[0])
                end = total if r[1] == -1 else min(total, r[1])
            chosen = lines[start - 1:end]
            return emit({"type": "text_editor_code_execution_view_result", "file_type": "text",
                         "content": "\n".join(chosen), "num_lines": len(chosen),
                         "start_line": start, "total_lines": total})
        if command == "create":
            existed = os.path.exists(full)
            os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(a["file_text"])
            return emit({"type": "text_editor_code_execution_create_result",
                         "is_file_update": existed})
        if not os.path.isfile(full):
            return fail("file_not_found", "File not found: " + path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        old, new = a["old_str"], a.get("new_str", "")
        count = text.count(old)
        if count != 1:
            return fail("invalid_tool_input",
                        "old_str must occur exactly once in %s; it occurs %d times" % (path, count))
        at = text.index(old)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text[:at] + new + text[at + len(old):])
        first = text.count("\n", 0, at) + 1
        return emit({"type": "text_editor_code_execution_str_replace_result",
                     "old_start": first, "old_lines": old.count("\n") + 1,
                     "new_start": first, "new_lines": new.count("\n") + 1,
                     "lines": ["-" + l for l in old.split("\n")] +
                              ["+" + l for l in new.split("\n")]})
    except OSError as e:
        return fail("unavailable", "%s: %s" % (type(e).__name__, e))
)PY";

bool isStringField(const QJsonObject &input, const char *name) {
    return input.value(QLatin1String(name)).isString();
}

std::optional<QString> editorProblem(const QJsonObject &input) {
    const QString command = input.value(QStringLiteral("command")).toString();
    if (!isStringField(input, "path") || input.value(QStringLiteral("path")).toString().isEmpty())
        return QStringLiteral("path must be a non-empty string");
    if (command == QLatin1String("view")) {
        const QJsonValue range = input.value(QStringLiteral("view_range"));
        if (range.isUndefined() || range.isNull())
            return std::nullopt;
        const QJsonArray r = range.toArray();
        if (r.size() != 2 || !r.at(0).isDouble() || !r.at(1).isDouble())
            return QStringLiteral("view_range must be [start_line, end_line]");
        return std::nullopt;
    }
    if (command == QLatin1String("create"))
        return isStringField(input, "file_text")
                   ? std::nullopt
                   : std::optional<QString>(QStringLiteral("create needs file_text (a string)"));
    if (command == QLatin1String("str_replace")) {
        if (!isStringField(input, "old_str") ||
            input.value(QStringLiteral("old_str")).toString().isEmpty())
            return QStringLiteral("str_replace needs old_str (a non-empty string)");
        if (input.contains(QStringLiteral("new_str")) && !isStringField(input, "new_str"))
            return QStringLiteral("new_str must be a string");
        return std::nullopt;
    }
    return QStringLiteral("command must be one of view, create, str_replace");
}

QJsonObject stringProperty(const QString &description) {
    return {{kType, QStringLiteral("string")}, {QStringLiteral("description"), description}};
}

QJsonObject tool(const QString &name, const QString &description, const QJsonObject &properties,
                 const QStringList &required) {
    return {{QStringLiteral("name"), name},
            {QStringLiteral("description"), description},
            {QStringLiteral("input_schema"),
             QJsonObject{{kType, QStringLiteral("object")},
                         {QStringLiteral("properties"), properties},
                         {QStringLiteral("required"), QJsonArray::fromStringList(required)}}}};
}

// The exit status a bash program reports (its SystemExit), or 0.
int returnCodeOf(const ExecutionResult &result) {
    if (!result.error)
        return 0;
    bool ok = false;
    const int code = result.error->value.toInt(&ok);
    return result.error->name == QLatin1String("SystemExit") && ok ? code : 1;
}

QJsonObject editorResultOf(const QString &stdoutText) {
    const qsizetype at = stdoutText.lastIndexOf(kEditorMarker);
    if (at < 0)
        return {};
    const QString line =
        stdoutText.mid(at + kEditorMarker.size()).section(u'\n', 0, 0, QString::SectionSkipEmpty);
    return QJsonDocument::fromJson(line.toUtf8()).object();
}

} // namespace

bool AnthropicCodeExecution::isToolType(const QString &type) {
    return type == QLatin1String("code_execution_20250522") ||
           type == QLatin1String("code_execution_20250825") ||
           type == QLatin1String("code_execution_20260120") ||
           type == QLatin1String("code_execution_20260521");
}

QString AnthropicCodeExecution::declaredToolType(const QJsonArray &tools) {
    for (const QJsonValue &t : tools) {
        const QString type = t.toObject().value(kType).toString();
        if (isToolType(type))
            return type;
    }
    return {};
}

QStringList AnthropicCodeExecution::subToolNames(const QString &toolType) {
    if (toolType == QLatin1String("code_execution_20250522"))
        return {kLegacy};
    return {kBash, kTextEditor};
}

QJsonArray AnthropicCodeExecution::clientTools(const QString &toolType) {
    if (toolType == QLatin1String("code_execution_20250522"))
        return {tool(kLegacy,
                     QStringLiteral("Runs Python code in a sandbox (no network) and returns its "
                                    "stdout, stderr and return code. Files live in /mnt/data."),
                     {{QStringLiteral("code"), stringProperty(QStringLiteral("The Python code."))}},
                     {QStringLiteral("code")})};
    return {
        tool(kBash,
             QStringLiteral("Runs a bash command in a sandbox (no network; working directory "
                            "/mnt/data, where files persist for the container) and returns its "
                            "stdout, stderr and return code. Python 3 is installed."),
             {{QStringLiteral("command"), stringProperty(QStringLiteral("The bash command."))}},
             {QStringLiteral("command")}),
        tool(kTextEditor,
             QStringLiteral("Views, creates or edits a text file in the sandbox (paths relative "
                            "to /mnt/data). view: optional view_range [start, end] (1-based, end "
                            "-1 for the last line); create: file_text; str_replace: old_str "
                            "(unique in the file) and new_str."),
             {{QStringLiteral("command"),
               QJsonObject{{kType, QStringLiteral("string")},
                           {QStringLiteral("enum"),
                            QJsonArray{QStringLiteral("view"), QStringLiteral("create"),
                                       QStringLiteral("str_replace")}}}},
              {QStringLiteral("path"), stringProperty(QStringLiteral("The file's path."))},
              {QStringLiteral("file_text"), stringProperty(QStringLiteral("create: the text."))},
              {QStringLiteral("old_str"), stringProperty(QStringLiteral("str_replace: the text "
                                                                        "to replace."))},
              {QStringLiteral("new_str"), stringProperty(QStringLiteral("str_replace: its "
                                                                        "replacement."))},
              {QStringLiteral("view_range"),
               QJsonObject{
                   {kType, QStringLiteral("array")},
                   {QStringLiteral("items"), QJsonObject{{kType, QStringLiteral("integer")}}}}}},
             {QStringLiteral("command"), QStringLiteral("path")}),
    };
}

bool AnthropicCodeExecution::keepsShellState(const QString &toolType) {
    return toolType == QLatin1String("code_execution_20260120") ||
           toolType == QLatin1String("code_execution_20260521");
}

AnthropicCodeExecution::Program AnthropicCodeExecution::programFor(const QString &name,
                                                                   const QJsonObject &input,
                                                                   bool keepsShellState) {
    Program program;
    if (name == kBash) {
        const QJsonValue command = input.value(QStringLiteral("command"));
        if (!command.isString() || command.toString().trimmed().isEmpty()) {
            program.problem = QStringLiteral("command must be a non-empty string");
            return program;
        }
        // bash from the sandbox's read-only /usr, as a child of its interpreter: the same
        // namespaces, seccomp filter and limits as Python, and its output goes through the
        // same fd captures. The exit status comes back as SystemExit (never printed).
        program.valid = true;
        QString script = command.toString();
        if (keepsShellState) // the sandbox's own /tmp: the state stays with the container
            script =
                QStringLiteral("[ -f /tmp/.loopscope-shell ] && . /tmp/.loopscope-shell\n"
                               "trap '__ls_rc=$?; { export -p; printf \"cd %q\\n\" \"$PWD\"; } "
                               ">/tmp/.loopscope-shell 2>/dev/null; exit $__ls_rc' EXIT\n") +
                script;
        program.code = QStringLiteral("# bash_code_execution: %1\n"
                                      "import subprocess as _loopscope_sp\n"
                                      "_loopscope_rc = _loopscope_sp.run([\"/usr/bin/bash\", "
                                      "\"-c\", %2], stdin=_loopscope_sp.DEVNULL, "
                                      "cwd=\"/mnt/data\").returncode\n"
                                      "del _loopscope_sp\n"
                                      "if _loopscope_rc:\n"
                                      "    raise SystemExit(_loopscope_rc)\n")
                           .arg(headline(command.toString()), pyString(script));
        return program;
    }
    if (name == kTextEditor) {
        if (const auto problem = editorProblem(input)) {
            program.problem = *problem;
            return program;
        }
        program.valid = true;
        program.code = QStringLiteral("# text_editor_code_execution: %1 %2\n")
                           .arg(input.value(QStringLiteral("command")).toString(),
                                headline(input.value(QStringLiteral("path")).toString())) +
                       QString::fromUtf8(kEditorProgram) +
                       QStringLiteral("import json as _loopscope_json\n"
                                      "_loopscope_editor(_loopscope_json.loads(%1))\n"
                                      "del _loopscope_editor, _loopscope_json\n")
                           .arg(pyString(QString::fromUtf8(
                               QJsonDocument(input).toJson(QJsonDocument::Compact))));
        return program;
    }
    if (name == kLegacy) {
        const QJsonValue code = input.value(QStringLiteral("code"));
        if (!code.isString()) {
            program.problem = QStringLiteral("code must be a string");
            return program;
        }
        program.valid = true;
        program.code = code.toString();
        return program;
    }
    program.problem = QStringLiteral("unknown code execution tool '%1'").arg(name);
    return program;
}

QJsonObject AnthropicCodeExecution::serverToolUse(const QString &id, const QString &name,
                                                  const QJsonObject &input) {
    return {{kType, QStringLiteral("server_tool_use")},
            {QStringLiteral("id"), id},
            {QStringLiteral("name"), name},
            {QStringLiteral("input"), input},
            {QStringLiteral("caller"), QJsonObject{{kType, QStringLiteral("direct")}}}};
}

QString AnthropicCodeExecution::serverToolUseId(const QString &toolUseId) {
    const QString rest =
        toolUseId.startsWith(QLatin1String("toolu_")) ? toolUseId.mid(6) : toolUseId;
    return QStringLiteral("srvtoolu_") + rest;
}

QString AnthropicCodeExecution::toolUseIdOf(const QString &serverToolUseId) {
    return serverToolUseId.startsWith(QLatin1String("srvtoolu_"))
               ? QStringLiteral("toolu_") + serverToolUseId.mid(9)
               : serverToolUseId;
}

QJsonObject AnthropicCodeExecution::errorBlock(const QString &serverToolUseId, const QString &name,
                                               const QString &errorCode, const QString &message) {
    QJsonObject error{{kType, QString(name + QStringLiteral("_tool_result_error"))},
                      {kErrorCode, errorCode}};
    if (name == kTextEditor) // only the editor's error says more than its code
        error.insert(QStringLiteral("error_message"),
                     message.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(message));
    return {{kType, QString(name + QStringLiteral("_tool_result"))},
            {QStringLiteral("tool_use_id"), serverToolUseId},
            {kContent, error}};
}

QJsonObject AnthropicCodeExecution::resultBlock(const QString &serverToolUseId, const QString &name,
                                                const ExecutionResult &result, bool executed,
                                                const QList<ContainerFile> &files) {
    if (!executed)
        return errorBlock(serverToolUseId, name, QStringLiteral("invalid_tool_input"));
    if (result.timedOut)
        return errorBlock(serverToolUseId, name, QStringLiteral("execution_time_exceeded"),
                          result.error ? result.error->value : QString());
    if (name == kTextEditor) {
        const QJsonObject content = editorResultOf(result.stdoutText);
        if (content.isEmpty())
            return errorBlock(serverToolUseId, name, QStringLiteral("unavailable"),
                              result.error
                                  ? result.error->name + QStringLiteral(": ") + result.error->value
                                  : QStringLiteral("the editor gave no result"));
        if (content.value(kType).toString().endsWith(QLatin1String("_error")))
            return errorBlock(serverToolUseId, name, content.value(kErrorCode).toString(),
                              content.value(QStringLiteral("error_message")).toString());
        return {{kType, QString(name + QStringLiteral("_tool_result"))},
                {QStringLiteral("tool_use_id"), serverToolUseId},
                {kContent, content}};
    }
    const bool bash = name == kBash;
    // Bash that could not start at all (no bash in the sandbox) is the sandbox's failure.
    if (bash && result.error && result.error->name != QLatin1String("SystemExit"))
        return errorBlock(serverToolUseId, name, QStringLiteral("unavailable"));
    QString stderrText = result.stderrText;
    int returnCode = bash ? returnCodeOf(result) : (result.error ? 1 : 0);
    if (!bash && result.error) { // Python's own report of the exception, as python3 prints it
        const QString report = result.error->traceback.isEmpty()
                                   ? result.error->name + QStringLiteral(": ") + result.error->value
                                   : result.error->traceback;
        if (!stderrText.isEmpty() && !stderrText.endsWith(u'\n'))
            stderrText += u'\n';
        stderrText += report;
        if (!stderrText.endsWith(u'\n'))
            stderrText += u'\n';
    }
    const QString prefix =
        bash ? QStringLiteral("bash_code_execution") : QStringLiteral("code_execution");
    QJsonArray outputs;
    for (const ContainerFile &file : files)
        outputs.append(QJsonObject{{kType, QString(prefix + QStringLiteral("_output"))},
                                   {QStringLiteral("file_id"), file.id}});
    return {{kType, QString(name + QStringLiteral("_tool_result"))},
            {QStringLiteral("tool_use_id"), serverToolUseId},
            {kContent, QJsonObject{{kType, QString(prefix + QStringLiteral("_result"))},
                                   {QStringLiteral("stdout"), result.stdoutText},
                                   {QStringLiteral("stderr"), stderrText},
                                   {QStringLiteral("return_code"), returnCode},
                                   {kContent, outputs}}}};
}

QString AnthropicCodeExecution::modelText(const QJsonObject &resultBlock) {
    const QJsonObject content = resultBlock.value(kContent).toObject();
    const QString type = content.value(kType).toString();
    if (type.endsWith(QLatin1String("_error"))) {
        QString text = QStringLiteral("[error] ") + content.value(kErrorCode).toString();
        if (const QString message = content.value(QStringLiteral("error_message")).toString();
            !message.isEmpty())
            text += QStringLiteral(": ") + message;
        return text;
    }
    if (type == QLatin1String("bash_code_execution_result") ||
        type == QLatin1String("code_execution_result")) {
        QString text = content.value(QStringLiteral("stdout")).toString();
        const QString stderrText = content.value(QStringLiteral("stderr")).toString();
        if (!stderrText.isEmpty())
            text += QStringLiteral("\n[stderr]\n") + stderrText;
        if (const int code = content.value(QStringLiteral("return_code")).toInt(); code != 0)
            text += QStringLiteral("\n[return code %1]").arg(code);
        for (const QJsonValue &file : content.value(kContent).toArray())
            text += QStringLiteral("\n[file written: %1]")
                        .arg(file.toObject().value(QStringLiteral("file_id")).toString());
        return text;
    }
    return QString::fromUtf8(QJsonDocument(content).toJson(QJsonDocument::Compact));
}

bool AnthropicCodeExecution::isResultBlockType(const QString &type) {
    return type == QLatin1String("code_execution_tool_result") ||
           type == QLatin1String("bash_code_execution_tool_result") ||
           type == QLatin1String("text_editor_code_execution_tool_result");
}

} // namespace loopscope
