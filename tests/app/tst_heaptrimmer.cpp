// HeapTrimmer: free pages in the middle of the heap (what a burst of streams leaves behind) go
// back to the system when enough of the heap is free, and nothing happens when little is.
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
