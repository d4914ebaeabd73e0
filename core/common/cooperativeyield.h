#pragma once

#include <QtGlobal>

#include <chrono>
#include <functional>

namespace loopscope {

// Background batch work (the history's recorder and writer) calls this between small units of
// work; once `every` has passed since the last yield it gives the CPU to any thread already
// waiting for it. Why: on a 2-core machine the kernel lets a running thread finish its slice
// (~1.5 ms) before a woken proxy thread gets that CPU, whatever their nice values; yielding
// bounds that wait to `every`. A yield that takes longer than `contended` handed the CPU to
// work that does not block soon (a compiler, a CPU hog, not a proxy thread answering a request):
// yielding then only starves the batch work (SCHED_IDLE did, see docs/benchmarks.md), so it
// stops for `backOff` and the thread keeps its fair share meanwhile. Nor does it yield while its
// backlog is above `maxBacklog`: then the proxy threads are the ones keeping it busy, and a
// writer that gives way to every request falls further behind (bench_record --sustained).
class CooperativeYield {
public:
    struct Options {
        std::chrono::microseconds every{100};
        std::chrono::microseconds contended{1000};
        std::chrono::milliseconds backOff{100};
        qsizetype maxBacklog = 500;  // units of work waiting (the batch being worked through)
        std::function<void()> yield; // default: QThread::yieldCurrentThread (tests replace it)
    };

    explicit CooperativeYield(Options options);

    // Yields if `every` has passed since the last yield (or since construction), no back-off is
    // running and `backlog` is at most `maxBacklog`.
    void afterUnitOfWork(qsizetype backlog);

    quint64 yields() const { return m_yields; }
    quint64 backOffs() const { return m_backOffs; }

private:
    Options m_options;
    std::chrono::steady_clock::time_point m_since;
    std::chrono::steady_clock::time_point m_backOffUntil;
    quint64 m_yields = 0;
    quint64 m_backOffs = 0;
};

} // namespace loopscope
