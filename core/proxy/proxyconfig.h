#pragma once

#include "interception/yamldocument.h"
#include "telemetry/otlpsettings.h"
#include "upstream/upstreamroute.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QProcessEnvironment>
#include <QString>

#include <memory>
#include <optional>

namespace loopscope {

// Everything the proxy needs to run, from the CLI and a LiteLLM-style config.yaml, validated
// once at start-up ("compile configuration into a plan once"): per-request work only looks
// routes up. Upstream URLs come only from here, never from a request.
class ProxyConfig {
public:
    // Listening.
    QString host = QStringLiteral("127.0.0.1");
    quint16 port = 4000;
    qint64 maxBodyBytes = 32 * 1024 * 1024;

    // Routing: model_list entries first (exact model_name, then a "*" entry), else the default
    // route (--upstream URL, or the demo model when neither --upstream nor --config is given).
    QList<UpstreamRoute> modelRoutes;
    std::optional<UpstreamRoute> defaultRoute;
    QString masterKey; // general_settings.master_key: clients must present it when set
    // Access (control-api.md "Access"): the control API's bearer token (--control-token, env
    // LOOPSCOPE_CONTROL_TOKEN, general_settings.control_token; else minted at start by the app)
    // and the non-loopback browser origins allowed (--allow-origin,
    // general_settings.allow_origins).
    QString controlToken;
    OtlpSettings otlp; // trace export (issue 15); off without an endpoint
    QStringList allowOrigins;

    // Loop and sandbox settings handed to the interception layer (issue 5).
    int maxLoopsOverride = 0;      // --max-loops (0 = not given)
    int execTimeoutSeconds = 0;    // --exec-timeout (0 = not given)
    int requestTimeoutMs = 600000; // litellm_settings.request_timeout (seconds in YAML)
    int sandboxPoolSize = 2;       // warm local interpreters (the window's Settings); 0 = none

    // Flow history (issue 11): the top-level `history:` mapping (max_days, max_mb), the CLI's
    // --data-dir / --no-history, and model_list model_info prices (USD per token, LiteLLM keys
    // input_cost_per_token / output_cost_per_token) keyed by model_name.
    int historyMaxDays = 14;
    qint64 historyMaxBytes = 500LL * 1024 * 1024;
    QString dataDir;        // empty = QStandardPaths::AppDataLocation
    bool noHistory = false; // keep the flow store in memory
    QHash<QString, QPair<double, double>> modelPrices;

    // Kept verbatim for the interception layer: InterceptionSettings::fromYaml and the
    // SandboxToolRegistry read these (hook for the lead: `document` has the line numbers).
    QJsonObject litellmSettings;
    QJsonArray sandboxTools;
    QString configPath;
    std::shared_ptr<const YamlDocument> document;

    // "demo" → the in-process demo model; an http(s) URL → that OpenAI-compatible base (a URL
    // without a path gets "/v1"). nullopt and `error` set when the URL is unusable.
    static std::optional<UpstreamRoute> routeForUpstream(const QString &urlOrDemo, QString *error);
    static UpstreamRoute demoRoute();

    // Reads model_list, general_settings, litellm_settings and sandbox_tools. On the first
    // problem returns false with one line "<key> (line N): <problem>".
    bool loadYaml(const YamlDocument &document, const QProcessEnvironment &environment,
                  QString *error);
    bool loadFile(const QString &path, const QProcessEnvironment &environment, QString *error);

    // The route for a client's model name (its upstreamModel filled), or nullopt → 404.
    std::optional<UpstreamRoute> routeFor(const QString &model) const;
    QStringList modelNames() const;
};

} // namespace loopscope
