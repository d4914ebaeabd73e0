#include "proxy/proxyconfig.h"

#include "inspect/credentialpolicy.h"
#include "interception/interceptionsettings.h"
#include "interception/litellmproviders.h"
#include "proxy/accesspolicy.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace loopscope {

namespace {

// Collects the first error with the YAML line of the key (or of its nearest parent).
struct Validator {
    const YamlDocument &doc;
    const QProcessEnvironment &env;
    QString error;

    bool fail(const QString &key, const QString &problem) {
        int line = 0;
        QString path = key;
        while (line == 0 && !path.isEmpty()) {
            line = doc.lineOf(path);
            const qsizetype cut = qMax(path.lastIndexOf(u'.'), path.lastIndexOf(u'['));
            path = cut > 0 ? path.left(cut) : QString();
        }
        error = line > 0 ? QStringLiteral("%1 (line %2): %3").arg(key).arg(line).arg(problem)
                         : QStringLiteral("%1: %2").arg(key, problem);
        return false;
    }

    // A string, with "os.environ/VAR" resolved. Missing → empty (ok); wrong type → error.
    bool secret(const QJsonObject &parent, const QString &field, const QString &key, QString *out) {
        const QJsonValue v = parent.value(field);
        if (v.isUndefined() || v.isNull())
            return true;
        if (!v.isString())
            return fail(key, QStringLiteral("must be a string"));
        QString text = v.toString();
        if (text.startsWith(QLatin1String("os.environ/"))) {
            const QString var = text.mid(11);
            if (var.isEmpty() || !env.contains(var))
                return fail(key, QStringLiteral("environment variable %1 is not set").arg(var));
            text = env.value(var);
        }
        *out = text;
        return true;
    }

    // LiteLLM's validated_max_agentic_loops: ints, whole floats and integer strings (after
    // os.environ/ resolution) ≥ 1; bools and anything else rejected.
    bool maxLoops(const QJsonObject &parent, const QString &key, int *out) {
        QJsonValue v = parent.value(QStringLiteral("max_agentic_loops"));
        if (v.isUndefined() || v.isNull())
            return true;
        if (v.isBool())
            return fail(key,
                        QStringLiteral("must be an integer, got %1")
                            .arg(v.toBool() ? QStringLiteral("True") : QStringLiteral("False")));
        double number = 0;
        if (v.isDouble()) {
            number = v.toDouble();
            if (number != std::floor(number))
                return fail(key, QStringLiteral("must be an integer, got %1").arg(number));
        } else if (v.isString()) {
            QString text;
            if (!secret(parent, QStringLiteral("max_agentic_loops"), key, &text))
                return false;
            bool ok = false;
            number = double(text.trimmed().toLongLong(&ok));
            if (!ok)
                return fail(key, QStringLiteral("must be an integer, got '%1'").arg(text));
        } else {
            return fail(key, QStringLiteral("must be an integer"));
        }
        if (number < 1)
            return fail(key, QStringLiteral("must be at least 1, got %1").arg(qint64(number)));
        *out = int(qMin(number, 1000000.0));
        return true;
    }

    bool seconds(const QJsonObject &parent, const QString &field, const QString &key, int *ms) {
        const QJsonValue v = parent.value(field);
        if (v.isUndefined() || v.isNull())
            return true;
        if (!v.isDouble() || v.toDouble() <= 0)
            return fail(key, QStringLiteral("must be a positive number of seconds"));
        *ms = int(qMin(v.toDouble() * 1000.0, 86400000.0));
        return true;
    }

    // A whole number in [minimum, maximum]; missing → unchanged.
    bool integer(const QJsonObject &parent, const QString &field, const QString &key,
                 qint64 minimum, qint64 maximum, qint64 *out) {
        const QJsonValue v = parent.value(field);
        if (v.isUndefined() || v.isNull())
            return true;
        if (!v.isDouble() || v.toDouble() != std::floor(v.toDouble()) ||
            v.toDouble() < double(minimum) || v.toDouble() > double(maximum))
            return fail(
                key, QStringLiteral("must be an integer from %1 to %2").arg(minimum).arg(maximum));
        *out = qint64(v.toDouble());
        return true;
    }

    bool boolean(const QJsonObject &parent, const QString &field, const QString &key, bool *out) {
        const QJsonValue v = parent.value(field);
        if (v.isUndefined() || v.isNull())
            return true;
        if (!v.isBool())
            return fail(key, QStringLiteral("must be true or false"));
        *out = v.toBool();
        return true;
    }

    bool httpUrl(const QString &text, const QString &key, QUrl *out) {
        const QUrl url(text, QUrl::StrictMode);
        if (!url.isValid() || url.host().isEmpty() ||
            (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")))
            return fail(key, QStringLiteral("'%1' is not an http(s) URL").arg(text));
        *out = url;
        return true;
    }
};

QString unavailableBase(const LiteLlmProvider &provider) {
    QString text =
        QStringLiteral("provider '%1' has no default api_base: set api_base").arg(provider.name);
    if (!provider.apiBaseEnv.isEmpty())
        text += QStringLiteral(" (or %1)").arg(provider.apiBaseEnv.join(QStringLiteral(", ")));
    return text;
}

// litellm_params.model (+ custom_llm_provider, api_base) → provider, upstream model and base URL,
// or an unavailableReason. false only for a malformed value (wrong type, unset os.environ/ var,
// an api_base that is no URL): that still refuses the file.
bool resolveProvider(Validator &v, const QJsonObject &params, const QString &lpKey,
                     UpstreamRoute *route) {
    QString custom;
    if (!v.secret(params, QStringLiteral("custom_llm_provider"),
                  lpKey + QStringLiteral(".custom_llm_provider"), &custom))
        return false;
    const QJsonValue apiBaseValue = params.value(QStringLiteral("api_base"));
    const bool hasApiBase = !apiBaseValue.isUndefined() && !apiBaseValue.isNull();
    const QString modelText = params.value(QStringLiteral("model")).toString().trimmed();
    const qsizetype slash = modelText.indexOf(u'/');
    const QString prefix = slash > 0 ? modelText.left(slash) : QString();

    QString providerName;
    if (!custom.isEmpty()) {
        providerName = custom;
        route->upstreamModel = prefix == custom ? modelText.mid(slash + 1) : modelText;
    } else if (!prefix.isEmpty() && LiteLlmProviders::find(prefix)) {
        providerName = prefix;
        route->upstreamModel = modelText.mid(slash + 1);
    } else {
        // A bare name, or "org/name" that is no provider (e.g. meta-llama/…) on an api_base.
        providerName = QStringLiteral("openai");
        route->upstreamModel = modelText;
        if (!prefix.isEmpty() && !hasApiBase) {
            route->providerName = prefix;
            route->unavailableReason =
                QStringLiteral("unknown provider '%1': set api_base to an OpenAI-compatible "
                               "server, or use one of the prefixes in the README")
                    .arg(prefix);
            return true;
        }
    }
    route->providerName = providerName;
    const LiteLlmProvider *provider = LiteLlmProviders::find(providerName);
    // Decided before api_base/api_key are resolved: a skipped model's unset os.environ/
    // variables (ANTHROPIC_API_KEY, …) must not refuse the file.
    if (provider && !provider->routable()) {
        route->unavailableReason =
            QStringLiteral("provider '%1' has its own API, not OpenAI's; Loopscope forwards only "
                           "OpenAI-compatible providers")
                .arg(providerName);
        return true;
    }
    QString apiBase;
    if (!v.secret(params, QStringLiteral("api_base"), lpKey + QStringLiteral(".api_base"),
                  &apiBase))
        return false;
    if (apiBase == QLatin1String("demo")) {
        route->provider = UpstreamRoute::Provider::Demo;
        route->baseUrl = ProxyConfig::demoRoute().baseUrl;
        return true;
    }
    if (!provider) { // an unknown custom_llm_provider
        if (apiBase.isEmpty()) {
            route->unavailableReason =
                QStringLiteral("unknown provider '%1': set api_base to an OpenAI-compatible server")
                    .arg(providerName);
            return true;
        }
        return v.httpUrl(apiBase, lpKey + QStringLiteral(".api_base"), &route->baseUrl);
    }
    switch (provider->wire) {
    case LiteLlmProvider::Wire::Demo:
        route->provider = UpstreamRoute::Provider::Demo;
        route->providerName = QStringLiteral("openai"); // the demo plays an OpenAI model
        route->baseUrl = ProxyConfig::demoRoute().baseUrl;
        return true;
    case LiteLlmProvider::Wire::Azure:
    case LiteLlmProvider::Wire::OpenAi:
    case LiteLlmProvider::Wire::Anthropic:
    case LiteLlmProvider::Wire::Unsupported:
        break;
    }
    const bool azure = provider->wire == LiteLlmProvider::Wire::Azure;
    const bool anthropic = provider->wire == LiteLlmProvider::Wire::Anthropic;
    if (azure)
        route->provider = UpstreamRoute::Provider::Azure;
    if (anthropic)
        route->provider = UpstreamRoute::Provider::Anthropic;
    QString base = apiBase;
    QString baseOrigin = lpKey + QStringLiteral(".api_base");
    for (qsizetype i = 0; base.isEmpty() && i < provider->apiBaseEnv.size(); ++i) {
        base = v.env.value(provider->apiBaseEnv.at(i));
        baseOrigin = provider->apiBaseEnv.at(i);
    }
    if (base.isEmpty()) {
        base = provider->defaultApiBase;
        baseOrigin = QStringLiteral("default api_base");
    }
    if (base.isEmpty()) {
        route->unavailableReason = unavailableBase(*provider);
        return true;
    }
    if (apiBase.isEmpty()) {
        // From the environment or the table: a bad value there is no fault of the file.
        const QUrl url(base, QUrl::StrictMode);
        if (!url.isValid() || url.host().isEmpty() ||
            (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))) {
            route->unavailableReason =
                QStringLiteral("%1='%2' is not an http(s) URL").arg(baseOrigin, base);
            return true;
        }
        route->baseUrl = url;
    } else if (!v.httpUrl(base, baseOrigin, &route->baseUrl)) {
        return false;
    }
    QString path = route->baseUrl.path();
    while (path.endsWith(u'/'))
        path.chop(1);
    if (azure) {
        // Azure OpenAI's v1 API lives under /openai/v1 and takes an api-key header.
        if (!path.contains(QLatin1String("/openai")))
            route->baseUrl.setPath(path + QStringLiteral("/openai/v1"));
    } else if (anthropic) {
        // LiteLLM's anthropic api_base has no /v1 (it appends /v1/messages); one given with it
        // means the same place.
        route->baseUrl.setPath(path.endsWith(QLatin1String("/v1")) ? path
                                                                   : path + QStringLiteral("/v1"));
    } else if (provider->bareHostGetsV1 && path.isEmpty()) {
        route->baseUrl.setPath(QStringLiteral("/v1"));
    }
    return true;
}

// How Responses requests reach the route (dialects.md §5): litellm_params.upstream_api
// ("chat_completions", "responses", "responses_stateless" or "auto"), else LiteLLM's
// model_info.supported_endpoints (a list without "/v1/responses" means chat only), else the
// provider table's chat-only and stateless marks.
bool responsesApiOf(Validator &v, const QJsonObject &params, const QJsonObject &info,
                    const QString &lpKey, UpstreamRoute *route) {
    using Api = UpstreamRoute::ResponsesApi;
    const QJsonValue mode = params.value(QStringLiteral("upstream_api"));
    if (!mode.isUndefined() && !mode.isNull()) {
        const QString m = mode.toString();
        if (m == QLatin1String("chat_completions"))
            route->responsesApi = Api::ChatOnly;
        else if (m == QLatin1String("responses"))
            route->responsesApi = Api::Native;
        else if (m == QLatin1String("responses_stateless"))
            route->responsesApi = Api::Stateless;
        else if (m != QLatin1String("auto"))
            return v.fail(
                lpKey + QStringLiteral(".upstream_api"),
                QStringLiteral("one of chat_completions, responses, responses_stateless, auto"));
        return true;
    }
    const QJsonValue endpoints = info.value(QStringLiteral("supported_endpoints"));
    if (endpoints.isArray()) {
        bool responses = false;
        for (const QJsonValue &e : endpoints.toArray()) {
            const QString path = e.toString();
            responses = responses || path == QLatin1String("/v1/responses") ||
                        path == QLatin1String("/responses");
        }
        route->responsesApi = responses ? Api::Native : Api::ChatOnly;
        return true;
    }
    if (const LiteLlmProvider *provider = LiteLlmProviders::find(route->providerName)) {
        if (provider->chatOnly)
            route->responsesApi = Api::ChatOnly;
        else if (provider->statelessResponses)
            route->responsesApi = Api::Stateless;
    }
    return true;
}

} // namespace

UpstreamRoute ProxyConfig::demoRoute() {
    UpstreamRoute route;
    route.provider = UpstreamRoute::Provider::Demo;
    route.baseUrl = QUrl(QStringLiteral("demo://loopscope/v1"));
    route.modelName = QStringLiteral("*");
    return route;
}

std::optional<UpstreamRoute> ProxyConfig::routeForUpstream(const QString &urlOrDemo,
                                                           QString *error) {
    if (urlOrDemo == QLatin1String("demo"))
        return demoRoute();
    QUrl url(urlOrDemo, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty() ||
        (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))) {
        if (error)
            *error =
                QStringLiteral("--upstream: '%1' is not an http(s) URL or 'demo'").arg(urlOrDemo);
        return std::nullopt;
    }
    if (url.path().isEmpty() || url.path() == QLatin1String("/"))
        url.setPath(QStringLiteral("/v1"));
    UpstreamRoute route;
    route.modelName = QStringLiteral("*");
    route.baseUrl = url;
    return route;
}

bool ProxyConfig::loadFile(const QString &path, const QProcessEnvironment &environment,
                           QString *error) {
    const YamlDocument doc = YamlDocument::fromFile(path);
    configPath = path;
    return loadYaml(doc, environment, error);
}

bool ProxyConfig::loadYaml(const YamlDocument &yaml, const QProcessEnvironment &environment,
                           QString *error) {
    auto finish = [&](bool ok, const QString &message) {
        if (!ok && error)
            *error = YamlDocument::printable(message); // one line, whatever the file holds
        return ok;
    };
    if (!yaml.isValid())
        return finish(false, yaml.error());
    Validator v{yaml, environment, {}};
    const QJsonObject root = yaml.root();

    // general_settings
    const QJsonValue general = root.value(QStringLiteral("general_settings"));
    if (!general.isUndefined() && !general.isNull() && !general.isObject())
        return finish(
            v.fail(QStringLiteral("general_settings"), QStringLiteral("must be a mapping")),
            v.error);
    QString key;
    if (!v.secret(general.toObject(), QStringLiteral("master_key"),
                  QStringLiteral("general_settings.master_key"), &key))
        return finish(false, v.error);
    masterKey = key;
    {
        const QJsonObject g = general.toObject();
        const QString at = QStringLiteral("general_settings.");
        qint64 connections = maxConnections;
        qint64 pending = maxPendingBytes;
        qint64 upstreamBody = maxUpstreamBodyBytes;
        if (!v.integer(g, QStringLiteral("max_connections"), at + QStringLiteral("max_connections"),
                       1, 100000, &connections) ||
            !v.seconds(g, QStringLiteral("header_timeout"), at + QStringLiteral("header_timeout"),
                       &headerTimeoutMs) ||
            !v.seconds(g, QStringLiteral("idle_timeout"), at + QStringLiteral("idle_timeout"),
                       &idleTimeoutMs) ||
            !v.seconds(g, QStringLiteral("first_byte_timeout"),
                       at + QStringLiteral("first_byte_timeout"), &firstByteTimeoutMs) ||
            !v.seconds(g, QStringLiteral("shutdown_timeout"),
                       at + QStringLiteral("shutdown_timeout"), &shutdownTimeoutMs) ||
            !v.integer(g, QStringLiteral("max_pending_bytes"),
                       at + QStringLiteral("max_pending_bytes"), 1024, qint64(1) << 40, &pending) ||
            !v.integer(g, QStringLiteral("max_upstream_body_bytes"),
                       at + QStringLiteral("max_upstream_body_bytes"), 1024, qint64(1) << 40,
                       &upstreamBody))
            return finish(false, v.error);
        maxConnections = int(connections);
        maxPendingBytes = pending;
        maxUpstreamBodyBytes = upstreamBody;
    }

    // sandbox (Loopscope's own keys)
    const QJsonValue sandbox = root.value(QStringLiteral("sandbox"));
    if (!sandbox.isUndefined() && !sandbox.isNull() && !sandbox.isObject())
        return finish(v.fail(QStringLiteral("sandbox"), QStringLiteral("must be a mapping")),
                      v.error);
    {
        const QJsonObject s = sandbox.toObject();
        qint64 live = maxLiveSandboxes;
        qint64 sessions = -1; // unset: three quarters of max_live
        qint64 expiryMinutes = maxExpiresAfterMinutes;
        qint64 chars = maxOutputChars;
        qint64 pool = sandboxPoolSize;
        qint64 poolMax = sandboxPoolMax;
        qint64 queue = sandboxQueueMax;
        qint64 queueSeconds = sandboxQueueTimeoutMs / 1000;
        if (!v.integer(s, QStringLiteral("max_live"), QStringLiteral("sandbox.max_live"), 1, 100000,
                       &live) ||
            !v.integer(s, QStringLiteral("queue_max"), QStringLiteral("sandbox.queue_max"), 0,
                       100000, &queue) ||
            !v.integer(s, QStringLiteral("queue_timeout_s"),
                       QStringLiteral("sandbox.queue_timeout_s"), 0, 3600, &queueSeconds) ||
            !v.integer(s, QStringLiteral("max_sessions"), QStringLiteral("sandbox.max_sessions"), 1,
                       100000, &sessions) ||
            !v.integer(s, QStringLiteral("max_expires_after_minutes"),
                       QStringLiteral("sandbox.max_expires_after_minutes"), 1, 24 * 60,
                       &expiryMinutes) ||
            !v.integer(s, QStringLiteral("pool_size"), QStringLiteral("sandbox.pool_size"), 0, 32,
                       &pool) ||
            !v.integer(s, QStringLiteral("pool_max"), QStringLiteral("sandbox.pool_max"), 0, 32,
                       &poolMax) ||
            !v.integer(s, QStringLiteral("max_output_chars"),
                       QStringLiteral("sandbox.max_output_chars"), 200, 100000000, &chars) ||
            !v.boolean(s, QStringLiteral("allow_unisolated"),
                       QStringLiteral("sandbox.allow_unisolated"), &allowUnisolated) ||
            !v.boolean(s, QStringLiteral("zygote"), QStringLiteral("sandbox.zygote"),
                       &sandboxZygote))
            return finish(false, v.error);
        // Sessions and containers never take the slots kept for one-shot runs.
        if (sessions < 0)
            sessions = std::max<qint64>(1, live * 3 / 4);
        else if (live > 1 && sessions >= live)
            return finish(v.fail(QStringLiteral("sandbox.max_sessions"),
                                 QStringLiteral("must be below sandbox.max_live (%1), so that "
                                                "one-shot runs keep slots of their own")
                                     .arg(live)),
                          v.error);
        maxLiveSandboxes = int(live);
        sandboxQueueMax = int(queue);
        sandboxQueueTimeoutMs = int(queueSeconds) * 1000;
        maxSessionSandboxes = int(sessions);
        maxExpiresAfterMinutes = int(expiryMinutes);
        maxOutputChars = int(chars);
        // Warm interpreters are processes too (not sandboxes yet, so max_live does not count
        // them): the pool never holds more than max_live, and grows from its size up to pool_max.
        sandboxPoolSize = int(std::min(pool, live));
        sandboxPoolMax = int(std::max<qint64>(sandboxPoolSize, std::min(poolMax, live)));
    }

    QString controlKey;
    if (!v.secret(general.toObject(), QStringLiteral("control_token"),
                  QStringLiteral("general_settings.control_token"), &controlKey))
        return finish(false, v.error);
    controlToken = controlKey;
    const QJsonValue origins = general.toObject().value(QStringLiteral("allow_origins"));
    allowOrigins.clear();
    if (origins.isString()) {
        allowOrigins << origins.toString();
    } else if (origins.isArray()) {
        for (const QJsonValue &origin : origins.toArray()) {
            if (!origin.isString())
                return finish(v.fail(QStringLiteral("general_settings.allow_origins"),
                                     QStringLiteral("must be a list of origins "
                                                    "(\"https://host:port\")")),
                              v.error);
            allowOrigins << origin.toString();
        }
    } else if (!origins.isUndefined() && !origins.isNull()) {
        return finish(v.fail(QStringLiteral("general_settings.allow_origins"),
                             QStringLiteral("must be a list of origins")),
                      v.error);
    }
    for (const QString &origin : std::as_const(allowOrigins))
        if (AccessPolicy::normalizeOrigin(origin.toUtf8()).isEmpty())
            return finish(v.fail(QStringLiteral("general_settings.allow_origins"),
                                 QStringLiteral("'%1' is not an origin (scheme://host[:port])")
                                     .arg(origin.left(100))),
                          v.error);

    // general_settings.otlp (issue 15): over the OTEL_EXPORTER_OTLP_* environment
    const QJsonValue otlpValue = general.toObject().value(QStringLiteral("otlp"));
    if (otlpValue.isObject()) {
        QString otlpError;
        if (!otlp.applyConfig(otlpValue.toObject(), environment, &otlpError))
            return finish(false, otlpError);
    } else if (!otlpValue.isUndefined() && !otlpValue.isNull()) {
        return finish(v.fail(QStringLiteral("general_settings.otlp"),
                             QStringLiteral("must be a mapping (endpoint, headers, protocol, "
                                            "capture_content)")),
                      v.error);
    }

    // history (issue 11)
    const QJsonValue history = root.value(QStringLiteral("history"));
    if (!history.isUndefined() && !history.isNull() && !history.isObject())
        return finish(v.fail(QStringLiteral("history"), QStringLiteral("must be a mapping")),
                      v.error);
    for (const char *name : {"max_days", "max_mb"}) {
        const QJsonValue value = history.toObject().value(QLatin1String(name));
        if (value.isUndefined() || value.isNull())
            continue;
        const double n = value.isString() ? value.toString().toDouble() : value.toDouble(-1);
        if (n <= 0)
            return finish(v.fail(QStringLiteral("history.") + QLatin1String(name),
                                 QStringLiteral("must be a positive number")),
                          v.error);
        if (qstrcmp(name, "max_days") == 0)
            historyMaxDays = qMax(1, int(n));
        else
            historyMaxBytes = qint64(n * 1024 * 1024);
    }

    // litellm_settings
    const QJsonValue litellm = root.value(QStringLiteral("litellm_settings"));
    if (!litellm.isUndefined() && !litellm.isNull() && !litellm.isObject())
        return finish(
            v.fail(QStringLiteral("litellm_settings"), QStringLiteral("must be a mapping")),
            v.error);
    litellmSettings = litellm.toObject();
    const QJsonValue params =
        litellmSettings.value(QStringLiteral("code_interpreter_interception_params"));
    if (!params.isUndefined() && !params.isNull() && !params.isObject())
        return finish(
            v.fail(QStringLiteral("litellm_settings.code_interpreter_interception_params"),
                   QStringLiteral("must be a mapping")),
            v.error);
    if (!v.seconds(litellmSettings, QStringLiteral("request_timeout"),
                   QStringLiteral("litellm_settings.request_timeout"), &requestTimeoutMs))
        return finish(false, v.error);

    // sandbox_tools: entries are validated (and skipped with a warning) by the registry,
    // LiteLLM-style; only the container type is checked here.
    const QJsonValue tools = root.value(QStringLiteral("sandbox_tools"));
    if (!tools.isUndefined() && !tools.isNull() && !tools.isArray())
        return finish(v.fail(QStringLiteral("sandbox_tools"), QStringLiteral("must be a list")),
                      v.error);
    sandboxTools = tools.toArray();

    // model_list
    const QJsonValue list = root.value(QStringLiteral("model_list"));
    if (!list.isUndefined() && !list.isNull() && !list.isArray())
        return finish(v.fail(QStringLiteral("model_list"), QStringLiteral("must be a list")),
                      v.error);
    modelRoutes.clear();
    warnings.clear();
    const QJsonArray entries = list.toArray();
    for (qsizetype i = 0; i < entries.size(); ++i) {
        const QString at = QStringLiteral("model_list[%1]").arg(i);
        if (!entries.at(i).isObject())
            return finish(v.fail(at, QStringLiteral("must be a mapping")), v.error);
        const QJsonObject entry = entries.at(i).toObject();
        const QJsonValue name = entry.value(QStringLiteral("model_name"));
        if (!name.isString() || name.toString().trimmed().isEmpty())
            return finish(v.fail(at + QStringLiteral(".model_name"),
                                 QStringLiteral("required, a non-empty string")),
                          v.error);
        const QJsonValue lp = entry.value(QStringLiteral("litellm_params"));
        const QString lpKey = at + QStringLiteral(".litellm_params");
        if (!lp.isObject())
            return finish(v.fail(lpKey, QStringLiteral("required, a mapping")), v.error);
        const QJsonValue model = lp.toObject().value(QStringLiteral("model"));
        if (!model.isString() || model.toString().trimmed().isEmpty())
            return finish(v.fail(lpKey + QStringLiteral(".model"),
                                 QStringLiteral("required, e.g. openai/gpt-4o")),
                          v.error);

        QJsonObject litellmParams = lp.toObject();
        UpstreamRoute route;
        route.modelName = name.toString().trimmed();
        route.timeoutMs = requestTimeoutMs;
        route.configLine = yaml.lineOf(at);
        if (!resolveProvider(v, litellmParams, lpKey, &route))
            return finish(false, v.error);
        if (route.isAvailable() && !v.secret(litellmParams, QStringLiteral("api_key"),
                                             lpKey + QStringLiteral(".api_key"), &route.apiKey))
            return finish(false, v.error);
        if (!route.apiKey.isEmpty()) {
            route.apiKeySource = QStringLiteral("api_key");
        } else if (const LiteLlmProvider *provider = LiteLlmProviders::find(route.providerName);
                   provider && route.isAvailable()) {
            for (const QString &variable : provider->apiKeyEnv) {
                if (!environment.value(variable).isEmpty()) {
                    route.apiKey = environment.value(variable);
                    route.apiKeySource = u'$' + variable;
                    break;
                }
            }
        }
        if (!v.maxLoops(litellmParams, lpKey + QStringLiteral(".max_agentic_loops"),
                        &route.maxAgenticLoops))
            return finish(false, v.error);
        if (!v.seconds(litellmParams, QStringLiteral("timeout"), lpKey + QStringLiteral(".timeout"),
                       &route.timeoutMs))
            return finish(false, v.error);
        const QJsonObject info = entry.value(QStringLiteral("model_info")).toObject();
        const auto price = [&info](const char *key) {
            const QJsonValue p = info.value(QLatin1String(key));
            return p.isString() ? p.toString().toDouble() : p.toDouble(-1);
        };
        if (price("input_cost_per_token") >= 0 || price("output_cost_per_token") >= 0) {
            ModelPrice p;
            p.inputPerToken = qMax(0.0, price("input_cost_per_token"));
            p.outputPerToken = qMax(0.0, price("output_cost_per_token"));
            p.cacheReadPerToken = price("cache_read_input_token_cost");
            p.cacheWritePerToken = price("cache_creation_input_token_cost");
            modelPrices.insert(route.modelName, p);
        }
        if (!responsesApiOf(v, litellmParams, info, lpKey, &route))
            return finish(false, v.error);
        litellmParams.remove(QStringLiteral("api_key"));
        litellmParams.remove(QStringLiteral("upstream_api"));
        route.litellmParams = litellmParams;
        if (!route.isAvailable())
            warnings << YamlDocument::printable(
                QStringLiteral("model '%1' (%2, line %3) skipped: %4")
                    .arg(route.modelName, at)
                    .arg(route.configLine)
                    .arg(route.unavailableReason));
        modelRoutes.append(route);
    }
    // The interception layer's own strict check (enabled, enabled_providers, sandbox_tool_name,
    // sandbox_tools): its first error is the one line the user sees.
    const LoadedInterceptionConfig interception = InterceptionSettings::fromYaml(yaml);
    if (!interception.ok())
        return finish(false, interception.errors.constFirst());
    document = std::make_shared<const YamlDocument>(yaml);
    return finish(true, {});
}

std::optional<UpstreamRoute> ProxyConfig::configRouteFor(const QString &model) const {
    // Exact model_name first, then the longest matching pattern ("*", "openai/*", …).
    const UpstreamRoute *pattern = nullptr;
    qsizetype patternLength = -1;
    for (const UpstreamRoute &route : modelRoutes) {
        if (route.modelName == model)
            return route;
        if (!route.modelName.endsWith(u'*'))
            continue;
        const QString stem = route.modelName.chopped(1);
        if (model.startsWith(stem) && stem.size() > patternLength) {
            pattern = &route;
            patternLength = stem.size();
        }
    }
    if (!pattern)
        return std::nullopt;
    UpstreamRoute route = *pattern;
    const QString matched = model.mid(patternLength);
    if (route.upstreamModel.isEmpty())
        route.upstreamModel = model;
    else if (route.upstreamModel.contains(u'*'))
        route.upstreamModel.replace(u'*', matched);
    route.modelName = model;
    return route;
}

std::optional<UpstreamRoute> ProxyConfig::routeFor(const QString &model) const {
    if (auto route = configRouteFor(model))
        return route;
    if (!defaultRoute)
        return std::nullopt;
    UpstreamRoute route = *defaultRoute;
    route.upstreamModel = model;
    route.timeoutMs = requestTimeoutMs;
    route.modelName = model;
    return route;
}

std::optional<UpstreamRoute> ProxyConfig::routeForAnthropicUpstream(const QString &url,
                                                                    QString *error) {
    if (url == QLatin1String("demo"))
        return demoRoute();
    QUrl base(url, QUrl::StrictMode);
    if (!base.isValid() || base.host().isEmpty() ||
        (base.scheme() != QLatin1String("http") && base.scheme() != QLatin1String("https"))) {
        if (error)
            *error = QStringLiteral("--anthropic-upstream: '%1' is not an http(s) URL or 'demo'")
                         .arg(url);
        return std::nullopt;
    }
    QString path = base.path();
    while (path.endsWith(u'/'))
        path.chop(1);
    base.setPath(path.endsWith(QLatin1String("/v1")) ? path : path + QStringLiteral("/v1"));
    UpstreamRoute route;
    route.modelName = QStringLiteral("*");
    route.baseUrl = base;
    route.provider = UpstreamRoute::Provider::Anthropic;
    route.providerName = QStringLiteral("anthropic");
    return route;
}

std::optional<UpstreamRoute> ProxyConfig::messagesRouteFor(const QString &model) const {
    if (auto route = configRouteFor(model)) {
        // A pattern ("*", "openai/*") of another wire is a catch-all for OpenAI's surface, not
        // a claim on Claude models; a model named exactly is the config's word.
        const bool exact =
            std::any_of(modelRoutes.cbegin(), modelRoutes.cend(),
                        [&model](const UpstreamRoute &r) { return r.modelName == model; });
        if (route->isAnthropic() || route->isDemo())
            return route;
        if (exact) {
            if (route->isAvailable())
                route->unavailableReason =
                    QStringLiteral("its route speaks OpenAI's API (provider '%1'); /v1/messages "
                                   "needs an anthropic/ route")
                        .arg(route->providerName);
            return route;
        }
    }
    UpstreamRoute route = messagesFallbackRoute();
    route.modelName = model;
    route.upstreamModel = model;
    route.timeoutMs = requestTimeoutMs;
    return route;
}

UpstreamRoute ProxyConfig::messagesFallbackRoute() const {
    if (anthropicUpstream)
        return *anthropicUpstream;
    if (defaultRoute && defaultRoute->isDemo())
        return demoRoute(); // the demo answers in the Messages dialect too
    return *routeForAnthropicUpstream(QString::fromLatin1(kDefaultAnthropicUpstream), nullptr);
}

QStringList ProxyConfig::modelNames() const {
    QStringList names;
    for (const UpstreamRoute &route : modelRoutes)
        if (route.isAvailable() && !route.modelName.contains(u'*') &&
            !names.contains(route.modelName))
            names << route.modelName;
    return names;
}

int ProxyConfig::unavailableCount() const {
    int count = 0;
    for (const UpstreamRoute &route : modelRoutes)
        count += route.isAvailable() ? 0 : 1;
    return count;
}

namespace {

// Strings under secret-named keys at any depth ("api_key", "token", ...), "os.environ/NAME"
// resolved the way LiteLLM and the sandbox tools do.
void collectSecrets(const QJsonValue &value, const QString &key, QStringList &out) {
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            collectSecrets(it.value(), it.key(), out);
    } else if (value.isArray()) {
        for (const QJsonValue &v : value.toArray())
            collectSecrets(v, key, out);
    } else if (value.isString() && CredentialPolicy::isSecretKey(key)) {
        const QString text = value.toString();
        const QLatin1String env("os.environ/");
        out << (text.startsWith(env) ? qEnvironmentVariable(text.mid(env.size()).toLocal8Bit())
                                     : text);
    }
}

} // namespace

QStringList ProxyConfig::secretValues() const {
    QStringList out{masterKey, controlToken};
    for (const UpstreamRoute &route : modelRoutes)
        out << route.apiKey;
    for (const auto &route : {defaultRoute, anthropicUpstream})
        if (route)
            out << route->apiKey;
    for (const auto &header : otlp.headers)
        out << QString::fromUtf8(header.second);
    collectSecrets(sandboxTools, QString(), out);
    out.removeAll(QString());
    out.removeDuplicates();
    return out;
}

QStringList ProxyConfig::describeRoutes() const {
    QStringList lines = describeRoutesRaw();
    for (QString &line : lines)
        line = YamlDocument::printable(line); // names and URLs come from the file
    return lines;
}

QStringList ProxyConfig::describeRoutesRaw() const {
    QStringList lines;
    for (const UpstreamRoute &route : modelRoutes) {
        const QString where = QStringLiteral("line %1").arg(route.configLine);
        if (!route.isAvailable()) {
            lines << QStringLiteral("%1: skipped (%2): %3")
                         .arg(route.modelName, where, route.unavailableReason);
            continue;
        }
        if (route.isDemo()) {
            lines << QStringLiteral("%1: built-in demo model (%2)").arg(route.modelName, where);
            continue;
        }
        const QString header = route.provider == UpstreamRoute::Provider::Azure
                                   ? QStringLiteral("api-key")
                               : route.isAnthropic() ? QStringLiteral("x-api-key")
                                                     : QStringLiteral("Authorization: Bearer");
        QString key;
        if (route.apiKeySource == QLatin1String("api_key"))
            key = QStringLiteral("api_key from the config (%1)").arg(header);
        else if (!route.apiKeySource.isEmpty())
            key = QStringLiteral("%1 (%2)").arg(route.apiKeySource, header);
        else if (masterKey.isEmpty())
            key = QStringLiteral("the client's, forwarded");
        else
            key = QStringLiteral("none (master_key is set)");
        // An Anthropic route serves the Messages surface natively; Chat Completions and
        // Responses are translated onto it (AnthropicBridge).
        const QString endpoint =
            route.isAnthropic() ? QStringLiteral("/messages") : QStringLiteral("/chat/completions");
        lines << QStringLiteral("%1: %2 → %3 model=%4 key=%5 (%6)%7")
                     .arg(route.modelName, route.providerName, route.urlFor(endpoint).toString(),
                          route.upstreamModel, key, where,
                          route.isAnthropic()
                              ? QStringLiteral(" Messages native; Chat Completions and Responses "
                                               "bridged over /messages")
                          : route.responsesApi == UpstreamRoute::ResponsesApi::ChatOnly
                              ? QStringLiteral(" Responses bridged over /chat/completions")
                          : route.responsesApi == UpstreamRoute::ResponsesApi::Native
                              ? QStringLiteral(" Responses native")
                          : route.responsesApi == UpstreamRoute::ResponsesApi::Stateless
                              ? QStringLiteral(" Responses native, state kept by Loopscope")
                              : QString());
    }
    if (defaultRoute) {
        lines << QStringLiteral("any other model: %1")
                     .arg(defaultRoute->isDemo() ? QStringLiteral("built-in demo model")
                                                 : defaultRoute->baseUrl.toString());
    }
    const UpstreamRoute messages = messagesFallbackRoute();
    lines << QStringLiteral("any other model on /v1/messages: %1")
                 .arg(messages.isDemo() ? QStringLiteral("built-in demo model")
                                        : messages.baseUrl.toString());
    return lines;
}

} // namespace loopscope
