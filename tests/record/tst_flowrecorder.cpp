// FlowRecorder's threads: it records on its low-priority home thread while it keeps up, moves
// to the normal-priority catch-up thread once what it takes has waited kCatchUpLagMs, and goes
// home after keeping up for kCaughtUpForMs.
#include "inspect/inspectorevent.h"
#include "record/flowrecorder.h"

#include <QDateTime>
#include <QTest>
#include <QThread>

using namespace loopscope;

namespace {

constexpr int kWaitMs = 60'000; // a deadline: a loaded machine may be slow

// An event of no running flow: recorded as unmatched, which is all a drain needs.
InspectorEvent eventPublishedAt(qint64 at) {
    InspectorEvent event = InspectorEvent::make(InspectorEvent::Kind::Resumed,
                                                QStringLiteral("req_elsewhere"), -1, {});
    event.timestampMs = at;
    return event;
}

} // namespace

class TestFlowRecorder : public QObject {
    Q_OBJECT
private slots:
    void catchesUpAtNormalPriorityAndGoesHome() {
        QThread home, catchUp;
        home.start();
        catchUp.start();
        auto *recorder = new FlowRecorder(nullptr, {});
        recorder->moveToThread(&home);
        recorder->setThreads(&home, &catchUp);

        // Taken promptly: stays home.
        recorder->take(eventPublishedAt(QDateTime::currentMSecsSinceEpoch()));
        QTRY_COMPARE_WITH_TIMEOUT(recorder->eventsReceived(), quint64(1), kWaitMs);
        QCOMPARE(recorder->thread(), &home);
        QCOMPARE(recorder->catchUps(), quint64(0));

        // Waited longer than kCatchUpLagMs (as behind a busy machine): moves to catch up.
        recorder->take(eventPublishedAt(QDateTime::currentMSecsSinceEpoch() -
                                        FlowRecorder::kCatchUpLagMs - 1000));
        QTRY_COMPARE_WITH_TIMEOUT(recorder->thread(), &catchUp, kWaitMs);
        QCOMPARE(recorder->catchUps(), quint64(1));

        // Kept up (prompt events) for kCaughtUpForMs: home again, and events still recorded.
        quint64 sent = recorder->eventsReceived();
        QDeadlineTimer deadline(kWaitMs);
        while (recorder->thread() != &home && !deadline.hasExpired()) {
            recorder->take(eventPublishedAt(QDateTime::currentMSecsSinceEpoch()));
            ++sent;
            QTest::qWait(50);
        }
        QCOMPARE(recorder->thread(), &home);
        QTRY_COMPARE_WITH_TIMEOUT(recorder->eventsReceived(), sent, kWaitMs);
        QCOMPARE(recorder->catchUps(), quint64(1));

        QMetaObject::invokeMethod(
            recorder, [recorder] { delete recorder; }, Qt::BlockingQueuedConnection);
        home.quit();
        catchUp.quit();
        home.wait();
        catchUp.wait();
    }
};

QTEST_GUILESS_MAIN(TestFlowRecorder)
#include "tst_flowrecorder.moc"
