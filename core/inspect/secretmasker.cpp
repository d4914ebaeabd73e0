#include "inspect/secretmasker.h"

#include <QJsonArray>

#include <algorithm>
#include <utility>

namespace loopscope {

namespace {

// Each returns whether anything below needed masking, and only then fills `out`: an object or
// array without secrets is returned as it came (shared, not rebuilt), which for the bodies the
// recorder masks (nearly all without secrets) is a read instead of a copy.
bool maskObject(const QJsonObject &object, QJsonObject &out);
bool maskArray(const QJsonArray &array, QJsonArray &out);

bool maskChild(const QString &key, const QJsonValue &value, QJsonValue &out) {
    if (!key.isNull() && SecretMasker::isSecretKey(key) && value.isString()) {
        out = SecretMasker::mask(value.toString());
        return true;
    }
    if (value.isObject()) {
        QJsonObject object;
        if (maskObject(value.toObject(), object)) {
            out = object;
            return true;
        }
    } else if (value.isArray()) {
        QJsonArray array;
        if (maskArray(value.toArray(), array)) {
            out = array;
            return true;
        }
    }
    return false;
}

bool maskObject(const QJsonObject &object, QJsonObject &out) {
    bool changed = false;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        QJsonValue masked;
        if (!maskChild(it.key(), it.value(), masked))
            continue;
        if (!std::exchange(changed, true))
            out = object;
        out.insert(it.key(), masked);
    }
    return changed;
}

bool maskArray(const QJsonArray &array, QJsonArray &out) {
    bool changed = false;
    for (qsizetype i = 0; i < array.size(); ++i) {
        QJsonValue masked;
        if (!maskChild(QString(), array.at(i), masked))
            continue;
        if (!std::exchange(changed, true))
            out = array;
        out.replace(i, masked);
    }
    return changed;
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
    return maskObject(object, out) ? out : object;
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
