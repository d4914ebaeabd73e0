#pragma once

#include "models/appsettings.h"

#include <QList>
#include <QString>

#include <array>

class QSettings;

namespace loopscope {

// The settings in effect and where each value came from (issue 13, "Settings that never
// surprise"): the default, a saved setting, the config file or the command line, later ones
// winning. A value from the command line or the config file is locked: the dialog shows it
// read-only with the reason, and nothing the dialog does changes or persists it. Proxy
// settings only take effect by restarting the proxy (which deletes every sandbox), so a change
// of one of them is a restart the user confirms first; window-only settings never restart.
class SettingsSources {
public:
    using Field = AppSettings::Field;
    enum class Source { Default, Saved, ConfigFile, CommandLine };

    SettingsSources() = default;
    // Defaults, overridden by the keys `saved` holds.
    static SettingsSources fromSaved(const QSettings &saved);

    const AppSettings &values() const { return m_values; }
    Source source(Field field) const { return m_sources[size_t(field)]; }
    // Given on the command line or in the config file: not editable in the window.
    bool isLocked(Field field) const;
    // One line for the dialog, e.g. "command line (--port 0)", "config file
    // (litellm_settings.request_timeout in /etc/loopscope.yaml)", "saved setting", "default".
    QString describe(Field field) const;
    // Why a locked field is read-only: "Set on the command line (--port 0); restart Loopscope
    // without it to change it here."
    QString lockReason(Field field) const;

    // Records a value the command line or the config file gives; `origin` names the option or
    // key (e.g. "--port 0", "model_list in config.yaml").
    void set(Field field, const QVariant &value, Source source, const QString &origin = {});

    // True for the fields that only apply when the proxy restarts.
    static bool restartsProxy(Field field);
    // `edited` with locked fields put back to the values in effect (normalized).
    AppSettings accepted(const AppSettings &edited) const;
    // The editable fields `edited` changes, in Field order.
    QList<Field> changes(const AppSettings &edited) const;
    bool needsRestart(const AppSettings &edited) const;
    // What OK will do to the proxy, for the dialog before it happens (empty: no restart).
    // "Restarts the proxy: 3 session sandboxes will be deleted."
    static QString restartWarning(int sessionSandboxes);

    // Takes `edited` (locked fields ignored) as the values in effect: each changed field
    // becomes a saved setting; returns those fields.
    QList<Field> adopt(const AppSettings &edited);
    // adopt() and writes the changed fields to `out`; nothing else is written, so a value from
    // the command line never ends up saved.
    void commit(const AppSettings &edited, QSettings &out);

    static QString label(Field field);
    static QString sourceName(Source source);

private:
    AppSettings m_values;
    std::array<Source, AppSettings::kFieldCount> m_sources{};
    std::array<QString, AppSettings::kFieldCount> m_origins{};
};

} // namespace loopscope
