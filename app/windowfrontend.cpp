#include "windowfrontend.h"

#include "runtime/proxyservice.h"
#include "serviceproxycontrol.h"
#include "signalwatcher.h"
#include "widgets/mainwindow.h"
#include "widgets/theme.h"

#include <QApplication>

std::unique_ptr<QCoreApplication> InspectorWindowFrontEnd::createApplication(int &argc,
                                                                             char **argv) {
    auto app = std::make_unique<QApplication>(argc, argv);
    // The installed .desktop file (resources/packaging): the shell's icon and menu entry.
    QGuiApplication::setDesktopFileName(QStringLiteral(LOOPSCOPE_APP_ID));
    return app;
}

int InspectorWindowFrontEnd::exec(QCoreApplication *app, loopscope::ProxyService *service,
                                  loopscope::EventBus *events, const loopscope::ProxyConfig &config,
                                  const loopscope::SettingsSources &sources,
                                  SignalWatcher *signals_) {
    loopscope::Theme::apply(*static_cast<QApplication *>(app), sources.values().theme);
    ServiceProxyControl control(service, config, sources);
    loopscope::MainWindow window(events, nullptr, &control);
    window.setFlowStore(service->flowStore()); // the Requests/Runs views open the history
    control.attachWindow(&window); // sandbox commands through the service's queued calls
    // Stop in the window keeps the app; a signal quits it (the service stops first).
    QObject::connect(signals_, &SignalWatcher::terminationRequested, app, &QCoreApplication::quit);
    window.show();
    return app->exec(); // the window, then the control go here
}
