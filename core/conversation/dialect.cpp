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

ConversationRequest decodeRequest(Dialect dialect, const QJsonObject &body) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return ChatCompletionsCodec::decodeRequest(body);
    case Dialect::Messages:
        return MessagesCodec::decodeRequest(body);
    case Dialect::Responses:
        break;
    }
    return ResponsesCodec::decodeRequest(body);
}

ConversationResponse decodeResponse(Dialect dialect, const QJsonObject &body) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return ChatCompletionsCodec::decodeResponse(body);
    case Dialect::Messages:
        return MessagesCodec::decodeResponse(body);
    case Dialect::Responses:
        break;
    }
    return ResponsesCodec::decodeResponse(body);
}

QJsonObject encodeRequest(Dialect dialect, const ConversationRequest &request) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return ChatCompletionsCodec::encodeRequest(request);
    case Dialect::Messages:
        return MessagesCodec::encodeRequest(request);
    case Dialect::Responses:
        break;
    }
    return ResponsesCodec::encodeRequest(request);
}

QJsonObject encodeResponse(Dialect dialect, const ConversationResponse &response) {
    switch (dialect) {
    case Dialect::ChatCompletions:
        return ChatCompletionsCodec::encodeResponse(response);
    case Dialect::Messages:
        return MessagesCodec::encodeResponse(response);
    case Dialect::Responses:
        break;
    }
    return ResponsesCodec::encodeResponse(response);
}

Dialect dialectOfBody(const QJsonObject &body) {
    if (body.value(QStringLiteral("type")).toString() == QLatin1String("message") ||
        (body.value(QStringLiteral("type")).toString() == QLatin1String("error") &&
         body.value(QStringLiteral("error")).isObject()))
        return Dialect::Messages;
    if (body.contains(QStringLiteral("choices")))
        return Dialect::ChatCompletions;
    if (body.value(QStringLiteral("messages")).isArray()) {
        if (body.contains(QStringLiteral("system"))) // Chat keeps system prompts in messages
            return Dialect::Messages;
        for (const QJsonValue &m : body.value(QStringLiteral("messages")).toArray())
            for (const QJsonValue &b : m.toObject().value(QStringLiteral("content")).toArray()) {
                const QString type = b.toObject().value(QStringLiteral("type")).toString();
                if (type == QLatin1String("tool_use") || type == QLatin1String("tool_result") ||
                    type == QLatin1String("thinking"))
                    return Dialect::Messages;
            }
        return Dialect::ChatCompletions;
    }
    return Dialect::Responses;
}

Dialect dialectOf(Dialect flowDialect, const QJsonObject &body) {
    return flowDialect == Dialect::Responses ? dialectOfBody(body) : flowDialect;
}

} // namespace loopscope
