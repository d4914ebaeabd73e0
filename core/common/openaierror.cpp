#include "common/openaierror.h"

#include <QJsonDocument>

namespace loopscope {

QJsonObject OpenAiError::object(const QString &message, const QString &type, const QString &code,
                                const QString &param) {
    QJsonObject error;
    error.insert(QStringLiteral("message"), message);
    error.insert(QStringLiteral("type"), type);
    error.insert(QStringLiteral("param"), param.isEmpty() ? QJsonValue() : QJsonValue(param));
    error.insert(QStringLiteral("code"), code.isEmpty() ? QJsonValue() : QJsonValue(code));
    return QJsonObject{{QStringLiteral("error"), error}};
}

QByteArray OpenAiError::json(const QString &message, const QString &type, const QString &code,
                             const QString &param) {
    return QJsonDocument(object(message, type, code, param)).toJson(QJsonDocument::Compact);
}

} // namespace loopscope
