#pragma once

#include "launcher.h"

// The inspector window as the `loopscope` binary runs it (loopscope_window: Qt Widgets).
class InspectorWindowFrontEnd : public WindowFrontEnd {
public:
    std::unique_ptr<QCoreApplication> createApplication(int &argc, char **argv) override;
    int exec(QCoreApplication *app, loopscope::ProxyService *service, loopscope::EventBus *events,
             const loopscope::ProxyConfig &config, const loopscope::SettingsSources &sources,
             SignalWatcher *signals_) override;
};
