#pragma once

#include <QString>

class QSettings;

namespace loopscope {

// What the Settings dialog edits, persisted with QSettings (organisation "Loopscope"). Plain
// Qt Core so the app can read it at startup whether or not the window is built; command-line
// options given explicitly win over these.
struct AppSettings {
    static constexpr int kDefaultPort = 4000;

    int port = kDefaultPort;
    QString upstream = QStringLiteral("demo"); // "demo" or an http(s) base URL
    int upstreamTimeoutSeconds = 600;
    int executionTimeoutSeconds = 30;
    int maxLoops = 3;        // LiteLLM's and Loopscope's default max_agentic_loops
    int sandboxPoolSize = 2; // warm interpreters kept ready
    int retention = 5000;    // requests kept in the window

    static AppSettings load(const QSettings &settings);
    void save(QSettings &settings) const;
    // Clamps every field into its valid range; returns the clamped copy.
    AppSettings normalized() const;

    friend bool operator==(const AppSettings &, const AppSettings &) = default;
};

} // namespace loopscope
