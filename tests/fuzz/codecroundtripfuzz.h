#pragma once
// Each dialect's codec both ways fed arbitrary JSON (tests/fuzz/<dialect>codec). The first byte
// says request or response; the rest is the body. Invariants: decoding never crashes on any
// object; what the codec encodes from the model, decoded and encoded again, is the same JSON
// (encode ∘ decode is stable after one round: nothing grows, shrinks or moves on a second pass),
// and decodes to as many items.
#include "conversation/dialect.h"
#include "fuzzsupport.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace loopscope::fuzz {

inline int fuzzCodecRoundTrip(const uint8_t *data, size_t size, Dialect dialect) {
    FuzzInput input(data, size);
    const bool request = input.byte() & 1;
    const QJsonDocument doc = QJsonDocument::fromJson(input.rest());
    if (!doc.isObject())
        return 0;
    if (request) {
        const QJsonObject once = encodeRequest(dialect, decodeRequest(dialect, doc.object()));
        const ConversationRequest decoded = decodeRequest(dialect, once);
        const QJsonObject twice = encodeRequest(dialect, decoded);
        FUZZ_CHECK(twice == once);
        FUZZ_CHECK(decodeRequest(dialect, twice).items.size() == decoded.items.size());
    } else {
        const QJsonObject once = encodeResponse(dialect, decodeResponse(dialect, doc.object()));
        const ConversationResponse decoded = decodeResponse(dialect, once);
        const QJsonObject twice = encodeResponse(dialect, decoded);
        FUZZ_CHECK(twice == once);
        FUZZ_CHECK(decodeResponse(dialect, twice).items.size() == decoded.items.size());
    }
    return 0;
}

} // namespace loopscope::fuzz
