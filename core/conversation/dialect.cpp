#include "conversation/dialect.h"

#include "conversation/chatcompletionscodec.h"
#include "conversation/messagescodec.h"
#include "conversation/responsescodec.h"

namespace loopscope {

QString apiOfPath(const QString &rawPath) {
    QString path = rawPath;
    if (path.startsWith(QLatin1String("/v1/")))
        path = path.mid(3);
    if (path == QLatin1String("/responses") || path.startsWith(QLatin1String("/responses/")))
        return QStringLiteral("responses");
    if (path == QLatin1String("/chat/completions"))
        return QStringLiteral("chat_completions");
    if (path == QLatin1String("/messages"))
        return QStringLiteral("messages");
    if (path == QLatin1String("/models") || path.startsWith(QLatin1String("/models/")))
        return QStringLiteral("models");
    if (path == QLatin1String("/containers") || path.startsWith(QLatin1String("/containers/")))
        return QStringLiteral("containers");
    return QStringLiteral("other");
}

Dialect dialectOfApi(QStringView api) {
    if (api == u"chat_completions")
        return Dialect::ChatCompletions;
    if (api == u"messages")
        return Dialect::Messages;
    return Dialect::Responses;
}

QJsonObject responseFromEvents(Dialect dialect, const QJsonArray &events) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return ChatCompletionsCodec::responseFromEvents(events);
    case Dialect::Messages:
        return MessagesCodec::responseFromEvents(events);
    case Dialect::Responses:
        break;
    }
    return ResponsesCodec::responseFromEvents(events);
}

} // namespace loopscope
