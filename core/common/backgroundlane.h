#pragma once

#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <memory>

namespace loopscope {

// One unit of work for a BackgroundLane. Whoever needs its result calls finish(): it returns at
// once when the work is done, and otherwise does the work right there, at the caller's
// priority — also when the lane is in the middle of it, as a lane thread at nice 19 on a busy
// machine can take long to end what it began; whichever run ends first keeps its result.
class BackgroundJob {
public:
    virtual ~BackgroundJob() = default;
    void finish();
    bool isDone() const { return m_done.load(std::memory_order_acquire); }

protected:
    // Computes the result from inputs it only reads (two runs may overlap) and hands it to
    // keep(), which stores it unless the other run already did.
    virtual void run() = 0;
    // Runs `store` under the job's lock unless a result was kept already; then the job is done.
    template<typename Store> bool keep(Store &&store) {
        QMutexLocker lock(&m_keepMutex);
        if (m_done.load(std::memory_order_relaxed))
            return false;
        store();
        m_done.store(true, std::memory_order_release);
        return true;
    }

private:
    friend class BackgroundLane;
    bool claim() { return !m_claimed.exchange(true, std::memory_order_acq_rel); }
    std::atomic<bool> m_claimed{false}; // a run began (the lane's or the owner's)
    std::atomic<bool> m_done{false};
    QMutex m_keepMutex;
};

// Work that can wait for a spare CPU: one thread at the lowest CPU priority (nice 19) runs the
// submitted jobs in order, so on an otherwise idle core it costs the latency-bound threads
// nothing; and since the job's owner runs whatever the lane has not started when it needs the
// result (BackgroundJob::finish, at the owner's priority), a busy machine delays the work by at
// most the owner's own deadline instead of starving it (nice alone could not be undone: an
// unprivileged thread cannot raise its priority again).
class BackgroundLane {
public:
    explicit BackgroundLane(const QString &threadName);
    // Stops the thread after the job it is running; jobs it did not start are left to finish().
    ~BackgroundLane();
    BackgroundLane(const BackgroundLane &) = delete;
    BackgroundLane &operator=(const BackgroundLane &) = delete;

    void submit(std::shared_ptr<BackgroundJob> job);
    // Whether the lane's thread got the lowest priority (false off Linux: jobs still run there).
    bool lowered() const { return m_lowered.load(std::memory_order_acquire); }

private:
    void loop();

    QMutex m_mutex;
    QWaitCondition m_wake;
    std::deque<std::shared_ptr<BackgroundJob>> m_jobs;
    bool m_stopping = false;
    std::atomic<bool> m_lowered{false};
    std::unique_ptr<QThread> m_thread;
};

} // namespace loopscope
