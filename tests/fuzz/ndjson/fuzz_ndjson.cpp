// NdjsonLineReader (e2b's streamed output): arbitrary bytes in arbitrary reads. Invariants: the
// lines do not depend on where the stream was cut (cap verdict included), every line is free of
// '\n', and the counted bytes equal the lines' bytes and stay under the cap.
#include "fuzzsupport.h"
#include "sandbox/remote/ndjsonlinereader.h"

using loopscope::NdjsonLineReader;
using loopscope::fuzz::FuzzInput;

namespace {

struct Result {
    QList<QByteArray> lines;
    bool exceeded = false;
    qint64 total = 0;
};

Result readAll(const QByteArray &stream, qint64 cap, const QList<qsizetype> &cuts) {
    NdjsonLineReader reader(cap);
    Result result;
    qsizetype from = 0;
    for (qsizetype cut : cuts) {
        result.lines << reader.feed(stream.mid(from, cut - from));
        from = cut;
    }
    result.lines << reader.feed(stream.mid(from));
    result.lines << reader.finish();
    result.exceeded = reader.capExceeded();
    result.total = reader.totalLineBytes();
    return result;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzInput input(data, size);
    const qint64 cap = 1 + input.byte(); // small caps reach the limit often
    const quint8 cutSeed = input.byte();
    const QByteArray stream = input.rest();

    const Result whole = readAll(stream, cap, {});
    QList<qsizetype> cuts;
    for (qsizetype at = cutSeed % 7 + 1; at < stream.size(); at += cutSeed % 13 + 1)
        cuts << at;
    const Result pieces = readAll(stream, cap, cuts);

    FUZZ_CHECK(whole.exceeded == pieces.exceeded);
    if (!whole.exceeded) {
        FUZZ_CHECK(whole.lines == pieces.lines);
        qint64 bytes = 0;
        for (const QByteArray &line : whole.lines) {
            FUZZ_CHECK(!line.contains('\n'));
            bytes += line.size();
        }
        FUZZ_CHECK(bytes == whole.total);
        FUZZ_CHECK(whole.total <= cap);
    }
    return 0;
}
