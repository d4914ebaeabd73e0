#include "telemetry/otlpprotoencoder.h"

#include "otlp_trace.pb.h"

#include <string>

namespace loopscope {

namespace {

std::string utf8(const QString &s) {
    return s.toStdString();
}

void setValue(otlp::AnyValue *out, const QVariant &v) {
    switch (v.typeId()) {
    case QMetaType::Bool:
        out->set_bool_value(v.toBool());
        break;
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::UInt:
    case QMetaType::ULongLong:
        out->set_int_value(v.toLongLong());
        break;
    case QMetaType::Double:
        out->set_double_value(v.toDouble());
        break;
    case QMetaType::QStringList: {
        otlp::ArrayValue *array = out->mutable_array_value();
        for (const QString &s : v.toStringList())
            array->add_values()->set_string_value(utf8(s));
        break;
    }
    default:
        out->set_string_value(utf8(v.toString()));
    }
}

template<class Repeated> void addAttributes(Repeated *out, const QList<OtlpAttribute> &attrs) {
    for (const OtlpAttribute &a : attrs) {
        otlp::KeyValue *kv = out->Add();
        kv->set_key(utf8(a.key));
        setValue(kv->mutable_value(), a.value);
    }
}

} // namespace

QByteArray OtlpProtoEncoder::encode(const QList<OtlpSpan> &spans, const OtlpResource &resource) {
    otlp::ExportTraceServiceRequest request;
    otlp::ResourceSpans *rs = request.add_resource_spans();
    QList<OtlpAttribute> res{{QStringLiteral("service.name"), resource.serviceName},
                             {QStringLiteral("telemetry.sdk.name"), QStringLiteral("loopscope")},
                             {QStringLiteral("telemetry.sdk.language"), QStringLiteral("cpp")}};
    if (!resource.serviceVersion.isEmpty())
        res.append({QStringLiteral("service.version"), resource.serviceVersion});
    addAttributes(rs->mutable_resource()->mutable_attributes(), res);
    otlp::ScopeSpans *ss = rs->add_scope_spans();
    ss->mutable_scope()->set_name("loopscope");
    ss->mutable_scope()->set_version(utf8(resource.serviceVersion));
    for (const OtlpSpan &s : spans) {
        otlp::Span *span = ss->add_spans();
        span->set_trace_id(s.traceId.constData(), size_t(s.traceId.size()));
        span->set_span_id(s.spanId.constData(), size_t(s.spanId.size()));
        if (!s.parentSpanId.isEmpty())
            span->set_parent_span_id(s.parentSpanId.constData(), size_t(s.parentSpanId.size()));
        span->set_name(utf8(s.name));
        span->set_kind(otlp::Span::SpanKind(int(s.kind)));
        span->set_start_time_unix_nano(quint64(s.startTimeUnixNano));
        span->set_end_time_unix_nano(quint64(s.endTimeUnixNano));
        addAttributes(span->mutable_attributes(), s.attributes);
        for (const OtlpEvent &e : s.events) {
            otlp::Span::Event *event = span->add_events();
            event->set_time_unix_nano(quint64(e.timeUnixNano));
            event->set_name(utf8(e.name));
            addAttributes(event->mutable_attributes(), e.attributes);
        }
        otlp::Status *status = span->mutable_status();
        status->set_code(otlp::Status::StatusCode(int(s.status)));
        if (!s.statusMessage.isEmpty())
            status->set_message(utf8(s.statusMessage));
    }
    const std::string bytes = request.SerializeAsString();
    return QByteArray(bytes.data(), qsizetype(bytes.size()));
}

} // namespace loopscope
