#pragma once

#include <QObject>
#include <QtGlobal>

class QTimer;

namespace loopscope {

// Hands memory that glibc's malloc keeps after a burst back to the system. A burst of 500 held
// streams leaves the heap mostly free but fragmented (the soak, docs/benchmarks.md: ~20 MB in
// use, ~110 MB resident); glibc returns free pages in the middle of a heap only on malloc_trim.
// Every intervalMs this looks at the free heap bytes (mallinfo2) and trims when at least
// minFreeBytes are free: a few ms after a burst, a few µs otherwise. No-op without glibc.
class HeapTrimmer : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultIntervalMs = 10000;
    static constexpr qint64 kDefaultMinFreeBytes = 16 * 1024 * 1024;

    explicit HeapTrimmer(QObject *parent = nullptr, int intervalMs = kDefaultIntervalMs,
                         qint64 minFreeBytes = kDefaultMinFreeBytes);

    // Free bytes inside malloc's heaps (all arenas), -1 when unknown (not glibc).
    static qint64 freeHeapBytes();
    // Trims if at least minFreeBytes are free; true when it trimmed.
    bool trimIfWorthIt();
    int trims() const { return m_trims; }

private:
    QTimer *m_timer = nullptr;
    qint64 m_minFreeBytes = 0;
    int m_trims = 0;
};

} // namespace loopscope
