#include "models/settingssources.h"

#include "inspect/textformat.h"

#include <QCoreApplication>
#include <QSettings>

namespace loopscope {

namespace {

QString tr(const char *text) {
    return QCoreApplication::translate("loopscope::SettingsSources", text);
}

} // namespace

SettingsSources SettingsSources::fromSaved(const QSettings &saved) {
    SettingsSources s;
    s.m_values = AppSettings::load(saved);
    for (int i = 0; i < AppSettings::kFieldCount; ++i)
        if (saved.contains(AppSettings::storageKey(Field(i))))
            s.m_sources[size_t(i)] = Source::Saved;
    return s;
}

bool SettingsSources::isLocked(Field field) const {
    const Source s = source(field);
    return s == Source::CommandLine || s == Source::ConfigFile;
}

QString SettingsSources::sourceName(Source source) {
    switch (source) {
    case Source::Default:
        return tr("default");
    case Source::Saved:
        return tr("saved setting");
    case Source::ConfigFile:
        return tr("config file");
    case Source::CommandLine:
        return tr("command line");
    }
    return {};
}

QString SettingsSources::describe(Field field) const {
    const QString origin = m_origins[size_t(field)];
    const QString name = sourceName(source(field));
    return origin.isEmpty() ? name : QStringLiteral("%1 (%2)").arg(name, origin);
}

QString SettingsSources::lockReason(Field field) const {
    const QString origin = m_origins[size_t(field)];
    switch (source(field)) {
    case Source::CommandLine:
        return tr("Set on the command line (%1); start Loopscope without it to change it here.")
            .arg(origin);
    case Source::ConfigFile:
        return tr("Set in the config file (%1); edit the file and restart Loopscope to change it.")
            .arg(origin);
    default:
        return {};
    }
}

void SettingsSources::set(Field field, const QVariant &value, Source source,
                          const QString &origin) {
    m_values.setValue(field, value);
    m_sources[size_t(field)] = source;
    m_origins[size_t(field)] = origin;
}

bool SettingsSources::restartsProxy(Field field) {
    return field != Field::Retention && field != Field::Theme;
}

AppSettings SettingsSources::accepted(const AppSettings &edited) const {
    AppSettings s = edited.normalized();
    for (int i = 0; i < AppSettings::kFieldCount; ++i)
        if (isLocked(Field(i)))
            s.setValue(Field(i), m_values.value(Field(i)));
    return s;
}

QList<SettingsSources::Field> SettingsSources::changes(const AppSettings &edited) const {
    const AppSettings s = accepted(edited);
    QList<Field> changed;
    for (int i = 0; i < AppSettings::kFieldCount; ++i)
        if (s.value(Field(i)) != m_values.value(Field(i)))
            changed << Field(i);
    return changed;
}

bool SettingsSources::needsRestart(const AppSettings &edited) const {
    for (const Field field : changes(edited))
        if (restartsProxy(field))
            return true;
    return false;
}

QString SettingsSources::restartWarning(int sessionSandboxes) {
    if (sessionSandboxes <= 0)
        return tr("Restarts the proxy (no session sandbox is live, so none is deleted).");
    return tr("Restarts the proxy: %1 will be deleted (their Python state is lost).")
        .arg(textformat::plural(sessionSandboxes, tr("session sandbox"), tr("session sandboxes")));
}

QList<SettingsSources::Field> SettingsSources::adopt(const AppSettings &edited) {
    const AppSettings s = accepted(edited);
    const QList<Field> changed = changes(edited);
    for (const Field field : changed) {
        m_values.setValue(field, s.value(field));
        m_sources[size_t(field)] = Source::Saved;
        m_origins[size_t(field)].clear();
    }
    return changed;
}

void SettingsSources::commit(const AppSettings &edited, QSettings &out) {
    for (const Field field : adopt(edited))
        out.setValue(AppSettings::storageKey(field), m_values.value(field));
}

QString SettingsSources::label(Field field) {
    switch (field) {
    case Field::Port:
        return tr("Port");
    case Field::Upstream:
        return tr("Upstream");
    case Field::UpstreamTimeout:
        return tr("Upstream timeout");
    case Field::ExecutionTimeout:
        return tr("Code execution timeout");
    case Field::MaxLoops:
        return tr("Max loop iterations");
    case Field::SandboxPool:
        return tr("Warm sandbox pool");
    case Field::Retention:
        return tr("Requests kept in the window");
    case Field::Theme:
        return tr("Theme");
    }
    return {};
}

} // namespace loopscope
