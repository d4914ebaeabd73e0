// The Responses stream decoder fed arbitrary bytes: see streamdecoderfuzz.h.
#include "streamdecoderfuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return loopscope::fuzz::fuzzStreamDecoder(data, size, loopscope::Dialect::Responses);
}
