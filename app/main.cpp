// loopscope: parse the CLI, start the proxy on its own thread, print the listening line, and
// stop cleanly on SIGINT/SIGTERM. The window (when built) is wired here by the UI work.
#include "commandline.h"
#include "inspect/eventbus.h"
#include "proxyservice.h"
#include "signalwatcher.h"

#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>

int main(int argc, char *argv[]) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("loopscope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(LOOPSCOPE_VERSION));

    const CommandLine cli = CommandLine::parse(QCoreApplication::arguments());
    QTextStream err(stderr);
    if (cli.exitCode != 0) {
        err << "loopscope: " << cli.error << Qt::endl;
        return cli.exitCode;
    }
    if (!cli.headless)
        err << "loopscope: the window is not available in this build yet; running headless"
            << Qt::endl;

    SignalWatcher signals_;
    loopscope::EventBus events;
    ProxyService service(&events);
    QString error;
    if (!service.start(cli.config, &error)) {
        err << "loopscope: " << error << Qt::endl;
        return 1;
    }
    QObject::connect(&service, &ProxyService::requestLogged, &app,
                     [](const loopscope::RequestLogEntry &entry) {
                         QTextStream(stderr) << entry.toLine() << Qt::endl;
                     });
    // Problems a user must see in a headless log: failed requests, sandbox trouble, warnings.
    QObject::connect(
        &events, &loopscope::EventBus::eventPublished, &app,
        [](const loopscope::InspectorEvent &event) {
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
            if (!line.isEmpty())
                QTextStream(stderr) << "loopscope: " << line << Qt::endl;
        });
    for (const QString &problem : service.sandboxProblems())
        err << "loopscope: WARNING: sandbox backend '" << service.sandboxBackend()
            << "' unavailable: " << problem << Qt::endl;
    QObject::connect(&signals_, &SignalWatcher::terminationRequested, &service,
                     &ProxyService::stop);
    QObject::connect(&service, &ProxyService::stopped, &app, &QCoreApplication::quit);

    QTextStream(stdout) << "loopscope listening on " << service.listenUrl() << Qt::endl;
    std::fflush(stdout);
    return app.exec();
}
