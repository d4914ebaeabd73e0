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
        QTest::newRow("unsupported provider")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: "
                          "anthropic/claude\n")
            << QStringLiteral("model_list[0].litellm_params.model (line 4): provider 'anthropic'");
        QTest::newRow("bad api_base")
            << QByteArray("model_list:\n  - model_name: a\n    litellm_params:\n      model: x\n   "
                          "   api_base: not a url\n")
            << QStringLiteral("model_list[0].litellm_params.api_base (line 5)");
        QTest::newRow("azure without api_base")
            << QByteArray(
                   "model_list:\n  - model_name: a\n    litellm_params:\n      model: azure/d\n")
            << QStringLiteral(
                   "model_list[0].litellm_params.api_base (line 3): required for azure/");
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

    void missingFileIsAnError() {
        ProxyConfig config;
        QString error;
        QVERIFY(!config.loadFile(QStringLiteral("/nonexistent/loopscope.yaml"), env(), &error));
        QVERIFY2(error.contains(QStringLiteral("/nonexistent/loopscope.yaml")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TstProxyConfig)
#include "tst_proxyconfig.moc"
