#include "telemetry/otlpjsonencoder.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace loopscope {

namespace {

QString S(const char *text) {
    return QString::fromLatin1(text);
}

QJsonObject anyValue(const QVariant &v) {
    switch (v.typeId()) {
    case QMetaType::Bool:
        return {{S("boolValue"), v.toBool()}};
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::UInt:
    case QMetaType::ULongLong:
        return {{S("intValue"), QString::number(v.toLongLong())}};
    case QMetaType::Double:
        return {{S("doubleValue"), v.toDouble()}};
    case QMetaType::QStringList: {
        QJsonArray values;
        for (const QString &s : v.toStringList())
            values.append(QJsonObject{{S("stringValue"), s}});
        return {{S("arrayValue"), QJsonObject{{S("values"), values}}}};
    }
    default:
        return {{S("stringValue"), v.toString()}};
    }
}

QJsonArray attributes(const QList<OtlpAttribute> &attrs) {
    QJsonArray out;
    for (const OtlpAttribute &a : attrs)
        out.append(QJsonObject{{S("key"), a.key}, {S("value"), anyValue(a.value)}});
    return out;
}

QString hex(const QByteArray &bytes) {
    return QString::fromLatin1(bytes.toHex());
}

} // namespace

QJsonObject OtlpJsonEncoder::request(const QList<OtlpSpan> &spans, const OtlpResource &resource) {
    QJsonArray jsonSpans;
    for (const OtlpSpan &s : spans) {
        QJsonObject span{{S("traceId"), hex(s.traceId)},
                         {S("spanId"), hex(s.spanId)},
                         {S("name"), s.name},
                         {S("kind"), int(s.kind)},
                         {S("startTimeUnixNano"), QString::number(s.startTimeUnixNano)},
                         {S("endTimeUnixNano"), QString::number(s.endTimeUnixNano)},
                         {S("attributes"), attributes(s.attributes)}};
        if (!s.parentSpanId.isEmpty())
            span.insert(S("parentSpanId"), hex(s.parentSpanId));
        if (!s.events.isEmpty()) {
            QJsonArray events;
            for (const OtlpEvent &e : s.events)
                events.append(QJsonObject{{S("timeUnixNano"), QString::number(e.timeUnixNano)},
                                          {S("name"), e.name},
                                          {S("attributes"), attributes(e.attributes)}});
            span.insert(S("events"), events);
        }
        QJsonObject status{{S("code"), int(s.status)}};
        if (!s.statusMessage.isEmpty())
            status.insert(S("message"), s.statusMessage);
        span.insert(S("status"), status);
        jsonSpans.append(span);
    }
    QList<OtlpAttribute> res{{S("service.name"), resource.serviceName},
                             {S("telemetry.sdk.name"), S("loopscope")},
                             {S("telemetry.sdk.language"), S("cpp")}};
    if (!resource.serviceVersion.isEmpty())
        res.append({S("service.version"), resource.serviceVersion});
    const QJsonObject scope{{S("name"), S("loopscope")}, {S("version"), resource.serviceVersion}};
    return {{S("resourceSpans"),
             QJsonArray{QJsonObject{
                 {S("resource"), QJsonObject{{S("attributes"), attributes(res)}}},
                 {S("scopeSpans"),
                  QJsonArray{QJsonObject{{S("scope"), scope}, {S("spans"), jsonSpans}}}}}}}};
}

QByteArray OtlpJsonEncoder::encode(const QList<OtlpSpan> &spans, const OtlpResource &resource) {
    return QJsonDocument(request(spans, resource)).toJson(QJsonDocument::Compact);
}

} // namespace loopscope
