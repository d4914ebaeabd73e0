#include "conversation/chatstreamwriter.h"

#include "common/openaierror.h"
#include "conversation/ssewriter.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace loopscope {

QByteArray ChatStreamWriter::dataFrame(const QJsonObject &payload) {
    return SseWriter::frame({}, payload);
}

QByteArray ChatStreamWriter::doneFrame() {
    return SseWriter::done();
}

bool ChatStreamWriter::includeUsage(const QJsonValue &streamOptions) {
    return streamOptions.isObject() &&
           streamOptions.toObject().value(QStringLiteral("include_usage")).toBool(false);
}

QByteArray ChatStreamWriter::replay(const QJsonObject &completion,
                                    const QJsonValue &streamOptions) {
    const bool withUsage = includeUsage(streamOptions);
    QJsonObject base;
    for (const char *key : {"id", "created", "model", "system_fingerprint", "service_tier"}) {
        const QString k = QLatin1String(key);
        if (completion.contains(k))
            base.insert(k, completion.value(k));
    }
    base.insert(QStringLiteral("object"), QStringLiteral("chat.completion.chunk"));
    if (withUsage) // OpenAI sends usage:null on every chunk but the last when usage is requested
        base.insert(QStringLiteral("usage"), QJsonValue::Null);

    auto chunk = [&base](const QJsonObject &delta, const QJsonValue &finishReason, int index) {
        QJsonObject c = base;
        QJsonObject choice{{QStringLiteral("index"), index},
                           {QStringLiteral("delta"), delta},
                           {QStringLiteral("finish_reason"), finishReason}};
        c.insert(QStringLiteral("choices"), QJsonArray{choice});
        return dataFrame(c);
    };

    QByteArray out;
    const QJsonArray choices = completion.value(QStringLiteral("choices")).toArray();
    for (const QJsonValue &choiceValue : choices) {
        const QJsonObject choice = choiceValue.toObject();
        const int index = choice.value(QStringLiteral("index")).toInt(0);
        const QJsonObject message = choice.value(QStringLiteral("message")).toObject();
        // A message without text (only tool calls) starts with content null, as OpenAI's does.
        const bool hasText = message.value(QStringLiteral("content")).isString();
        out += chunk({{QStringLiteral("role"), QStringLiteral("assistant")},
                      {QStringLiteral("content"), hasText ? QJsonValue(QString()) : QJsonValue()}},
                     QJsonValue::Null, index);
        const QString content = message.value(QStringLiteral("content")).toString();
        if (!content.isEmpty())
            out += chunk({{QStringLiteral("content"), content}}, QJsonValue::Null, index);
        if (message.contains(QStringLiteral("refusal")) &&
            message.value(QStringLiteral("refusal")).isString())
            out += chunk({{QStringLiteral("refusal"), message.value(QStringLiteral("refusal"))}},
                         QJsonValue::Null, index);
        const QJsonArray toolCalls = message.value(QStringLiteral("tool_calls")).toArray();
        QJsonArray deltaCalls;
        for (int i = 0; i < toolCalls.size(); ++i) {
            QJsonObject call = toolCalls.at(i).toObject();
            call.insert(QStringLiteral("index"), i);
            deltaCalls.append(call);
        }
        if (!deltaCalls.isEmpty())
            out += chunk({{QStringLiteral("tool_calls"), deltaCalls}}, QJsonValue::Null, index);
        const QJsonValue finish = choice.value(QStringLiteral("finish_reason"));
        out += chunk({}, finish.isString() ? finish : QJsonValue(QStringLiteral("stop")), index);
    }
    if (withUsage) {
        QJsonObject last = base;
        last.insert(QStringLiteral("choices"), QJsonArray());
        last.insert(QStringLiteral("usage"), completion.value(QStringLiteral("usage")));
        out += dataFrame(last);
    }
    return out + doneFrame();
}

QByteArray ChatStreamWriter::error(const QString &type, const QString &message,
                                   const QString &code) {
    return dataFrame(OpenAiError::object(message, type, code));
}

} // namespace loopscope
