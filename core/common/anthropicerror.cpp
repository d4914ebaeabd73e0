#include "common/anthropicerror.h"

#include <QJsonDocument>

namespace loopscope {

QString AnthropicError::typeForStatus(int status) {
    switch (status) {
    case 401:
        return QStringLiteral("authentication_error");
    case 402:
        return QStringLiteral("billing_error");
    case 403:
        return QStringLiteral("permission_error");
    case 404:
        return QStringLiteral("not_found_error");
    case 409:
        return QStringLiteral("conflict_error");
    case 413:
        return QStringLiteral("request_too_large");
    case 429:
        return QStringLiteral("rate_limit_error");
    case 504:
        return QStringLiteral("timeout_error");
    case 529:
        return QStringLiteral("overloaded_error");
    default:
        return status >= 500 ? QStringLiteral("api_error")
                             : QStringLiteral("invalid_request_error");
    }
}

QJsonObject AnthropicError::object(int status, const QString &message, const QString &requestId) {
    return {
        {QStringLiteral("type"), QStringLiteral("error")},
        {QStringLiteral("error"), QJsonObject{{QStringLiteral("type"), typeForStatus(status)},
                                              {QStringLiteral("message"), message}}},
        {QStringLiteral("request_id"), requestId.isEmpty() ? QJsonValue() : QJsonValue(requestId)}};
}

QByteArray AnthropicError::json(int status, const QString &message, const QString &requestId) {
    return QJsonDocument(object(status, message, requestId)).toJson(QJsonDocument::Compact);
}

bool AnthropicError::isMessagesPath(const QString &path) {
    const QStringView p =
        path.startsWith(QLatin1String("/v1/")) ? QStringView(path).mid(3) : QStringView(path);
    return p == QLatin1String("/messages") || p.startsWith(QLatin1String("/messages/"));
}

} // namespace loopscope
