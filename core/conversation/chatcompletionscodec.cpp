#include "conversation/chatcompletionscodec.h"

#include <QMap>

namespace loopscope {

namespace {

const QString kId = QStringLiteral("id");
const QString kData = QStringLiteral("data");
const QString kFunction = QStringLiteral("function");
const QString kArguments = QStringLiteral("arguments");
const QString kName = QStringLiteral("name");

} // namespace

QJsonObject ChatCompletionsCodec::responseFromEvents(const QJsonArray &events) {
    QJsonValue content = QJsonValue::Null; // null until a chunk carries text, as the SDK keeps it
    QMap<int, QJsonObject> calls;
    QJsonObject last;
    QJsonObject error;
    QString id;
    QJsonValue finish = QJsonValue::Null;
    for (const QJsonValue &e : events) {
        const QJsonObject data = e.toObject().value(kData).toObject();
        if (data.isEmpty())
            continue;
        if (data.value(QStringLiteral("error")).isObject())
            error = data;
        last = data;
        if (id.isEmpty())
            id = data.value(kId).toString();
        const QJsonObject choice =
            data.value(QStringLiteral("choices")).toArray().first().toObject();
        if (choice.value(QStringLiteral("finish_reason")).isString())
            finish = choice.value(QStringLiteral("finish_reason"));
        const QJsonObject delta = choice.value(QStringLiteral("delta")).toObject();
        if (const QJsonValue part = delta.value(QStringLiteral("content")); part.isString())
            content = QString(content.toString() + part.toString());
        for (const QJsonValue &c : delta.value(QStringLiteral("tool_calls")).toArray()) {
            const QJsonObject call = c.toObject();
            QJsonObject &acc = calls[call.value(QStringLiteral("index")).toInt()];
            if (call.value(kId).isString())
                acc.insert(kId, call.value(kId));
            acc.insert(QStringLiteral("type"), QStringLiteral("function"));
            QJsonObject fn = acc.value(kFunction).toObject();
            const QJsonObject part = call.value(kFunction).toObject();
            if (part.value(kName).isString())
                fn.insert(kName, part.value(kName));
            fn.insert(kArguments,
                      QString(fn.value(kArguments).toString() + part.value(kArguments).toString()));
            acc.insert(kFunction, fn);
        }
    }
    if (!error.isEmpty())
        return error;
    if (last.isEmpty())
        return {};
    QJsonObject message{{QStringLiteral("role"), QStringLiteral("assistant")},
                        {QStringLiteral("content"), content}};
    if (!calls.isEmpty()) {
        QJsonArray list;
        for (const QJsonObject &c : std::as_const(calls))
            list.append(c);
        message.insert(QStringLiteral("tool_calls"), list);
    }
    QJsonObject response{{kId, id},
                         {QStringLiteral("object"), QStringLiteral("chat.completion")},
                         {QStringLiteral("choices"),
                          QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                                 {QStringLiteral("message"), message},
                                                 {QStringLiteral("finish_reason"), finish}}}}};
    for (const char *key : {"created", "model"})
        if (last.contains(QLatin1String(key)))
            response.insert(QLatin1String(key), last.value(QLatin1String(key)));
    if (last.value(QStringLiteral("usage")).isObject())
        response.insert(QStringLiteral("usage"), last.value(QStringLiteral("usage")));
    return response;
}

} // namespace loopscope
