#pragma once

#include "models/settingssources.h"
#include "proxy/proxyconfig.h"

#include <QString>
#include <QStringList>

// The loopscope CLI (docs/architecture.md): parses arguments and the config file into a
// ProxyConfig. --help and --version print and exit inside parse().
struct CommandLine {
    loopscope::ProxyConfig config;
    bool headless = false;
    // --insecure-public: a non-loopback bind without a master key, warned about on every start.
    bool insecurePublic = false;
    bool checkConfig = false;    // --check-config FILE: print how each model routes, then exit
    bool printMcpConfig = false; // --print-mcp-config: print the MCP client snippet and exit
    QString printSnippet;        // --print-snippet LANG: print a client snippet and exit
    QString controlToken;        // --control-token (wins over env and config; see ControlToken)
    // The options among the window's settings that were given explicitly, as typed
    // ("--port 0"); empty when not given. They lock the Settings dialog's fields.
    QString portOption, upstreamOption, maxLoopsOption, execTimeoutOption;
    QString error;    // one line, when parsing failed
    int exitCode = 0; // 2 for usage and config errors

    static CommandLine parse(const QStringList &arguments);
    // True when `host` is not a loopback address (0.0.0.0, a LAN address, ...): anyone who can
    // reach it may run code and spend the configured key.
    static bool isPublicHost(const QString &host);
    // The start-up warning for --insecure-public (empty when it does not apply).
    QString publicBindWarning() const;

    // The window's settings in effect: defaults, then `saved`, then the config file, then the
    // command line, each value with where it came from (issue 13, "Settings that never
    // surprise").
    loopscope::SettingsSources settingsInEffect(const QSettings &saved) const;
    // Writes the proxy settings of `sources` that neither the command line nor the config file
    // set into `config` (a saved port, upstream, timeouts, loops, pool). False with `error`
    // when a saved upstream is unusable (the config keeps its route then).
    // The model name client snippets use: the demo model's id, else the config's first model,
    // else a common OpenAI name (a bare --upstream URL serves whatever the client names).
    static QString suggestedModel(const loopscope::ProxyConfig &config);
    // The address clients use for a start with these arguments ("http://127.0.0.1:4000").
    QString clientUrl() const;

    static bool applyToConfig(const loopscope::SettingsSources &sources,
                              loopscope::ProxyConfig *config, QString *error);
};
