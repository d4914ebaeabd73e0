#include "sandbox/sandboxtoolregistry.h"

#include <QJsonObject>
#include <QtGlobal>

#include <algorithm>

namespace loopscope {

namespace {

const QLatin1String kEnvPrefix("os.environ/");

// `litellm_params`, with LiteLLM's "missing or null means {}". nullopt when it is another type.
std::optional<QJsonObject> litellmParams(const QJsonObject &entry) {
    const QJsonValue params = entry.value(QLatin1String("litellm_params"));
    if (params.isUndefined() || params.isNull())
        return QJsonObject();
    if (!params.isObject())
        return std::nullopt;
    return params.toObject();
}

} // namespace

QString SandboxToolRegistry::entryProblem(const QJsonValue &entry) {
    if (!entry.isObject())
        return QStringLiteral("not a mapping");
    const QJsonObject object = entry.toObject();
    const QJsonValue name = object.value(QLatin1String("sandbox_tool_name"));
    if (!name.isString() || name.toString().isEmpty())
        return QStringLiteral("missing sandbox_tool_name");
    const std::optional<QJsonObject> params = litellmParams(object);
    if (!params)
        return QStringLiteral("litellm_params is not a mapping");
    const QJsonValue provider = params->value(QLatin1String("sandbox_provider"));
    if (!provider.isString() || provider.toString().isEmpty())
        return QStringLiteral("litellm_params has no sandbox_provider");
    return {};
}

QStringList SandboxToolRegistry::registerTools(const QJsonArray &tools) {
    QHash<QString, SandboxParams> fresh;
    QStringList warnings;
    const auto warn = [&warnings](const QString &message) {
        qWarning("%s", qUtf8Printable(message));
        warnings.append(message);
    };

    for (qsizetype i = 0; i < tools.size(); ++i) {
        const QString where = QStringLiteral("sandbox_tools[%1]").arg(i);
        if (const QString problem = entryProblem(tools.at(i)); !problem.isEmpty()) {
            warn(where + QStringLiteral(": skipped: ") + problem);
            continue;
        }
        const QJsonObject entry = tools.at(i).toObject();
        const QString name = entry.value(QLatin1String("sandbox_tool_name")).toString();
        const QJsonObject params = *litellmParams(entry);

        // LiteLLM: non-strings → none; "os.environ/VAR" → the variable; anything else verbatim.
        const auto stringParam = [&](const char *key) -> QString {
            const QJsonValue value = params.value(QLatin1String(key));
            if (!value.isString())
                return {};
            const QString text = value.toString();
            if (!text.startsWith(kEnvPrefix))
                return text;
            const QString variable = text.mid(kEnvPrefix.size());
            const QByteArray variableName = variable.toLocal8Bit();
            if (variable.isEmpty() || !qEnvironmentVariableIsSet(variableName.constData())) {
                warn(where + QStringLiteral(" (%1): %2 refers to unset environment variable '%3'")
                                 .arg(name, QLatin1String(key), variable));
                return {};
            }
            return qEnvironmentVariable(variableName.constData());
        };

        SandboxParams resolved;
        resolved.provider = params.value(QLatin1String("sandbox_provider")).toString();
        resolved.apiKey = stringParam("api_key");
        resolved.apiBase = stringParam("api_base");
        if (fresh.contains(name))
            warn(where +
                 QStringLiteral(" (%1): duplicate sandbox_tool_name, this entry wins").arg(name));
        fresh.insert(name, resolved);
    }

    m_tools = std::move(fresh);
    m_warnings = warnings;
    return warnings;
}

void SandboxToolRegistry::clear() {
    m_tools.clear();
    m_warnings.clear();
}

std::optional<SandboxParams> SandboxToolRegistry::resolve(const QString &name) const {
    const auto it = m_tools.constFind(name);
    if (name.isEmpty() || it == m_tools.constEnd())
        return std::nullopt;
    return *it;
}

QStringList SandboxToolRegistry::names() const {
    QStringList list = m_tools.keys();
    std::sort(list.begin(), list.end());
    return list;
}

QString SandboxToolRegistry::maskSecret(const QString &secret) {
    if (secret.isEmpty())
        return QStringLiteral("(none)");
    if (secret.size() <= 4)
        return QStringLiteral("****");
    return QStringLiteral("****") + secret.right(4);
}

QString SandboxToolRegistry::describe(const QString &name) const {
    const std::optional<SandboxParams> params = resolve(name);
    if (!params)
        return name + QStringLiteral(": not registered");
    return QStringLiteral("%1: provider %2, api_key %3, api_base %4")
        .arg(name, params->provider, maskSecret(params->apiKey),
             params->apiBase.isEmpty() ? QStringLiteral("(default)") : params->apiBase);
}

} // namespace loopscope
