#pragma once

#include "config/yamldocument.h"
#include "record/modelprice.h"
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
    // Where a /v1/messages request goes when the config has no route for its model
    // (--anthropic-upstream); unset: kDefaultAnthropicUpstream, or the demo model when the
    // default route is the demo.
    std::optional<UpstreamRoute> anthropicUpstream;
    static constexpr const char *kDefaultAnthropicUpstream = "https://api.anthropic.com";
    QString masterKey; // general_settings.master_key: clients must present it when set
    // Access (control-api.md "Access"): the control API's bearer token (--control-token, env
    // LOOPSCOPE_CONTROL_TOKEN, general_settings.control_token; else minted at start by the app)
    // and the non-loopback browser origins allowed (--allow-origin,
    // general_settings.allow_origins).
    QString controlToken;
    OtlpSettings otlp; // trace export (issue 15); off without an endpoint
    QStringList allowOrigins;

    // Resource limits (issue 18; docs/security.md). general_settings keys in brackets.
    int maxConnections = 256;                 // [max_connections] beyond it: 503, keep serving
    int headerTimeoutMs = 30000;              // [header_timeout] s: request head must arrive
    int idleTimeoutMs = 120000;               // [idle_timeout] s: silent keep-alive closed
    int firstByteTimeoutMs = 10000;           // [first_byte_timeout] s: a silent new socket
    qint64 maxPendingBytes = 4 * 1024 * 1024; // [max_pending_bytes] sent during a response
    qint64 maxUpstreamBodyBytes = 64 * 1024 * 1024; // [max_upstream_body_bytes] one reply
    int shutdownTimeoutMs = 5000; // [shutdown_timeout] s: quit waits this for remote deletes
    // The top-level `sandbox` mapping.
    int maxLiveSandboxes = 32; // [sandbox.max_live] every backend, every identity
    // [sandbox.max_sessions] of those, session and container sandboxes (below max_live: the
    // rest are kept for one-shot runs); unset: three quarters of max_live.
    int maxSessionSandboxes = 24;
    // [sandbox.queue_max], [sandbox.queue_timeout_s]: creations that find every live slot taken
    // wait in a FIFO this long (0 = refuse at once), 429 + Retry-After only beyond it.
    int sandboxQueueMax = 256;
    int sandboxQueueTimeoutMs = 60000;
    int maxExpiresAfterMinutes = 60; // [sandbox.max_expires_after_minutes] a container's cap
    int maxOutputChars = 20000;      // [sandbox.max_output_chars] fed back to the model per run
    bool allowUnisolated = false;    // [sandbox.allow_unisolated] run without bubblewrap (loud)
    bool sandboxZygote = true;       // [sandbox.zygote] fork sandboxes from one interpreter
    // One line per skipped model, "model 'x' (model_list[i], line N) skipped: <why>", printed
    // once at start.
    QStringList warnings;

    // Loop and sandbox settings handed to the interception layer (issue 5).
    int maxLoopsOverride = 0;      // --max-loops (0 = not given)
    int execTimeoutSeconds = 0;    // --exec-timeout (0 = not given)
    int requestTimeoutMs = 600000; // litellm_settings.request_timeout (seconds in YAML)
    // Warm local interpreters: [sandbox.pool_size], the window's Settings or --sandbox-pool;
    // 0 = none, at most max_live. Under a burst the pool grows up to [sandbox.pool_max] (raised to
    // pool_size, lowered to max_live) and shrinks back when idle.
    int sandboxPoolSize = 2;
    int sandboxPoolMax = 6;

    // Flow history (issue 11): the top-level `history:` mapping (max_days, max_mb), the CLI's
    // --data-dir / --no-history, and model_list model_info prices (USD per token, LiteLLM keys
    // input_cost_per_token / output_cost_per_token) keyed by model_name.
    int historyMaxDays = 14;
    qint64 historyMaxBytes = 500LL * 1024 * 1024;
    QString dataDir;        // empty = QStandardPaths::AppDataLocation
    bool noHistory = false; // keep the flow store in memory
    QHash<QString, ModelPrice> modelPrices;

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
    // "demo", or an Anthropic base URL as LiteLLM writes it (https://api.anthropic.com; a
    // trailing /v1 is accepted): the route's base then ends in /v1.
    static std::optional<UpstreamRoute> routeForAnthropicUpstream(const QString &url,
                                                                  QString *error);

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
    // The route of a Messages request (/v1/messages): the config's route for the model (an
    // OpenAI-wire one comes back unavailable, saying why), else anthropicUpstream, the demo or
    // Anthropic's API (see anthropicUpstream). Never nullopt.
    std::optional<UpstreamRoute> messagesRouteFor(const QString &model) const;
    // Available, non-pattern model names (what /v1/models lists).
    QStringList modelNames() const;
    // Models the config names but Loopscope cannot reach (kept, answered with 400).
    int unavailableCount() const;
    // One line per model_list entry: where it goes (URL, upstream model, key source) or why
    // not. For --check-config; never contains a key.
    QStringList describeRoutes() const;
    // Every secret value this config holds (master key, control token, each route's api key,
    // OTLP header values, sandbox tools' api keys and tokens, "os.environ/NAME" read now): the
    // CredentialPolicy masks them wherever anything is shown or stored.
    QStringList secretValues() const;

private:
    // model_list only: an exact model_name, else the longest matching pattern.
    std::optional<UpstreamRoute> configRouteFor(const QString &model) const;
    UpstreamRoute messagesFallbackRoute() const;
    QStringList describeRoutesRaw() const;
};

} // namespace loopscope
