#include "inspect/eventbus.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QMutex>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <functional>
#include <vector>

using loopscope::EventBus;
using loopscope::InspectorEvent;

class TestEventBus : public QObject {
    Q_OBJECT
private slots:
    void stampsMonotonicSequenceAndTime() {
        EventBus bus;
        QSignalSpy spy(&bus, &EventBus::eventPublished);
        const auto first = bus.publish(InspectorEvent::Kind::RequestStarted, QStringLiteral("r1"));
        const auto second =
            bus.publish(InspectorEvent::Kind::RequestFinished, QStringLiteral("r1"));
        QCOMPARE(spy.count(), 2);
        QVERIFY(second.sequence > first.sequence);
        QVERIFY(first.timestampMs > 0);
        QCOMPARE(spy.at(0).at(0).value<InspectorEvent>(), first);
        QCOMPARE(spy.at(1).at(0).value<InspectorEvent>().requestId, QStringLiteral("r1"));
    }

    void deliversQueuedAcrossThreads() {
        EventBus bus;
        QThread producer;
        QObject receiver;
        QList<InspectorEvent> received;
        connect(
            &bus, &EventBus::eventPublished, &receiver,
            [&](const InspectorEvent &e) { received.append(e); }, Qt::QueuedConnection);
        QObject worker;
        worker.moveToThread(&producer);
        producer.start();
        QMetaObject::invokeMethod(&worker, [&bus] {
            for (int i = 0; i < 100; ++i)
                bus.publish(InspectorEvent::Kind::Log, {}, -1,
                            {{QStringLiteral("message"), QString::number(i)}});
        });
        QTRY_COMPARE_WITH_TIMEOUT(received.size(), 100, 10000);
        producer.quit();
        producer.wait();
        for (int i = 1; i < received.size(); ++i)
            QVERIFY(received[i].sequence > received[i - 1].sequence);
        QCOMPARE(received.last().data.value(QStringLiteral("message")).toString(),
                 QStringLiteral("99"));
    }

    // Deferred events are built on the bus's thread; an event published directly while they
    // wait comes after them; every one is masked and stamped in that order.
    void deferredEventsKeepOneOrderWithDirectOnes() {
        EventBus bus;
        QMutex mutex;
        QList<InspectorEvent> seen;
        QList<QThread *> threads;
        connect(
            &bus, &EventBus::eventPublished, &bus,
            [&](const InspectorEvent &e) {
                QMutexLocker lock(&mutex);
                seen << e;
                threads << QThread::currentThread();
            },
            Qt::DirectConnection);
        QSemaphore gate;
        std::vector<std::function<InspectorEvent()>> builds;
        for (int i = 0; i < 3; ++i)
            builds.push_back([i, &gate] {
                if (i == 0)
                    gate.acquire(); // held until the direct events below are queued
                return InspectorEvent::make(
                    InspectorEvent::Kind::Log, {}, -1,
                    {{QStringLiteral("message"), QStringLiteral("deferred %1").arg(i)},
                     {QStringLiteral("authorization"),
                      QStringLiteral("Bearer sk-deferred-1234567")}});
            });
        bus.publishDeferred(std::move(builds));
        for (int i = 0; i < 2; ++i) {
            const InspectorEvent queued =
                bus.publish(InspectorEvent::Kind::Log, {}, -1,
                            {{QStringLiteral("message"), QStringLiteral("direct %1").arg(i)}});
            QCOMPARE(queued.sequence, quint64(0)); // not stamped: it waits behind the others
        }
        // The lane is held a while: what it publishes keeps the time it was handed over.
        const qint64 handedOver = QDateTime::currentMSecsSinceEpoch();
        QThread::msleep(50);
        gate.release();
        bus.waitForDeferred();
        QMutexLocker lock(&mutex);
        for (const InspectorEvent &e : std::as_const(seen))
            QVERIFY2(e.timestampMs <= handedOver, "stamped when the lane got to it");
        QStringList order;
        for (const InspectorEvent &e : std::as_const(seen))
            order << e.data.value(QStringLiteral("message")).toString();
        QCOMPARE(order.join(u','),
                 QStringLiteral("deferred 0,deferred 1,deferred 2,direct 0,direct 1"));
        for (qsizetype i = 0; i < seen.size(); ++i) {
            QVERIFY(threads[i] != QThread::currentThread());
            if (i > 0)
                QVERIFY(seen[i].sequence > seen[i - 1].sequence);
        }
        QVERIFY(!QJsonDocument(seen.first().data).toJson().contains("sk-deferred-1234567"));
        // Nothing waits now: a direct publish is stamped and emitted at once, on this thread.
        lock.unlock();
        const InspectorEvent now = bus.publish(InspectorEvent::Kind::Log);
        QVERIFY(now.sequence > 0);
        lock.relock();
        QCOMPARE(threads.last(), QThread::currentThread());
    }

    void destroyingTheBusPublishesWhatIsDeferred() {
        QList<QString> seen; // written on the bus's thread, read after it has stopped
        {
            EventBus bus;
            connect(
                &bus, &EventBus::eventPublished, &bus,
                [&](const InspectorEvent &e) {
                    seen << e.data.value(QStringLiteral("n")).toString();
                },
                Qt::DirectConnection);
            std::vector<std::function<InspectorEvent()>> builds;
            for (int i = 0; i < 50; ++i)
                builds.push_back([i] {
                    return InspectorEvent::make(InspectorEvent::Kind::Log, {}, -1,
                                                {{QStringLiteral("n"), QString::number(i)}});
                });
            bus.publishDeferred(std::move(builds));
        }
        QCOMPARE(seen.size(), 50);
        QCOMPARE(seen.last(), QStringLiteral("49"));
    }

    // A bus whose thread is held does not queue without bound: the publisher waits for room.
    void deferredEventsAreBounded() {
        EventBus bus;
        QSemaphore gate;
        std::atomic<int> offered{0};
        std::atomic<int> worstLag{0};
        std::atomic<int> published{0};
        QThread *producer = QThread::create([&] {
            for (int i = 0; i < 2 * EventBus::kMaxDeferred; ++i) {
                offered.store(i + 1);
                bus.publishDeferred({[&, i] {
                    if (i == 0)
                        gate.acquire();
                    worstLag.store(std::max(worstLag.load(), offered.load() - i));
                    published.fetch_add(1);
                    return InspectorEvent::make(InspectorEvent::Kind::Log);
                }});
            }
        });
        producer->start();
        // The producer gets to the bound (the first build holds the bus's thread)...
        QTRY_VERIFY_WITH_TIMEOUT(offered.load() > EventBus::kMaxDeferred, 20000);
        gate.release(); // ...and no further until that build is done.
        QVERIFY(producer->wait(60000));
        delete producer;
        bus.waitForDeferred();
        QCOMPARE(published.load(), 2 * int(EventBus::kMaxDeferred));
        QVERIFY2(worstLag.load() <= EventBus::kMaxDeferred + 1,
                 qPrintable(QString::number(worstLag.load())));
    }

    void kindNamesAreDistinct() {
        QSet<QString> names;
        for (int k = 0; k <= int(InspectorEvent::Kind::Log); ++k)
            names.insert(InspectorEvent::kindName(InspectorEvent::Kind(k)));
        QCOMPARE(names.size(), int(InspectorEvent::Kind::Log) + 1);
        QVERIFY(!names.contains(QStringLiteral("unknown")));
    }
};

QTEST_GUILESS_MAIN(TestEventBus)
#include "tst_eventbus.moc"
