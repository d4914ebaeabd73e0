// LocalSandboxFrameCodec (length-prefixed frames from the sandbox driver): arbitrary bytes in
// arbitrary reads. Invariants: the decoded frames and the failure verdict do not depend on where
// the stream was cut; no frame exceeds the cap and nothing stays buffered beyond one frame plus
// its header; every decoded frame re-encodes and decodes to itself; a JSON frame made with
// encode() parses back to the same object.
#include "fuzzsupport.h"
#include "sandbox/local/localsandboxframecodec.h"

#include <QJsonDocument>

using loopscope::LocalSandboxFrameCodec;
using loopscope::fuzz::FuzzInput;

namespace {

struct Result {
    QList<QByteArray> frames;
    bool failed = false;
};

Result decode(const QByteArray &stream, qint64 cap, qsizetype step) {
    LocalSandboxFrameCodec codec(cap);
    Result result;
    for (qsizetype at = 0; at < stream.size() && !codec.failed(); at += step) {
        codec.feed(stream.mid(at, step));
        while (const std::optional<QByteArray> frame = codec.next()) {
            FUZZ_CHECK(frame->size() <= cap);
            result.frames << *frame;
        }
        FUZZ_CHECK(codec.bufferedBytes() <= cap + 4 + step);
    }
    result.failed = codec.failed();
    return result;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzInput input(data, size);
    const qint64 cap = 1 + input.byte() * 8;
    const qsizetype step = 1 + input.byte() % 16;
    const QByteArray stream = input.rest();
    if (stream.isEmpty())
        return 0;

    const Result whole = decode(stream, cap, stream.size());
    const Result pieces = decode(stream, cap, step);
    FUZZ_CHECK(whole.frames == pieces.frames);
    FUZZ_CHECK(whole.failed == pieces.failed);

    for (const QByteArray &frame : whole.frames) {
        LocalSandboxFrameCodec again(cap);
        FUZZ_CHECK(again.feed(LocalSandboxFrameCodec::encodeRaw(frame)));
        const std::optional<QByteArray> back = again.next();
        FUZZ_CHECK(back && *back == frame);
        FUZZ_CHECK(again.bufferedBytes() == 0);
        // A payload that is a JSON object survives encode() → next() → parseObject().
        const QJsonDocument doc = QJsonDocument::fromJson(frame);
        if (doc.isObject()) {
            LocalSandboxFrameCodec json(1 << 20);
            json.feed(LocalSandboxFrameCodec::encode(doc.object()));
            const std::optional<QByteArray> payload = json.next();
            FUZZ_CHECK(payload);
            const std::optional<QJsonObject> object = json.parseObject(*payload);
            FUZZ_CHECK(object && *object == doc.object());
        }
    }
    return 0;
}
