// CooperativeYield: it yields once its interval has passed since the last yield, and stops
// yielding for a while after a yield that took long (the CPU went to work that does not block).
#include "common/cooperativeyield.h"

#include <QTest>
#include <QThread>

using namespace loopscope;
using namespace std::chrono_literals;

namespace {
CooperativeYield::Options options(std::chrono::microseconds every,
                                  std::chrono::microseconds contended = 1h,
                                  std::chrono::milliseconds backOff = 1h,
                                  std::function<void()> yield = {}) {
    return {every, contended, backOff, 500, std::move(yield)};
}
} // namespace

class TestCooperativeYield : public QObject {
    Q_OBJECT
private slots:
    void yieldsOnlyOnceTheIntervalHasPassed_data() {
        QTest::addColumn<int>("everyMs");
        QTest::addColumn<int>("sleepBetweenMs"); // before each call
        QTest::addColumn<int>("calls");
        QTest::addColumn<int>("expectedYields");
        QTest::newRow("no interval: every call") << 0 << 0 << 50 << 50;
        QTest::newRow("an hour: never") << 3600 * 1000 << 0 << 50 << 0;
        QTest::newRow("slept past it: every call") << 5 << 10 << 5 << 5;
    }
    void yieldsOnlyOnceTheIntervalHasPassed() {
        QFETCH(int, everyMs);
        QFETCH(int, sleepBetweenMs);
        QFETCH(int, calls);
        QFETCH(int, expectedYields);
        // The real yield; no back-off (a yield would have to take an hour).
        CooperativeYield yield{options(std::chrono::milliseconds(everyMs))};
        for (int i = 0; i < calls; ++i) {
            if (sleepBetweenMs > 0)
                QThread::msleep(sleepBetweenMs);
            yield.afterUnitOfWork(0);
        }
        QCOMPARE(yield.yields(), quint64(expectedYields));
        QCOMPARE(yield.backOffs(), quint64(0));
    }

    // The interval counts from the last yield, not from the last call: work that keeps calling
    // in short steps yields about once per interval, not never. (Bounds, not exact counts: a
    // loaded machine may stretch any sleep.)
    void countsFromTheLastYieldNotTheLastCall() {
        const auto started = std::chrono::steady_clock::now();
        CooperativeYield yield{options(20ms)};
        while (std::chrono::steady_clock::now() - started < 100ms) {
            QThread::msleep(4); // far shorter than the interval
            yield.afterUnitOfWork(0);
        }
        const auto elapsed = std::chrono::steady_clock::now() - started;
        QVERIFY2(yield.yields() >= 1, "never yielded although calls went on for 100 ms");
        QVERIFY(yield.yields() <= quint64(elapsed / 20ms));
    }

    // A yield that took longer than `contended` (here: one that sleeps 5 ms, as a yield to a CPU
    // hog waits out the hog's slice) stops the yielding for the back-off; after it, the next
    // call yields again.
    void backsOffAfterALongYield() {
        int calls = 0;
        CooperativeYield yield{options(0us, 1ms, 500ms, [&calls] {
            ++calls;
            QThread::msleep(5);
        })};
        yield.afterUnitOfWork(0);
        QCOMPARE(calls, 1);
        QCOMPARE(yield.backOffs(), quint64(1));
        const auto backedOffAt = std::chrono::steady_clock::now();
        // Calls inside the back-off do not yield: only those made at least 500 ms after the
        // first yield ended could, and this loop stops long before that.
        while (std::chrono::steady_clock::now() - backedOffAt < 20ms)
            yield.afterUnitOfWork(0);
        QCOMPARE(calls, 1);
        QThread::msleep(600);
        yield.afterUnitOfWork(0);
        QCOMPARE(calls, 2);
        QCOMPARE(yield.backOffs(), quint64(2));
    }

    // Behind (a backlog above the bound), it never yields; caught up again, it does.
    void neverYieldsWhileBehind() {
        int calls = 0;
        CooperativeYield yield{options(0us, 1h, 1h, [&calls] { ++calls; })};
        for (int i = 0; i < 100; ++i)
            yield.afterUnitOfWork(501);
        QCOMPARE(calls, 0);
        yield.afterUnitOfWork(500);
        QCOMPARE(calls, 1);
    }

    // Short yields (the waiting thread ran briefly and blocked again) never back off.
    void shortYieldsNeverBackOff() {
        int calls = 0;
        CooperativeYield yield{options(0us, 1h, 1h, [&calls] { ++calls; })};
        for (int i = 0; i < 100; ++i)
            yield.afterUnitOfWork(0);
        QCOMPARE(calls, 100);
        QCOMPARE(yield.backOffs(), quint64(0));
    }
};

QTEST_GUILESS_MAIN(TestCooperativeYield)
#include "tst_cooperativeyield.moc"
