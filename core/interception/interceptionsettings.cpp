#include "interception/interceptionsettings.h"

#include "interception/interceptionkeys.h"
#include "interception/providerresolver.h"

#include "config/yamldocument.h"
#include "sandbox/sandboxtoolregistry.h"

#include <QJsonValue>

namespace loopscope {

namespace {

const QLatin1String kParamsKey("code_interpreter_interception_params");
const QLatin1String kCallbackKey("code_interpreter_interception");
const QLatin1String kEnabled("enabled");
const QLatin1String kEnabledProviders("enabled_providers");
const QLatin1String kSandboxToolName("sandbox_tool_name");

QString typeName(const QJsonValue &value) {
    switch (value.type()) {
    case QJsonValue::Bool:
        return QStringLiteral("a boolean");
    case QJsonValue::Double:
        return QStringLiteral("a number");
    case QJsonValue::String:
        return QStringLiteral("a string");
    case QJsonValue::Array:
        return QStringLiteral("a list");
    case QJsonValue::Object:
        return QStringLiteral("a mapping");
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        return QStringLiteral("null");
    }
    return QStringLiteral("unknown");
}

} // namespace

InterceptionSettings InterceptionSettings::fromConfig(const QJsonObject &cfg) {
    InterceptionSettings settings;
    if (cfg.contains(kEnabled))
        settings.enabled = keys::isTruthy(cfg.value(kEnabled));

    const QJsonValue providers = cfg.value(kEnabledProviders);
    if (providers.isArray()) {
        QStringList list;
        for (const QJsonValue &item : providers.toArray()) {
            if (item.isString())
                list.append(item.toString());
            else
                qWarning("code interpreter interception: ignoring non-string entry in "
                         "enabled_providers");
        }
        settings.enabledProviders = list;
    } else if (providers.isString()) {
        // LiteLLM would test substring membership of a bare string; one provider is the intent.
        qWarning("code interpreter interception: enabled_providers should be a list");
        settings.enabledProviders = QStringList{providers.toString()};
    } else if (!providers.isUndefined() && !providers.isNull()) {
        qWarning("code interpreter interception: enabled_providers is %s, allowing no provider",
                 qUtf8Printable(typeName(providers)));
        settings.enabledProviders = QStringList(); // fail closed
    }

    const QJsonValue toolName = cfg.value(kSandboxToolName);
    if (toolName.isString())
        settings.sandboxToolName = toolName.toString();
    else if (!toolName.isUndefined() && !toolName.isNull())
        qWarning("code interpreter interception: sandbox_tool_name is %s, ignored",
                 qUtf8Printable(typeName(toolName)));
    return settings;
}

InterceptionSettings
InterceptionSettings::initializeFromProxyConfig(const QJsonObject &litellmSettings,
                                                const QJsonObject &callbackSpecificParams) {
    if (litellmSettings.contains(kParamsKey))
        return fromConfig(litellmSettings.value(kParamsKey).toObject());
    const QJsonValue callback = callbackSpecificParams.value(kCallbackKey);
    if (callback.isObject())
        return fromConfig(callback.toObject());
    return fromConfig({});
}

bool InterceptionSettings::allowsProvider(const QString &provider) const {
    if (!enabledProviders)
        return true;
    return !provider.isEmpty() && enabledProviders->contains(provider);
}

QJsonObject InterceptionSettings::toJson() const {
    QJsonObject json{{kEnabled, enabled}};
    json.insert(kEnabledProviders, enabledProviders
                                       ? QJsonValue(QJsonArray::fromStringList(*enabledProviders))
                                       : QJsonValue(QJsonValue::Null));
    json.insert(kSandboxToolName,
                sandboxToolName.isEmpty() ? QJsonValue(QJsonValue::Null) : sandboxToolName);
    return json;
}

LoadedInterceptionConfig InterceptionSettings::fromYaml(const YamlDocument &doc) {
    LoadedInterceptionConfig out;
    if (!doc.isValid()) {
        out.errors.append(doc.error());
        return out;
    }
    const auto located = [&doc](const QString &path, const QString &message) {
        return YamlDocument::printable(
            QStringLiteral("%1 (line %2): %3").arg(path).arg(doc.lineOf(path)).arg(message));
    };
    const auto error = [&](const QString &path, const QString &message) {
        out.errors.append(located(path, message));
    };
    const auto warning = [&](const QString &path, const QString &message) {
        out.warnings.append(located(path, message));
    };
    // A mapping at `path`, or {} when absent/null; another type is an error.
    const auto mappingAt = [&](const QJsonValue &value, const QString &path) -> QJsonObject {
        if (value.isUndefined() || value.isNull())
            return {};
        if (!value.isObject()) {
            error(path, QStringLiteral("must be a mapping, got %1").arg(typeName(value)));
            return {};
        }
        return value.toObject();
    };

    const QJsonObject root = doc.root();
    const QString litellmPath = QStringLiteral("litellm_settings");
    const QString callbackPath = QStringLiteral("callback_settings");
    const QJsonObject litellmSettings = mappingAt(root.value(litellmPath), litellmPath);
    const QJsonObject callbackSettings = mappingAt(root.value(callbackPath), callbackPath);

    // Same preference as initializeFromProxyConfig.
    QJsonObject section;
    if (litellmSettings.contains(kParamsKey)) {
        out.settingsPath = litellmPath + u'.' + kParamsKey;
        section = mappingAt(litellmSettings.value(kParamsKey), out.settingsPath);
    } else if (callbackSettings.contains(kCallbackKey)) {
        out.settingsPath = callbackPath + u'.' + kCallbackKey;
        section = mappingAt(callbackSettings.value(kCallbackKey), out.settingsPath);
    }

    // `clean` keeps the valid values; invalid ones fail closed (disabled, no provider), although
    // a config with errors is meant to be refused anyway.
    QJsonObject clean;
    for (auto it = section.constBegin(); it != section.constEnd(); ++it) {
        const QString path = out.settingsPath + u'.' + it.key();
        const QJsonValue value = it.value();
        if (it.key() == kEnabled) {
            if (value.isBool()) {
                clean.insert(kEnabled, value);
            } else {
                error(path, QStringLiteral("must be true or false, got %1").arg(typeName(value)));
                clean.insert(kEnabled, false);
            }
        } else if (it.key() == kEnabledProviders) {
            if (value.isNull())
                continue; // every provider
            if (!value.isArray()) {
                error(path, QStringLiteral("must be a list of provider names, got %1")
                                .arg(typeName(value)));
                clean.insert(kEnabledProviders, QJsonArray());
                continue;
            }
            const QJsonArray list = value.toArray();
            QJsonArray valid;
            for (qsizetype i = 0; i < list.size(); ++i) {
                if (list.at(i).isString() && !list.at(i).toString().isEmpty()) {
                    valid.append(list.at(i));
                    // The names of model prefixes (LiteLlmProviders): a typo would silently
                    // scope interception to nothing.
                    if (!ProviderResolver::knownProviders().contains(list.at(i).toString()))
                        warning(path + QStringLiteral("[%1]").arg(i),
                                QStringLiteral("'%1' is not a provider name Loopscope knows "
                                               "(e.g. openai, azure, hosted_vllm)")
                                    .arg(list.at(i).toString()));
                    continue;
                }
                error(path + QStringLiteral("[%1]").arg(i),
                      QStringLiteral("must be a provider name, got %1")
                          .arg(list.at(i).isString() ? QStringLiteral("an empty string")
                                                     : typeName(list.at(i))));
            }
            clean.insert(kEnabledProviders, valid);
        } else if (it.key() == kSandboxToolName) {
            if (value.isString())
                clean.insert(kSandboxToolName, value);
            else if (!value.isNull())
                error(path, QStringLiteral("must be a string, got %1").arg(typeName(value)));
        } else {
            warning(path, QStringLiteral("unknown key, ignored"));
        }
    }
    out.settings = fromConfig(clean);

    const QJsonValue callbacks = litellmSettings.value(QLatin1String("callbacks"));
    if (callbacks.isArray())
        out.callbackListed = callbacks.toArray().contains(QJsonValue(kCallbackKey));
    else if (callbacks.isString())
        out.callbackListed = callbacks.toString() == kCallbackKey;

    const QString toolsPath = QStringLiteral("sandbox_tools");
    const QJsonValue tools = root.value(toolsPath);
    if (tools.isArray()) {
        out.sandboxTools = tools.toArray();
        for (qsizetype i = 0; i < out.sandboxTools.size(); ++i) {
            const QString entryPath = toolsPath + QStringLiteral("[%1]").arg(i);
            const QString problem = SandboxToolRegistry::entryProblem(out.sandboxTools.at(i));
            if (!problem.isEmpty()) {
                warning(entryPath, QStringLiteral("will be skipped: ") + problem);
                continue;
            }
            const QJsonObject params =
                out.sandboxTools.at(i).toObject().value(QLatin1String("litellm_params")).toObject();
            for (const char *key : {"api_key", "api_base"}) {
                const QJsonValue value = params.value(QLatin1String(key));
                if (!value.isUndefined() && !value.isNull() && !value.isString())
                    warning(entryPath + QStringLiteral(".litellm_params.") + QLatin1String(key),
                            QStringLiteral("is %1, not a string: ignored (quote it)")
                                .arg(typeName(value)));
            }
        }
    } else if (!tools.isUndefined() && !tools.isNull()) {
        error(toolsPath, QStringLiteral("must be a list, got %1").arg(typeName(tools)));
    }
    return out;
}

} // namespace loopscope
