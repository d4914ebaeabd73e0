#include "common/backgroundlane.h"

#include "common/threadniceness.h"

namespace loopscope {

void BackgroundJob::finish() {
    if (isDone())
        return;
    claim(); // the lane does not start it after this
    run();   // also when the lane is running it: not waited for, the first result is kept
}

BackgroundLane::BackgroundLane(const QString &threadName)
    : m_thread(QThread::create([this] { loop(); })) {
    m_thread->setObjectName(threadName); // the kernel's thread name: what top and perf show
    m_thread->start();
}

BackgroundLane::~BackgroundLane() {
    {
        QMutexLocker lock(&m_mutex);
        m_stopping = true;
        m_jobs.clear();
    }
    m_wake.wakeAll();
    m_thread->wait();
}

void BackgroundLane::submit(std::shared_ptr<BackgroundJob> job) {
    if (!job)
        return;
    {
        QMutexLocker lock(&m_mutex);
        if (m_stopping)
            return; // its owner runs it in finish()
        m_jobs.push_back(std::move(job));
    }
    m_wake.wakeOne();
}

void BackgroundLane::loop() {
    m_lowered.store(setCurrentThreadNiceness(19), std::memory_order_release);
    for (;;) {
        std::shared_ptr<BackgroundJob> job;
        {
            QMutexLocker lock(&m_mutex);
            while (m_jobs.empty() && !m_stopping)
                m_wake.wait(&m_mutex);
            if (m_stopping)
                return;
            job = std::move(m_jobs.front());
            m_jobs.pop_front();
        }
        if (job->claim()) // else its owner took it over
            job->run();
    }
}

} // namespace loopscope
