#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace loopscope {

// OpenAI's error envelope {"error":{"message","type","param","code"}}: SDKs parse exactly this
// shape, so every error Loopscope itself produces uses it.
class OpenAiError {
public:
    static QJsonObject object(const QString &message, const QString &type, const QString &code = {},
                              const QString &param = {});
    static QByteArray json(const QString &message, const QString &type, const QString &code = {},
                           const QString &param = {});
};

} // namespace loopscope
