#pragma once

#include "interception/yamldocument.h"
#include "upstream/upstreamroute.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
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
    // One line per skipped model, "model 'x' (model_list[i], line N) skipped: <why>", printed
    // once at start.
    QStringList warnings;

    // Loop and sandbox settings handed to the interception layer (issue 5).
    int maxLoopsOverride = 0;      // --max-loops (0 = not given)
    int execTimeoutSeconds = 0;    // --exec-timeout (0 = not given)
    int requestTimeoutMs = 600000; // litellm_settings.request_timeout (seconds in YAML)
    int sandboxPoolSize = 2;       // warm local interpreters (the window's Settings); 0 = none

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

    // Reads model_list, general_settings, litellm_settings and sandbox_tools; keys LiteLLM has
    // and Loopscope does not use are ignored. A model whose provider Loopscope cannot reach is
    // kept as unavailable (see `warnings`); only a malformed file (bad YAML, a key of the wrong
    // type, a missing model_name, …) returns false with one line "<key> (line N): <problem>".
    bool loadYaml(const YamlDocument &document, const QProcessEnvironment &environment,
                  QString *error);
    bool loadFile(const QString &path, const QProcessEnvironment &environment, QString *error);

    // The route for a client's model name (its upstreamModel filled), or nullopt → 404. An
    // exact model_name wins over a pattern ending in "*" (the longest one), which wins over the
    // default route; a route that is not isAvailable() → 400 with its reason.
    std::optional<UpstreamRoute> routeFor(const QString &model) const;
    // Available, non-pattern model names (what /v1/models lists).
    QStringList modelNames() const;
    // Models the config names but Loopscope cannot reach (kept, answered with 400).
    int unavailableCount() const;
    // One line per model_list entry: where it goes (URL, upstream model, key source) or why
    // not. For --check-config; never contains a key.
    QStringList describeRoutes() const;

private:
    QStringList describeRoutesRaw() const;
};

} // namespace loopscope
