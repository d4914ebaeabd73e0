#include "models/appsettings.h"

#include <QSettings>

#include <algorithm>

namespace loopscope {

namespace {

const QString kPort = QStringLiteral("proxy/port");
const QString kUpstream = QStringLiteral("proxy/upstream");
const QString kUpstreamTimeout = QStringLiteral("timeouts/upstreamSeconds");
const QString kExecutionTimeout = QStringLiteral("timeouts/executionSeconds");
const QString kMaxLoops = QStringLiteral("loop/maxLoops");
const QString kPoolSize = QStringLiteral("sandbox/poolSize");
const QString kRetention = QStringLiteral("inspector/retention");

} // namespace

AppSettings AppSettings::load(const QSettings &settings) {
    const AppSettings defaults;
    AppSettings s;
    s.port = settings.value(kPort, defaults.port).toInt();
    s.upstream = settings.value(kUpstream, defaults.upstream).toString();
    s.upstreamTimeoutSeconds =
        settings.value(kUpstreamTimeout, defaults.upstreamTimeoutSeconds).toInt();
    s.executionTimeoutSeconds =
        settings.value(kExecutionTimeout, defaults.executionTimeoutSeconds).toInt();
    s.maxLoops = settings.value(kMaxLoops, defaults.maxLoops).toInt();
    s.sandboxPoolSize = settings.value(kPoolSize, defaults.sandboxPoolSize).toInt();
    s.retention = settings.value(kRetention, defaults.retention).toInt();
    return s.normalized();
}

void AppSettings::save(QSettings &settings) const {
    const AppSettings s = normalized();
    settings.setValue(kPort, s.port);
    settings.setValue(kUpstream, s.upstream);
    settings.setValue(kUpstreamTimeout, s.upstreamTimeoutSeconds);
    settings.setValue(kExecutionTimeout, s.executionTimeoutSeconds);
    settings.setValue(kMaxLoops, s.maxLoops);
    settings.setValue(kPoolSize, s.sandboxPoolSize);
    settings.setValue(kRetention, s.retention);
}

AppSettings AppSettings::normalized() const {
    AppSettings s = *this;
    s.port = std::clamp(s.port, 0, 65535); // 0 = any free port
    s.upstream = s.upstream.trimmed();
    if (s.upstream.isEmpty())
        s.upstream = QStringLiteral("demo");
    s.upstreamTimeoutSeconds = std::clamp(s.upstreamTimeoutSeconds, 1, 3600);
    s.executionTimeoutSeconds = std::clamp(s.executionTimeoutSeconds, 1, 3600);
    s.maxLoops = std::clamp(s.maxLoops, 1, 100);
    s.sandboxPoolSize = std::clamp(s.sandboxPoolSize, 0, 32);
    s.retention = std::clamp(s.retention, 100, 100000);
    return s;
}

} // namespace loopscope
