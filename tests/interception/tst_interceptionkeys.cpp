// Keys, prefixes, the code tool's shapes, the tool_choice predicate, provider resolution and
// the pure parts of the pre-call hook (spec §2.1–2.6, §3.1–3.2).

#include "interception/codeexecutiontool.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionkeys.h"
#include "interception/providerresolver.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace loopscope;

Q_DECLARE_METATYPE(loopscope::CallType)

namespace {

QJsonObject J(const char *text) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(text), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        qFatal("bad JSON literal in test: %s", text);
    return doc.object();
}

QJsonValue V(const char *text) {
    const QByteArray wrapped = QByteArray("{\"v\":") + text + "}";
    return J(wrapped.constData()).value(QLatin1String("v"));
}

} // namespace

class TestInterceptionKeys : public QObject {
    Q_OBJECT

private slots:
    void contractStrings() {
        // These strings are LiteLLM's wire contract: a rename breaks SDKs and follow-ups.
        QCOMPARE(QString(keys::kCodeExecutionToolName), QStringLiteral("litellm_code_execution"));
        QCOMPARE(QString(keys::kActive), QStringLiteral("_code_interpreter_interception_active"));
        QCOMPARE(QString(keys::kSandboxKey),
                 QStringLiteral("_code_interpreter_interception_sandbox_key"));
        QCOMPARE(QString(keys::kSessionScoped),
                 QStringLiteral("_code_interpreter_interception_session_scoped"));
        QCOMPARE(QString(keys::kConvertedStream),
                 QStringLiteral("_code_interpreter_interception_converted_stream"));
        QCOMPARE(QString(keys::kStreamOptionsStash),
                 QStringLiteral("_code_interpreter_interception_stream_options"));
        QCOMPARE(QString(keys::kChatCompletionsSurface), QStringLiteral("chat_completions"));
        QCOMPARE(QString(keys::kResponsesSurface), QStringLiteral("responses"));
        QCOMPARE(QString(keys::kExecutionErrorPrefix), QStringLiteral("[execution error] "));
        QCOMPARE(QString(keys::kInvalidArgumentsText),
                 QStringLiteral("[invalid tool arguments: could not parse code]"));
        QCOMPARE(keys::kDefaultMaxAgenticLoops, 3);
    }

    void internalLitellmParamsInPinnedOrder() {
        QStringList names;
        for (const QLatin1String k : keys::agenticLoopInternalLitellmParams())
            names.append(QString(k));
        QCOMPARE(names, QStringList({
                            QStringLiteral("_agentic_loop_depth"),
                            QStringLiteral("_agentic_loop_fingerprints"),
                            QStringLiteral("_agentic_loop_api_surface"),
                            QStringLiteral("max_agentic_loops"),
                            QStringLiteral("_code_interpreter_interception_active"),
                            QStringLiteral("_code_interpreter_interception_sandbox_key"),
                            QStringLiteral("_code_interpreter_interception_session_scoped"),
                            QStringLiteral("_code_interpreter_interception_converted_stream"),
                            QStringLiteral("_websearch_interception_emit_native_blocks"),
                            QStringLiteral("_websearch_interception_converted_stream"),
                            QStringLiteral("_headroom_interception_converted_stream"),
                        }));
        // None of them may reach a provider.
        for (const QString &name : std::as_const(names))
            QVERIFY2(keys::isLitellmOnlyKey(name), qPrintable(name));
    }

    void internalKeyPredicate_data() {
        QTest::addColumn<QString>("key");
        QTest::addColumn<bool>("anyPrefix");
        QTest::addColumn<bool>("foreignPrefix");
        QTest::newRow("ci active")
            << QStringLiteral("_code_interpreter_interception_active") << true << false;
        QTest::newRow("ci anything")
            << QStringLiteral("_code_interpreter_interception_x") << true << false;
        QTest::newRow("websearch")
            << QStringLiteral("_websearch_interception_converted_stream") << true << true;
        QTest::newRow("compression")
            << QStringLiteral("_compression_interception_a") << true << true;
        QTest::newRow("headroom") << QStringLiteral("_headroom_interception_stream_options") << true
                                  << true;
        QTest::newRow("loop depth") << QStringLiteral("_agentic_loop_depth") << false << false;
        QTest::newRow("prefix inside")
            << QStringLiteral("x_code_interpreter_interception") << false << false;
        QTest::newRow("plain") << QStringLiteral("temperature") << false << false;
    }
    void internalKeyPredicate() {
        QFETCH(QString, key);
        QFETCH(bool, anyPrefix);
        QFETCH(bool, foreignPrefix);
        QCOMPARE(keys::isInterceptionInternalKey(key), anyPrefix);
        QCOMPARE(keys::isInterceptionInternalKey(key, keys::nonCodeInterpreterInternalPrefixes()),
                 foreignPrefix);
    }

    void providerRequestBodyDropsEveryLitellmKey() {
        const QJsonObject request =
            J(R"j({"model":"gpt-5","input":"hi","temperature":0,"metadata":{"a":1},
            "tools":[],"litellm_metadata":{"x":1},"user_api_key_hash":"h","custom_llm_provider":"openai",
            "litellm_call_id":"c","max_agentic_loops":5,"_agentic_loop_depth":1,"_agentic_loop_fingerprints":[],
            "_code_interpreter_interception_active":true,"_code_interpreter_interception_stream_options":{},
            "_websearch_interception_converted_stream":true})j");
        QCOMPARE(
            keys::providerRequestBody(request),
            J(R"j({"model":"gpt-5","input":"hi","temperature":0,"metadata":{"a":1},"tools":[]})j"));
    }

    void truthiness_data() {
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<bool>("truthy");
        QTest::newRow("absent") << QJsonValue(QJsonValue::Undefined) << false;
        QTest::newRow("null") << V("null") << false;
        QTest::newRow("false") << V("false") << false;
        QTest::newRow("0") << V("0") << false;
        QTest::newRow("empty string") << V("\"\"") << false;
        QTest::newRow("empty list") << V("[]") << false;
        QTest::newRow("empty map") << V("{}") << false;
        QTest::newRow("true") << V("true") << true;
        QTest::newRow("1") << V("1") << true;
        QTest::newRow("string 0") << V("\"0\"") << true;
        QTest::newRow("list") << V("[0]") << true;
    }
    void truthiness() {
        QFETCH(QJsonValue, value);
        QFETCH(bool, truthy);
        QCOMPARE(keys::isTruthy(value), truthy);
    }

    void convertedStreamHelpers() {
        const QJsonObject converted = keys::asConvertedStream(
            J(R"j({"stream":true,"stream_options":{"include_usage":true},"a":1})j"),
            keys::kCodeInterpreterPrefix);
        QCOMPARE(converted,
                 J(R"j({"stream":false,"a":1,"_code_interpreter_interception_converted_stream":true,
                                   "_code_interpreter_interception_stream_options":{"include_usage":true}})j"));
        QVERIFY(keys::convertedStreamRequested(converted));
        QCOMPARE(keys::stashedStreamOptions(converted),
                 std::optional<QJsonValue>(V(R"j({"include_usage":true})j")));
        // null stream_options are dropped, not stashed.
        const QJsonObject nullOptions = keys::asConvertedStream(
            J(R"j({"stream":true,"stream_options":null})j"), keys::kWebsearchPrefix);
        QCOMPARE(nullOptions,
                 J(R"j({"stream":false,"_websearch_interception_converted_stream":true})j"));
        QVERIFY(!keys::stashedStreamOptions(nullOptions).has_value());
        // Lookup order: code interpreter, headroom, websearch.
        QCOMPARE(keys::stashedStreamOptions(J(R"j({"_websearch_interception_stream_options":1,
                                                  "_headroom_interception_stream_options":2})j")),
                 std::optional<QJsonValue>(QJsonValue(2)));
        QVERIFY(!keys::convertedStreamRequested(J(R"j({"stream":true})j")));
    }

    void toolShapes() {
        const QJsonObject params =
            J(R"j({"type":"object","properties":{"code":{"type":"string"}},"required":["code"]})j");
        QJsonObject responses = J(R"j({"type":"function","name":"litellm_code_execution",
            "description":"Execute python code in a sandbox and return stdout."})j");
        responses.insert(QStringLiteral("parameters"), params);
        QCOMPARE(CodeExecutionTool::functionTool(ToolShape::Responses), responses);
        QJsonObject function = J(R"j({"name":"litellm_code_execution",
            "description":"Execute python code in a sandbox and return stdout."})j");
        function.insert(QStringLiteral("parameters"), params);
        QCOMPARE(CodeExecutionTool::functionTool(ToolShape::Chat),
                 QJsonObject({{QStringLiteral("type"), QStringLiteral("function")},
                              {QStringLiteral("function"), function}}));
        QCOMPARE(CodeExecutionTool::functionToolChoice(ToolShape::Responses),
                 J(R"j({"type":"function","name":"litellm_code_execution"})j"));
        QCOMPARE(CodeExecutionTool::functionToolChoice(ToolShape::Chat),
                 J(R"j({"type":"function","function":{"name":"litellm_code_execution"}})j"));
    }

    void replaceNativeToolsKeepsOthersInOrder() {
        const QJsonArray tools = J(R"j({"t":[{"type":"web_search"},{"type":"code_interpreter"},
            {"type":"function","name":"mine"},{"type":"code_interpreter","container":{"type":"auto"}},"odd"]})j")
                                     .value(QLatin1String("t"))
                                     .toArray();
        const QJsonArray out = CodeExecutionTool::replaceNativeTools(tools, ToolShape::Responses);
        QCOMPARE(out.size(), 5);
        QCOMPARE(out.at(0), tools.at(0));
        QCOMPARE(out.at(1).toObject(), CodeExecutionTool::functionTool(ToolShape::Responses));
        QCOMPARE(out.at(2), tools.at(2));
        QCOMPARE(out.at(3).toObject(), CodeExecutionTool::functionTool(ToolShape::Responses));
        QCOMPARE(out.at(4), tools.at(4));
        QVERIFY(CodeExecutionTool::hasNativeCodeInterpreterTool(tools));
        QVERIFY(!CodeExecutionTool::hasNativeCodeInterpreterTool(out));
        QVERIFY(!CodeExecutionTool::hasNativeCodeInterpreterTool(
            V(R"j({"type":"code_interpreter"})j")));
    }

    void targetsCodeInterpreter_data() {
        QTest::addColumn<QJsonValue>("choice");
        QTest::addColumn<bool>("targets");
        QTest::newRow("type") << V(R"j({"type":"code_interpreter"})j") << true;
        QTest::newRow("hosted_tool")
            << V(R"j({"type":"hosted_tool","name":"code_interpreter"})j") << true;
        QTest::newRow("responses function")
            << V(R"j({"type":"function","name":"litellm_code_execution"})j") << true;
        QTest::newRow("chat function")
            << V(R"j({"type":"function","function":{"name":"litellm_code_execution"}})j") << true;
        QTest::newRow("auto") << V("\"auto\"") << false;
        QTest::newRow("required") << V("\"required\"") << false;
        QTest::newRow("none") << V("\"none\"") << false;
        QTest::newRow("other function") << V(R"j({"type":"function","name":"mine"})j") << false;
        QTest::newRow("other chat function")
            << V(R"j({"type":"function","function":{"name":"mine"}})j") << false;
        QTest::newRow("null") << V("null") << false;
    }
    void targetsCodeInterpreter() {
        QFETCH(QJsonValue, choice);
        QFETCH(bool, targets);
        QCOMPARE(CodeExecutionTool::targetsCodeInterpreter(choice), targets);
        const QJsonValue rewritten = CodeExecutionTool::rewriteToolChoice(choice, ToolShape::Chat);
        QCOMPARE(rewritten, targets
                                ? QJsonValue(CodeExecutionTool::functionToolChoice(ToolShape::Chat))
                                : choice);
    }

    void providerResolution_data() {
        QTest::addColumn<QJsonObject>("kwargs");
        QTest::addColumn<QString>("provider"); // empty = unresolved
        QTest::newRow("explicit wins")
            << J(R"j({"custom_llm_provider":"azure","model":"claude-3"})j")
            << QStringLiteral("azure");
        QTest::newRow("empty explicit ignored")
            << J(R"j({"custom_llm_provider":"","model":"gpt-4o"})j") << QStringLiteral("openai");
        QTest::newRow("gpt") << J(R"j({"model":"gpt-5"})j") << QStringLiteral("openai");
        QTest::newRow("o1") << J(R"j({"model":"o1"})j") << QStringLiteral("openai");
        QTest::newRow("o3-mini") << J(R"j({"model":"o3-mini"})j") << QStringLiteral("openai");
        QTest::newRow("o4-mini") << J(R"j({"model":"o4-mini"})j") << QStringLiteral("openai");
        QTest::newRow("o2 unknown") << J(R"j({"model":"o2-x"})j") << QString();
        QTest::newRow("chatgpt") << J(R"j({"model":"chatgpt-4o-latest"})j")
                                 << QStringLiteral("openai");
        QTest::newRow("embedding")
            << J(R"j({"model":"text-embedding-3-small"})j") << QStringLiteral("openai");
        QTest::newRow("claude") << J(R"j({"model":"claude-sonnet-4"})j")
                                << QStringLiteral("anthropic");
        QTest::newRow("gemini") << J(R"j({"model":"gemini-2.5-pro"})j") << QStringLiteral("gemini");
        QTest::newRow("vertex prefix")
            << J(R"j({"model":"vertex_ai/gemini-2.5-pro"})j") << QStringLiteral("vertex_ai");
        QTest::newRow("mistral") << J(R"j({"model":"mistral-large-latest"})j")
                                 << QStringLiteral("mistral");
        QTest::newRow("cohere") << J(R"j({"model":"command-r-plus"})j") << QStringLiteral("cohere");
        QTest::newRow("deepseek") << J(R"j({"model":"deepseek-chat"})j")
                                  << QStringLiteral("deepseek");
        QTest::newRow("grok") << J(R"j({"model":"grok-4"})j") << QStringLiteral("xai");
        QTest::newRow("prefix") << J(R"j({"model":"anthropic/claude-3"})j")
                                << QStringLiteral("anthropic");
        QTest::newRow("openrouter prefix")
            << J(R"j({"model":"openrouter/openai/gpt-5"})j") << QStringLiteral("openrouter");
        QTest::newRow("unknown prefix") << J(R"j({"model":"nowhere/gpt-5"})j") << QString();
        QTest::newRow("llama bare") << J(R"j({"model":"llama-3.1-8b"})j") << QString();
        QTest::newRow("unknown") << J(R"j({"model":"no-such-provider-xyz"})j") << QString();
        QTest::newRow("number") << J(R"j({"model":123})j") << QString();
        QTest::newRow("missing") << J(R"j({})j") << QString();
    }
    void providerResolution() {
        QFETCH(QJsonObject, kwargs);
        QFETCH(QString, provider);
        const std::optional<QString> resolved = ProviderResolver::resolve(kwargs);
        QCOMPARE(resolved.value_or(QString()), provider);
        QCOMPARE(resolved.has_value(), !provider.isEmpty());
    }

    void mintedKeysAreLongRandomHex() {
        const QRegularExpression hex32(QStringLiteral("^[0-9a-f]{32}$"));
        const QRegularExpression ciId(QStringLiteral("^ci_[0-9a-f]{32}$"));
        QSet<QString> seen;
        for (int i = 0; i < 200; ++i) {
            const QString key = CodeInterpreterInterception::mintSandboxKey();
            QVERIFY2(hex32.match(key).hasMatch(), qPrintable(key));
            seen.insert(key);
            QVERIFY(ciId.match(CodeInterpreterInterception::newCodeInterpreterCallId()).hasMatch());
        }
        QCOMPARE(seen.size(), 200);
    }

    void scrubRemovesEveryForgedCodeInterpreterRootKey() {
        // Stricter than LiteLLM (which pops only two root keys): a forged session flag would
        // otherwise keep an ephemeral sandbox alive, a forged stash would be replayed.
        QJsonObject kwargs = J(R"j({"model":"gpt-5","_code_interpreter_interception_active":true,
            "_code_interpreter_interception_sandbox_key":"k","_code_interpreter_interception_session_scoped":true,
            "_code_interpreter_interception_stream_options":"x","_code_interpreter_interception_converted_stream":true,
            "metadata":{"_code_interpreter_interception_active":true},
            "litellm_metadata":{"_agentic_loop_fingerprints":[],"_headroom_interception_a":1,"session_id":"s"}})j");
        CodeInterpreterInterception::scrubUntrustedState(kwargs);
        // `metadata` (the provider's field) is left alone, as in LiteLLM.
        QCOMPARE(kwargs,
                 J(R"j({"model":"gpt-5","metadata":{"_code_interpreter_interception_active":true},
                                "litellm_metadata":{"session_id":"s"}})j"));
    }

    void preCallWithoutSessionDropsForgedSessionFlagOnFollowUp() {
        // At depth > 0 nothing is scrubbed, but a request converted there still gets an
        // authoritative session flag: absent unless a session id exists.
        CodeInterpreterInterception interception(InterceptionSettings{}, nullptr,
                                                 static_cast<SandboxBackend *>(nullptr));
        QJsonObject kwargs = J(R"j({"tools":[{"type":"code_interpreter"}],"_agentic_loop_depth":1,
                                    "_code_interpreter_interception_session_scoped":true})j");
        QVERIFY(interception.preCallDeploymentHook(kwargs, CallType::Responses));
        QVERIFY(!kwargs.contains(keys::kSessionScoped));
        QVERIFY(!kwargs.value(keys::kLitellmMetadata).toObject().contains(keys::kSessionScoped));
    }

    void preCallCallTypes_data() {
        QTest::addColumn<CallType>("callType");
        QTest::addColumn<bool>("converted");
        QTest::addColumn<bool>("chatShape");
        QTest::newRow("completion") << CallType::Completion << true << true;
        QTest::newRow("acompletion") << CallType::ACompletion << true << true;
        QTest::newRow("responses") << CallType::Responses << true << false;
        QTest::newRow("aresponses") << CallType::AResponses << true << false;
        QTest::newRow("embedding") << CallType::Embedding << false << false;
        QTest::newRow("anthropic messages") << CallType::AnthropicMessages << false << false;
        QTest::newRow("other") << CallType::Other << false << false;
    }
    void preCallCallTypes() {
        QFETCH(CallType, callType);
        QFETCH(bool, converted);
        QFETCH(bool, chatShape);
        CodeInterpreterInterception interception(InterceptionSettings{}, nullptr,
                                                 static_cast<SandboxBackend *>(nullptr));
        QJsonObject kwargs = J(R"j({"tools":[{"type":"code_interpreter"}]})j");
        QCOMPARE(interception.preCallDeploymentHook(kwargs, callType), converted);
        if (converted) {
            QCOMPARE(kwargs.value(QLatin1String("tools")).toArray().first().toObject(),
                     CodeExecutionTool::functionTool(chatShape ? ToolShape::Chat
                                                               : ToolShape::Responses));
        }
    }

    void preCallDisabledAndScopes_data() {
        QTest::addColumn<bool>("enabled");
        QTest::addColumn<QStringList>("providers"); // "*" = all
        QTest::addColumn<QJsonObject>("kwargs");
        QTest::addColumn<bool>("converted");
        const QJsonObject openai =
            J(R"j({"tools":[{"type":"code_interpreter"}],"model":"gpt-5"})j");
        QTest::newRow("disabled") << false << QStringList{QStringLiteral("*")} << openai << false;
        QTest::newRow("all providers")
            << true << QStringList{QStringLiteral("*")} << openai << true;
        QTest::newRow("in scope by model")
            << true << QStringList{QStringLiteral("openai")} << openai << true;
        QTest::newRow("empty list = none") << true << QStringList{} << openai << false;
        QTest::newRow("unresolvable model")
            << true << QStringList{QStringLiteral("openai")}
            << J(R"j({"tools":[{"type":"code_interpreter"}],"model":"mystery"})j") << false;
    }
    void preCallDisabledAndScopes() {
        QFETCH(bool, enabled);
        QFETCH(QStringList, providers);
        QFETCH(QJsonObject, kwargs);
        QFETCH(bool, converted);
        InterceptionSettings settings;
        settings.enabled = enabled;
        if (providers != QStringList{QStringLiteral("*")})
            settings.enabledProviders = providers;
        CodeInterpreterInterception interception(settings, nullptr,
                                                 static_cast<SandboxBackend *>(nullptr));
        QCOMPARE(interception.preCallDeploymentHook(kwargs, CallType::AResponses), converted);
        QCOMPARE(kwargs.contains(keys::kActive), converted);
    }

    void preCallLeavesNonStreamingStreamOptionsAlone() {
        // Only a forced non-stream call must lose stream_options; otherwise the provider decides.
        CodeInterpreterInterception interception(InterceptionSettings{}, nullptr,
                                                 static_cast<SandboxBackend *>(nullptr));
        QJsonObject kwargs = J(
            R"j({"tools":[{"type":"code_interpreter"}],"stream_options":{"include_usage":true}})j");
        QVERIFY(interception.preCallDeploymentHook(kwargs, CallType::ACompletion));
        QCOMPARE(kwargs.value(QLatin1String("stream_options")), V(R"j({"include_usage":true})j"));
        QVERIFY(!kwargs.contains(keys::kConvertedStream));
        QVERIFY(!kwargs.contains(keys::kStreamOptionsStash));
    }

    void sessionIdLookup_data() {
        QTest::addColumn<QJsonObject>("kwargs");
        QTest::addColumn<QString>("sandboxKey"); // empty = minted
        QTest::newRow("metadata wins")
            << J(R"j({"metadata":{"session_id":"m"},"litellm_metadata":{"session_id":"l"}})j")
            << QStringLiteral("m");
        QTest::newRow("empty metadata id falls back") << J(R"j({"metadata":{"session_id":""},
                                                                "litellm_metadata":{"session_id":"l"}})j")
                                                      << QStringLiteral("l");
        QTest::newRow("non-string ignored") << J(R"j({"metadata":{"session_id":5}})j") << QString();
        QTest::newRow("hash prefix")
            << J(R"j({"metadata":{"session_id":"s"},"user_api_key_hash":"h"})j")
            << QStringLiteral("h:s");
        QTest::newRow("non-string hash ignored")
            << J(R"j({"metadata":{"session_id":"s"},"user_api_key_hash":7})j")
            << QStringLiteral("s");
    }
    void sessionIdLookup() {
        QFETCH(QJsonObject, kwargs);
        QFETCH(QString, sandboxKey);
        CodeInterpreterInterception interception(InterceptionSettings{}, nullptr,
                                                 static_cast<SandboxBackend *>(nullptr));
        kwargs.insert(QStringLiteral("tools"), QJsonArray{J(R"j({"type":"code_interpreter"})j")});
        QVERIFY(interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        if (sandboxKey.isEmpty()) {
            QCOMPARE(kwargs.value(keys::kSandboxKey).toString().size(), 32);
            QVERIFY(!kwargs.contains(keys::kSessionScoped));
        } else {
            QCOMPARE(kwargs.value(keys::kSandboxKey).toString(), sandboxKey);
            QCOMPARE(kwargs.value(keys::kSessionScoped), QJsonValue(true));
        }
    }

    void parseCodeArguments_data() {
        QTest::addColumn<QString>("arguments");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("code");
        QTest::newRow("empty runs empty code") << QString() << true << QString();
        QTest::newRow("object") << QStringLiteral("{\"code\":\"print(1)\"}") << true
                                << QStringLiteral("print(1)");
        QTest::newRow("no code key") << QStringLiteral("{}") << true << QString();
        QTest::newRow("not json") << QStringLiteral("not-json") << false << QString();
        QTest::newRow("null") << QStringLiteral("null") << false << QString();
        QTest::newRow("list") << QStringLiteral("[1]") << false << QString();
        QTest::newRow("string") << QStringLiteral("\"x\"") << false << QString();
        QTest::newRow("code null") << QStringLiteral("{\"code\":null}") << false << QString();
    }
    void parseCodeArguments() {
        QFETCH(QString, arguments);
        QFETCH(bool, ok);
        QFETCH(QString, code);
        const ParsedCodeArguments parsed =
            CodeInterpreterInterception::parseCodeArguments(arguments);
        QCOMPARE(parsed.ok, ok);
        QCOMPARE(parsed.code, code);
    }

    // What the model gets (toolOutputFor) and what the client's logs show (clientLogsFor).
    void toolOutput_data() {
        QTest::addColumn<QString>("stdoutText");
        QTest::addColumn<QString>("errorName");
        QTest::addColumn<QString>("errorValue");
        QTest::addColumn<QString>("traceback");
        QTest::addColumn<bool>("hasError");
        QTest::addColumn<QString>("fedBack");
        QTest::addColumn<QString>("logs");
        const QString tb = QStringLiteral("Traceback (most recent call last):\n"
                                          "  File \"<stdin>\", line 2, in <module>\n"
                                          "ValueError: boom\n");
        QTest::newRow("stdout") << QStringLiteral("42\n") << QString() << QString() << QString()
                                << false << QStringLiteral("42\n") << QStringLiteral("42\n");
        QTest::newRow("stdout, then the error, then the traceback")
            << QStringLiteral("partial") << QStringLiteral("ValueError") << QStringLiteral("boom")
            << tb << true << QString(QStringLiteral("partial\n[execution error] boom\n") + tb)
            << QString(QStringLiteral("partial\n") + tb);
        QTest::newRow("no stdout, no traceback: LiteLLM's string")
            << QString() << QStringLiteral("ValueError") << QStringLiteral("boom") << QString()
            << true << QStringLiteral("[execution error] boom")
            << QStringLiteral("ValueError: boom\n");
        QTest::newRow("error name when no value")
            << QString() << QStringLiteral("KeyboardInterrupt") << QString() << QString() << true
            << QStringLiteral("[execution error] KeyboardInterrupt")
            << QStringLiteral("KeyboardInterrupt\n");
        QTest::newRow("colours removed")
            << QStringLiteral("a\n") << QStringLiteral("ZeroDivisionError")
            << QStringLiteral("division by zero")
            << QStringLiteral("\x1b[0;31mZeroDivisionError\x1b[0m: division by zero\n") << true
            << QStringLiteral("a\n[execution error] division by zero\n"
                              "ZeroDivisionError: division by zero\n")
            << QStringLiteral("a\nZeroDivisionError: division by zero\n");
    }
    void toolOutput() {
        QFETCH(QString, stdoutText);
        QFETCH(QString, errorName);
        QFETCH(QString, errorValue);
        QFETCH(QString, traceback);
        QFETCH(bool, hasError);
        QFETCH(QString, fedBack);
        QFETCH(QString, logs);
        ExecutionResult result;
        result.stdoutText = stdoutText;
        result.stderrText = QStringLiteral("never fed back");
        if (hasError)
            result.error = ExecutionError{errorName, errorValue, traceback};
        QCOMPARE(CodeInterpreterInterception::toolOutputFor(result), fedBack);
        QCOMPARE(CodeInterpreterInterception::clientLogsFor(result), logs);
    }

    // A run's own notes (an image left out) reach the model before the pictures and files, and
    // never the client's logs.
    void runNotesGoToTheModelOnly() {
        ExecutionResult result;
        result.stdoutText = QStringLiteral("printed\n");
        result.notes = {QStringLiteral("[loopscope] image-9.png not returned: too big")};
        result.images = {SandboxImage{QStringLiteral("image-1.png"), QStringLiteral("image/png"),
                                      QByteArray("png")}};
        QCOMPARE(CodeInterpreterInterception::clientLogsFor(result), QStringLiteral("printed\n"));
        QCOMPARE(CodeInterpreterInterception::mediaNotes(result, {}),
                 QStringLiteral("[loopscope] image-9.png not returned: too big\n"
                                "[image image-1.png (image/png, 3 bytes) was produced and shown "
                                "to the user]\n"));
    }

    void longTracebackKeepsItsEnd() {
        ExecutionResult result;
        result.error = ExecutionError{
            QStringLiteral("RecursionError"), QStringLiteral("maximum recursion depth exceeded"),
            QStringLiteral("Traceback (most recent call last):\n") +
                QStringLiteral("  File \"<stdin>\", line 1, in f\n").repeated(2000) +
                QStringLiteral("RecursionError: maximum recursion depth exceeded\n")};
        const QString fed = CodeInterpreterInterception::toolOutputFor(result);
        QVERIFY2(fed.size() < CodeInterpreterInterception::kMaxTracebackChars + 200,
                 qPrintable(QString::number(fed.size())));
        QVERIFY(fed.startsWith(
            QStringLiteral("[execution error] maximum recursion depth exceeded\n[... ")));
        QVERIFY(fed.contains(QStringLiteral("characters of the traceback omitted")));
        QVERIFY(fed.endsWith(QStringLiteral("RecursionError: maximum recursion depth exceeded\n")));
    }

    void injectBeforeTheFinalAnswer_data() {
        QTest::addColumn<QJsonObject>("response");
        QTest::addColumn<QStringList>("types");
        const QStringList ci = {QStringLiteral("code_interpreter_call")};
        // The calls ran before the final answer was written: they come before all of it,
        // its reasoning included (LiteLLM puts them before the first message).
        QTest::newRow("before the answer's reasoning")
            << J(R"j({"output":[{"type":"reasoning"},{"type":"message"},{"type":"message"}]})j")
            << QStringList{ci.first(), QStringLiteral("reasoning"), QStringLiteral("message"),
                           QStringLiteral("message")};
        QTest::newRow("no message") << J(R"j({"output":[{"type":"reasoning"}]})j")
                                    << QStringList{ci.first(), QStringLiteral("reasoning")};
        QTest::newRow("chat completion unchanged") << J(R"j({"choices":[]})j") << QStringList{};
        QTest::newRow("output not a list unchanged") << J(R"j({"output":"x"})j") << QStringList{};
    }
    void injectBeforeTheFinalAnswer() {
        QFETCH(QJsonObject, response);
        QFETCH(QStringList, types);
        const QJsonArray calls{CodeInterpreterInterception::codeInterpreterCallRecord(
            QStringLiteral("print(1)"), QJsonValue(QStringLiteral("sbx")), QStringLiteral("1"))};
        const QJsonObject out =
            CodeInterpreterInterception::injectCodeInterpreterCalls(response, calls);
        if (types.isEmpty()) {
            QCOMPARE(out, response);
            return;
        }
        QStringList got;
        for (const QJsonValue &item : out.value(QLatin1String("output")).toArray())
            got.append(item.toObject().value(QLatin1String("type")).toString());
        QCOMPARE(got, types);
    }

    // The driver's record of every round comes first as it happened, then the final answer.
    void earlierOutputKeepsTheOrderItHappened() {
        const QJsonObject call = CodeInterpreterInterception::codeInterpreterCallRecord(
            QStringLiteral("print(1)"), QJsonValue(QStringLiteral("sbx")), QStringLiteral("1"));
        const QJsonObject metadata{
            {QStringLiteral("code_interpreter_calls"), QJsonArray{call}},
            {QStringLiteral("earlier_output"),
             QJsonArray{J(R"j({"type":"reasoning","id":"rs_1","summary":[]})j"),
                        J(R"j({"type":"message","id":"msg_c"})j"), call}}};
        const QJsonObject out = CodeInterpreterInterception::injectCodeInterpreterCalls(
            J(R"j({"output":[{"type":"reasoning","id":"rs_2"},{"type":"message","id":"msg_f"}]})j"),
            CodeInterpreterInterception::earlierOutputOf(metadata));
        QStringList ids;
        for (const QJsonValue &item : out.value(QLatin1String("output")).toArray())
            ids << item.toObject().value(QLatin1String("id")).toString();
        QCOMPARE(ids, (QStringList{QStringLiteral("rs_1"), QStringLiteral("msg_c"),
                                   call.value(QLatin1String("id")).toString(),
                                   QStringLiteral("rs_2"), QStringLiteral("msg_f")}));
        // Without the driver's record (LiteLLM's plan metadata) the calls alone come first.
        QCOMPARE(CodeInterpreterInterception::earlierOutputOf(
                     {{QStringLiteral("code_interpreter_calls"), QJsonArray{call}}}),
                 QJsonValue(QJsonArray{call}));
    }

    void codeInterpreterCallRecordShape() {
        const QJsonObject record = CodeInterpreterInterception::codeInterpreterCallRecord(
            QStringLiteral("print(1)"), QJsonValue(), QString());
        QStringList recordKeys = record.keys();
        recordKeys.sort();
        QCOMPARE(recordKeys, QStringList({QStringLiteral("code"), QStringLiteral("container_id"),
                                          QStringLiteral("id"), QStringLiteral("outputs"),
                                          QStringLiteral("status"), QStringLiteral("type")}));
        QVERIFY(record.value(QLatin1String("container_id")).isNull());
        QCOMPARE(record.value(QLatin1String("outputs")), QJsonValue(QJsonArray()));
    }
};

QTEST_GUILESS_MAIN(TestInterceptionKeys)
#include "tst_interceptionkeys.moc"
