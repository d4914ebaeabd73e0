// Conformance: pre-call deployment hook, internal-key predicate, provider resolution and
// configuration (reference cases named one to one; see README.md).

#include "config/yamldocument.h"
#include "conformancefixture.h"
#include "interception/codeexecutiontool.h"

#include <QTest>

using namespace loopscope;
using namespace loopscope::conformance;

Q_DECLARE_METATYPE(loopscope::CallType)

class TestPreCall : public QObject {
    Q_OBJECT

private slots:
    void test_interception_internal_key_prefix_sets_preserve_code_interpreter_state() {
        // The default set covers our own marker; the foreign-only set must not, or the plan
        // would strip the code interpreter's state from its follow-ups.
        QVERIFY(keys::isInterceptionInternalKey(
            QStringLiteral("_code_interpreter_interception_active")));
        QVERIFY(!keys::isInterceptionInternalKey(
            QStringLiteral("_code_interpreter_interception_active"),
            keys::nonCodeInterpreterInternalPrefixes()));
        QVERIFY(keys::isInterceptionInternalKey(
            QStringLiteral("_websearch_interception_converted_stream"),
            keys::nonCodeInterpreterInternalPrefixes()));
    }

    void test_pre_call_converts_code_interpreter_tool() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai"})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        const QJsonArray tools = kwargs.value(QLatin1String("tools")).toArray();
        QStringList names;
        for (const QJsonValue &tool : tools) {
            QVERIFY2(tool.toObject().value(QLatin1String("type")).toString() !=
                         QLatin1String("code_interpreter"),
                     "the hosted tool must be gone");
            const QJsonObject t = tool.toObject();
            names.append(t.contains(QLatin1String("name"))
                             ? t.value(QLatin1String("name")).toString()
                             : t.value(QLatin1String("function"))
                                   .toObject()
                                   .value(QLatin1String("name"))
                                   .toString());
        }
        QVERIFY(names.contains(str(keys::kCodeExecutionToolName)));
    }

    void test_pre_call_converts_code_interpreter_tool_for_chat_completions() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "tool_choice":{"type":"code_interpreter"},
                                   "custom_llm_provider":"openai"})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::ACompletion));
        const QJsonObject tool = kwargs.value(QLatin1String("tools")).toArray().first().toObject();
        QCOMPARE(tool.value(QLatin1String("type")).toString(), QStringLiteral("function"));
        const QJsonObject function = tool.value(QLatin1String("function")).toObject();
        QCOMPARE(function.value(QLatin1String("name")).toString(),
                 str(keys::kCodeExecutionToolName));
        QCOMPARE(
            function.value(QLatin1String("parameters")).toObject().value(QLatin1String("required")),
            QJsonValue(QJsonArray{QStringLiteral("code")}));
        QCOMPARE(
            kwargs.value(QLatin1String("tool_choice")),
            QJsonValue(J(R"j({"type":"function","function":{"name":"litellm_code_execution"}})j")));
        const QJsonObject metadata = kwargs.value(QLatin1String("litellm_metadata")).toObject();
        QCOMPARE(metadata.value(keys::kActive), QJsonValue(true));
        QCOMPARE(metadata.value(keys::kSandboxKey), kwargs.value(keys::kSandboxKey));
        QVERIFY(!kwargs.value(keys::kSandboxKey).toString().isEmpty());
    }

    void test_pre_call_rewrites_forced_code_interpreter_tool_choice_data() {
        QTest::addColumn<QJsonObject>("toolChoice");
        QTest::newRow("type code_interpreter") << J(R"j({"type":"code_interpreter"})j");
        QTest::newRow("hosted_tool named code_interpreter")
            << J(R"j({"type":"hosted_tool","name":"code_interpreter"})j");
    }
    void test_pre_call_rewrites_forced_code_interpreter_tool_choice() {
        QFETCH(QJsonObject, toolChoice);
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai"})j");
        kwargs.insert(QLatin1String("tool_choice"), toolChoice);
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        // Otherwise the request names a tool that no longer exists and the provider rejects it.
        QCOMPARE(kwargs.value(QLatin1String("tool_choice")),
                 QJsonValue(J(R"j({"type":"function","name":"litellm_code_execution"})j")));
    }

    void test_pre_call_leaves_unrelated_tool_choice_untouched() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "tool_choice":"auto","custom_llm_provider":"openai"})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        QCOMPARE(kwargs.value(QLatin1String("tool_choice")), QJsonValue(QStringLiteral("auto")));
    }

    void test_pre_call_noop_on_non_responses() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai"})j");
        const QJsonObject before = kwargs;
        QVERIFY(!h.interception.preCallDeploymentHook(kwargs, CallType::AEmbedding));
        QCOMPARE(kwargs, before);
    }

    void test_pre_call_noop_on_chat_completion_without_code_interpreter_tool() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"web_search"}],"custom_llm_provider":"openai"})j");
        QVERIFY(!h.interception.preCallDeploymentHook(kwargs, CallType::ACompletion));
        QVERIFY(!kwargs.contains(keys::kActive));
        QVERIFY(!kwargs.contains(keys::kSandboxKey));
    }

    void test_pre_call_mints_server_sandbox_key() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai",
                                   "litellm_call_id":"caller-supplied",
                                   "_code_interpreter_interception_sandbox_key":"caller-forged"})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        const QString key = kwargs.value(keys::kSandboxKey).toString();
        QVERIFY(key != QLatin1String("caller-forged"));
        QVERIFY(key != QLatin1String("caller-supplied"));
        QVERIFY(key.size() >= 16);
    }

    void test_pre_call_forces_non_stream_for_loop() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai","stream":true})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        QCOMPARE(kwargs.value(QLatin1String("stream")), QJsonValue(false));
        // The flag tells the driver to replay the final response as a stream.
        QCOMPARE(kwargs.value(keys::kConvertedStream), QJsonValue(true));
    }

    void test_pre_call_moves_stream_options_off_the_forced_non_stream_call_data() {
        QTest::addColumn<CallType>("callType");
        QTest::newRow("acompletion") << CallType::ACompletion;
        QTest::newRow("aresponses") << CallType::AResponses;
    }
    void test_pre_call_moves_stream_options_off_the_forced_non_stream_call() {
        QFETCH(CallType, callType);
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"azure","stream":true,
                                   "stream_options":{"include_usage":true}})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, callType));
        QCOMPARE(kwargs.value(QLatin1String("stream")), QJsonValue(false));
        QVERIFY(!kwargs.contains(QLatin1String("stream_options")));
        QCOMPARE(kwargs.value(QLatin1String("_code_interpreter_interception_stream_options")),
                 QJsonValue(J(R"j({"include_usage":true})j")));
    }

    void test_pre_call_strips_client_forged_marker_on_initial_request() {
        Harness h;
        QJsonObject kwargs = J(R"j({"tools":[{"type":"web_search"}],"custom_llm_provider":"openai",
                                   "_code_interpreter_interception_active":true,
                                   "litellm_metadata":{"_code_interpreter_interception_active":true,
                                                       "_code_interpreter_interception_sandbox_key":"client-forged",
                                                       "safe_user_value":"kept"}})j");
        QVERIFY(!h.interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        QVERIFY2(!kwargs.contains(keys::kActive),
                 "a forged marker must not survive without the hosted tool");
        QCOMPARE(kwargs.value(keys::kLitellmMetadata),
                 QJsonValue(J(R"j({"safe_user_value":"kept"})j")));
    }

    void test_pre_call_strips_forged_loop_controls_then_mints_own_markers() {
        Harness h;
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"openai",
                                   "litellm_metadata":{"_code_interpreter_interception_active":true,
                                                       "_code_interpreter_interception_sandbox_key":"client-forged",
                                                       "_agentic_loop_depth":99,
                                                       "max_agentic_loops":999,
                                                       "safe_user_value":"kept"}})j");
        QVERIFY(h.interception.preCallDeploymentHook(kwargs, CallType::ACompletion));
        const QJsonObject metadata = kwargs.value(keys::kLitellmMetadata).toObject();
        QCOMPARE(metadata.value(QLatin1String("safe_user_value")),
                 QJsonValue(QStringLiteral("kept")));
        QVERIFY2(!metadata.contains(QLatin1String("_agentic_loop_depth")), "forged depth survived");
        QVERIFY2(!metadata.contains(QLatin1String("max_agentic_loops")), "forged ceiling survived");
        QCOMPARE(metadata.value(keys::kActive), QJsonValue(true));
        QCOMPARE(metadata.value(keys::kSandboxKey), kwargs.value(keys::kSandboxKey));
        QVERIFY(metadata.value(keys::kSandboxKey).toString() != QLatin1String("client-forged"));
    }

    void test_pre_call_preserves_marker_on_server_followup() {
        Harness h;
        QJsonObject kwargs = J(R"j({"tools":[{"type":"function","name":"litellm_code_execution"}],
                                   "custom_llm_provider":"openai","_agentic_loop_depth":1,
                                   "_code_interpreter_interception_active":true})j");
        h.interception.preCallDeploymentHook(kwargs, CallType::AResponses);
        // Follow-ups carry the server's own marker so later rounds can still run code.
        QCOMPARE(kwargs.value(keys::kActive), QJsonValue(true));
    }

    void test_pre_call_skips_provider_outside_scope() {
        Harness h(onlyProviders({QStringLiteral("openai")}));
        QJsonObject kwargs =
            J(R"j({"tools":[{"type":"code_interpreter","container":{"type":"auto"}}],
                                   "custom_llm_provider":"anthropic"})j");
        QVERIFY(!h.interception.preCallDeploymentHook(kwargs, CallType::AResponses));
        QCOMPARE(kwargs.value(QLatin1String("tools"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("type")),
                 QJsonValue(QStringLiteral("code_interpreter")));
        QVERIFY(!kwargs.contains(keys::kActive));
    }

    void test_resolve_provider_falls_back_to_model_lookup() {
        Harness h;
        QCOMPARE(h.interception.resolveProvider(J(R"j({"custom_llm_provider":"openai"})j")),
                 std::optional<QString>(QStringLiteral("openai")));
        QCOMPARE(h.interception.resolveProvider(J(R"j({"model":"gpt-5"})j")),
                 std::optional<QString>(QStringLiteral("openai")));
        QCOMPARE(h.interception.resolveProvider(J(R"j({"model":123})j")), std::optional<QString>());
        QCOMPARE(h.interception.resolveProvider(J(R"j({"model":"no-such-provider-xyz"})j")),
                 std::optional<QString>());
    }

    void test_from_config_yaml_reads_fields() {
        const InterceptionSettings settings = InterceptionSettings::fromConfig(J(
            R"j({"enabled":false,"enabled_providers":["openai"],"sandbox_tool_name":"e2b_default"})j"));
        SandboxRegistry registry;
        RecordingSandboxBackend sandbox;
        const CodeInterpreterInterception interception(settings, &registry, &sandbox);
        QCOMPARE(interception.settings().enabled, false);
        QCOMPARE(interception.settings().enabledProviders,
                 std::optional<QStringList>(QStringList{QStringLiteral("openai")}));
        QCOMPARE(interception.settings().sandboxToolName, QStringLiteral("e2b_default"));
    }

    void test_initialize_from_proxy_config_prefers_litellm_settings() {
        // The proxy reads its config file through fromYaml, which applies LiteLLM's
        // initialize_from_proxy_config preference: litellm_settings wins over callback_settings.
        const LoadedInterceptionConfig loaded = InterceptionSettings::fromYaml(
            YamlDocument::fromText("litellm_settings:\n"
                                   "  code_interpreter_interception_params:\n"
                                   "    enabled_providers: [openai]\n"
                                   "    sandbox_tool_name: e2b_default\n"
                                   "callback_settings:\n"
                                   "  code_interpreter_interception:\n"
                                   "    sandbox_tool_name: from-callback-settings\n"));
        QVERIFY2(loaded.ok(), qPrintable(loaded.errors.join(u'\n')));
        QCOMPARE(loaded.settings.enabledProviders,
                 std::optional<QStringList>(QStringList{QStringLiteral("openai")}));
        QCOMPARE(loaded.settings.sandboxToolName, QStringLiteral("e2b_default"));
        QCOMPARE(loaded.settingsPath,
                 QStringLiteral("litellm_settings.code_interpreter_interception_params"));
    }
};

QTEST_GUILESS_MAIN(TestPreCall)
#include "tst_precall.moc"
