#include "models/eventbatcher.h"
#include "models/sampleevents.h"

#include "inspect/eventbus.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

using namespace loopscope;
namespace s = loopscope::sample;

class TestEventBatcher : public QObject {
    Q_OBJECT

private slots:
    void burstFromAnotherThreadArrivesInOrderAndBatched() {
        EventBus bus;
        EventBatcher batcher;
        batcher.attach(&bus);
        QSignalSpy batches(&batcher, &EventBatcher::batchReady);

        constexpr int kRequests = 500;
        // Publish from a plain thread, as the proxy does: the bus is thread-safe and the
        // batcher's queued connection brings every event to this thread.
        QThread *publisher = QThread::create([&bus] {
            for (int i = 0; i < kRequests; ++i) {
                const QString id = QStringLiteral("r%1").arg(i);
                bus.publish(s::started(id, 0));
                bus.publish(s::upstream(id, 0, 0, 5));
                bus.publish(s::finished(id, 0, 5, 1, 0));
            }
        });
        publisher->start();
        QVERIFY(publisher->wait(30'000));
        delete publisher;

        const auto delivered = [&batches] {
            qsizetype n = 0;
            for (const QList<QVariant> &args : std::as_const(batches))
                n += args.at(0).value<QList<InspectorEvent>>().size();
            return n;
        };
        QTRY_COMPARE_WITH_TIMEOUT(delivered(), qsizetype(kRequests * 3), 30'000);
        QTRY_COMPARE_WITH_TIMEOUT(batcher.pendingCount(), 0, 30'000);
        // Fewer batches than events (the whole point), and nothing lost or reordered.
        QVERIFY(batches.count() < kRequests * 3);
        quint64 lastSequence = 0;
        int events = 0;
        QStringList startedOrder;
        for (const QList<QVariant> &args : std::as_const(batches)) {
            for (const InspectorEvent &e : args.at(0).value<QList<InspectorEvent>>()) {
                QVERIFY(e.sequence > lastSequence);
                lastSequence = e.sequence;
                ++events;
                if (e.kind == InspectorEvent::Kind::RequestStarted)
                    startedOrder << e.requestId;
            }
        }
        QCOMPARE(events, kRequests * 3);
        QCOMPARE(startedOrder.size(), kRequests);
        for (int i = 0; i < kRequests; ++i)
            QCOMPARE(startedOrder.at(i), QStringLiteral("r%1").arg(i));
    }

    void waitsForTheIntervalThenFlushes() {
        EventBatcher batcher;
        batcher.setInterval(60'000); // never fires during this test
        QSignalSpy batches(&batcher, &EventBatcher::batchReady);
        batcher.enqueue(s::started(QStringLiteral("a"), 1));
        batcher.enqueue(s::started(QStringLiteral("b"), 2));
        QCoreApplication::processEvents();
        QCOMPARE(batches.count(), 0);
        QCOMPARE(batcher.pendingCount(), 2);
        batcher.flush();
        QCOMPARE(batches.count(), 1);
        QCOMPARE(batches.at(0).at(0).value<QList<InspectorEvent>>().size(), 2);
        batcher.flush(); // nothing pending: no empty batch
        QCOMPARE(batches.count(), 1);

        batcher.setInterval(10);
        batcher.enqueue(s::started(QStringLiteral("c"), 3));
        QTRY_COMPARE_WITH_TIMEOUT(batches.count(), 2, 10'000);
    }
};

QTEST_GUILESS_MAIN(TestEventBatcher)
#include "tst_eventbatcher.moc"
