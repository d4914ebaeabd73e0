#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace loopscope {

// The compressed form of a flow's hops in the history file. Written as a Zstandard frame
// (level 1): on 1 MB of this repository's text it compresses three times as fast as zlib's
// fastest level, to a smaller blob, and inflates six times as fast — compressing was the
// largest single cost of recording a large flow. Read in either form: files written before
// hold qCompress blobs (a 4-byte big-endian length, then a zlib stream), told apart by the
// frame's magic number (as the first four bytes of a qCompress blob it would announce 683 MB,
// past any stored flow).
class StoredBlob {
public:
    static QByteArray compress(QByteArrayView text);
    // The text, into `out` (its buffer reused: a run's read inflates flow after flow into one).
    // False, `out` unspecified, when the blob is neither form or damaged.
    static bool decompressInto(const QByteArray &blob, QByteArray &out);
    // The text, or empty when the blob is neither form or damaged.
    static QByteArray decompress(const QByteArray &blob);
    static bool isZstd(QByteArrayView blob);

    static constexpr int kLevel = 1;
    // The most one blob may inflate to (a flow's hops are bounded far below it).
    static constexpr qsizetype kMaxBytes = 256 * 1024 * 1024;
};

} // namespace loopscope
