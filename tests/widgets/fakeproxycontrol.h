#pragma once

#include "widgets/proxycontrol.h"

namespace loopscope {

// ProxyControl without a proxy: start/stop flip a flag, settings are recorded.
class FakeProxyControl : public ProxyControl {
    Q_OBJECT
public:
    using ProxyControl::ProxyControl;

    QUrl url = QUrl(QStringLiteral("http://127.0.0.1:4555"));
    QString upstreamName = QStringLiteral("demo");
    QString backend = QStringLiteral("local (bubblewrap)");
    QString selfTestProblems;
    QStringList skipped;
    bool running = true;
    int starts = 0;
    int stops = 0;
    QList<AppSettings> applied;

    QUrl listenUrl() const override { return url; }
    QString upstream() const override { return upstreamName; }
    bool isRunning() const override { return running; }
    QString sandboxBackend() const override { return backend; }
    QString sandboxSelfTest() const override { return selfTestProblems; }
    QStringList skippedModels() const override { return skipped; }

    void start() override {
        ++starts;
        running = true;
        emit stateChanged();
    }
    void stop() override {
        ++stops;
        running = false;
        emit stateChanged();
    }
    void applySettings(const AppSettings &settings) override { applied.append(settings); }
};

} // namespace loopscope
