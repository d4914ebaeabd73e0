#include "models/appsettings.h"

#include <QSettings>

#include <algorithm>

namespace loopscope {

QString AppSettings::storageKey(Field field) {
    switch (field) {
    case Field::Port:
        return QStringLiteral("proxy/port");
    case Field::Upstream:
        return QStringLiteral("proxy/upstream");
    case Field::UpstreamTimeout:
        return QStringLiteral("timeouts/upstreamSeconds");
    case Field::ExecutionTimeout:
        return QStringLiteral("timeouts/executionSeconds");
    case Field::MaxLoops:
        return QStringLiteral("loop/maxLoops");
    case Field::SandboxPool:
        return QStringLiteral("sandbox/poolSize");
    case Field::Retention:
        return QStringLiteral("inspector/retention");
    case Field::Theme:
        return QStringLiteral("window/theme");
    }
    return {};
}

QVariant AppSettings::value(Field field) const {
    switch (field) {
    case Field::Port:
        return port;
    case Field::Upstream:
        return upstream;
    case Field::UpstreamTimeout:
        return upstreamTimeoutSeconds;
    case Field::ExecutionTimeout:
        return executionTimeoutSeconds;
    case Field::MaxLoops:
        return maxLoops;
    case Field::SandboxPool:
        return sandboxPoolSize;
    case Field::Retention:
        return retention;
    case Field::Theme:
        return theme;
    }
    return {};
}

void AppSettings::setValue(Field field, const QVariant &v) {
    switch (field) {
    case Field::Port:
        port = v.toInt();
        break;
    case Field::Upstream:
        upstream = v.toString();
        break;
    case Field::UpstreamTimeout:
        upstreamTimeoutSeconds = v.toInt();
        break;
    case Field::ExecutionTimeout:
        executionTimeoutSeconds = v.toInt();
        break;
    case Field::MaxLoops:
        maxLoops = v.toInt();
        break;
    case Field::SandboxPool:
        sandboxPoolSize = v.toInt();
        break;
    case Field::Retention:
        retention = v.toInt();
        break;
    case Field::Theme:
        theme = v.toString();
        break;
    }
}

AppSettings AppSettings::load(const QSettings &settings) {
    AppSettings s;
    for (int i = 0; i < kFieldCount; ++i) {
        const auto field = Field(i);
        const QString key = storageKey(field);
        if (settings.contains(key))
            s.setValue(field, settings.value(key));
    }
    return s.normalized();
}

void AppSettings::save(QSettings &settings) const {
    const AppSettings s = normalized();
    for (int i = 0; i < kFieldCount; ++i)
        settings.setValue(storageKey(Field(i)), s.value(Field(i)));
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
    if (s.theme != QLatin1String("light") && s.theme != QLatin1String("dark"))
        s.theme = QStringLiteral("system");
    return s;
}

} // namespace loopscope
