#pragma once

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
    QString controlToken;        // --control-token (wins over env and config; see ControlToken)
    QString error;               // one line, when parsing failed
    int exitCode = 0;            // 2 for usage and config errors

    static CommandLine parse(const QStringList &arguments);
    // True when `host` is not a loopback address (0.0.0.0, a LAN address, ...): anyone who can
    // reach it may run code and spend the configured key.
    static bool isPublicHost(const QString &host);
    // The start-up warning for --insecure-public (empty when it does not apply).
    QString publicBindWarning() const;
};
