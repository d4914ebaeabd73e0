#include "inspect/secretmasker.h"

#include <QJsonArray>

#include <algorithm>

namespace loopscope {

namespace {

QJsonValue maskValue(const QJsonValue &value);

QJsonArray maskArray(const QJsonArray &array) {
    QJsonArray out;
    for (const QJsonValue &v : array)
        out.append(maskValue(v));
    return out;
}

QJsonValue maskValue(const QJsonValue &value) {
    if (value.isObject())
        return SecretMasker::maskJson(value.toObject());
    if (value.isArray())
        return maskArray(value.toArray());
    return value;
}

} // namespace

QString SecretMasker::mask(const QString &secret) {
    const QChar ellipsis(0x2026);
    if (secret.size() < 8)
        return QString(ellipsis);
    return ellipsis + secret.right(4);
}

QString SecretMasker::maskAuthorization(const QString &headerValue) {
    const qsizetype space = headerValue.indexOf(u' ');
    if (space < 0)
        return mask(headerValue);
    // Only a scheme is kept ("Bearer", "Basic", "Token"): a short word of letters. Anything
    // else before the first space may be the key itself ("sk-… extra") and is masked whole.
    const QString scheme = headerValue.left(space);
    const bool isScheme =
        scheme.size() <= 16 && std::all_of(scheme.begin(), scheme.end(), [](QChar c) {
            return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || c == u'-';
        });
    if (!isScheme)
        return mask(headerValue.trimmed());
    return headerValue.left(space + 1) + mask(headerValue.mid(space + 1).trimmed());
}

bool SecretMasker::isSecretKey(const QString &key) {
    const QString k = key.toLower();
    return k == QLatin1String("api_key") || k == QLatin1String("apikey") ||
           k == QLatin1String("authorization") || k == QLatin1String("x-api-key") ||
           k == QLatin1String("master_key") || k == QLatin1String("token") ||
           k == QLatin1String("access_token") || k == QLatin1String("x-access-token") ||
           k.endsWith(QLatin1String("_api_key")) || k.endsWith(QLatin1String("accesstoken")) ||
           k == QLatin1String("user_api_key_hash");
}

QJsonObject SecretMasker::maskJson(const QJsonObject &object) {
    QJsonObject out;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        if (isSecretKey(it.key()) && it.value().isString())
            out.insert(it.key(), mask(it.value().toString()));
        else
            out.insert(it.key(), maskValue(it.value()));
    }
    return out;
}

bool SecretMasker::isSecretHeader(const QByteArray &lowerName) {
    return lowerName == "authorization" || lowerName == "proxy-authorization" ||
           lowerName == "api-key" || lowerName == "x-api-key" || lowerName == "cookie" ||
           lowerName == "set-cookie" || lowerName == "x-goog-api-key";
}

QJsonObject SecretMasker::maskHeaders(const QList<QPair<QByteArray, QByteArray>> &headers,
                                      const QStringList &secrets) {
    QJsonObject out;
    for (const auto &h : headers) {
        const QByteArray name = h.first.toLower();
        QString value = QString::fromUtf8(h.second);
        if (isSecretHeader(name)) {
            value = name.endsWith("authorization") ? maskAuthorization(value) : mask(value);
        } else {
            for (const QString &secret : secrets) {
                if (!secret.isEmpty() && value.contains(secret)) {
                    value = mask(value);
                    break;
                }
            }
        }
        const QString key = QString::fromLatin1(name);
        const QJsonValue existing = out.value(key);
        out.insert(key, existing.isString() ? existing.toString() + QStringLiteral(", ") + value
                                            : value);
    }
    return out;
}

} // namespace loopscope
