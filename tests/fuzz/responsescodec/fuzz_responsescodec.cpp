// The Responses codec's request and response decoder + encoder fed arbitrary JSON: see
// codecroundtripfuzz.h.
#include "codecroundtripfuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return loopscope::fuzz::fuzzCodecRoundTrip(data, size, loopscope::Dialect::Responses);
}
