#pragma once

#include <QObject>
#include <QThread>
#include <QtGlobal>

#include <atomic>

namespace loopscope {

// Hands memory that glibc's malloc keeps after a burst back to the system. A burst of 500 held
// streams leaves the heap mostly free but fragmented (the soak, docs/benchmarks.md: ~20 MB in
// use, ~110 MB resident); glibc returns free pages in the middle of a heap only on malloc_trim.
// Every intervalMs this looks at the free heap bytes (mallinfo2) and trims when at least
// minFreeBytes are free: a few µs when not. No-op without glibc.
// The timer runs on a thread of its own: a trim of a large fragmented heap takes tens of ms
// (bench_window: 34–40 ms at 2,000 req/s), which on the GUI thread was the window's longest stall.
class HeapTrimmer : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultIntervalMs = 10000;
    static constexpr qint64 kDefaultMinFreeBytes = 16 * 1024 * 1024;

    explicit HeapTrimmer(QObject *parent = nullptr, int intervalMs = kDefaultIntervalMs,
                         qint64 minFreeBytes = kDefaultMinFreeBytes);
    ~HeapTrimmer() override;

    // Free bytes inside malloc's heaps (all arenas), -1 when unknown (not glibc).
    static qint64 freeHeapBytes();
    // Trims if at least minFreeBytes are free; true when it trimmed.
    bool trimIfWorthIt();
    int trims() const { return m_trims.load(); }

private:
    QThread m_thread;
    qint64 m_minFreeBytes = 0;
    std::atomic<int> m_trims = 0;
};

} // namespace loopscope
