#include "conversation/responsescodec.h"

namespace loopscope {

namespace {

const QString kType = QStringLiteral("type");

bool isTerminal(const QString &type) {
    return type == QLatin1String("response.completed") ||
           type == QLatin1String("response.incomplete") || type == QLatin1String("response.failed");
}

} // namespace

QJsonObject ResponsesCodec::responseFromEvents(const QJsonArray &events) {
    QJsonArray items;
    QString text;
    QJsonObject started;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        const QJsonObject data = e.value(QStringLiteral("data")).toObject();
        const QString type =
            data.value(kType).toString(e.value(QStringLiteral("event")).toString());
        if (isTerminal(type))
            return data.value(QStringLiteral("response")).toObject();
        if (type == QLatin1String("response.created"))
            started = data.value(QStringLiteral("response")).toObject();
        else if (type == QLatin1String("response.output_item.done"))
            items.append(data.value(QStringLiteral("item")));
        else if (type == QLatin1String("response.output_text.delta"))
            text += data.value(QStringLiteral("delta")).toString();
    }
    if (items.isEmpty() && !text.isEmpty())
        items.append(QJsonObject{{kType, QStringLiteral("message")},
                                 {QStringLiteral("role"), QStringLiteral("assistant")},
                                 {QStringLiteral("content"),
                                  QJsonArray{QJsonObject{{kType, QStringLiteral("output_text")},
                                                         {QStringLiteral("text"), text}}}}});
    if (items.isEmpty())
        return {};
    QJsonObject response = started;
    response.insert(QStringLiteral("object"), QStringLiteral("response"));
    response.insert(QStringLiteral("output"), items);
    return response;
}

} // namespace loopscope
