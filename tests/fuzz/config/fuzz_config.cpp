// The YAML config loader: arbitrary bytes as a config.yaml through YamlDocument, ProxyConfig
// (model_list, providers, keys) and InterceptionSettings::fromYaml. Invariants: a refusal is one
// non-empty line; an accepted config's available routes have an http(s) base URL (or the demo
// one) and their model names are listed; the descriptions never contain a key from the environment.
#include "config/yamldocument.h"
#include "fuzzsupport.h"
#include "interception/interceptionsettings.h"
#include "proxy/proxyconfig.h"

using namespace loopscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QByteArray text(reinterpret_cast<const char *>(data), qsizetype(size));
    const YamlDocument doc = YamlDocument::fromText(text);
    QProcessEnvironment env;
    env.insert(QStringLiteral("OPENAI_API_KEY"), QStringLiteral("sk-fuzz-env-key-000"));
    env.insert(QStringLiteral("GROQ_API_KEY"), QStringLiteral("gsk-fuzz-env-key-000"));
    env.insert(QStringLiteral("HOSTED_VLLM_API_BASE"), QStringLiteral("http://127.0.0.1:8000"));

    ProxyConfig config;
    QString error;
    const bool ok = config.loadYaml(doc, env, &error);
    if (!ok) {
        FUZZ_CHECK(!error.isEmpty());
        FUZZ_CHECK(!error.contains(u'\n'));
    } else {
        FUZZ_CHECK(error.isEmpty());
        for (const UpstreamRoute &route : std::as_const(config.modelRoutes)) {
            if (!route.isAvailable()) {
                FUZZ_CHECK(route.apiKey.isEmpty()); // never resolved for a skipped model
                continue;
            }
            const QString scheme = route.baseUrl.scheme();
            FUZZ_CHECK(scheme == QLatin1String("http") || scheme == QLatin1String("https") ||
                       (route.isDemo() && scheme == QLatin1String("demo")));
            FUZZ_CHECK(!route.baseUrl.host().isEmpty());
            FUZZ_CHECK(!route.litellmParams.contains(QStringLiteral("api_key")));
        }
        const QString described = config.describeRoutes().join(u'\n');
        FUZZ_CHECK(!described.contains(QStringLiteral("fuzz-env-key")));
        for (const UpstreamRoute &route : std::as_const(config.modelRoutes)) {
            (void)config.routeFor(route.modelName);
            (void)config.routeFor(route.modelName + QStringLiteral("-suffix"));
        }
    }
    const LoadedInterceptionConfig interception = InterceptionSettings::fromYaml(doc);
    for (const QString &line : interception.errors + interception.warnings)
        FUZZ_CHECK(!line.isEmpty() && !line.contains(u'\n'));
    if (ok) // the proxy refuses whatever the interception layer refuses
        FUZZ_CHECK(interception.ok());
    return 0;
}
