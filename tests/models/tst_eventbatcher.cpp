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

    void floodWhileTheWindowIsBusy_data() {
        QTest::addColumn<int>("flows");
        QTest::addColumn<int>("outputs"); // live output chunks per flow
        QTest::newRow("fits") << 200 << 10;
        QTest::newRow("live output flood") << 2000 << 20;
        QTest::newRow("more flows than the shed limit") << 12'000 << 1;
    }

    // The GUI thread does not run while a publisher floods it (it waits for the publisher):
    // the batcher holds at most its bound, sheds live output before any flow's start or end,
    // takes no body chunk at all, and the bus's "window" counter is its drop count.
    void floodWhileTheWindowIsBusy() {
        QFETCH(int, flows);
        QFETCH(int, outputs);
        EventBus bus;
        EventBatcher batcher;
        batcher.attach(&bus);
        using Kind = InspectorEvent::Kind;
        QThread *publisher = QThread::create([&bus, flows, outputs] {
            for (int i = 0; i < flows; ++i) {
                const QString id = QStringLiteral("r%1").arg(i);
                bus.publish(Kind::ClientRequest, id);
                for (int k = 0; k < outputs; ++k)
                    bus.publish(Kind::CodeRunOutput, id, 0,
                                {{QStringLiteral("callId"), QStringLiteral("c")},
                                 {QStringLiteral("stream"), QStringLiteral("stdout")},
                                 {QStringLiteral("text"), QStringLiteral("line\n")}});
                InspectorEvent chunk = InspectorEvent::make(Kind::ClientResponseChunk, id);
                chunk.raw = QByteArray(512, 'x');
                bus.publish(chunk);
                bus.publish(Kind::ExchangeFinished, id);
            }
        });
        publisher->start();
        QVERIFY(publisher->wait(60'000)); // no event processed on this thread meanwhile
        delete publisher;

        const qsizetype offeredOutputs = qsizetype(flows) * outputs;
        const qsizetype defining = qsizetype(flows) * 2;
        QVERIFY(batcher.pendingCount() <= EventBatcher::kShedAt + defining);
        QVERIFY(batcher.pendingCount() <= EventBatcher::kMaxPending);
        QCOMPARE(bus.droppedEvents().value(QStringLiteral("window")), batcher.dropped());

        QSignalSpy batches(&batcher, &EventBatcher::batchReady);
        batcher.flush();
        QCOMPARE(batches.count(), 1);
        QStringList started, ended;
        qsizetype shownOutputs = 0;
        for (const InspectorEvent &e : batches.at(0).at(0).value<QList<InspectorEvent>>()) {
            QVERIFY(e.kind != Kind::ClientResponseChunk);
            QVERIFY(e.raw.isEmpty());
            shownOutputs += e.kind == Kind::CodeRunOutput;
            if (e.kind == Kind::ClientRequest)
                started << e.requestId;
            if (e.kind == Kind::ExchangeFinished)
                ended << e.requestId;
        }
        QCOMPARE(started.size(), flows);
        QCOMPARE(ended, started);
        QCOMPARE(qsizetype(batcher.dropped()), offeredOutputs - shownOutputs);
        if (offeredOutputs + defining <= EventBatcher::kShedAt)
            QCOMPARE(batcher.dropped(), 0u);
        else
            QVERIFY(batcher.dropped() > 0);
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
