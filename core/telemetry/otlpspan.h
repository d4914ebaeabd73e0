#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QVariant>

namespace loopscope {

// One span as OTLP carries it (opentelemetry/proto/trace/v1/trace.proto), independent of the
// wire encoding: the builder makes these, the JSON and protobuf encoders write them.
struct OtlpAttribute {
    QString key;
    QVariant value; // QString, qint64, double or bool
};

struct OtlpEvent {
    qint64 timeUnixNano = 0;
    QString name;
    QList<OtlpAttribute> attributes;
};

struct OtlpSpan {
    enum Kind { Internal = 1, Server = 2, Client = 3 }; // Span.SpanKind
    enum StatusCode { Unset = 0, Ok = 1, Error = 2 };   // Status.StatusCode

    QByteArray traceId;      // 16 bytes
    QByteArray spanId;       // 8 bytes
    QByteArray parentSpanId; // 8 bytes, empty for a root span
    QString name;
    Kind kind = Internal;
    qint64 startTimeUnixNano = 0;
    qint64 endTimeUnixNano = 0;
    QList<OtlpAttribute> attributes;
    QList<OtlpEvent> events;
    StatusCode status = Unset;
    QString statusMessage;

    QVariant attribute(const QString &key) const {
        for (const OtlpAttribute &a : attributes)
            if (a.key == key)
                return a.value;
        return {};
    }
};

// Who sends the spans (Resource and InstrumentationScope).
struct OtlpResource {
    QString serviceName = QStringLiteral("loopscope");
    QString serviceVersion;
};

} // namespace loopscope
