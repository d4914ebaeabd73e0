#pragma once

#include "telemetry/otlpspan.h"

#include <QByteArray>
#include <QJsonObject>

namespace loopscope {

// OTLP/HTTP JSON (the protobuf JSON mapping the OTLP spec fixes): ids as lowercase hex, 64-bit
// integers as strings, enums as numbers, lowerCamelCase field names. One ExportTraceServiceRequest.
class OtlpJsonEncoder {
public:
    static QJsonObject request(const QList<OtlpSpan> &spans, const OtlpResource &resource);
    static QByteArray encode(const QList<OtlpSpan> &spans, const OtlpResource &resource);
};

} // namespace loopscope
