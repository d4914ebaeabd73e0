#include "inspect/eventbus.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

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
