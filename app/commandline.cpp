#include "commandline.h"

#include "models/connectsnippets.h"
#include "proxy/accesspolicy.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QHostAddress>
#include <QProcessEnvironment>
#include <QSettings>
#include <QUrl>

using loopscope::AccessPolicy;
using loopscope::ProxyConfig;

CommandLine CommandLine::parse(const QStringList &arguments) {
    CommandLine cli;
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Local OpenAI-compatible proxy and live inspector for agentic code-execution loops.\n"
        "Point an OpenAI SDK at http://127.0.0.1:4000/v1. Without --upstream or --config the "
        "built-in scripted demo model answers (offline)."));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    const QCommandLineOption headless(QStringLiteral("headless"),
                                      QStringLiteral("Run without a window; log one line per "
                                                     "request to stderr."));
    const QCommandLineOption host(QStringLiteral("host"),
                                  QStringLiteral("Address to listen on (default 127.0.0.1)."),
                                  QStringLiteral("H"), QStringLiteral("127.0.0.1"));
    const QCommandLineOption port(QStringLiteral("port"),
                                  QStringLiteral("Port to listen on, 0 = any free port "
                                                 "(default 4000)."),
                                  QStringLiteral("N"), QStringLiteral("4000"));
    const QCommandLineOption upstream(
        QStringLiteral("upstream"),
        QStringLiteral("OpenAI-compatible base URL every model goes to (e.g. "
                       "https://api.openai.com/v1), or 'demo' for the built-in scripted model."),
        QStringLiteral("URL|demo"));
    const QCommandLineOption anthropicUpstream(
        QStringLiteral("anthropic-upstream"),
        QStringLiteral("Where /v1/messages goes for a model the config has no route for: an "
                       "Anthropic API base (default https://api.anthropic.com; the demo model "
                       "when --upstream is demo or absent), or 'demo'."),
        QStringLiteral("URL|demo"));
    const QCommandLineOption config(QStringLiteral("config"),
                                    QStringLiteral("LiteLLM-style config.yaml (model_list, "
                                                   "general_settings, litellm_settings, "
                                                   "sandbox_tools)."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption maxLoops(QStringLiteral("max-loops"),
                                      QStringLiteral("Maximum agentic loop iterations per "
                                                     "request (default 3)."),
                                      QStringLiteral("N"));
    const QCommandLineOption execTimeout(QStringLiteral("exec-timeout"),
                                         QStringLiteral("Time limit for one sandboxed code run."),
                                         QStringLiteral("SECONDS"));
    const QCommandLineOption sandboxPool(
        QStringLiteral("sandbox-pool"),
        QStringLiteral("Warm local sandbox interpreters kept ready (default 2, 0 = none; "
                       "overrides sandbox.pool_size)."),
        QStringLiteral("N"));
    const QCommandLineOption checkConfig(
        QStringLiteral("check-config"),
        QStringLiteral("Load a LiteLLM-style config.yaml, print per model where Loopscope "
                       "will send it (or why it is skipped) and exit."),
        QStringLiteral("FILE"));
    const QCommandLineOption controlToken(
        QStringLiteral("control-token"),
        QStringLiteral("Bearer token of the control API (/loopscope/v1). Default: env "
                       "LOOPSCOPE_CONTROL_TOKEN, general_settings.control_token, else a random "
                       "one written to <data dir>/control-token."),
        QStringLiteral("TOKEN"));
    const QCommandLineOption allowOrigin(
        QStringLiteral("allow-origin"),
        QStringLiteral("Let web pages from ORIGIN (e.g. https://app.example:8443) call Loopscope "
                       "(CORS). Loopback origins are always allowed. Repeatable."),
        QStringLiteral("ORIGIN"));
    const QCommandLineOption dataDir(
        QStringLiteral("data-dir"),
        QStringLiteral("Directory for the flow history (history.sqlite3) and the control token; "
                       "default: the platform's application data directory."),
        QStringLiteral("DIR"));
    const QCommandLineOption noHistory(QStringLiteral("no-history"),
                                       QStringLiteral("Keep the flow history in memory only "
                                                      "(nothing written to disk)."));
    const QCommandLineOption printMcpConfig(
        QStringLiteral("print-mcp-config"),
        QStringLiteral("Print the MCP server entry (URL /loopscope/mcp + Authorization header) "
                       "to paste into a coding agent's MCP settings, and exit."));
    const QCommandLineOption otlpEndpoint(
        QStringLiteral("otlp-endpoint"),
        QStringLiteral("Export each flow as OpenTelemetry spans (GenAI conventions) to this "
                       "OTLP/HTTP collector; traces go to URL/v1/traces. Default: env "
                       "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, "
                       "general_settings.otlp.endpoint."),
        QStringLiteral("URL"));
    const QCommandLineOption otlpHeader(
        QStringLiteral("otlp-header"),
        QStringLiteral("A header sent to the collector, e.g. Authorization=Basic ... "
                       "Repeatable (also OTEL_EXPORTER_OTLP_HEADERS)."),
        QStringLiteral("K=V"));
    const QCommandLineOption otlpProtocol(
        QStringLiteral("otlp-protocol"),
        QStringLiteral("http/json (default) or http/protobuf (also OTEL_EXPORTER_OTLP_PROTOCOL)."),
        QStringLiteral("PROTOCOL"));
    const QCommandLineOption otlpCaptureContent(
        QStringLiteral("otlp-capture-content"),
        QStringLiteral("Also export message and code contents (off by default; secrets never)."));
    parser.addOptions({otlpEndpoint, otlpHeader, otlpProtocol, otlpCaptureContent});
    const QCommandLineOption printSnippet(
        QStringLiteral("print-snippet"),
        QStringLiteral("Print client code that runs a code-interpreter loop through Loopscope, "
                       "or the settings that point an agent at it (python, node, curl, litellm, "
                       "agents, anthropic, claude-code or codex; the window's Connect an SDK) for "
                       "the address and model of a start with the same options, and exit."),
        QStringLiteral("LANG"));
    parser.addOption(printSnippet);
    const QCommandLineOption insecurePublic(
        QStringLiteral("insecure-public"),
        QStringLiteral("Allow a non-loopback --host without general_settings.master_key: anyone "
                       "who reaches the port can run code and spend the configured key."));
    parser.addOption(sandboxPool);
    parser.addOptions({headless, host, port, upstream, anthropicUpstream, config, maxLoops,
                       execTimeout, dataDir, noHistory, controlToken, allowOrigin, insecurePublic,
                       checkConfig, printMcpConfig});
    auto fail = [&cli](const QString &message) {
        cli.error = message;
        cli.exitCode = 2;
        return cli;
    };
    if (!parser.parse(arguments))
        return fail(parser.errorText() + QStringLiteral(" (see --help)"));
    if (parser.isSet(help))
        parser.showHelp(0); // exits
    if (parser.isSet(version))
        parser.showVersion(); // exits
    if (!parser.positionalArguments().isEmpty())
        return fail(QStringLiteral("unexpected argument '%1' (see --help)")
                        .arg(parser.positionalArguments().constFirst()));
    cli.headless = parser.isSet(headless);
    cli.insecurePublic = parser.isSet(insecurePublic);
    cli.printMcpConfig = parser.isSet(printMcpConfig);
    if (parser.isSet(printSnippet)) {
        if (!loopscope::ConnectSnippets::fromName(parser.value(printSnippet)))
            return fail(QStringLiteral("--print-snippet: '%1' is not one of %2")
                            .arg(parser.value(printSnippet), loopscope::ConnectSnippets::names()));
        cli.printSnippet = parser.value(printSnippet).toLower();
    }
    ProxyConfig &c = cli.config;
    c.host = parser.value(host);
    bool ok = false;
    const uint portValue = parser.value(port).toUInt(&ok);
    if (!ok || portValue > 65535)
        return fail(
            QStringLiteral("--port: '%1' is not a port number (0-65535)").arg(parser.value(port)));
    c.port = quint16(portValue);
    if (parser.isSet(port))
        cli.portOption = QStringLiteral("--port ") + parser.value(port);
    if (parser.isSet(maxLoops)) {
        const int n = parser.value(maxLoops).toInt(&ok);
        if (!ok || n < 1)
            return fail(QStringLiteral("--max-loops: must be an integer of at least 1, got '%1'")
                            .arg(parser.value(maxLoops)));
        c.maxLoopsOverride = n;
        cli.maxLoopsOption = QStringLiteral("--max-loops ") + parser.value(maxLoops);
    }
    if (parser.isSet(execTimeout)) {
        const double s = parser.value(execTimeout).toDouble(&ok);
        if (!ok || s <= 0)
            return fail(QStringLiteral("--exec-timeout: must be a positive number of seconds, "
                                       "got '%1'")
                            .arg(parser.value(execTimeout)));
        c.execTimeoutSeconds = qMax(1, int(s + 0.5));
        cli.execTimeoutOption = QStringLiteral("--exec-timeout ") + parser.value(execTimeout);
    }
    {
        QString error;
        if (!c.otlp.applyEnvironment(QProcessEnvironment::systemEnvironment(), &error))
            return fail(error);
    }
    if (parser.isSet(checkConfig)) {
        QString error;
        const QString path = parser.value(checkConfig);
        if (!c.loadFile(path, QProcessEnvironment::systemEnvironment(), &error))
            return fail(QStringLiteral("config error in %1: %2").arg(path, error));
        cli.checkConfig = true;
        return cli;
    }
    if (parser.isSet(config)) {
        QString error;
        const QString path = parser.value(config);
        if (!c.loadFile(path, QProcessEnvironment::systemEnvironment(), &error))
            return fail(QStringLiteral("config error in %1: %2").arg(path, error));
    }
    if (parser.isSet(sandboxPool)) {
        // After the config file: the command line wins.
        const int n = parser.value(sandboxPool).toInt(&ok);
        if (!ok || n < 0 || n > 32)
            return fail(QStringLiteral("--sandbox-pool: must be an integer from 0 to 32, got '%1'")
                            .arg(parser.value(sandboxPool)));
        c.sandboxPoolSize = qMin(n, c.maxLiveSandboxes);
        c.sandboxPoolMax = qMax(c.sandboxPoolMax, c.sandboxPoolSize);
    }
    if (parser.isSet(otlpEndpoint)) {
        const QUrl url(parser.value(otlpEndpoint), QUrl::StrictMode);
        if (!url.isValid() ||
            (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) ||
            url.host().isEmpty())
            return fail(QStringLiteral("--otlp-endpoint: '%1' is not an http(s) URL")
                            .arg(parser.value(otlpEndpoint)));
        c.otlp.endpoint = parser.value(otlpEndpoint);
        c.otlp.tracesUrl.clear();
    }
    for (const QString &header : parser.values(otlpHeader)) {
        QPair<QByteArray, QByteArray> h;
        if (!loopscope::OtlpSettings::parseHeader(header, &h))
            return fail(QStringLiteral("--otlp-header: expected NAME=VALUE, got '%1'")
                            .arg(header.left(40)));
        c.otlp.headers.append(h);
    }
    if (parser.isSet(otlpProtocol)) {
        const auto p = loopscope::OtlpSettings::parseProtocol(parser.value(otlpProtocol));
        if (!p)
            return fail(QStringLiteral("--otlp-protocol: '%1' is not supported (http/json or "
                                       "http/protobuf)")
                            .arg(parser.value(otlpProtocol)));
        c.otlp.protocol = *p;
    }
    if (parser.isSet(otlpCaptureContent))
        c.otlp.captureContent = true;
    c.dataDir = parser.value(dataDir);
    c.noHistory = parser.isSet(noHistory);
    cli.controlToken = parser.value(controlToken);
    if (parser.isSet(controlToken) && cli.controlToken.trimmed().isEmpty())
        return fail(QStringLiteral("--control-token: must not be empty"));
    for (const QString &origin : parser.values(allowOrigin)) {
        if (AccessPolicy::normalizeOrigin(origin.toUtf8()).isEmpty())
            return fail(QStringLiteral("--allow-origin: '%1' is not an origin "
                                       "(scheme://host[:port])")
                            .arg(origin));
        c.allowOrigins << origin;
    }
    if (parser.isSet(upstream)) {
        QString error;
        c.defaultRoute = ProxyConfig::routeForUpstream(parser.value(upstream), &error);
        if (!c.defaultRoute)
            return fail(error);
        c.defaultRoute->timeoutMs = c.requestTimeoutMs;
        cli.upstreamOption = QStringLiteral("--upstream ") + parser.value(upstream);
    } else if (!parser.isSet(config)) {
        c.defaultRoute = ProxyConfig::demoRoute(); // a newcomer with no key sees it work
    }
    if (parser.isSet(anthropicUpstream)) {
        QString error;
        c.anthropicUpstream =
            ProxyConfig::routeForAnthropicUpstream(parser.value(anthropicUpstream), &error);
        if (!c.anthropicUpstream)
            return fail(error);
    }
    if (isPublicHost(c.host) && c.masterKey.isEmpty() && !cli.insecurePublic)
        return fail(QStringLiteral("--host %1 is reachable beyond this machine: set "
                                   "general_settings.master_key in --config (clients then present "
                                   "it), or pass --insecure-public to run it open anyway")
                        .arg(c.host));
    return cli;
}

bool CommandLine::isPublicHost(const QString &host) {
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        return false;
    QHostAddress address;
    if (!address.setAddress(host))
        return false; // not an address at all: listen() reports it
    return !address.isLoopback();
}

QString CommandLine::publicBindWarning() const {
    if (!insecurePublic || !isPublicHost(config.host) || !config.masterKey.isEmpty())
        return {};
    return QStringLiteral("WARNING: --insecure-public: listening on %1 without a master key; "
                          "anyone who can reach this port can run code in a sandbox and spend "
                          "the configured upstream key")
        .arg(config.host);
}

loopscope::SettingsSources CommandLine::settingsInEffect(const QSettings &saved) const {
    using loopscope::SettingsSources;
    using Field = loopscope::AppSettings::Field;
    using Source = SettingsSources::Source;
    SettingsSources sources = SettingsSources::fromSaved(saved);
    const ProxyConfig &c = config;
    const QString file = QFileInfo(c.configPath).fileName();
    // The config file first, so that an option given on the command line wins over it.
    if (!c.configPath.isEmpty()) {
        if (upstreamOption.isEmpty())
            sources.set(Field::Upstream, c.configPath, Source::ConfigFile,
                        QStringLiteral("model_list in %1").arg(file));
        if (c.litellmSettings.contains(QStringLiteral("request_timeout")))
            sources.set(Field::UpstreamTimeout, qMax(1, c.requestTimeoutMs / 1000),
                        Source::ConfigFile,
                        QStringLiteral("litellm_settings.request_timeout in %1").arg(file));
        for (const loopscope::UpstreamRoute &route : c.modelRoutes) {
            if (route.maxAgenticLoops > 0) { // per model: a global override would hide it
                sources.set(Field::MaxLoops, route.maxAgenticLoops, Source::ConfigFile,
                            QStringLiteral("max_agentic_loops of model_list in %1").arg(file));
                break;
            }
        }
    }
    if (!portOption.isEmpty())
        sources.set(Field::Port, int(c.port), Source::CommandLine, portOption);
    if (!upstreamOption.isEmpty() && c.defaultRoute)
        sources.set(Field::Upstream,
                    c.defaultRoute->isDemo() ? QStringLiteral("demo")
                                             : c.defaultRoute->baseUrl.toString(),
                    Source::CommandLine, upstreamOption);
    if (!maxLoopsOption.isEmpty())
        sources.set(Field::MaxLoops, c.maxLoopsOverride, Source::CommandLine, maxLoopsOption);
    if (!execTimeoutOption.isEmpty())
        sources.set(Field::ExecutionTimeout, c.execTimeoutSeconds, Source::CommandLine,
                    execTimeoutOption);
    return sources;
}

bool CommandLine::applyToConfig(const loopscope::SettingsSources &sources, ProxyConfig *config,
                                QString *error) {
    using Field = loopscope::AppSettings::Field;
    const loopscope::AppSettings &v = sources.values();
    ProxyConfig &c = *config;
    if (!sources.isLocked(Field::Port))
        c.port = quint16(v.port);
    if (!sources.isLocked(Field::UpstreamTimeout)) {
        const int oldMs = c.requestTimeoutMs;
        c.requestTimeoutMs = v.upstreamTimeoutSeconds * 1000;
        for (loopscope::UpstreamRoute &route : c.modelRoutes)
            if (route.timeoutMs == oldMs) // not a per-model timeout
                route.timeoutMs = c.requestTimeoutMs;
        if (c.defaultRoute)
            c.defaultRoute->timeoutMs = c.requestTimeoutMs;
    }
    if (!sources.isLocked(Field::ExecutionTimeout))
        c.execTimeoutSeconds = v.executionTimeoutSeconds;
    if (!sources.isLocked(Field::MaxLoops))
        c.maxLoopsOverride = v.maxLoops;
    if (!sources.isLocked(Field::SandboxPool))
        c.sandboxPoolSize = v.sandboxPoolSize;
    if (!sources.isLocked(Field::Upstream)) {
        const auto route = ProxyConfig::routeForUpstream(v.upstream, error);
        if (!route)
            return false;
        c.defaultRoute = route;
        c.defaultRoute->timeoutMs = c.requestTimeoutMs;
    }
    return true;
}

QString CommandLine::suggestedModel(const ProxyConfig &config) {
    if (config.defaultRoute && config.defaultRoute->isDemo())
        return loopscope::ConnectSnippets::demoModel();
    if (const QStringList names = config.modelNames(); !names.isEmpty())
        return names.constFirst();
    return QStringLiteral("gpt-4.1-mini");
}

QString CommandLine::clientUrl() const {
    QString host = config.host;
    if (host == QLatin1String("0.0.0.0") || host == QLatin1String("::") || host.isEmpty())
        host = QStringLiteral("127.0.0.1");
    else if (host.contains(u':'))
        host = u'[' + host + u']';
    return QStringLiteral("http://%1:%2").arg(host).arg(config.port);
}
