#pragma once

#include "proxy/proxyconfig.h"

#include <QString>
#include <QStringList>

// The loopscope CLI (docs/architecture.md): parses arguments and the config file into a
// ProxyConfig. --help and --version print and exit inside parse().
struct CommandLine {
    loopscope::ProxyConfig config;
    bool headless = false;
    bool checkConfig = false; // --check-config FILE: print how each model routes, then exit
    QString error;            // one line, when parsing failed
    int exitCode = 0;         // 2 for usage and config errors

    static CommandLine parse(const QStringList &arguments);
};
