#pragma once

#include <QString>
#include <QVariant>

class QSettings;

namespace loopscope {

// What the Settings dialog edits, persisted with QSettings (organisation "Loopscope"). Plain
// Qt Core so the app can read it at startup whether or not the window is built. Which value is
// in effect, and where it came from (command line, config file, saved, default), is
// SettingsSources' business.
struct AppSettings {
    static constexpr int kDefaultPort = 4000;

    // Every field, for code that treats them alike (sources, comparisons, the dialog's rows).
    enum class Field {
        Port,
        Upstream,
        UpstreamTimeout,
        ExecutionTimeout,
        MaxLoops,
        SandboxPool,
        Retention,
        Theme
    };
    static constexpr int kFieldCount = int(Field::Theme) + 1;

    int port = kDefaultPort;
    QString upstream = QStringLiteral("demo"); // "demo" or an http(s) base URL
    int upstreamTimeoutSeconds = 600;
    int executionTimeoutSeconds = 30;
    int maxLoops = 3;                         // LiteLLM's and Loopscope's default max_agentic_loops
    int sandboxPoolSize = 2;                  // warm interpreters kept ready
    int retention = 5000;                     // requests kept in the window
    QString theme = QStringLiteral("system"); // "system", "light" or "dark"

    static AppSettings load(const QSettings &settings);
    void save(QSettings &settings) const;
    // Clamps every field into its valid range; returns the clamped copy.
    AppSettings normalized() const;

    // The QSettings key of a field, e.g. "proxy/port".
    static QString storageKey(Field field);
    QVariant value(Field field) const;
    void setValue(Field field, const QVariant &value);

    friend bool operator==(const AppSettings &, const AppSettings &) = default;
};

} // namespace loopscope
