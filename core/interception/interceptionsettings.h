#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

#include <optional>

namespace loopscope {

class YamlDocument;
struct LoadedInterceptionConfig;

// The interceptor's three settings (LiteLLM's CodeInterpreterInterceptionConfig).
struct InterceptionSettings {
    bool enabled = true;
    std::optional<QStringList> enabledProviders; // nullopt = every provider; empty = none
    QString sandboxToolName;                     // empty = none configured

    // LiteLLM from_config_yaml: `enabled` is the truthiness of the value (absent → true),
    // `enabled_providers` absent/null → every provider, `sandbox_tool_name` a string or none.
    // Lenient (JSON from code); wrong types are logged and fail closed (no provider allowed).
    static InterceptionSettings fromConfig(const QJsonObject &cfg);
    // LiteLLM initialize_from_proxy_config: litellm_settings.code_interpreter_interception_params
    // when that key exists, else callback params["code_interpreter_interception"] when it is a
    // mapping, else defaults.
    static InterceptionSettings
    initializeFromProxyConfig(const QJsonObject &litellmSettings,
                              const QJsonObject &callbackSpecificParams);
    // A whole LiteLLM-style config file, strictly validated: wrong types are errors naming the
    // key and its line.
    static LoadedInterceptionConfig fromYaml(const YamlDocument &doc);

    // Whether a request to `provider` is in scope (an unresolved provider never is when a list
    // is configured, as in LiteLLM where `None not in [...]`).
    bool allowsProvider(const QString &provider) const;
    QJsonObject toJson() const; // snake_case, for logs and the inspector

    friend bool operator==(const InterceptionSettings &, const InterceptionSettings &) = default;
};

// What fromYaml found in a config file.
struct LoadedInterceptionConfig {
    InterceptionSettings settings;
    // Where the settings came from: "litellm_settings.code_interpreter_interception_params",
    // "callback_settings.code_interpreter_interception", or empty (defaults).
    QString settingsPath;
    // litellm_settings.callbacks lists "code_interpreter_interception".
    bool callbackListed = false;
    // The raw `sandbox_tools` list, ready for SandboxToolRegistry::registerTools.
    QJsonArray sandboxTools;
    QStringList errors;   // "<key> (line N): <problem>"; a config with errors must be refused
    QStringList warnings; // unknown keys, sandbox_tools entries that will be skipped, ...

    bool ok() const { return errors.isEmpty(); }
};

} // namespace loopscope
