#pragma once

#include <QObject>
#include <QThread>
#include <QtGlobal>

#include <atomic>

namespace loopscope {

// Hands memory that glibc's malloc keeps after a burst back to the system. A burst of 500 held
// streams leaves the heap mostly free but fragmented (the soak, docs/benchmarks.md: ~20 MB in
// use, ~110 MB resident); glibc returns free pages in the middle of a heap only on malloc_trim.
// Every intervalMs this compares the resident anonymous memory with what malloc has handed out
// and trims when at least minFreeBytes of it is free: a few µs when not. Resident, not free:
// trimmed chunks stay free in malloc's books, so a rule on free bytes trimmed again every
// interval once a burst had left 16 MB free, and could not see the 5–8 MB resident free memory
// at the soak's quiet points (docs/benchmarks.md). What a trim could not give
// back (free space in pages still partly used) is the new floor: the next trim waits until
// minFreeBytes more than that are free. No-op without glibc.
// The timer runs on a thread of its own: a trim of a large fragmented heap takes tens of ms
// (bench_window: 34–40 ms at 2,000 req/s), which on the GUI thread was the window's longest stall.
class HeapTrimmer : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultIntervalMs = 10000;
    // 1 MB: with 4 MB, resident free memory up to that much stayed between trims, 7–9 % of the
    // soak's ~56 MB at some quiet points (docs/benchmarks.md); a trim is a few ms every 10 s at
    // most, on this thread.
    static constexpr qint64 kDefaultMinFreeBytes = 1024 * 1024;

    explicit HeapTrimmer(QObject *parent = nullptr, int intervalMs = kDefaultIntervalMs,
                         qint64 minFreeBytes = kDefaultMinFreeBytes);
    ~HeapTrimmer() override;

    // Free bytes inside malloc's heaps (all arenas), -1 when unknown (not glibc).
    static qint64 freeHeapBytes();
    // Resident anonymous memory malloc has not handed out (free heap pages still resident, plus
    // thread stacks), -1 when unknown.
    static qint64 residentFreeBytes();
    // Trims if at least minFreeBytes more resident memory are free than a trim last left (or
    // than ever since); true when it trimmed.
    bool trimIfWorthIt();
    // Gives free heap pages back at once, on the calling thread (glibc's malloc_trim; nothing
    // elsewhere): for a thread that has just dropped megabytes, instead of the next pass.
    static void trimNow();
    int trims() const { return m_trims.load(); }

private:
    QThread m_thread;
    qint64 m_minFreeBytes = 0;
    qint64 m_floorBytes = 0; // resident free memory no trim could give back
    std::atomic<int> m_trims = 0;
};

} // namespace loopscope
