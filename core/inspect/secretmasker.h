#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace loopscope {

// Keys and tokens never appear in full in logs, events or the window: only their last four
// characters. JSON masking covers the field names OpenAI-style clients put secrets in.
class SecretMasker {
public:
    // "sk-abcdef1234" -> "…1234"; shorter than 8 characters -> "…" only.
    static QString mask(const QString &secret);
    // "Bearer sk-…" header values keep the scheme: "Bearer …1234".
    static QString maskAuthorization(const QString &headerValue);
    // Masks values of secret-looking keys (api_key, authorization, token, master_key, ...) at any
    // depth.
    static QJsonObject maskJson(const QJsonObject &object);
    static bool isSecretKey(const QString &key);
    // HTTP headers as a JSON object {lower-case name: value} (repeated names joined by ", ").
    // Values of authorization, proxy-authorization, api-key, x-api-key, cookie, set-cookie and
    // any value containing one of `secrets` (configured keys) are masked to their last 4.
    static QJsonObject maskHeaders(const QList<QPair<QByteArray, QByteArray>> &headers,
                                   const QStringList &secrets = {});
    static bool isSecretHeader(const QByteArray &lowerName);
};

} // namespace loopscope
