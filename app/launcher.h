#pragma once

#include "models/settingssources.h"
#include "proxy/proxyconfig.h"

#include <QCoreApplication>

#include <memory>

namespace loopscope {
class EventBus;
class ProxyService;
} // namespace loopscope

class SignalWatcher;

// What a window adds to a run of Loopscope. The headless run (runLoopscope, loopscope_app) has
// no Qt Widgets; the `loopscope` binary passes the window (loopscope_window) in, the
// `loopscope-headless` binary passes none, which proves that the rest links without Widgets.
class WindowFrontEnd {
public:
    virtual ~WindowFrontEnd() = default;
    // The application object, made before the CLI is parsed (a window needs a GUI one).
    virtual std::unique_ptr<QCoreApplication> createApplication(int &argc, char **argv) = 0;
    // Shows the window for the running `service` and runs the event loop until it quits.
    virtual int exec(QCoreApplication *app, loopscope::ProxyService *service,
                     loopscope::EventBus *events, const loopscope::ProxyConfig &config,
                     const loopscope::SettingsSources &sources, SignalWatcher *signals_) = 0;
};

// The whole of `loopscope`: parses the CLI, starts the proxy on its own thread, prints the
// listening line, runs the window when `window` is given and the CLI asks for one (no
// --headless), and stops cleanly on SIGINT/SIGTERM. Returns the process's exit code.
int runLoopscope(int &argc, char **argv, WindowFrontEnd *window);
