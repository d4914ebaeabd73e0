#pragma once

#include <QJsonObject>
#include <QString>

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
};

} // namespace loopscope
