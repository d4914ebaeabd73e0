#include "interception/agenticrequest.h"

#include "interception/interceptionkeys.h"

namespace loopscope {

bool AgenticRequest::isChat() const {
    return surface == keys::kChatCompletionsSurface;
}

QString AgenticRequest::messagesKey() const {
    return isChat() ? QStringLiteral("messages") : QStringLiteral("input");
}

AgenticRequest AgenticRequest::fromFlat(const QJsonObject &request, const QString &surface) {
    AgenticRequest out;
    out.surface = surface;
    const QString messagesKey = out.messagesKey();
    // Each half is the request less the other's keys: a QJsonObject insert costs a few
    // allocations, a remove none, and the loop splits its request every round.
    QStringList notParams;
    QStringList notKwargs;
    for (auto it = request.constBegin(); it != request.constEnd(); ++it) {
        const QString key = it.key();
        if (key == QLatin1String("model") || key == messagesKey) {
            if (key == messagesKey)
                out.messages = it.value();
            else
                out.model = it.value().toString();
            notParams << key;
            notKwargs << key;
        } else if (keys::isLitellmOnlyKey(key)) {
            notParams << key;
        } else {
            notKwargs << key;
        }
    }
    out.optionalParams = request;
    for (const QString &key : std::as_const(notParams))
        out.optionalParams.remove(key);
    out.kwargs = request;
    for (const QString &key : std::as_const(notKwargs))
        out.kwargs.remove(key);
    return out;
}

QJsonObject AgenticRequest::toFlat() const {
    QJsonObject flat = optionalParams;
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it)
        flat.insert(it.key(), it.value());
    flat.insert(QLatin1String("model"), model);
    if (!messages.isUndefined())
        flat.insert(messagesKey(), messages);
    return flat;
}

QJsonObject AgenticRequest::hookKwargs(const QString &customLlmProvider) const {
    QJsonObject out = kwargs;
    out.insert(keys::kAgenticLoopApiSurface, surface);
    if (!customLlmProvider.isEmpty())
        out.insert(QLatin1String("custom_llm_provider"), customLlmProvider);
    return out;
}

QJsonArray AgenticRequest::messageList() const {
    if (messages.isArray())
        return messages.toArray();
    if (messages.isString())
        return QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                      {QStringLiteral("content"), messages.toString()}}};
    return {};
}

int AgenticRequest::depth() const {
    const QJsonValue v = kwargs.value(keys::kAgenticLoopDepth);
    if (v.isDouble())
        return v.toInt();
    if (v.isString()) {
        bool ok = false;
        const int n = v.toString().trimmed().toInt(&ok);
        return ok ? n : 0;
    }
    return 0;
}

QStringList AgenticRequest::fingerprints() const {
    QStringList out;
    const QJsonValue v = kwargs.value(keys::kAgenticLoopFingerprints);
    if (!v.isArray())
        return out;
    for (const QJsonValue &item : v.toArray())
        out.append(item.toString());
    return out;
}

} // namespace loopscope
