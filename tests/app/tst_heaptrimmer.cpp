// HeapTrimmer: free pages in the middle of the heap (what a burst of streams leaves behind) go
// back to the system when enough of them are resident, and nothing happens when few are — nor
// again once they are gone, though malloc still counts them free.
#include "common/heaptrimmer.h"

#include <QFile>
#include <QtTest>

#include <memory>
#include <vector>

using loopscope::HeapTrimmer;

namespace {

qint64 residentKiB() {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong();
    return 0;
}

// 64 KiB blocks: below glibc's mmap threshold, so they come from the heap, and each free one
// spans whole pages that only malloc_trim gives back while its neighbours stay allocated.
constexpr size_t kBlock = 64 * 1024;
constexpr int kBlocks = 1024; // 64 MiB

} // namespace

class TstHeapTrimmer : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (HeapTrimmer::freeHeapBytes() < 0)
            QSKIP("not glibc: the trimmer does nothing here");
#if defined(__SANITIZE_ADDRESS__)
        // ASan's allocator replaces glibc's: freed blocks never reach glibc's free lists.
        QSKIP("built with AddressSanitizer: glibc's malloc is not the one in use");
#endif
    }

    void trimsAFragmentedHeap() {
        std::vector<std::unique_ptr<char[]>> blocks;
        for (int i = 0; i < kBlocks; ++i) {
            blocks.emplace_back(new char[kBlock]);
            memset(blocks.back().get(), 0x5a, kBlock); // resident, not just reserved
        }
        // Every other block freed: half the heap free, none of it at the top.
        for (int i = 0; i < kBlocks; i += 2)
            blocks[size_t(i)].reset();
        QVERIFY(HeapTrimmer::freeHeapBytes() >= qint64(kBlocks / 2) * qint64(kBlock));
        const qint64 before = residentKiB();
        HeapTrimmer trimmer(nullptr, 0, 16 * 1024 * 1024);
        QVERIFY(trimmer.trimIfWorthIt());
        QCOMPARE(trimmer.trims(), 1);
        const qint64 after = residentKiB();
        // ~32 MiB were free; at least a quarter of it must have left the resident set.
        QVERIFY2(before - after >= 8 * 1024,
                 qPrintable(QStringLiteral("RSS %1 -> %2 KiB").arg(before).arg(after)));
        // The pages are gone but the chunks are still free in malloc's books: no second trim.
        QVERIFY(HeapTrimmer::freeHeapBytes() >= qint64(kBlocks / 2) * qint64(kBlock));
        QVERIFY2(HeapTrimmer::residentFreeBytes() < 16 * 1024 * 1024,
                 qPrintable(QString::number(HeapTrimmer::residentFreeBytes())));
        QVERIFY(!trimmer.trimIfWorthIt());
        QCOMPARE(trimmer.trims(), 1);
    }

    // Free space in pages that are still partly used cannot go back: one trim finds that out,
    // and the next waits until more is free than that one left.
    void doesNotRepeatATrimThatGaveNothingBack() {
        constexpr size_t kSmall = 2048;    // above tcache sizes, below a page: never a whole page
        constexpr int kSmalls = 16 * 1024; // 32 MiB
        std::vector<std::unique_ptr<char[]>> blocks;
        for (int i = 0; i < kSmalls; ++i) {
            blocks.emplace_back(new char[kSmall]);
            memset(blocks.back().get(), 0x5a, kSmall);
        }
        for (int i = 0; i < kSmalls; i += 2)
            blocks[size_t(i)].reset();
        HeapTrimmer trimmer(nullptr, 0, 4 * 1024 * 1024);
        QVERIFY(trimmer.trimIfWorthIt());
        const qint64 left = HeapTrimmer::residentFreeBytes();
        QVERIFY2(left >= 8 * 1024 * 1024, qPrintable(QString::number(left))); // still resident
        QVERIFY(!trimmer.trimIfWorthIt());
        QCOMPARE(trimmer.trims(), 1);
        // 8 MiB more of whole free pages: worth a trim again.
        std::vector<std::unique_ptr<char[]>> big;
        for (int i = 0; i < 256; ++i) {
            big.emplace_back(new char[kBlock]);
            memset(big.back().get(), 0x5a, kBlock);
        }
        for (int i = 0; i < 256; i += 2)
            big[size_t(i)].reset();
        QVERIFY(trimmer.trimIfWorthIt());
        QCOMPARE(trimmer.trims(), 2);
    }

    void leavesASmallHeapAlone() {
        HeapTrimmer trimmer(nullptr, 0, qint64(1) << 40); // more free bytes than any test has
        QVERIFY(!trimmer.trimIfWorthIt());
        QCOMPARE(trimmer.trims(), 0);
    }

    void trimsOnItsTimer() {
        std::vector<std::unique_ptr<char[]>> blocks;
        for (int i = 0; i < kBlocks / 4; ++i) {
            blocks.emplace_back(new char[kBlock]);
            memset(blocks.back().get(), 0x5a, kBlock);
        }
        for (int i = 0; i < kBlocks / 4; i += 2)
            blocks[size_t(i)].reset();
        HeapTrimmer trimmer(nullptr, 50, 1024 * 1024);
        QTRY_VERIFY_WITH_TIMEOUT(trimmer.trims() >= 1, 20000);
    }
};

QTEST_GUILESS_MAIN(TstHeapTrimmer)
#include "tst_heaptrimmer.moc"
