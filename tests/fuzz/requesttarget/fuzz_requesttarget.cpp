// RequestTarget::parse (every request's target, before anything routes on it or forwards it) and
// RFC 3986 remove_dot_segments on arbitrary bytes. Invariants: a refused target has an error and
// no path; an accepted one is a normalised origin-form path (no dot segment, no "//" start, no
// escape of "/", "." or "\"), stays the same when parsed again, decodes once to the same path
// after the proxy's re-encoding, and lies under the root; remove_dot_segments never grows its
// input, leaves no dot segment in an absolute path, and is idempotent when nothing climbed.
#include "fuzzsupport.h"
#include "http/requesttarget.h"

using loopscope::RequestTarget;
using loopscope::fuzz::FuzzInput;

namespace {

bool hasDotSegment(const QByteArray &path) {
    for (const QByteArray &segment : path.split('/'))
        if (segment == "." || segment == "..")
            return true;
    return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const QByteArray raw = FuzzInput(data, size).all();

    bool climbed = false;
    const QByteArray normalised = RequestTarget::removeDotSegments(raw, &climbed);
    FUZZ_CHECK(normalised.size() <= raw.size());
    if (raw.startsWith('/'))
        FUZZ_CHECK(!hasDotSegment(normalised));
    if (raw.startsWith('/') && !climbed)
        FUZZ_CHECK(RequestTarget::removeDotSegments(normalised) == normalised);

    const RequestTarget target = RequestTarget::parse(raw);
    if (!target.isValid()) {
        FUZZ_CHECK(!target.error().isEmpty());
        FUZZ_CHECK(target.path().isEmpty() && target.encodedPath().isEmpty());
        return 0;
    }
    const QByteArray encoded = target.encodedPath();
    FUZZ_CHECK(target.error().isEmpty());
    FUZZ_CHECK(encoded.startsWith('/') && !encoded.startsWith("//"));
    FUZZ_CHECK(target.path().startsWith(u'/'));
    FUZZ_CHECK(!hasDotSegment(encoded));
    const QByteArray lower = encoded.toLower();
    FUZZ_CHECK(!lower.contains("%2e") && !lower.contains("%2f") && !lower.contains("%5c"));
    FUZZ_CHECK(!target.path().contains(u'\\') && !target.path().contains(QChar(0)));
    FUZZ_CHECK(!target.query().contains('#'));

    const RequestTarget again = RequestTarget::parse(encoded);
    FUZZ_CHECK(again.isValid() && again.encodedPath() == encoded && again.path() == target.path());
    const RequestTarget sent = RequestTarget::parse(RequestTarget::encodePath(target.path()));
    FUZZ_CHECK(sent.isValid() && sent.path() == target.path());
    FUZZ_CHECK(RequestTarget::staysUnder(encoded, QByteArrayView()));
    return 0;
}
