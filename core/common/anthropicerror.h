#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace loopscope {

// Anthropic's error envelope {"type":"error","error":{"type","message"},"request_id"}: what the
// Anthropic SDKs and Claude Code parse, so an error on the Messages surface comes in it.
class AnthropicError {
public:
    // The error type Anthropic gives a status (400 invalid_request_error, 401
    // authentication_error, 404 not_found_error, 429 rate_limit_error, 529 overloaded_error, …).
    static QString typeForStatus(int status);
    static QJsonObject object(int status, const QString &message, const QString &requestId = {});
    static QByteArray json(int status, const QString &message, const QString &requestId = {});
    // Paths of the Messages surface, with or without the /v1 prefix (/messages,
    // /messages/count_tokens, /messages/batches…).
    static bool isMessagesPath(const QString &path);
};

} // namespace loopscope
