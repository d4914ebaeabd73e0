#include "conversation/conversationitem.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace loopscope {

namespace {

ConversationItem::Part partOf(const QJsonValue &value) {
    using Kind = ConversationItem::Part::Kind;
    ConversationItem::Part part;
    part.wire = value;
    const QJsonObject o = value.toObject();
    const QString type = o.value(QStringLiteral("type")).toString();
    if (value.isString()) {
        part.text = value.toString();
    } else if (o.value(QStringLiteral("text")).isString()) {
        part.text = o.value(QStringLiteral("text")).toString();
    } else if (o.value(QStringLiteral("refusal")).isString()) {
        part.kind = Kind::Refusal;
        part.text = o.value(QStringLiteral("refusal")).toString();
    } else if (type.contains(QLatin1String("image"))) {
        part.kind = Kind::Image;
    } else if (type.contains(QLatin1String("file")) || type == QLatin1String("document")) {
        part.kind = Kind::File;
        part.filename = o.value(QStringLiteral("filename"))
                            .toString(o.value(QStringLiteral("title")).toString());
    } else if (type.contains(QLatin1String("audio"))) {
        part.kind = Kind::Audio;
    } else {
        part.kind = Kind::Other;
    }
    return part;
}

} // namespace

QString ConversationItem::Part::imageUrl() const {
    const QJsonObject o = wire.toObject();
    const QJsonValue url = o.value(QStringLiteral("image_url"));
    if (url.isString()) // Responses input_image
        return url.toString();
    if (url.isObject()) // Chat image_url
        return url.toObject().value(QStringLiteral("url")).toString();
    const QJsonObject source = o.value(QStringLiteral("source")).toObject(); // Messages image
    if (source.value(QStringLiteral("type")).toString() == QLatin1String("base64"))
        return QStringLiteral("data:%1;base64,%2")
            .arg(source.value(QStringLiteral("media_type")).toString(),
                 source.value(QStringLiteral("data")).toString());
    return source.value(QStringLiteral("url")).toString();
}

QJsonObject ConversationItem::wireIn(Dialect dialect) const {
    return wireDialect == dialect ? wire.toObject() : QJsonObject();
}

QString ConversationItem::argumentsText() const {
    if (arguments.isString())
        return arguments.toString();
    if (arguments.isObject())
        return QString::fromUtf8(
            QJsonDocument(arguments.toObject()).toJson(QJsonDocument::Compact));
    return QStringLiteral("{}");
}

QString ConversationItem::text() const {
    QStringList texts;
    for (const Part &part : parts)
        if (part.kind == Part::Kind::Text)
            texts << part.text;
    return texts.join(u'\n');
}

QList<ConversationItem::Part> ConversationItem::partsOf(const QJsonValue &content) {
    if (content.isNull() || content.isUndefined())
        return {};
    if (content.isString())
        return {partOf(content)};
    if (!content.isArray()) {
        Part other;
        other.kind = Part::Kind::Other;
        other.wire = content;
        return {other};
    }
    QList<Part> parts;
    for (const QJsonValue &v : content.toArray())
        parts << partOf(v);
    return parts;
}

QString ConversationItem::errorMessageOf(const QJsonObject &body) {
    const QJsonValue error = body.value(QStringLiteral("error"));
    if (error.isObject()) {
        const QJsonObject e = error.toObject();
        if (e.value(QStringLiteral("message")).isString())
            return e.value(QStringLiteral("message")).toString();
        return QString::fromUtf8(QJsonDocument(e).toJson(QJsonDocument::Compact));
    }
    if (error.isString())
        return error.toString();
    return {};
}

} // namespace loopscope
