// BoundedEventQueue: a flood of events to a slow consumer keeps the queue within its limits,
// every refusal is counted, and a flow's defining events (start, end, code runs) are never
// dropped while the queue is under its absolute bound.
#include "inspect/boundedeventqueue.h"

#include <QSemaphore>
#include <QSet>
#include <QTest>
#include <QThread>

#include <atomic>

using namespace loopscope;
using Kind = InspectorEvent::Kind;
using Weight = BoundedEventQueue::Weight;

namespace {

InspectorEvent makeEvent(Kind kind, const QString &flow, qsizetype rawBytes = 0) {
    InspectorEvent e = InspectorEvent::make(kind, flow);
    if (rawBytes > 0)
        e.raw = QByteArray(rawBytes, 'x');
    return e;
}

// The recorder's and the window's rule in miniature: live output is shed, chunks are content,
// a flow's start and end define it, upstream requests are not read at all.
Weight weigh(const InspectorEvent &e) {
    switch (e.kind) {
    case Kind::CodeRunOutput:
        return Weight::Shed;
    case Kind::ClientResponseChunk:
        return Weight::Content;
    case Kind::UpstreamRequest:
        return Weight::Ignore;
    default:
        return BoundedEventQueue::definesFlow(e) ? Weight::Defining : Weight::Shed;
    }
}

// One flow as published: its start, `outputs` live chunks, `chunks` body chunks of
// `chunkBytes`, one ignored event, a code run's end and the flow's end.
QList<InspectorEvent> flowEvents(int i, int outputs, int chunks, qsizetype chunkBytes) {
    const QString id = QStringLiteral("req_%1").arg(i);
    QList<InspectorEvent> out{makeEvent(Kind::ClientRequest, id),
                              makeEvent(Kind::UpstreamRequest, id)};
    for (int k = 0; k < outputs; ++k)
        out << makeEvent(Kind::CodeRunOutput, id);
    for (int k = 0; k < chunks; ++k)
        out << makeEvent(Kind::ClientResponseChunk, id, chunkBytes);
    out << makeEvent(Kind::CodeExecuted, id) << makeEvent(Kind::ExchangeFinished, id);
    return out;
}

} // namespace

class TestBoundedEventQueue : public QObject {
    Q_OBJECT

private slots:
    void floodWithoutAConsumer_data() {
        QTest::addColumn<int>("flows");
        QTest::addColumn<int>("outputs");
        QTest::addColumn<int>("chunks");
        QTest::addColumn<qsizetype>("chunkBytes");
        QTest::addColumn<qint64>("rawBytes");
        QTest::newRow("under every limit") << 5 << 3 << 3 << qsizetype(10) << qint64(1 << 20);
        QTest::newRow("live output flood") << 200 << 50 << 0 << qsizetype(0) << qint64(1 << 20);
        QTest::newRow("body chunk flood") << 200 << 0 << 50 << qsizetype(100) << qint64(1 << 30);
        QTest::newRow("body bytes limit") << 50 << 0 << 10 << qsizetype(4096) << qint64(64 * 1024);
        QTest::newRow("both") << 300 << 20 << 20 << qsizetype(64) << qint64(1 << 20);
    }

    // Nobody drains while the flood lasts (the slowest consumer there is).
    void floodWithoutAConsumer() {
        QFETCH(int, flows);
        QFETCH(int, outputs);
        QFETCH(int, chunks);
        QFETCH(qsizetype, chunkBytes);
        QFETCH(qint64, rawBytes);
        const BoundedEventQueue::Limits limits{500, 1000, rawBytes, 100'000};
        BoundedEventQueue queue(limits, weigh);
        int wakeUps = 0;
        queue.setWakeUp([&wakeUps] { ++wakeUps; });

        qsizetype published = 0, ignored = 0, defining = 0;
        for (int i = 0; i < flows; ++i) {
            for (const InspectorEvent &e : flowEvents(i, outputs, chunks, chunkBytes)) {
                ++published;
                ignored += weigh(e) == Weight::Ignore;
                defining += weigh(e) == Weight::Defining;
                queue.push(e);
                QVERIFY(queue.pending() <= limits.contentAt + defining);
            }
        }
        const QList<InspectorEvent> taken = queue.takeAll();
        QCOMPARE(wakeUps, 1); // one call for the whole batch, not one per event
        QCOMPARE(qsizetype(queue.dropped()), published - ignored - taken.size());
        QCOMPARE(queue.droppedDefining(), 0u);

        // Every start, code run end and flow end arrived, in order; the limits held.
        qsizetype shed = 0, content = 0, bytes = 0;
        QStringList started, ended;
        for (const InspectorEvent &e : taken) {
            QVERIFY(e.kind != Kind::UpstreamRequest);
            shed += e.kind == Kind::CodeRunOutput;
            content += e.kind == Kind::ClientResponseChunk;
            bytes += e.raw.size();
            if (e.kind == Kind::ClientRequest)
                started << e.requestId;
            if (e.kind == Kind::ExchangeFinished)
                ended << e.requestId;
        }
        QCOMPARE(started.size(), flows);
        QCOMPARE(ended, started);
        QVERIFY(shed <= limits.shedAt);
        QVERIFY(shed + content <= limits.contentAt);
        QVERIFY(bytes <= rawBytes);
        const qsizetype offered = qsizetype(flows) * (outputs + chunks);
        QCOMPARE(qsizetype(queue.dropped()), offered - shed - content);
        // Nothing was dropped while there was room.
        if (offered + defining <= limits.shedAt && qint64(flows) * chunks * chunkBytes <= rawBytes)
            QCOMPARE(queue.dropped(), 0u);
        QCOMPARE(queue.pending(), qsizetype(0));
    }

    // Past the absolute bound even defining events are refused, and counted as such.
    void absoluteBoundHolds() {
        BoundedEventQueue queue({2, 4, 0, 10}, weigh);
        auto counter = std::make_shared<std::atomic<quint64>>(0);
        queue.setDropCounter(counter);
        for (int i = 0; i < 25; ++i)
            queue.push(makeEvent(Kind::ClientRequest, QStringLiteral("req_%1").arg(i)));
        QCOMPARE(queue.pending(), qsizetype(10));
        QCOMPARE(queue.dropped(), 15u);
        QCOMPARE(queue.droppedDefining(), 15u);
        QCOMPARE(counter->load(), 15u); // the shared counter is the one counted in
        QCOMPARE(queue.takeAll().constLast().requestId, QStringLiteral("req_9"));
    }

    // A consumer that goes closes its queue: no wake-up after that, later pushes are refused
    // and not counted as drops (nobody lost anything the consumer would have shown).
    void closedQueueRefusesQuietly() {
        BoundedEventQueue queue({10, 10, 0, 10}, weigh);
        int wakeUps = 0;
        queue.setWakeUp([&wakeUps] { ++wakeUps; });
        QVERIFY(queue.push(makeEvent(Kind::ClientRequest, QStringLiteral("a"))));
        queue.close();
        QCOMPARE(queue.pending(), qsizetype(0));
        QVERIFY(!queue.push(makeEvent(Kind::ClientRequest, QStringLiteral("b"))));
        QCOMPARE(wakeUps, 1);
        QCOMPARE(queue.dropped(), 0u);
        QVERIFY(queue.takeAll().isEmpty());
    }

    void rawIsDroppedWhenNotKept() {
        BoundedEventQueue queue({10, 10, 0, 10}, weigh, /*keepRaw=*/false);
        queue.push(makeEvent(Kind::ClientRequest, QStringLiteral("a"), 1000));
        // A content event with bytes is not held back by a zero byte budget it does not use.
        queue.push(makeEvent(Kind::ClientResponseChunk, QStringLiteral("a"), 1000));
        const QList<InspectorEvent> taken = queue.takeAll();
        QCOMPARE(taken.size(), 2);
        QVERIFY(taken.at(0).raw.isEmpty());
        QVERIFY(taken.at(1).raw.isEmpty());
    }

    // A real slow consumer on another thread: publishers flood from two threads while the
    // consumer takes a batch only when told to; whatever the interleaving, what arrived plus
    // what was dropped is what was offered, every flow's start and end arrived, and the queue
    // never held more than its limit.
    void slowConsumerOnAnotherThread() {
        constexpr int kFlows = 400;
        constexpr int kOutputs = 40;
        const BoundedEventQueue::Limits limits{300, 300, 0, 50'000};
        BoundedEventQueue queue(limits, weigh);
        std::atomic<qsizetype> peak{0};
        QSemaphore batchesAllowed;
        std::atomic<bool> publishing{true};
        QList<InspectorEvent> delivered;
        QThread *consumer = QThread::create([&] {
            for (;;) {
                // Slow: one batch per permit the test hands out.
                const bool last = !publishing.load();
                batchesAllowed.tryAcquire(1, 5);
                const qsizetype n = queue.pending();
                if (n > peak.load())
                    peak.store(n);
                delivered += queue.takeAll();
                if (last)
                    return;
            }
        });
        consumer->start();
        const auto publish = [&queue](int from) {
            for (int i = from; i < kFlows; i += 2)
                for (const InspectorEvent &e : flowEvents(i, kOutputs, 0, 0))
                    queue.push(e);
        };
        QThread *a = QThread::create(publish, 0);
        QThread *b = QThread::create(publish, 1);
        a->start();
        b->start();
        while (!a->isFinished() || !b->isFinished()) {
            batchesAllowed.release();
            QThread::msleep(1);
        }
        QVERIFY(a->wait(60'000) && b->wait(60'000));
        publishing.store(false);
        batchesAllowed.release(2);
        QVERIFY(consumer->wait(60'000));
        delete a;
        delete b;
        delete consumer;

        const qsizetype offered = qsizetype(kFlows) * (kOutputs + 3); // UpstreamRequest ignored
        QCOMPARE(delivered.size() + qsizetype(queue.dropped()), offered);
        QCOMPARE(queue.droppedDefining(), 0u);
        QSet<QString> started, ended;
        for (const InspectorEvent &e : std::as_const(delivered)) {
            if (e.kind == Kind::ClientRequest)
                started.insert(e.requestId);
            else if (e.kind == Kind::ExchangeFinished) {
                QVERIFY2(started.contains(e.requestId), qPrintable(e.requestId)); // in order
                ended.insert(e.requestId);
            }
        }
        QCOMPARE(started.size(), kFlows);
        QCOMPARE(ended.size(), kFlows);
        // Shed events enter only below shedAt; defining ones may pass it (3 per flow).
        QVERIFY2(peak.load() <= limits.shedAt + 3 * kFlows, qPrintable(QString::number(peak)));
    }
};

QTEST_GUILESS_MAIN(TestBoundedEventQueue)
#include "tst_boundedeventqueue.moc"
