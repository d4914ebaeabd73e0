// AnthropicCodeExecution: the sub-tools the upstream model gets for each tool version, which
// inputs run, and the result blocks in Anthropic's exact shapes (messages.d.ts of
// @anthropic-ai/sdk: BashCodeExecutionToolResultBlock, TextEditorCodeExecution*,
// CodeExecutionToolResultBlock and their *_tool_result_error variants).
#include "interception/anthropiccodeexecution.h"

#include <QJsonDocument>
#include <QTest>

using loopscope::AnthropicCodeExecution;
using loopscope::ContainerFile;
using loopscope::ExecutionError;
using loopscope::ExecutionResult;

namespace {

QJsonObject json(const char *text) {
    return QJsonDocument::fromJson(QByteArray(text)).object();
}

ExecutionResult result(const QString &out, const QString &err = {},
                       std::optional<ExecutionError> error = std::nullopt, bool timedOut = false) {
    ExecutionResult r;
    r.stdoutText = out;
    r.stderrText = err;
    r.error = std::move(error);
    r.timedOut = timedOut;
    return r;
}

} // namespace

class TestAnthropicCodeExecution : public QObject {
    Q_OBJECT
private slots:
    void toolVersions_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<bool>("known");
        QTest::addColumn<QStringList>("subTools");
        const QStringList current{QStringLiteral("bash_code_execution"),
                                  QStringLiteral("text_editor_code_execution")};
        QTest::newRow("20250825") << "code_execution_20250825" << true << current;
        QTest::newRow("20260120") << "code_execution_20260120" << true << current;
        QTest::newRow("20260521") << "code_execution_20260521" << true << current;
        QTest::newRow("legacy") << "code_execution_20250522" << true
                                << QStringList{QStringLiteral("code_execution")};
        QTest::newRow("web search") << "web_search_20250305" << false << current;
    }
    void toolVersions() {
        QFETCH(QString, type);
        QFETCH(bool, known);
        QFETCH(QStringList, subTools);
        QCOMPARE(AnthropicCodeExecution::isToolType(type), known);
        const QJsonArray tools{QJsonObject{{QStringLiteral("name"), QStringLiteral("x")},
                                           {QStringLiteral("input_schema"), QJsonObject()}},
                               QJsonObject{{QStringLiteral("type"), type}}};
        QCOMPARE(AnthropicCodeExecution::declaredToolType(tools), known ? type : QString());
        if (!known)
            return;
        QStringList names;
        for (const QJsonValue &t : AnthropicCodeExecution::clientTools(type)) {
            names << t.toObject().value(QStringLiteral("name")).toString();
            // Ordinary client tools: an input schema, never a server tool type.
            QVERIFY(t.toObject().value(QStringLiteral("input_schema")).isObject());
            QVERIFY(!t.toObject().contains(QStringLiteral("type")));
        }
        QCOMPARE(names, subTools);
    }

    void programs_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QJsonObject>("input");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("needle"); // in the code when valid, in the problem when not
        QTest::newRow("bash") << "bash_code_execution" << json(R"({"command":"ls -la"})") << true
                              << "[\"/usr/bin/bash\", \"-c\", \"ls -la\"]";
        QTest::newRow("bash quotes")
            << "bash_code_execution" << json("{\"command\":\"echo \\\"a\\\" 'b'\\n\"}") << true
            << "\"echo \\\"a\\\" 'b'\\n\"";
        QTest::newRow("bash empty")
            << "bash_code_execution" << json(R"({"command":"  "})") << false << "command";
        QTest::newRow("bash wrong key")
            << "bash_code_execution" << json(R"({"cmd":"ls"})") << false << "command";
        QTest::newRow("view") << "text_editor_code_execution"
                              << json(R"({"command":"view","path":"a.txt","view_range":[1,-1]})")
                              << true << "_loopscope_editor(";
        QTest::newRow("view bad range")
            << "text_editor_code_execution"
            << json(R"({"command":"view","path":"a.txt","view_range":[1]})") << false
            << "view_range";
        QTest::newRow("create no text")
            << "text_editor_code_execution" << json(R"({"command":"create","path":"a.txt"})")
            << false << "file_text";
        QTest::newRow("replace no old")
            << "text_editor_code_execution"
            << json(R"({"command":"str_replace","path":"a.txt","new_str":"x"})") << false
            << "old_str";
        QTest::newRow("no path") << "text_editor_code_execution" << json(R"({"command":"view"})")
                                 << false << "path";
        QTest::newRow("unknown command")
            << "text_editor_code_execution" << json(R"({"command":"delete","path":"a"})") << false
            << "command";
        QTest::newRow("legacy") << "code_execution" << json("{\"code\":\"print(1)\"}") << true
                                << "print(1)";
        QTest::newRow("legacy no code")
            << "code_execution" << json(R"({"code":1})") << false << "code";
        QTest::newRow("unknown tool") << "web_search" << json("{}") << false << "web_search";
    }
    void programs() {
        QFETCH(QString, name);
        QFETCH(QJsonObject, input);
        QFETCH(bool, valid);
        QFETCH(QString, needle);
        const AnthropicCodeExecution::Program program =
            AnthropicCodeExecution::programFor(name, input);
        QCOMPARE(program.valid, valid);
        QVERIFY2((valid ? program.code : program.problem).contains(needle),
                 qPrintable(valid ? program.code : program.problem));
        QCOMPARE(program.code.isEmpty(), !valid);
    }

    void shellStateOnlyForReplVersions_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<bool>("kept");
        QTest::newRow("20250825") << "code_execution_20250825" << false;
        QTest::newRow("20260120") << "code_execution_20260120" << true;
        QTest::newRow("20260521") << "code_execution_20260521" << true;
        QTest::newRow("legacy") << "code_execution_20250522" << false;
    }
    void shellStateOnlyForReplVersions() {
        QFETCH(QString, type);
        QFETCH(bool, kept);
        QCOMPARE(AnthropicCodeExecution::keepsShellState(type), kept);
        const QString code = AnthropicCodeExecution::programFor(
                                 QStringLiteral("bash_code_execution"), json(R"({"command":"ls"})"),
                                 AnthropicCodeExecution::keepsShellState(type))
                                 .code;
        QCOMPARE(code.contains(QStringLiteral("/tmp/.loopscope-shell")), kept);
    }

    void results_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<ExecutionResult>("run");
        QTest::addColumn<bool>("executed");
        QTest::addColumn<QJsonObject>("content");
        QTest::newRow("bash ok")
            << "bash_code_execution" << result(QStringLiteral("hi\n")) << true
            << json(R"({"type":"bash_code_execution_result","stdout":"hi\n","stderr":"",
                        "return_code":0,"content":[]})");
        QTest::newRow("bash exit 3")
            << "bash_code_execution"
            << result(QStringLiteral("a"), QStringLiteral("e\n"),
                      ExecutionError{QStringLiteral("SystemExit"), QStringLiteral("3"), {}})
            << true << json(R"({"type":"bash_code_execution_result","stdout":"a","stderr":"e\n",
                        "return_code":3,"content":[]})");
        QTest::newRow("bash not runnable")
            << "bash_code_execution"
            << result(
                   {}, {},
                   ExecutionError{QStringLiteral("FileNotFoundError"), QStringLiteral("bash"), {}})
            << true
            << json(
                   R"({"type":"bash_code_execution_tool_result_error","error_code":"unavailable"})");
        QTest::newRow("bash timeout")
            << "bash_code_execution"
            << result(QStringLiteral("started\n"), {},
                      ExecutionError{QStringLiteral("TimeoutError"), QStringLiteral("slow"), {}},
                      true)
            << true << json(R"({"type":"bash_code_execution_tool_result_error",
                        "error_code":"execution_time_exceeded"})");
        QTest::newRow("bash invalid input")
            << "bash_code_execution" << result({}) << false
            << json(R"({"type":"bash_code_execution_tool_result_error",
                        "error_code":"invalid_tool_input"})");
        QTest::newRow("legacy error")
            << "code_execution"
            << result(QStringLiteral("1\n"), {},
                      ExecutionError{QStringLiteral("ValueError"), QStringLiteral("x"), {}})
            << true
            << json(R"({"type":"code_execution_result","stdout":"1\n","stderr":"ValueError: x\n",
                        "return_code":1,"content":[]})");
        QTest::newRow("editor create")
            << "text_editor_code_execution"
            << result(QStringLiteral("\x1eloopscope-editor {\"type\":"
                                     "\"text_editor_code_execution_create_result\","
                                     "\"is_file_update\":true}\n"))
            << true
            << json(R"({"type":"text_editor_code_execution_create_result","is_file_update":true})");
        QTest::newRow("editor error")
            << "text_editor_code_execution"
            << result(QStringLiteral(
                   "\x1eloopscope-editor "
                   "{\"type\":\"text_editor_code_execution_tool_result_error\","
                   "\"error_code\":\"file_not_found\",\"error_message\":\"File not found: a\"}\n"))
            << true << json(R"({"type":"text_editor_code_execution_tool_result_error",
                        "error_code":"file_not_found","error_message":"File not found: a"})");
        QTest::newRow("editor silent")
            << "text_editor_code_execution" << result({}) << true
            << json(R"({"type":"text_editor_code_execution_tool_result_error",
                        "error_code":"unavailable","error_message":"the editor gave no result"})");
        QTest::newRow("editor invalid input")
            << "text_editor_code_execution" << result({}) << false
            << json(R"({"type":"text_editor_code_execution_tool_result_error",
                        "error_code":"invalid_tool_input","error_message":null})");
    }
    void results() {
        QFETCH(QString, name);
        QFETCH(ExecutionResult, run);
        QFETCH(bool, executed);
        QFETCH(QJsonObject, content);
        const QJsonObject block =
            AnthropicCodeExecution::resultBlock(QStringLiteral("srvtoolu_1"), name, run, executed);
        QCOMPARE(block.value(QStringLiteral("type")).toString(),
                 name + QStringLiteral("_tool_result"));
        QCOMPARE(block.value(QStringLiteral("tool_use_id")).toString(),
                 QStringLiteral("srvtoolu_1"));
        QCOMPARE(block.value(QStringLiteral("content")).toObject(), content);
    }

    void filesBecomeOutputBlocks() {
        ContainerFile file;
        file.id = QStringLiteral("cfile_1");
        const QJsonObject block = AnthropicCodeExecution::resultBlock(
            QStringLiteral("srvtoolu_1"), QStringLiteral("bash_code_execution"), result(QString()),
            true, {file});
        QCOMPARE(block.value(QStringLiteral("content")).toObject().value(QStringLiteral("content")),
                 QJsonArray{json(R"({"type":"bash_code_execution_output","file_id":"cfile_1"})")});
        QCOMPARE(AnthropicCodeExecution::modelText(block),
                 QStringLiteral("\n[file written: cfile_1]"));
    }

    void modelText_data() {
        QTest::addColumn<QJsonObject>("content");
        QTest::addColumn<QString>("text");
        QTest::newRow("ok") << json(R"({"type":"bash_code_execution_result","stdout":"1\n",
                                        "stderr":"","return_code":0,"content":[]})")
                            << "1\n";
        QTest::newRow("failed") << json(R"({"type":"bash_code_execution_result","stdout":"",
                                            "stderr":"no\n","return_code":2,"content":[]})")
                                << "\n[stderr]\nno\n\n[return code 2]";
        QTest::newRow("error") << json(R"({"type":"text_editor_code_execution_tool_result_error",
                                           "error_code":"file_not_found","error_message":"gone"})")
                               << "[error] file_not_found: gone";
        QTest::newRow("editor")
            << json(R"({"type":"text_editor_code_execution_create_result",
                                            "is_file_update":false})")
            << R"({"is_file_update":false,"type":"text_editor_code_execution_create_result"})";
    }
    void modelText() {
        QFETCH(QJsonObject, content);
        QFETCH(QString, text);
        QCOMPARE(AnthropicCodeExecution::modelText({{QStringLiteral("content"), content}}), text);
    }

    void serverToolUseIds() {
        QCOMPARE(AnthropicCodeExecution::serverToolUseId(QStringLiteral("toolu_01A")),
                 QStringLiteral("srvtoolu_01A"));
        QCOMPARE(AnthropicCodeExecution::toolUseIdOf(QStringLiteral("srvtoolu_01A")),
                 QStringLiteral("toolu_01A"));
        const QJsonObject block = AnthropicCodeExecution::serverToolUse(
            QStringLiteral("srvtoolu_01A"), QStringLiteral("bash_code_execution"),
            json(R"({"command":"ls"})"));
        QCOMPARE(block, json(R"({"type":"server_tool_use","id":"srvtoolu_01A",
                                 "name":"bash_code_execution","input":{"command":"ls"},
                                 "caller":{"type":"direct"}})"));
    }
};

QTEST_APPLESS_MAIN(TestAnthropicCodeExecution)
#include "tst_anthropiccodeexecution.moc"
