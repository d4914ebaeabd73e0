// runLoopscope: the CLI, the proxy on its own thread and the headless run; the window comes in
// through WindowFrontEnd (launcher.h).
#include "launcher.h"

#include "commandline.h"
#include "common/heaptrimmer.h"
#include "control/controltoken.h"
#include "inspect/eventbus.h"
#include "models/connectsnippets.h"
#include "runtime/proxyservice.h"
#include "signalwatcher.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QSettings>
#include <QTextStream>

#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

namespace {

// The application object must exist before the CLI is parsed, and only a window needs a GUI one.
bool wantsHeadless(int argc, char *argv[]) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--headless") == 0 || std::strcmp(argv[i], "--help") == 0 ||
            std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "--check-config") == 0 ||
            std::strcmp(argv[i], "--print-mcp-config") == 0 ||
            std::strcmp(argv[i], "--print-snippet") == 0)
            return true;
    }
    return false;
}

// Qt's own log lines (qWarning/qInfo from any room and thread) pass the credential policy too:
// one place instead of a mask at every call that might print an upstream's answer.
std::weak_ptr<const loopscope::CredentialPolicy> g_logCredentials;
QtMessageHandler g_previousHandler = nullptr;

void maskingMessageHandler(QtMsgType type, const QMessageLogContext &context, const QString &msg) {
    const auto credentials = g_logCredentials.lock();
    const QString line = credentials ? credentials->maskText(msg) : msg;
    if (g_previousHandler)
        g_previousHandler(type, context, line);
    else
        std::fprintf(stderr, "%s\n", qUtf8Printable(line));
}

// The snippet for a coding agent's MCP settings. The token is the one a start with the same
// arguments would use; a generated one is read from the data dir (that of the running instance)
// and changes at each start, hence the hint to pin one.
int printMcpConfig(const CommandLine &cli) {
    QTextStream err(stderr);
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    QString token = cli.controlToken;
    if (token.isEmpty())
        token = env.value(QStringLiteral("LOOPSCOPE_CONTROL_TOKEN"));
    if (token.isEmpty())
        token = cli.config.controlToken;
    if (token.isEmpty()) {
        const QString dir = cli.config.dataDir.isEmpty() ? loopscope::ControlToken::defaultDataDir()
                                                         : cli.config.dataDir;
        QFile file(QDir(dir).filePath(QStringLiteral("control-token")));
        if (file.open(QIODevice::ReadOnly))
            token = QString::fromUtf8(file.readAll().trimmed());
        err << "loopscope: note: a generated control token changes at each start; pin one with "
               "--control-token or LOOPSCOPE_CONTROL_TOKEN for a lasting MCP config"
            << Qt::endl;
    }
    if (token.isEmpty())
        token = QStringLiteral("<control token>");
    QString host = cli.config.host;
    if (host == QLatin1String("0.0.0.0") || host == QLatin1String("::") || host.isEmpty())
        host = QStringLiteral("127.0.0.1");
    else if (host.contains(u':'))
        host = u'[' + host + u']';
    const QString url = QStringLiteral("http://%1:%2/loopscope/mcp").arg(host).arg(cli.config.port);
    const QJsonObject server{
        {QStringLiteral("type"), QStringLiteral("http")},
        {QStringLiteral("url"), url},
        {QStringLiteral("headers"), QJsonObject{{QStringLiteral("Authorization"),
                                                 QString(QStringLiteral("Bearer ") + token)}}}};
    const QJsonObject snippet{
        {QStringLiteral("mcpServers"), QJsonObject{{QStringLiteral("loopscope"), server}}}};
    QTextStream(stdout) << QJsonDocument(snippet).toJson(QJsonDocument::Indented);
    return 0;
}

} // namespace

int runLoopscope(int &argc, char **argv, WindowFrontEnd *window) {
    const bool gui = window && !wantsHeadless(argc, argv);
    std::unique_ptr<QCoreApplication> app = gui ? window->createApplication(argc, argv)
                                                : std::make_unique<QCoreApplication>(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("Loopscope")); // QSettings location
    QCoreApplication::setApplicationName(QStringLiteral("loopscope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(LOOPSCOPE_VERSION));

    const CommandLine cli = CommandLine::parse(QCoreApplication::arguments());
    QTextStream err(stderr);
    if (cli.exitCode != 0) {
        err << "loopscope: " << cli.error << Qt::endl;
        return cli.exitCode;
    }
    if (cli.printMcpConfig)
        return printMcpConfig(cli);
    if (!cli.printSnippet.isEmpty()) { // the window's Connect an SDK, for a terminal
        QTextStream(stdout) << loopscope::ConnectSnippets::snippet(
            *loopscope::ConnectSnippets::fromName(cli.printSnippet),
            QUrl(cli.clientUrl() + QStringLiteral("/v1")), CommandLine::suggestedModel(cli.config));
        return 0;
    }
    if (cli.checkConfig) {
        QTextStream out(stdout);
        for (const QString &line : cli.config.describeRoutes())
            out << line << Qt::endl;
        const int skipped = cli.config.unavailableCount();
        out << cli.config.modelRoutes.size() - skipped << " routable, " << skipped << " skipped"
            << Qt::endl;
        return 0;
    }
    // Models the config names but Loopscope cannot reach: one line each, then serve the rest.
    for (const QString &warning : cli.config.warnings)
        err << "loopscope: WARNING: " << warning << Qt::endl;
    if (const QString warning = cli.publicBindWarning(); !warning.isEmpty())
        err << "loopscope: " << warning << Qt::endl;
    if (!cli.headless && !gui)
        err << "loopscope: this binary has no window; running headless" << Qt::endl;
    // After a burst of streams, give the heap's free pages back (docs/benchmarks.md, soak).
    loopscope::HeapTrimmer heapTrimmer;

    // The control token: given, or minted now and written to <data dir>/control-token.
    loopscope::ProxyConfig config = cli.config;
    // The window's saved settings apply where neither the command line nor the config file set
    // a value (the Settings dialog shows which is which); headless runs what it was given.
    loopscope::SettingsSources sources;
    if (gui) {
        sources = cli.settingsInEffect(QSettings());
        QString settingsError;
        if (!CommandLine::applyToConfig(sources, &config, &settingsError))
            err << "loopscope: WARNING: saved upstream ignored: " << settingsError << Qt::endl;
    }
    const loopscope::ControlToken token =
        loopscope::ControlToken::resolve(cli.controlToken, config.controlToken,
                                         QProcessEnvironment::systemEnvironment(), config.dataDir);
    config.controlToken = QString::fromUtf8(token.token);
    if (!token.error.isEmpty())
        err << "loopscope: WARNING: control token not saved: " << token.error << Qt::endl;

    SignalWatcher signals_;
    loopscope::EventBus events;
    g_logCredentials = events.credentials();
    g_previousHandler = qInstallMessageHandler(maskingMessageHandler);
    const auto logLine = [credentials = events.credentials()](const QString &line) {
        return credentials->maskText(line);
    };
    loopscope::ProxyService service(&events);
    QString error;
    if (!service.start(config, &error)) {
        err << "loopscope: " << error << Qt::endl;
        return 1;
    }
    QObject::connect(&service, &loopscope::ProxyService::requestLogged, app.get(),
                     [logLine](const loopscope::RequestLogEntry &entry) {
                         QTextStream(stderr) << logLine(entry.toLine()) << Qt::endl;
                     });
    // Problems a user must see in a headless log: failed requests, sandbox trouble, warnings.
    // Picked out where the event is published (any thread); only such a line travels to this
    // thread, not a queued copy of every event.
    QObject::connect(
        &events, &loopscope::EventBus::eventPublished, app.get(),
        [target = app.get(), logLine](const loopscope::InspectorEvent &event) {
            using Kind = loopscope::InspectorEvent::Kind;
            QString line;
            if (event.kind == Kind::RequestFailed)
                line = QStringLiteral("request %1 failed: %2")
                           .arg(event.requestId,
                                event.data.value(QStringLiteral("message")).toString());
            else if (event.kind == Kind::SandboxDeleteFailed)
                line = QStringLiteral("sandbox %1 could not be deleted: %2")
                           .arg(event.data.value(QStringLiteral("containerId")).toString(),
                                event.data.value(QStringLiteral("error")).toString());
            else if (event.kind == Kind::Log)
                line = event.data.value(QStringLiteral("message")).toString();
            // Event data is masked by the bus already; the line is checked once more whole.
            if (!line.isEmpty())
                QMetaObject::invokeMethod(target, [line = logLine(line)] {
                    QTextStream(stderr) << "loopscope: " << line << Qt::endl;
                });
        },
        Qt::DirectConnection);
    // The sandbox self-test answers after start-up (it runs a real probe sandbox).
    QObject::connect(&service, &loopscope::ProxyService::sandboxHealthChanged, app.get(),
                     [&service, warned = false]() mutable {
                         QTextStream out(stderr);
                         for (const QString &problem : service.sandboxProblems())
                             out << "loopscope: WARNING: sandbox backend '"
                                 << service.sandboxBackend() << "' unavailable: " << problem
                                 << Qt::endl;
                         if (std::exchange(warned, true))
                             return;
                         for (const QString &warning : service.sandboxWarnings())
                             out << "loopscope: "
                                 << (service.sandboxIsolated() ? "note" : "WARNING")
                                 << ": sandbox backend '" << service.sandboxBackend()
                                 << "': " << warning << Qt::endl;
                     });
    QObject::connect(&signals_, &SignalWatcher::terminationRequested, &service,
                     &loopscope::ProxyService::stop);

    // Printed once, only when minted here (a token the user gave is theirs to know).
    if (!gui && token.source == loopscope::ControlToken::Source::Generated)
        err << "loopscope control token: " << token.token << Qt::endl;
    QTextStream(stdout) << "loopscope listening on " << service.listenUrl() << Qt::endl;
    std::fflush(stdout);
    // A restart (Settings, Stop/Start) prints the new address the same way.
    QObject::connect(&service, &loopscope::ProxyService::listening, app.get(),
                     [](const QString &url) {
                         QTextStream(stdout) << "loopscope listening on " << url << Qt::endl;
                         std::fflush(stdout);
                     });
    if (gui) // window, then service (deletes every sandbox) go when it returns
        return window->exec(app.get(), &service, &events, config, sources, &signals_);
    QObject::connect(&service, &loopscope::ProxyService::stopped, app.get(),
                     &QCoreApplication::quit);
    return app->exec();
}
