// BackgroundLane: jobs run on a thread at nice 19; the owner of a job runs it itself when the
// lane has not finished it, without waiting for the lane; a result is kept once.
#include "common/backgroundlane.h"

#include <QSemaphore>
#include <QTest>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace loopscope;

namespace {

constexpr int kWaitMs = 60'000; // a deadline, not a duration: a loaded machine may be slow

int currentNiceness() {
#if defined(__linux__)
    return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
#else
    return 0;
#endif
}

// Counts its runs and keeps which thread (and at what niceness) produced the kept result.
class ProbeJob : public BackgroundJob {
public:
    explicit ProbeJob(std::function<void()> during = {})
        : m_during(std::move(during)) {}
    std::atomic<int> runs{0};
    QSemaphore ended; // one per run that returned
    QThread *keptBy = nullptr;
    int keptNiceness = -100;

protected:
    void run() override {
        ++runs;
        QThread *here = QThread::currentThread();
        const int niceness = currentNiceness();
        if (m_during)
            m_during();
        keep([&] {
            keptBy = here;
            keptNiceness = niceness;
        });
        ended.release();
    }

private:
    std::function<void()> m_during;
};

// A job that holds the lane until released: what comes after it waits.
std::shared_ptr<ProbeJob> blocker(QSemaphore &started, QSemaphore &release) {
    return std::make_shared<ProbeJob>([&started, &release] {
        started.release();
        release.acquire();
    });
}

} // namespace

class TestBackgroundLane : public QObject {
    Q_OBJECT
private slots:
    void runsJobsOnItsOwnLoweredThread() {
        BackgroundLane lane(QStringLiteral("test-lane"));
        auto job = std::make_shared<ProbeJob>();
        lane.submit(job);
        QVERIFY(job->ended.tryAcquire(1, kWaitMs));
        QVERIFY(job->isDone());
        QCOMPARE(job->runs.load(), 1);
        QVERIFY(job->keptBy != QThread::currentThread());
#if defined(__linux__)
        QVERIFY(lane.lowered());
        QCOMPARE(job->keptNiceness, 19);
        QCOMPARE(currentNiceness(), 0); // the caller's own priority is untouched
#endif
        job->finish(); // done: nothing runs again
        QCOMPARE(job->runs.load(), 1);
    }

    void ownerRunsWhatTheLaneHasNotStarted() {
        QSemaphore started, release; // outlive the lane's thread
        BackgroundLane lane(QStringLiteral("test-lane"));
        auto first = blocker(started, release);
        lane.submit(first);
        QVERIFY(started.tryAcquire(1, kWaitMs)); // the lane is busy with `first`
        auto second = std::make_shared<ProbeJob>();
        lane.submit(second);
        second->finish();
        QVERIFY(second->isDone());
        QCOMPARE(second->runs.load(), 1);
        QCOMPARE(second->keptBy, QThread::currentThread());
        QCOMPARE(second->keptNiceness, currentNiceness());
        release.release();
        // The lane passes over the job its owner took: a job after it runs, and `second` did
        // not run again on the way.
        auto third = std::make_shared<ProbeJob>();
        lane.submit(third);
        QVERIFY(third->ended.tryAcquire(1, kWaitMs));
        QCOMPARE(second->runs.load(), 1);
    }

    // A lane at nice 19 on a busy machine can sit in a job for long: its owner does not wait
    // for it, it runs the job too, and the first result is the one kept.
    void ownerDoesNotWaitForTheLanesRun() {
        QSemaphore laneInside, laneGo; // outlive the lane's thread
        BackgroundLane lane(QStringLiteral("test-lane"));
        QThread *owner = QThread::currentThread();
        auto job = std::make_shared<ProbeJob>([&] {
            if (QThread::currentThread() == owner)
                return;
            laneInside.release();
            laneGo.acquire(); // the lane's run stalls here until the owner is done
        });
        lane.submit(job);
        QVERIFY(laneInside.tryAcquire(1, kWaitMs));
        job->finish(); // returns although the lane's run has not ended
        QVERIFY(job->isDone());
        QCOMPARE(job->keptBy, owner);
        laneGo.release();
        QVERIFY(job->ended.tryAcquire(2, kWaitMs)); // both runs returned
        QCOMPARE(job->runs.load(), 2);
        QCOMPARE(job->keptBy, owner); // the lane's later result was not kept
    }

    // Jobs the lane had not started when it was destroyed are run by their owners, once each.
    void jobsLeftAtDestructionRunOnceThroughTheirOwners() {
        std::vector<std::shared_ptr<ProbeJob>> jobs;
        {
            QSemaphore started, release; // outlive the lane's thread
            BackgroundLane lane(QStringLiteral("test-lane"));
            auto first = blocker(started, release);
            lane.submit(first);
            QVERIFY(started.tryAcquire(1, kWaitMs));
            for (int i = 0; i < 100; ++i) {
                jobs.push_back(std::make_shared<ProbeJob>());
                lane.submit(jobs.back());
            }
            release.release(); // the destructor waits for the running job only
        }
        for (const auto &job : jobs) {
            job->finish();
            QVERIFY(job->isDone());
            QCOMPARE(job->runs.load(), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestBackgroundLane)
#include "tst_backgroundlane.moc"
