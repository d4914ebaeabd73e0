#include "config/yamldocument.h"
#include "interception/interceptionsettings.h"
#include "interception/providerresolver.h"
#include "sandbox/sandboxtoolregistry.h"

#include <QJsonDocument>
#include <QTest>

using namespace loopscope;

Q_DECLARE_METATYPE(std::optional<QStringList>)

namespace {

QJsonObject object(const char *json) {
    QJsonParseError error{};
    // Single quotes for readability in C++ sources.
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(json).replace('\'', '"'), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        qFatal("bad test JSON: %s", json);
    return doc.object();
}

std::optional<QStringList> names(std::initializer_list<const char *> list) {
    QStringList result;
    for (const char *name : list)
        result.append(QString::fromUtf8(name));
    return result;
}

} // namespace

class TestInterceptionSettings : public QObject {
    Q_OBJECT

private slots:
    void defaults() {
        const InterceptionSettings settings;
        QVERIFY(settings.enabled);
        QVERIFY(!settings.enabledProviders.has_value());
        QVERIFY(settings.sandboxToolName.isEmpty());
        QCOMPARE(InterceptionSettings::fromConfig({}), settings);
    }

    // Mirrors test_from_config_yaml_reads_fields.
    void fromConfigReadsFields() {
        const InterceptionSettings settings = InterceptionSettings::fromConfig(
            object("{'enabled': false, 'enabled_providers': ['openai'], "
                   "'sandbox_tool_name': 'e2b_default'}"));
        QCOMPARE(settings.enabled, false);
        QCOMPARE(settings.enabledProviders, names({"openai"}));
        QCOMPARE(settings.sandboxToolName, QStringLiteral("e2b_default"));
    }

    void enabledTruthiness_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<bool>("enabled");
        QTest::newRow("absent") << QByteArray("{}") << true;
        QTest::newRow("true") << QByteArray("{'enabled': true}") << true;
        QTest::newRow("false") << QByteArray("{'enabled': false}") << false;
        QTest::newRow("null") << QByteArray("{'enabled': null}") << false;
        QTest::newRow("zero") << QByteArray("{'enabled': 0}") << false;
        QTest::newRow("one") << QByteArray("{'enabled': 1}") << true;
        QTest::newRow("empty string") << QByteArray("{'enabled': ''}") << false;
        QTest::newRow("string false is truthy") << QByteArray("{'enabled': 'false'}") << true;
        QTest::newRow("empty list") << QByteArray("{'enabled': []}") << false;
    }
    void enabledTruthiness() {
        QFETCH(QByteArray, json);
        QFETCH(bool, enabled);
        QCOMPARE(InterceptionSettings::fromConfig(object(json.constData())).enabled, enabled);
    }

    void enabledProviders_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<std::optional<QStringList>>("providers");
        QTest::addColumn<bool>("warns");
        QTest::newRow("absent: all") << QByteArray("{}") << std::optional<QStringList>() << false;
        QTest::newRow("null: all")
            << QByteArray("{'enabled_providers': null}") << std::optional<QStringList>() << false;
        QTest::newRow("empty list: none") << QByteArray("{'enabled_providers': []}")
                                          << std::optional<QStringList>(QStringList()) << false;
        QTest::newRow("two") << QByteArray("{'enabled_providers': ['openai', 'anthropic']}")
                             << names({"openai", "anthropic"}) << false;
        QTest::newRow("bare string: one")
            << QByteArray("{'enabled_providers': 'openai'}") << names({"openai"}) << true;
        QTest::newRow("number: fail closed") << QByteArray("{'enabled_providers': 5}")
                                             << std::optional<QStringList>(QStringList()) << true;
        QTest::newRow("non-strings dropped")
            << QByteArray("{'enabled_providers': ['openai', 3]}") << names({"openai"}) << true;
    }
    void enabledProviders() {
        QFETCH(QByteArray, json);
        QFETCH(std::optional<QStringList>, providers);
        QFETCH(bool, warns);
        if (warns)
            QTest::ignoreMessage(QtWarningMsg,
                                 QRegularExpression(QStringLiteral("enabled_providers")));
        QCOMPARE(InterceptionSettings::fromConfig(object(json.constData())).enabledProviders,
                 providers);
    }

    void sandboxToolNameTypes() {
        QCOMPARE(
            InterceptionSettings::fromConfig(object("{'sandbox_tool_name': null}")).sandboxToolName,
            QString());
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("sandbox_tool_name")));
        QCOMPARE(
            InterceptionSettings::fromConfig(object("{'sandbox_tool_name': 12}")).sandboxToolName,
            QString());
    }

    void allowsProvider() {
        InterceptionSettings all;
        QVERIFY(all.allowsProvider(QStringLiteral("openai")));
        QVERIFY(all.allowsProvider(QString()));
        InterceptionSettings scoped;
        scoped.enabledProviders = QStringList{QStringLiteral("openai")};
        QVERIFY(scoped.allowsProvider(QStringLiteral("openai")));
        QVERIFY(!scoped.allowsProvider(QStringLiteral("anthropic")));
        QVERIFY(!scoped.allowsProvider(QString())); // unresolved provider is out of scope
        InterceptionSettings none;
        none.enabledProviders = QStringList();
        QVERIFY(!none.allowsProvider(QStringLiteral("openai")));
    }

    void toJson() {
        InterceptionSettings settings;
        QCOMPARE(settings.toJson(),
                 object("{'enabled': true, 'enabled_providers': null, 'sandbox_tool_name': null}"));
        settings.enabled = false;
        settings.enabledProviders = QStringList{QStringLiteral("openai")};
        settings.sandboxToolName = QStringLiteral("t");
        QCOMPARE(settings.toJson(), object("{'enabled': false, 'enabled_providers': ['openai'], "
                                           "'sandbox_tool_name': 't'}"));
    }

    // Mirrors test_initialize_from_proxy_config_prefers_litellm_settings, plus the fallbacks.
    void initializeFromProxyConfig_data() {
        QTest::addColumn<QByteArray>("litellmSettings");
        QTest::addColumn<QByteArray>("callbackParams");
        QTest::addColumn<QString>("toolName");
        QTest::addColumn<std::optional<QStringList>>("providers");
        QTest::newRow("litellm_settings only")
            << QByteArray("{'code_interpreter_interception_params': {'enabled_providers': "
                          "['openai'], 'sandbox_tool_name': 'e2b_default'}}")
            << QByteArray("{}") << QStringLiteral("e2b_default") << names({"openai"});
        QTest::newRow("litellm_settings preferred over callback params")
            << QByteArray("{'code_interpreter_interception_params': {'sandbox_tool_name': 'a'}}")
            << QByteArray("{'code_interpreter_interception': {'sandbox_tool_name': 'b', "
                          "'enabled_providers': ['x']}}")
            << QStringLiteral("a") << std::optional<QStringList>();
        QTest::newRow("key present but null still wins")
            << QByteArray("{'code_interpreter_interception_params': null}")
            << QByteArray("{'code_interpreter_interception': {'sandbox_tool_name': 'b'}}")
            << QString() << std::optional<QStringList>();
        QTest::newRow("callback params fallback")
            << QByteArray("{'callbacks': ['code_interpreter_interception']}")
            << QByteArray("{'code_interpreter_interception': {'sandbox_tool_name': 'b', "
                          "'enabled_providers': ['anthropic']}}")
            << QStringLiteral("b") << names({"anthropic"});
        QTest::newRow("callback params not a mapping")
            << QByteArray("{}") << QByteArray("{'code_interpreter_interception': 'b'}") << QString()
            << std::optional<QStringList>();
        QTest::newRow("nothing") << QByteArray("{}") << QByteArray("{}") << QString()
                                 << std::optional<QStringList>();
    }
    void initializeFromProxyConfig() {
        QFETCH(QByteArray, litellmSettings);
        QFETCH(QByteArray, callbackParams);
        QFETCH(QString, toolName);
        QFETCH(std::optional<QStringList>, providers);
        const InterceptionSettings settings = InterceptionSettings::initializeFromProxyConfig(
            object(litellmSettings.constData()), object(callbackParams.constData()));
        QCOMPARE(settings.sandboxToolName, toolName);
        QCOMPARE(settings.enabledProviders, providers);
        QVERIFY(settings.enabled);
    }

    // enabled_providers takes the names of model prefixes (issue 17): LiteLLM's names pass
    // silently and scope as written; a name Loopscope does not know is warned about.
    void enabledProvidersUseLiteLlmNames() {
        const YamlDocument doc =
            YamlDocument::fromText("litellm_settings:\n"
                                   "  code_interpreter_interception_params:\n"
                                   "    enabled_providers: [\"openai\", \"hosted_vllm\", "
                                   "\"ollama_chat\", \"opeanai\"]\n");
        const LoadedInterceptionConfig loaded = InterceptionSettings::fromYaml(doc);
        QVERIFY2(loaded.ok(), qPrintable(loaded.errors.join(u'\n')));
        QCOMPARE(loaded.warnings,
                 QStringList{QStringLiteral(
                     "litellm_settings.code_interpreter_interception_params.enabled_providers[3] "
                     "(line 3): 'opeanai' is not a provider name Loopscope knows (e.g. openai, "
                     "azure, hosted_vllm)")});
        QVERIFY(loaded.settings.allowsProvider(QStringLiteral("hosted_vllm")));
        QVERIFY(loaded.settings.allowsProvider(QStringLiteral("ollama_chat")));
        QVERIFY(!loaded.settings.allowsProvider(QStringLiteral("groq")));
        for (const char *name : {"openai", "azure", "hosted_vllm", "ollama_chat", "lm_studio",
                                 "openrouter", "groq", "anthropic", "bedrock", "vertex_ai"})
            QVERIFY2(ProviderResolver::knownProviders().contains(QString::fromLatin1(name)), name);
    }

    void fromYamlLitellmSettings() {
        const YamlDocument doc =
            YamlDocument::fromText("model_list:\n"
                                   "  - model_name: gpt-5\n"
                                   "    litellm_params:\n"
                                   "      model: openai/gpt-5\n"
                                   "sandbox_tools:\n"
                                   "  - sandbox_tool_name: my-e2b\n"
                                   "    litellm_params:\n"
                                   "      sandbox_provider: e2b\n"
                                   "      api_key: os.environ/E2B_API_KEY\n"
                                   "litellm_settings:\n"
                                   "  callbacks: [\"code_interpreter_interception\"]\n"
                                   "  code_interpreter_interception_params:\n"
                                   "    enabled: true\n"
                                   "    enabled_providers: [\"openai\"]\n"
                                   "    sandbox_tool_name: my-e2b\n"
                                   "callback_settings:\n"
                                   "  code_interpreter_interception:\n"
                                   "    sandbox_tool_name: ignored\n");
        const LoadedInterceptionConfig loaded = InterceptionSettings::fromYaml(doc);
        QVERIFY2(loaded.ok(), qPrintable(loaded.errors.join(u'\n')));
        QVERIFY2(loaded.warnings.isEmpty(), qPrintable(loaded.warnings.join(u'\n')));
        QCOMPARE(loaded.settingsPath,
                 QStringLiteral("litellm_settings.code_interpreter_interception_params"));
        QVERIFY(loaded.callbackListed);
        QVERIFY(loaded.settings.enabled);
        QCOMPARE(loaded.settings.enabledProviders, names({"openai"}));
        QCOMPARE(loaded.settings.sandboxToolName, QStringLiteral("my-e2b"));
        QCOMPARE(loaded.sandboxTools.size(), 1);

        // The tools list feeds the registry as is.
        qputenv("E2B_API_KEY", "e2b_yaml_test_5555");
        SandboxToolRegistry tools;
        QVERIFY(tools.registerTools(loaded.sandboxTools).isEmpty());
        qunsetenv("E2B_API_KEY");
        QCOMPARE(tools.resolve(QStringLiteral("my-e2b"))->apiKey,
                 QStringLiteral("e2b_yaml_test_5555"));
    }

    void fromYamlCallbackSettings() {
        const LoadedInterceptionConfig loaded = InterceptionSettings::fromYaml(
            YamlDocument::fromText("callback_settings:\n"
                                   "  code_interpreter_interception:\n"
                                   "    enabled: false\n"
                                   "    sandbox_tool_name: local\n"));
        QVERIFY2(loaded.ok(), qPrintable(loaded.errors.join(u'\n')));
        QCOMPARE(loaded.settingsPath,
                 QStringLiteral("callback_settings.code_interpreter_interception"));
        QVERIFY(!loaded.settings.enabled);
        QVERIFY(!loaded.settings.enabledProviders.has_value());
        QCOMPARE(loaded.settings.sandboxToolName, QStringLiteral("local"));
        QVERIFY(!loaded.callbackListed);
        QVERIFY(loaded.sandboxTools.isEmpty());
    }

    void fromYamlWithoutSection() {
        const LoadedInterceptionConfig loaded =
            InterceptionSettings::fromYaml(YamlDocument::fromText("model_list: []\n"));
        QVERIFY(loaded.ok());
        QVERIFY(loaded.settingsPath.isEmpty());
        QCOMPARE(loaded.settings, InterceptionSettings());
    }

    void fromYamlWrongTypes_data() {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("error");
        const QByteArray head = "litellm_settings:\n"
                                "  code_interpreter_interception_params:\n";
        QTest::newRow("providers is a string")
            << head + "    enabled_providers: openai\n"
            << QStringLiteral("litellm_settings.code_interpreter_interception_params."
                              "enabled_providers (line 3): must be a list of provider names, got "
                              "a string");
        QTest::newRow("providers item is a number")
            << head + "    enabled_providers:\n      - openai\n      - 42\n"
            << QStringLiteral("litellm_settings.code_interpreter_interception_params."
                              "enabled_providers[1] (line 5): must be a provider name, got a "
                              "number");
        QTest::newRow("providers is a mapping")
            << head + "    enabled_providers: {openai: true}\n"
            << QStringLiteral("litellm_settings.code_interpreter_interception_params."
                              "enabled_providers (line 3): must be a list of provider names, got "
                              "a mapping");
        QTest::newRow("enabled is a quoted string")
            << head + "    sandbox_tool_name: t\n    enabled: \"false\"\n"
            << QStringLiteral("litellm_settings.code_interpreter_interception_params.enabled "
                              "(line 4): must be true or false, got a string");
        QTest::newRow("tool name is a number")
            << head + "    sandbox_tool_name: 7\n"
            << QStringLiteral("litellm_settings.code_interpreter_interception_params."
                              "sandbox_tool_name (line 3): must be a string, got a number");
        QTest::newRow("params is a list")
            << QByteArray("litellm_settings:\n  code_interpreter_interception_params: [1]\n")
            << QStringLiteral("litellm_settings.code_interpreter_interception_params (line 2): "
                              "must be a mapping, got a list");
        QTest::newRow("litellm_settings is a string")
            << QByteArray("\nlitellm_settings: on\n")
            << QStringLiteral("litellm_settings (line 2): must be a mapping, got a string");
        QTest::newRow("callback section is a list")
            << QByteArray("callback_settings:\n  code_interpreter_interception:\n    - x\n")
            << QStringLiteral("callback_settings.code_interpreter_interception (line 2): must be "
                              "a mapping, got a list");
        QTest::newRow("sandbox_tools is a mapping")
            << QByteArray("sandbox_tools:\n  my-e2b: {}\n")
            << QStringLiteral("sandbox_tools (line 1): must be a list, got a mapping");
        QTest::newRow("invalid YAML")
            << QByteArray("litellm_settings:\n  a: [1\n")
            << QStringLiteral("invalid YAML at line 3, column 1: end of sequence flow not found");
    }
    void fromYamlWrongTypes() {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, error);
        const LoadedInterceptionConfig loaded =
            InterceptionSettings::fromYaml(YamlDocument::fromText(yaml));
        QVERIFY(!loaded.ok());
        QVERIFY2(loaded.errors.contains(error), qPrintable(loaded.errors.join(u'\n')));
        QCOMPARE(loaded.errors.size(), 1);
        // Whatever was wrong fails closed: never wider than the valid part of the file.
        if (yaml.contains("enabled_providers"))
            QVERIFY(!loaded.settings.allowsProvider(QStringLiteral("anthropic")));
        if (yaml.contains("enabled:"))
            QVERIFY(!loaded.settings.enabled);
    }

    void fromYamlWarnings() {
        const LoadedInterceptionConfig loaded = InterceptionSettings::fromYaml(
            YamlDocument::fromText("litellm_settings:\n"
                                   "  code_interpreter_interception_params:\n"
                                   "    max_agentic_loops: 5\n"
                                   "sandbox_tools:\n"
                                   "  - sandbox_tool_name: ok\n"
                                   "    litellm_params:\n"
                                   "      sandbox_provider: e2b\n"
                                   "      api_key: 12345\n"
                                   "  - litellm_params:\n"
                                   "      sandbox_provider: e2b\n"));
        QVERIFY2(loaded.ok(), qPrintable(loaded.errors.join(u'\n')));
        QCOMPARE(
            loaded.warnings,
            (QStringList{QStringLiteral("litellm_settings.code_interpreter_interception_params."
                                        "max_agentic_loops (line 3): unknown key, ignored"),
                         QStringLiteral("sandbox_tools[0].litellm_params.api_key (line 8): is a "
                                        "number, not a string: ignored (quote it)"),
                         QStringLiteral("sandbox_tools[1] (line 9): will be skipped: missing "
                                        "sandbox_tool_name")}));
        QCOMPARE(loaded.sandboxTools.size(), 2); // the registry does the skipping
    }
};

QTEST_GUILESS_MAIN(TestInterceptionSettings)
#include "tst_interceptionsettings.moc"
