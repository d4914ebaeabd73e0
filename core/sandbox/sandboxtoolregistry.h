#pragma once

#include "sandbox/sandboxtypes.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonValue>
#include <QStringList>

#include <optional>

namespace loopscope {

// LiteLLM's `sandbox_tools` registry (litellm/sandbox/sandbox_tools.py): tool name →
// {sandbox_provider, api_key, api_base}. Every config (re)load replaces it entirely, so removing
// a tool also drops its credentials. Not thread-safe: owned by the proxy thread.
class SandboxToolRegistry {
public:
    // Replaces the registry with the valid entries of `tools` (the YAML `sandbox_tools` list).
    // Invalid entries are skipped; every skip or unresolved `os.environ/VAR` yields one warning,
    // which is also logged with qWarning. Secrets never appear in warnings. Returns the warnings.
    QStringList registerTools(const QJsonArray &tools);
    void clear();

    std::optional<SandboxParams> resolve(const QString &name) const;
    QStringList names() const; // sorted
    int size() const { return int(m_tools.size()); }
    QStringList lastWarnings() const { return m_warnings; }

    // Why `entry` would be skipped, or an empty string when it is valid.
    static QString entryProblem(const QJsonValue &entry);
    // "my-e2b: provider e2b, api_key ****1234, api_base https://..." for logs and the inspector.
    QString describe(const QString &name) const;
    // "****" plus the last 4 characters (all masked when 4 or fewer).
    static QString maskSecret(const QString &secret);

private:
    QHash<QString, SandboxParams> m_tools;
    QStringList m_warnings;
};

} // namespace loopscope
