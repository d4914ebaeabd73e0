#pragma once

#include "proxy/proxyconfig.h"

#include <QString>
#include <QStringList>

// The loopscope CLI (docs/architecture.md): parses arguments and the config file into a
// ProxyConfig. --help and --version print and exit inside parse().
struct CommandLine {
    loopscope::ProxyConfig config;
    bool headless = false;
    QString controlToken;        // --control-token (wins over env and config; see ControlToken)
    bool printMcpConfig = false; // --print-mcp-config: print the MCP client snippet and exit
    QString error;               // one line, when parsing failed
    int exitCode = 0;            // 2 for usage and config errors

    static CommandLine parse(const QStringList &arguments);
};
