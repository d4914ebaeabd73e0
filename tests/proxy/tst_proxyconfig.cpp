// LiteLLM-style config.yaml → ProxyConfig: routes, keys, limits, and one clear line (key and
// line number) for every kind of mistake.
#include "proxy/proxyconfig.h"

#include <QtTest>

using namespace loopscope;

class TstProxyConfig : public QObject {
    Q_OBJECT
private:
    static QProcessEnvironment env() {
        QProcessEnvironment e;
        e.insert(QStringLiteral("OPENAI_API_KEY"), QStringLiteral("sk-from-env"));
        e.insert(QStringLiteral("LOOPS"), QStringLiteral(" 4 "));
        e.insert(QStringLiteral("MASTER"), QStringLiteral("sk-master"));
        return e;
    }

private slots:
    void readsAFullConfig() {
        const QByteArray yaml = R"(model_list:
  - model_name: gpt-5
    litellm_params:
      model: openai/gpt-5
      api_key: os.environ/OPENAI_API_KEY
      max_agentic_loops: 5
  - model_name: local
    litellm_params:
      model: llama3
      api_base: http://127.0.0.1:8000/v1
      timeout: 2.5
      max_agentic_loops: os.environ/LOOPS
  - model_name: az
    litellm_params:
      model: azure/my-deployment
      api_base: https://example.openai.azure.com
      api_key: plain-key
  - model_name: demo
    litellm_params:
      model: loopscope/demo
sandbox_tools:
  - sandbox_tool_name: my-e2b
    litellm_params:
      sandbox_provider: e2b
litellm_settings:
  callbacks: ["code_interpreter_interception"]
  request_timeout: 30
  code_interpreter_interception_params:
    sandbox_tool_name: my-e2b
general_settings:
  master_key: os.environ/MASTER
)";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        QCOMPARE(config.masterKey, QStringLiteral("sk-master"));
        QCOMPARE(config.requestTimeoutMs, 30000);
        QCOMPARE(config.modelNames(), QStringList({QStringLiteral("gpt-5"), QStringLiteral("local"),
                                                   QStringLiteral("az"), QStringLiteral("demo")}));
        const auto gpt = config.routeFor(QStringLiteral("gpt-5"));
        QVERIFY(gpt);
        QCOMPARE(gpt->upstreamModel, QStringLiteral("gpt-5"));
        QCOMPARE(gpt->baseUrl, QUrl(QStringLiteral("https://api.openai.com/v1")));
        QCOMPARE(gpt->apiKey, QStringLiteral("sk-from-env"));
        QCOMPARE(gpt->maxAgenticLoops, 5);
        QCOMPARE(gpt->timeoutMs, 30000);
        QVERIFY(!gpt->litellmParams.contains(QStringLiteral("api_key")));
        const auto local = config.routeFor(QStringLiteral("local"));
        QCOMPARE(local->upstreamModel, QStringLiteral("llama3"));
        QCOMPARE(local->urlFor(QStringLiteral("/responses")),
                 QUrl(QStringLiteral("http://127.0.0.1:8000/v1/responses")));
        QCOMPARE(local->timeoutMs, 2500);
        QCOMPARE(local->maxAgenticLoops, 4);
        QVERIFY(local->apiKey.isEmpty());
        const auto az = config.routeFor(QStringLiteral("az"));
        QCOMPARE(az->provider, UpstreamRoute::Provider::Azure);
        QCOMPARE(az->upstreamModel, QStringLiteral("my-deployment"));
        QCOMPARE(az->baseUrl, QUrl(QStringLiteral("https://example.openai.azure.com/openai/v1")));
        QCOMPARE(az->authHeader().first, QByteArray("api-key"));
        QVERIFY(config.routeFor(QStringLiteral("demo"))->isDemo());
        QVERIFY(!config.routeFor(QStringLiteral("unknown")));
        QCOMPARE(config.sandboxTools.size(), 1);
        QVERIFY(config.litellmSettings.contains(
            QStringLiteral("code_interpreter_interception_params")));
        QVERIFY(config.document);
    }

    void wildcardAndDefaultRoutes() {
        ProxyConfig config;
        QString error;
        QVERIFY(
            config.loadYaml(YamlDocument::fromText("model_list:\n  - model_name: \"*\"\n"
                                                   "    litellm_params:\n      model: openai/*\n"),
                            env(), &error));
        QCOMPARE(config.routeFor(QStringLiteral("gpt-4o"))->upstreamModel,
                 QStringLiteral("gpt-4o"));
        ProxyConfig upstreamOnly;
        upstreamOnly.defaultRoute =
            ProxyConfig::routeForUpstream(QStringLiteral("http://127.0.0.1:9/v1"), &error);
        QCOMPARE(upstreamOnly.routeFor(QStringLiteral("any"))->upstreamModel,
                 QStringLiteral("any"));
    }

    void upstreamArgument_data() {
        QTest::addColumn<QString>("argument");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("base");
        QTest::newRow("demo") << QStringLiteral("demo") << true
                              << QStringLiteral("demo://loopscope/v1");
        QTest::newRow("with /v1") << QStringLiteral("https://api.openai.com/v1") << true
                                  << QStringLiteral("https://api.openai.com/v1");
        QTest::newRow("bare host gets /v1") << QStringLiteral("http://localhost:8000") << true
                                            << QStringLiteral("http://localhost:8000/v1");
        QTest::newRow("other path kept")
            << QStringLiteral("http://h/openai/v1") << true << QStringLiteral("http://h/openai/v1");
        QTest::newRow("ftp") << QStringLiteral("ftp://h/v1") << false << QString();
        QTest::newRow("no scheme") << QStringLiteral("api.openai.com") << false << QString();
        QTest::newRow("garbage") << QStringLiteral("::") << false << QString();
    }
    void upstreamArgument() {
        QFETCH(QString, argument);
        QFETCH(bool, valid);
        QFETCH(QString, base);
        QString error;
        const auto route = ProxyConfig::routeForUpstream(argument, &error);
        QCOMPARE(bool(route), valid);
        if (valid)
            QCOMPARE(route->baseUrl.toString(), base);
        else
            QVERIFY(error.contains(QStringLiteral("--upstream")));
    }

    void configErrorsNameKeyAndLine_data() {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("expected");
        QTest::newRow("yaml syntax") << QByteArray("model_list:\n  - model_name: [unclosed\n")
                                     << QStringLiteral("invalid YAML at line");
        QTest::newRow("root not a mapping") << QByteArray("- a\n- b\n") << QStringLiteral("line 1");
        QTest::newRow("sandbox.zygote not a boolean")
            << QByteArray("sandbox:\n  zygote: sometimes\n")
            << QStringLiteral("sandbox.zygote (line 2)");
        QTest::newRow("model_list not a list")
            << QByteArray("model_list: 5\n")
            << QStringLiteral("model_list (line 1): must be a list");
        QTest::newRow("entry not a mapping")
            << QByteArray("model_list:\n  - just-a-string\n")
            << QStringLiteral("model_list[0] (line 2): must be a mapping");
        QTest::newRow("model_name missing")
            << QByteArray("model_list:\n  - litellm_params:\n      model: gpt-4o\n")
            << QStringLiteral("model_list[0].model_name (line 2)");
        QTest::newRow("litellm_params missing")
            << QByteArray("model_list:\n  - model_name: a\n")
            << QStringLiteral("model_list[0].litellm_params (line 2)");
        QTest::newRow("model missing")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      api_key: k\n")
            << QStringLiteral("model_list[0].litellm_params.model (line 3): required");
        QTest::newRow("bad api_base")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: x\n   "
                          "   api_base: not a url\n")
            << QStringLiteral("model_list[0].litellm_params.api_base (line 5)");
        QTest::newRow("custom_llm_provider not a string")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "x\n      custom_llm_provider: [groq]\n")
            << QStringLiteral(
                   "model_list[0].litellm_params.custom_llm_provider (line 5): must be a string");
        QTest::newRow("api_key env unset")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "gpt-4o\n      api_key: os.environ/NOPE_NOT_SET\n")
            << QStringLiteral("model_list[0].litellm_params.api_key (line 5): environment variable "
                              "NOPE_NOT_SET is not set");
        QTest::newRow("api_key not a string")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "gpt-4o\n      api_key: [1]\n")
            << QStringLiteral("model_list[0].litellm_params.api_key (line 5): must be a string");
        QTest::newRow("max loops bool")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "gpt-4o\n      max_agentic_loops: true\n")
            << QStringLiteral("max_agentic_loops (line 5): must be an integer, got True");
        QTest::newRow("max loops zero")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "gpt-4o\n      max_agentic_loops: 0\n")
            << QStringLiteral("must be at least 1, got 0");
        QTest::newRow("max loops fraction")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "gpt-4o\n      max_agentic_loops: 2.5\n")
            << QStringLiteral("must be an integer, got 2.5");
        QTest::newRow("max loops word")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "gpt-4o\n      max_agentic_loops: many\n")
            << QStringLiteral("must be an integer, got 'many'");
        QTest::newRow("timeout negative")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "gpt-4o\n      timeout: -1\n")
            << QStringLiteral("model_list[0].litellm_params.timeout (line 5)");
        QTest::newRow("general_settings not a mapping")
            << QByteArray("general_settings: [1]\n") << QStringLiteral("general_settings (line 1)");
        QTest::newRow("master_key env unset")
            << QByteArray("general_settings:\n  master_key: os.environ/NOPE_NOT_SET\n")
            << QStringLiteral("general_settings.master_key (line 2)");
        QTest::newRow("litellm_settings not a mapping")
            << QByteArray("litellm_settings: 3\n") << QStringLiteral("litellm_settings (line 1)");
        QTest::newRow("interception params not a mapping")
            << QByteArray("litellm_settings:\n  code_interpreter_interception_params: yes\n")
            << QStringLiteral("litellm_settings.code_interpreter_interception_params (line 2)");
        QTest::newRow("request_timeout not a number")
            << QByteArray("litellm_settings:\n  request_timeout: soon\n")
            << QStringLiteral("litellm_settings.request_timeout (line 2)");
        QTest::newRow("enabled_providers not a list")
            << QByteArray("litellm_settings:\n  code_interpreter_interception_params:\n    "
                          "enabled_providers: 5\n")
            << QStringLiteral("litellm_settings.code_interpreter_interception_params.enabled_"
                              "providers (line 3)");
        QTest::newRow("sandbox_tool_name not a string")
            << QByteArray("litellm_settings:\n  code_interpreter_interception_params:\n    "
                          "sandbox_tool_name: [a]\n")
            << QStringLiteral("sandbox_tool_name (line 3): must be a string");
        // Found by tests/fuzz/config (corpus crash-yaml-error-quotes-newline): yaml-cpp quotes
        // the offending character, and values are quoted too — the message must stay one line.
        QTest::newRow("yaml error quoting a control character")
            << QByteArray("a: \"\\\x01\"\n") << QStringLiteral("invalid YAML at line 1");
        QTest::newRow("api_base holding a newline")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: x\n   "
                          "   api_base: \"http://a\\nb c\"\n")
            << QStringLiteral("'http://a\\x0ab c' is not an http(s) URL");
        QTest::newRow("sandbox_tools not a list")
            << QByteArray("sandbox_tools:\n  name: x\n")
            << QStringLiteral("sandbox_tools (line 1): must be a list");
        QTest::newRow("max_connections zero")
            << QByteArray("general_settings:\n  max_connections: 0\n")
            << QStringLiteral("general_settings.max_connections (line 2): must be an integer");
        QTest::newRow("header_timeout negative")
            << QByteArray("general_settings:\n  header_timeout: -1\n")
            << QStringLiteral("general_settings.header_timeout (line 2): must be a positive");
        QTest::newRow("sandbox not a mapping")
            << QByteArray("sandbox: 3\n") << QStringLiteral("sandbox (line 1): must be a mapping");
        QTest::newRow("max_live not a number")
            << QByteArray("sandbox:\n  max_live: lots\n")
            << QStringLiteral("sandbox.max_live (line 2): must be an integer");
        QTest::newRow("pool_size negative")
            << QByteArray("sandbox:\n  pool_size: -1\n")
            << QStringLiteral("sandbox.pool_size (line 2): must be an integer");
        QTest::newRow("pool_max too big")
            << QByteArray("sandbox:\n  pool_max: 1000\n")
            << QStringLiteral("sandbox.pool_max (line 2): must be an integer");
        QTest::newRow("max_sessions not below max_live")
            << QByteArray("sandbox:\n  max_live: 8\n  max_sessions: 8\n")
            << QStringLiteral("sandbox.max_sessions (line 3): must be below sandbox.max_live (8)");
        QTest::newRow("max_expires_after_minutes past a day")
            << QByteArray("sandbox:\n  max_expires_after_minutes: 1441\n")
            << QStringLiteral("sandbox.max_expires_after_minutes (line 2): must be an integer");
        QTest::newRow("allow_unisolated not a bool")
            << QByteArray("sandbox:\n  allow_unisolated: 1\n")
            << QStringLiteral("sandbox.allow_unisolated (line 2): must be true or false");
    }

    // Issue 18: every limit is configurable; defaults when absent.
    void limitsAreRead() {
        ProxyConfig defaults;
        QCOMPARE(defaults.maxLiveSandboxes, 32);
        QCOMPARE(defaults.maxOutputChars, 20000);
        QCOMPARE(defaults.shutdownTimeoutMs, 5000);
        QCOMPARE(defaults.sandboxPoolSize, 2);
        QCOMPARE(defaults.sandboxPoolMax, 6);
        ProxyConfig config;
        QString error;
        QVERIFY2(
            config.loadYaml(YamlDocument::fromText(
                                "general_settings:\n  max_connections: 7\n  header_timeout: 2\n"
                                "  idle_timeout: 3.5\n  max_pending_bytes: 65536\n"
                                "  max_upstream_body_bytes: 1048576\n  shutdown_timeout: 9\n"
                                "sandbox:\n  max_live: 4\n  max_output_chars: 500\n"
                                "  allow_unisolated: true\n"),
                            env(), &error),
            qPrintable(error));
        QCOMPARE(config.maxConnections, 7);
        QCOMPARE(config.headerTimeoutMs, 2000);
        QCOMPARE(config.idleTimeoutMs, 3500);
        QCOMPARE(config.maxPendingBytes, 65536);
        QCOMPARE(config.maxUpstreamBodyBytes, 1048576);
        QCOMPARE(config.shutdownTimeoutMs, 9000);
        QCOMPARE(config.maxLiveSandboxes, 4);
        QCOMPARE(config.maxOutputChars, 500);
        QVERIFY(config.allowUnisolated);
        QCOMPARE(config.sandboxPoolSize, 2);
        QCOMPARE(config.sandboxPoolMax, 4); // never past max_live
    }
    // Sessions and containers keep a quarter of max_live free for one-shot runs unless
    // max_sessions says otherwise; a container's expires_after is capped (an hour by default).
    // Every secret the config holds is handed to the credential policy, wherever it is written.
    void secretValuesNameEveryConfiguredSecret() {
        const QByteArray yaml = R"(model_list:
  - model_name: gpt-5
    litellm_params:
      model: openai/gpt-5
      api_key: os.environ/OPENAI_API_KEY
  - model_name: az
    litellm_params:
      model: azure/my-deployment
      api_base: https://example.openai.azure.com
      api_key: plain-key-0001
sandbox_tools:
  - sandbox_tool_name: my-e2b
    litellm_params:
      sandbox_provider: e2b
      api_key: e2b-key-0002
general_settings:
  master_key: os.environ/MASTER
  control_token: control-token-0003
  otlp:
    endpoint: http://127.0.0.1:4318
    headers:
      authorization: Basic otlp-0004
)";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        const QStringList secrets = config.secretValues();
        for (const char *expected : {"sk-from-env", "plain-key-0001", "e2b-key-0002", "sk-master",
                                     "control-token-0003", "Basic otlp-0004"})
            QVERIFY2(secrets.contains(QLatin1String(expected)),
                     qPrintable(QLatin1String(expected) + QStringLiteral(" missing from ") +
                                secrets.join(QStringLiteral(", "))));
        QVERIFY(!secrets.contains(QStringLiteral("gpt-5")));
        QVERIFY(!secrets.contains(QString()));
    }

    // How Responses requests reach a route (dialects.md §5): upstream_api, LiteLLM's
    // model_info.supported_endpoints, the provider table's chat-only mark, else detection.
    void responsesApi_data() {
        QTest::addColumn<QByteArray>("entry");
        QTest::addColumn<int>("api"); // UpstreamRoute::ResponsesApi
        using Api = UpstreamRoute::ResponsesApi;
        const QByteArray base = "    litellm_params:\n      model: openai/m\n"
                                "      api_base: http://127.0.0.1:9/v1\n";
        QTest::newRow("nothing said: detect") << base << int(Api::Auto);
        QTest::newRow("upstream_api: chat_completions")
            << base + "      upstream_api: chat_completions\n"
            << int(Api::ChatOnly);
        QTest::newRow("upstream_api: responses") << base + "      upstream_api: responses\n"
                                                 << int(Api::Native);
        QTest::newRow("supported_endpoints without /v1/responses")
            << base + "    model_info:\n      supported_endpoints: [\"/v1/chat/completions\"]\n"
            << int(Api::ChatOnly);
        QTest::newRow("supported_endpoints with /v1/responses")
            << base + "    model_info:\n      supported_endpoints: [\"/v1/chat/completions\", "
                      "\"/v1/responses\"]\n"
            << int(Api::Native);
        QTest::newRow("a chat-only provider")
            << QByteArray("    litellm_params:\n      model: deepseek/deepseek-chat\n")
            << int(Api::ChatOnly);
        QTest::newRow("upstream_api: responses_stateless")
            << base + "      upstream_api: responses_stateless\n"
            << int(Api::Stateless);
        QTest::newRow("Ollama keeps no Responses state")
            << QByteArray("    litellm_params:\n      model: ollama/llama3.2\n")
            << int(Api::Stateless);
        QTest::newRow("upstream_api beats the provider table")
            << QByteArray("    litellm_params:\n      model: deepseek/deepseek-chat\n"
                          "      upstream_api: auto\n")
            << int(Api::Auto);
    }
    void responsesApi() {
        QFETCH(QByteArray, entry);
        QFETCH(int, api);
        ProxyConfig config;
        QString error;
        const QByteArray yaml = "model_list:\n  - model_name: m\n" + entry;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        const auto route = config.routeFor(QStringLiteral("m"));
        QVERIFY(route);
        QCOMPARE(int(route->responsesApi), api);
        QVERIFY(!route->litellmParams.contains(QStringLiteral("upstream_api")));
        // --check-config says which routes are bridged and which are native.
        const QString described = config.describeRoutes().join(u'\n');
        QCOMPARE(described.contains(QStringLiteral("Responses bridged over /chat/completions")),
                 api == int(UpstreamRoute::ResponsesApi::ChatOnly));
        QCOMPARE(described.contains(QStringLiteral("Responses native")),
                 api == int(UpstreamRoute::ResponsesApi::Native) ||
                     api == int(UpstreamRoute::ResponsesApi::Stateless));
        QCOMPARE(described.contains(QStringLiteral("state kept by Loopscope")),
                 api == int(UpstreamRoute::ResponsesApi::Stateless));
    }
    void responsesApiRejectsAnUnknownValue() {
        ProxyConfig config;
        QString error;
        QVERIFY(!config.loadYaml(YamlDocument::fromText("model_list:\n  - model_name: m\n"
                                                        "    litellm_params:\n"
                                                        "      model: openai/m\n"
                                                        "      upstream_api: grpc\n"),
                                 env(), &error));
        QVERIFY2(error.contains(QStringLiteral("upstream_api (line 5)")), qPrintable(error));
    }

    void sessionLimits_data() {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<int>("sessions");
        QTest::addColumn<int>("expiryMinutes");
        QTest::newRow("defaults") << QByteArray("sandbox:\n  zygote: true\n") << 24 << 60;
        QTest::newRow("from max_live") << QByteArray("sandbox:\n  max_live: 8\n") << 6 << 60;
        QTest::newRow("explicit") << QByteArray("sandbox:\n  max_live: 8\n  max_sessions: 3\n"
                                                "  max_expires_after_minutes: 1440\n")
                                  << 3 << 1440;
    }
    void sessionLimits() {
        QFETCH(QByteArray, yaml);
        QFETCH(int, sessions);
        QFETCH(int, expiryMinutes);
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        QCOMPARE(config.maxSessionSandboxes, sessions);
        QCOMPARE(config.maxExpiresAfterMinutes, expiryMinutes);
    }
    // The warm pool's bounds: pool_max is raised to pool_size and lowered to max_live.
    void sandboxSettings_data() {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("max");
        QTest::addColumn<bool>("zygote");
        QTest::newRow("pool off") << QByteArray("sandbox:\n  pool_size: 0\n") << 0 << 6 << true;
        QTest::newRow("pool both")
            << QByteArray("sandbox:\n  pool_size: 3\n  pool_max: 9\n") << 3 << 9 << true;
        QTest::newRow("pool max below size")
            << QByteArray("sandbox:\n  pool_size: 5\n  pool_max: 1\n") << 5 << 5 << true;
        QTest::newRow("pool size above max_live")
            << QByteArray("sandbox:\n  pool_size: 5\n  max_live: 1\n") << 1 << 1 << true;
        QTest::newRow("pool max above max_live")
            << QByteArray("sandbox:\n  pool_size: 1\n  pool_max: 20\n  max_live: 3\n") << 1 << 3
            << true;
        QTest::newRow("zygote off") << QByteArray("sandbox:\n  zygote: false\n") << 2 << 6 << false;
        QTest::newRow("zygote on") << QByteArray("sandbox:\n  zygote: true\n") << 2 << 6 << true;
    }
    void sandboxSettings() {
        QFETCH(QByteArray, yaml);
        QFETCH(int, size);
        QFETCH(int, max);
        QFETCH(bool, zygote);
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        QCOMPARE(config.sandboxPoolSize, size);
        QCOMPARE(config.sandboxPoolMax, max);
        QCOMPARE(config.sandboxZygote, zygote);
    }
    void configErrorsNameKeyAndLine() {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, expected);
        ProxyConfig config;
        QString error;
        QVERIFY(!config.loadYaml(YamlDocument::fromText(yaml), env(), &error));
        QVERIFY2(error.contains(expected), qPrintable(error));
        QVERIFY(!error.contains(u'\n'));
    }

    // The fixture in the shape of LiteLLM's documentation: it loads; the OpenAI-compatible
    // models route with their documented defaults and keys; the others are kept, skipped.
    void loadsTheLiteLlmDocumentationShapedConfig() {
        const QString path = QFINDTESTDATA("../fixtures/litellm-config.yaml");
        QVERIFY(!path.isEmpty());
        QProcessEnvironment e;
        e.insert(QStringLiteral("OPENAI_API_KEY"), QStringLiteral("sk-openai"));
        e.insert(QStringLiteral("AZURE_API_BASE"), QStringLiteral("https://my.openai.azure.com"));
        e.insert(QStringLiteral("AZURE_API_KEY"), QStringLiteral("az-key"));
        e.insert(QStringLiteral("OPENROUTER_API_KEY"), QStringLiteral("or-key"));
        e.insert(QStringLiteral("HOSTED_VLLM_API_KEY"), QStringLiteral("vllm-key"));
        e.insert(QStringLiteral("ANTHROPIC_API_KEY"), QStringLiteral("sk-ant-key"));
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadFile(path, e, &error), qPrintable(error));
        QCOMPARE(config.modelNames(),
                 QStringList({QStringLiteral("gpt-4o"), QStringLiteral("azure-gpt-4o"),
                              QStringLiteral("claude-3-5-sonnet"), QStringLiteral("qwen"),
                              QStringLiteral("llama3"), QStringLiteral("openrouter-claude")}));
        QCOMPARE(config.unavailableCount(), 2);
        QCOMPARE(
            config.warnings,
            QStringList({QStringLiteral("model 'bedrock-claude' (model_list[3], line 22) skipped: "
                                        "provider 'bedrock' has its own API, not OpenAI's; "
                                        "Loopscope forwards only OpenAI-compatible providers"),
                         QStringLiteral("model 'gemini-pro' (model_list[4], line 26) skipped: "
                                        "provider 'vertex_ai' has its own API, not OpenAI's; "
                                        "Loopscope forwards only OpenAI-compatible providers")}));

        struct Expect {
            const char *model, *url, *upstream, *provider;
            QByteArray header, value;
        };
        const QList<Expect> expected = {
            {"gpt-4o", "https://api.openai.com/v1/chat/completions", "gpt-4o", "openai",
             "Authorization", "Bearer sk-openai"},
            {"azure-gpt-4o", "https://my.openai.azure.com/openai/v1/chat/completions",
             "my-gpt-4o-deployment", "azure", "api-key", "az-key"},
            {"qwen", "http://vllm.example.internal:8000/v1/chat/completions",
             "Qwen/Qwen2.5-7B-Instruct", "hosted_vllm", "Authorization", "Bearer vllm-key"},
            {"llama3",
             "http://localhost:11434/v1/chat/completions",
             "llama3.1",
             "ollama_chat",
             {},
             {}},
            {"openrouter-claude", "https://openrouter.ai/api/v1/chat/completions",
             "anthropic/claude-3.5-sonnet", "openrouter", "Authorization", "Bearer or-key"},
            {"o3-mini", "https://api.openai.com/v1/chat/completions", "o3-mini", "openai", {}, {}},
        };
        for (const Expect &x : expected) {
            const auto route = config.routeFor(QString::fromLatin1(x.model));
            QVERIFY2(route && route->isAvailable(), x.model);
            QCOMPARE(route->urlFor(QStringLiteral("/chat/completions")).toString(),
                     QString::fromLatin1(x.url));
            QCOMPARE(route->upstreamModel, QString::fromLatin1(x.upstream));
            QCOMPARE(route->providerName, QString::fromLatin1(x.provider));
            QCOMPARE(route->authHeader().first, x.header);
            QCOMPARE(route->authHeader().second, x.value);
        }
        // The Anthropic entry is a Messages route (ANTHROPIC_API_KEY as LiteLLM reads it).
        const auto claude = config.routeFor(QStringLiteral("claude-3-5-sonnet"));
        QVERIFY(claude && claude->isAvailable() && claude->isAnthropic());
        QCOMPARE(claude->urlFor(QStringLiteral("/messages")).toString(),
                 QStringLiteral("https://api.anthropic.com/v1/messages"));
        QCOMPARE(claude->upstreamModel, QStringLiteral("claude-3-5-sonnet-20240620"));
        for (const char *skipped : {"bedrock-claude", "gemini-pro"}) {
            const auto route = config.routeFor(QString::fromLatin1(skipped));
            QVERIFY2(route && !route->isAvailable(), skipped);
            QVERIFY(route->configLine > 0);
        }
        // Keys LiteLLM has and Loopscope does not use never reach a route's upstream settings
        // as anything but inert litellm_params.
        QCOMPARE(config.routeFor(QStringLiteral("gpt-4o"))
                     ->litellmParams.value(QStringLiteral("rpm"))
                     .toInt(),
                 480);
    }

    // Every OpenAI-compatible prefix: its documented default api_base and the key variable
    // LiteLLM reads (first one listed), when the config gives neither.
    void providerDefaults_data() {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QString>("keyVariable");
        QTest::addColumn<QString>("url"); // for /chat/completions
        const auto row = [](const char *prefix, const char *key, const char *url) {
            QTest::newRow(prefix) << QString::fromLatin1(prefix) << QString::fromLatin1(key)
                                  << QString::fromLatin1(url);
        };
        row("ollama_chat", "OLLAMA_API_KEY", "http://localhost:11434/v1/chat/completions");
        row("ollama", "OLLAMA_API_KEY", "http://localhost:11434/v1/chat/completions");
        row("llamafile", "LLAMAFILE_API_KEY", "http://127.0.0.1:8080/v1/chat/completions");
        row("openrouter", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1/chat/completions");
        row("together_ai", "TOGETHER_API_KEY", "https://api.together.xyz/v1/chat/completions");
        row("groq", "GROQ_API_KEY", "https://api.groq.com/openai/v1/chat/completions");
        row("deepseek", "DEEPSEEK_API_KEY", "https://api.deepseek.com/beta/chat/completions");
        row("fireworks_ai", "FIREWORKS_API_KEY",
            "https://api.fireworks.ai/inference/v1/chat/completions");
        row("xai", "XAI_API_KEY", "https://api.x.ai/v1/chat/completions");
        row("mistral", "MISTRAL_AZURE_API_KEY", "https://api.mistral.ai/v1/chat/completions");
        row("codestral", "CODESTRAL_API_KEY", "https://codestral.mistral.ai/v1/chat/completions");
        row("deepinfra", "DEEPINFRA_API_KEY",
            "https://api.deepinfra.com/v1/openai/chat/completions");
        row("cerebras", "CEREBRAS_API_KEY", "https://api.cerebras.ai/v1/chat/completions");
        row("perplexity", "PERPLEXITYAI_API_KEY", "https://api.perplexity.ai/chat/completions");
        row("nvidia_nim", "NVIDIA_NIM_API_KEY",
            "https://integrate.api.nvidia.com/v1/chat/completions");
        row("sambanova", "SAMBANOVA_API_KEY", "https://api.sambanova.ai/v1/chat/completions");
        row("meta_llama", "LLAMA_API_KEY", "https://api.llama.com/compat/v1/chat/completions");
        row("github", "GITHUB_API_KEY", "https://models.inference.ai.azure.com/chat/completions");
    }
    void providerDefaults() {
        QFETCH(QString, prefix);
        QFETCH(QString, keyVariable);
        QFETCH(QString, url);
        QProcessEnvironment e;
        e.insert(keyVariable, QStringLiteral("key-") + prefix);
        ProxyConfig config;
        QString error;
        const QByteArray yaml =
            "model_list:\n  - model_name: m\n    litellm_params:\n      model: " + prefix.toUtf8() +
            "/some-org/some-model\n";
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), e, &error), qPrintable(error));
        const auto route = config.routeFor(QStringLiteral("m"));
        QVERIFY(route && route->isAvailable());
        QCOMPARE(route->urlFor(QStringLiteral("/chat/completions")).toString(), url);
        QCOMPARE(route->upstreamModel, QStringLiteral("some-org/some-model"));
        QCOMPARE(route->providerName, prefix);
        QCOMPARE(route->apiKey, QStringLiteral("key-") + prefix);
        QCOMPARE(route->apiKeySource, u'$' + keyVariable);
        QVERIFY(config.warnings.isEmpty());

        // api_base and api_key in the config always win over the defaults and the variables.
        const QByteArray own = yaml + "      api_base: http://127.0.0.1:9/own/v1\n"
                                      "      api_key: from-config\n";
        QVERIFY2(config.loadYaml(YamlDocument::fromText(own), e, &error), qPrintable(error));
        QCOMPARE(config.routeFor(QStringLiteral("m"))->urlFor(QStringLiteral("/responses")),
                 QUrl(QStringLiteral("http://127.0.0.1:9/own/v1/responses")));
        QCOMPARE(config.routeFor(QStringLiteral("m"))->apiKey, QStringLiteral("from-config"));
    }

    // Providers without a default: api_base or their *_API_BASE variable, else skipped.
    void providersThatNeedAnApiBase_data() {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QString>("baseVariable");
        QTest::addColumn<QString>("keyVariable");
        QTest::newRow("hosted_vllm")
            << QStringLiteral("hosted_vllm") << QStringLiteral("HOSTED_VLLM_API_BASE")
            << QStringLiteral("HOSTED_VLLM_API_KEY");
        QTest::newRow("lm_studio")
            << QStringLiteral("lm_studio") << QStringLiteral("LM_STUDIO_API_BASE")
            << QStringLiteral("LM_STUDIO_API_KEY");
        QTest::newRow("openai_like")
            << QStringLiteral("openai_like") << QStringLiteral("OPENAI_LIKE_API_BASE")
            << QStringLiteral("OPENAI_LIKE_API_KEY");
        QTest::newRow("litellm_proxy")
            << QStringLiteral("litellm_proxy") << QStringLiteral("LITELLM_PROXY_API_BASE")
            << QStringLiteral("LITELLM_PROXY_API_KEY");
        QTest::newRow("azure") << QStringLiteral("azure") << QStringLiteral("AZURE_API_BASE")
                               << QString();
    }
    void providersThatNeedAnApiBase() {
        QFETCH(QString, prefix);
        QFETCH(QString, baseVariable);
        QFETCH(QString, keyVariable);
        const QByteArray yaml =
            "model_list:\n  - model_name: m\n    litellm_params:\n      model: " + prefix.toUtf8() +
            "/x\n";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), QProcessEnvironment(), &error),
                 qPrintable(error));
        auto route = config.routeFor(QStringLiteral("m"));
        QVERIFY(route && !route->isAvailable());
        QVERIFY2(
            route->unavailableReason.contains(QStringLiteral("set api_base (or ") + baseVariable),
            qPrintable(route->unavailableReason));
        QCOMPARE(config.warnings.size(), 1);
        QVERIFY(config.modelNames().isEmpty());

        QProcessEnvironment e;
        e.insert(baseVariable, QStringLiteral("http://127.0.0.1:9/srv"));
        if (!keyVariable.isEmpty())
            e.insert(keyVariable, QStringLiteral("k"));
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), e, &error), qPrintable(error));
        route = config.routeFor(QStringLiteral("m"));
        QVERIFY(route && route->isAvailable());
        QVERIFY(route->urlFor(QStringLiteral("/chat/completions"))
                    .toString()
                    .startsWith(QStringLiteral("http://127.0.0.1:9/srv")));
        QCOMPARE(route->apiKey, keyVariable.isEmpty() ? QString() : QStringLiteral("k"));
    }

    // Load, don't refuse: providers with their own API, and unknown prefixes without an
    // api_base, are kept as unavailable with one line naming model, line and reason.
    void unreachableModelsAreSkippedNotRefused_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("reason");
        QTest::newRow("bedrock") << QStringLiteral("bedrock/amazon.titan-text-express-v1")
                                 << QStringLiteral("provider 'bedrock' has its own API");
        QTest::newRow("vertex_ai") << QStringLiteral("vertex_ai/gemini-pro")
                                   << QStringLiteral("provider 'vertex_ai' has its own API");
        QTest::newRow("gemini") << QStringLiteral("gemini/gemini-1.5-flash")
                                << QStringLiteral("provider 'gemini' has its own API");
        QTest::newRow("cohere") << QStringLiteral("cohere/command-r")
                                << QStringLiteral("provider 'cohere' has its own API");
        QTest::newRow("unknown prefix") << QStringLiteral("frobnicate/model-1")
                                        << QStringLiteral("unknown provider 'frobnicate'");
    }
    void unreachableModelsAreSkippedNotRefused() {
        QFETCH(QString, model);
        QFETCH(QString, reason);
        // Its api_key names a variable that is not set: a skipped model must not refuse the file.
        const QByteArray yaml = "model_list:\n"
                                "  - model_name: ok\n"
                                "    litellm_params:\n"
                                "      model: openai/gpt-4o\n"
                                "  - model_name: other\n"
                                "    litellm_params:\n"
                                "      model: " +
                                model.toUtf8() +
                                "\n"
                                "      api_key: os.environ/NOPE_NOT_SET\n";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        QCOMPARE(config.modelNames(), QStringList{QStringLiteral("ok")});
        QCOMPARE(config.warnings.size(), 1);
        QVERIFY2(config.warnings.constFirst().startsWith(
                     QStringLiteral("model 'other' (model_list[1], line 5) skipped: ") + reason),
                 qPrintable(config.warnings.constFirst()));
        const auto route = config.routeFor(QStringLiteral("other"));
        QVERIFY(route);
        QVERIFY(route->unavailableReason.startsWith(reason));
        QCOMPARE(route->configLine, 5);
        QVERIFY(route->apiKey.isEmpty());
    }

    void unusedLiteLlmKeysAreAcceptedSilently() {
        const QByteArray yaml = R"(model_list:
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      rpm: 60
      tpm: 1000
      drop_params: true
    model_info:
      id: abc
router_settings:
  routing_strategy: usage-based-routing-v2
  redis_host: os.environ/REDIS_HOST
litellm_settings:
  success_callback: ["langfuse"]
  failure_callback: ["sentry"]
  cache: true
environment_variables:
  LANGFUSE_HOST: https://example.invalid
general_settings:
  database_url: os.environ/DATABASE_URL
  store_model_in_db: true
)";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        QVERIFY(config.warnings.isEmpty());
        QCOMPARE(config.modelNames(), QStringList{QStringLiteral("gpt-4o")});
    }

    void patternsAndCustomProvider() {
        // Plain literals: a raw string holding "groq/*" trips moc's comment scanner.
        const QByteArray yaml = "model_list:\n"
                                "  - model_name: \"*\"\n"
                                "    litellm_params:\n"
                                "      model: \"*\"\n"
                                "  - model_name: \"groq/"
                                "*\"\n"
                                "    litellm_params:\n"
                                "      model: \"groq/"
                                "*\"\n"
                                "  - model_name: \"anthropic/"
                                "*\"\n"
                                "    litellm_params:\n"
                                "      model: \"anthropic/"
                                "*\"\n"
                                "  - model_name: mine\n"
                                "    litellm_params:\n"
                                "      model: my-model\n"
                                "      custom_llm_provider: together_ai\n";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), env(), &error), qPrintable(error));
        QCOMPARE(config.modelNames(), QStringList{QStringLiteral("mine")});
        const auto groq = config.routeFor(QStringLiteral("groq/llama-3.1-8b-instant"));
        QCOMPARE(groq->upstreamModel, QStringLiteral("llama-3.1-8b-instant"));
        QCOMPARE(groq->providerName, QStringLiteral("groq"));
        QCOMPARE(groq->urlFor(QStringLiteral("/chat/completions")).host(),
                 QStringLiteral("api.groq.com"));
        const auto anything = config.routeFor(QStringLiteral("gpt-4.1"));
        QCOMPARE(anything->upstreamModel, QStringLiteral("gpt-4.1"));
        QCOMPARE(anything->baseUrl, QUrl(QStringLiteral("https://api.openai.com/v1")));
        // The longer pattern wins over "*": an Anthropic route for the Messages surface.
        const auto claude = config.routeFor(QStringLiteral("anthropic/claude-3-haiku"));
        QVERIFY(claude && claude->isAvailable() && claude->isAnthropic());
        QCOMPARE(claude->upstreamModel, QStringLiteral("claude-3-haiku"));
        QCOMPARE(claude->urlFor(QStringLiteral("/messages")),
                 QUrl(QStringLiteral("https://api.anthropic.com/v1/messages")));
        QCOMPARE(config.unavailableCount(), 0);
        const auto mine = config.routeFor(QStringLiteral("mine"));
        QCOMPARE(mine->providerName, QStringLiteral("together_ai"));
        QCOMPARE(mine->upstreamModel, QStringLiteral("my-model"));
        QCOMPARE(mine->baseUrl, QUrl(QStringLiteral("https://api.together.xyz/v1")));
    }

    void describesEachRouteWithoutSecrets() {
        QProcessEnvironment e = env();
        e.insert(QStringLiteral("GROQ_API_KEY"), QStringLiteral("gsk-secret-value"));
        const QByteArray yaml = R"(model_list:
  - model_name: fast
    litellm_params:
      model: groq/llama-3.1-8b-instant
  - model_name: gpt
    litellm_params:
      model: openai/gpt-4o
      api_key: sk-secret-value
  - model_name: claude
    litellm_params:
      model: anthropic/claude-3-opus
  - model_name: demo
    litellm_params:
      model: loopscope/demo
)";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), e, &error), qPrintable(error));
        const QStringList lines = config.describeRoutes();
        QCOMPARE(lines,
                 QStringList(
                     {QStringLiteral("fast: groq → https://api.groq.com/openai/v1/chat/completions "
                                     "model=llama-3.1-8b-instant key=$GROQ_API_KEY "
                                     "(Authorization: Bearer) (line 2)"),
                      QStringLiteral("gpt: openai → https://api.openai.com/v1/chat/completions "
                                     "model=gpt-4o key=api_key from the config (Authorization: "
                                     "Bearer) (line 5)"),
                      QStringLiteral("claude: anthropic → https://api.anthropic.com/v1/messages "
                                     "model=claude-3-opus key=the client's, forwarded (line 9) "
                                     "Messages native; Chat Completions and Responses bridged "
                                     "over /messages"),
                      QStringLiteral("demo: built-in demo model (line 12)"),
                      QStringLiteral("any other model on /v1/messages: "
                                     "https://api.anthropic.com/v1")}));
        QVERIFY(!lines.join(u'\n').contains(QStringLiteral("secret")));
    }

    // Where a /v1/messages request goes (dialects.md §3): the config's anthropic/ route with
    // LiteLLM's api_base (no /v1) and its key in x-api-key; an OpenAI-wire route refused with
    // the reason; any other model to --anthropic-upstream, else the demo when the default route
    // is the demo, else Anthropic's API.
    void messagesRoutes() {
        QProcessEnvironment e = env();
        e.insert(QStringLiteral("ANTHROPIC_API_KEY"), QStringLiteral("sk-ant-env"));
        const QByteArray yaml = R"(model_list:
  - model_name: claude-sonnet
    litellm_params:
      model: anthropic/claude-sonnet-4-5
      api_base: http://127.0.0.1:9/anthropic
  - model_name: claude-keyed
    litellm_params:
      model: anthropic/claude-haiku-4-5
      api_key: sk-ant-config
      api_base: https://gateway.example/v1/
  - model_name: gpt
    litellm_params:
      model: openai/gpt-4o
)";
        ProxyConfig config;
        QString error;
        QVERIFY2(config.loadYaml(YamlDocument::fromText(yaml), e, &error), qPrintable(error));
        const auto sonnet = config.messagesRouteFor(QStringLiteral("claude-sonnet"));
        QVERIFY(sonnet->isAvailable() && sonnet->isAnthropic());
        QCOMPARE(sonnet->urlFor(QStringLiteral("/messages")),
                 QUrl(QStringLiteral("http://127.0.0.1:9/anthropic/v1/messages")));
        QCOMPARE(sonnet->upstreamModel, QStringLiteral("claude-sonnet-4-5"));
        QCOMPARE(sonnet->apiKey, QStringLiteral("sk-ant-env")); // LiteLLM reads the variable
        QCOMPARE(sonnet->authHeader().first, QByteArray("x-api-key"));
        const auto keyed = config.messagesRouteFor(QStringLiteral("claude-keyed"));
        QCOMPARE(keyed->urlFor(QStringLiteral("/messages")),
                 QUrl(QStringLiteral("https://gateway.example/v1/messages")));
        QCOMPARE(keyed->authHeader(),
                 qMakePair(QByteArray("x-api-key"), QByteArray("sk-ant-config")));
        const auto gpt = config.messagesRouteFor(QStringLiteral("gpt"));
        QVERIFY(!gpt->isAvailable());
        QVERIFY2(gpt->unavailableReason.contains(QStringLiteral("anthropic/ route")),
                 qPrintable(gpt->unavailableReason));
        // Not in the config: Anthropic's API by default …
        const auto other = config.messagesRouteFor(QStringLiteral("claude-opus-4-1"));
        QVERIFY(other->isAnthropic() && other->isAvailable());
        QCOMPARE(other->urlFor(QStringLiteral("/messages")),
                 QUrl(QStringLiteral("https://api.anthropic.com/v1/messages")));
        QCOMPARE(other->upstreamModel, QStringLiteral("claude-opus-4-1"));
        QVERIFY(other->apiKey.isEmpty()); // the client's own key goes
        // … --anthropic-upstream when given …
        config.anthropicUpstream =
            ProxyConfig::routeForAnthropicUpstream(QStringLiteral("http://127.0.0.1:7"), &error);
        QCOMPARE(config.messagesRouteFor(QStringLiteral("x"))->urlFor(QStringLiteral("/messages")),
                 QUrl(QStringLiteral("http://127.0.0.1:7/v1/messages")));
        QVERIFY(!ProxyConfig::routeForAnthropicUpstream(QStringLiteral("ftp://x"), &error));
        QVERIFY(error.contains(QStringLiteral("--anthropic-upstream")));
        // … and the demo when the default route is the demo.
        ProxyConfig demo;
        demo.defaultRoute = ProxyConfig::demoRoute();
        QVERIFY(demo.messagesRouteFor(QStringLiteral("loopscope-demo"))->isDemo());
    }

    void missingFileIsAnError() {
        ProxyConfig config;
        QString error;
        QVERIFY(!config.loadFile(QStringLiteral("/nonexistent/loopscope.yaml"), env(), &error));
        QVERIFY2(error.contains(QStringLiteral("/nonexistent/loopscope.yaml")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TstProxyConfig)
#include "tst_proxyconfig.moc"
