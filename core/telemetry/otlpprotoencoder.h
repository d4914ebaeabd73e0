#pragma once

#include "telemetry/otlpspan.h"

#include <QByteArray>

namespace loopscope {

// OTLP/HTTP protobuf: one ExportTraceServiceRequest serialized with Debian's libprotobuf(-lite)
// from proto/otlp_trace.proto (the OTLP field numbers).
class OtlpProtoEncoder {
public:
    static QByteArray encode(const QList<OtlpSpan> &spans, const OtlpResource &resource);
};

} // namespace loopscope
