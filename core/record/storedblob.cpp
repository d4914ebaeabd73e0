#include "record/storedblob.h"

#include <zlib.h>
#include <zstd.h>

namespace loopscope {

namespace {

// A qCompress blob inflated into `out`. The deflate data is inflated raw, so the stream's
// Adler-32 is not computed (a seventh of a run's read): what comes out is only shown, and a
// damaged blob fails to parse.
bool inflateInto(const QByteArray &blob, QByteArray &out) {
    if (blob.size() < 6)
        return false;
    const auto *b = reinterpret_cast<const uchar *>(blob.constData());
    const qsizetype expected = (qsizetype(b[0]) << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    // The zlib header: deflate, a valid check, no preset dictionary.
    if (expected > StoredBlob::kMaxBytes || (b[4] & 0x0f) != 8 || ((b[4] << 8) | b[5]) % 31 != 0 ||
        (b[5] & 0x20) != 0)
        return false;
    out.resize(expected);
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return false;
    z.next_in = const_cast<Bytef *>(b + 6);
    z.avail_in = uInt(blob.size() - 6);
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = uInt(expected);
    const int status = inflate(&z, Z_FINISH);
    const qsizetype length = qsizetype(z.total_out);
    inflateEnd(&z);
    if (status != Z_STREAM_END)
        return false;
    out.resize(length);
    return true;
}

} // namespace

bool StoredBlob::isZstd(QByteArrayView blob) {
    return blob.size() >= 4 && uchar(blob[0]) == 0x28 && uchar(blob[1]) == 0xb5 &&
           uchar(blob[2]) == 0x2f && uchar(blob[3]) == 0xfd;
}

QByteArray StoredBlob::compress(QByteArrayView text) {
    QByteArray out(qsizetype(ZSTD_compressBound(size_t(text.size()))), Qt::Uninitialized);
    // The frame records the text's size, which decompressInto sizes its buffer by.
    const size_t n =
        ZSTD_compress(out.data(), size_t(out.size()), text.data(), size_t(text.size()), kLevel);
    if (ZSTD_isError(n))
        return {};
    out.truncate(qsizetype(n));
    out.squeeze(); // a row waiting for its batch (or kept in memory) holds only the frame
    return out;
}

bool StoredBlob::decompressInto(const QByteArray &blob, QByteArray &out) {
    if (!isZstd(blob)) {
        if (inflateInto(blob, out))
            return true;
        out = qUncompress(blob); // a zlib stream inflateInto's checks did not take
        return !out.isEmpty();
    }
    const unsigned long long size = ZSTD_getFrameContentSize(blob.constData(), size_t(blob.size()));
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ||
        size > static_cast<unsigned long long>(kMaxBytes))
        return false;
    out.resize(qsizetype(size));
    const size_t n =
        ZSTD_decompress(out.data(), size_t(out.size()), blob.constData(), size_t(blob.size()));
    if (ZSTD_isError(n) || n != size)
        return false;
    return true;
}

QByteArray StoredBlob::decompress(const QByteArray &blob) {
    QByteArray out;
    if (!decompressInto(blob, out))
        return {};
    return out;
}

} // namespace loopscope
