// FlowSummaryMailbox: the store's summaries reach a busy receiver once per flow, newest summary,
// in first-change order, started and finished never lost; posting from another thread while
// the receiver is busy holds one entry per flow, not one per change.
#include "record/flowsummarymailbox.h"

#include <thread>

#include <QJsonObject>
#include <QSignalSpy>
#include <QtTest>

using namespace loopscope;
using Change = FlowSummaryMailbox::Change;

namespace {

QJsonObject summary(const QString &id, int version) {
    return {{QStringLiteral("id"), id}, {QStringLiteral("version"), version}};
}

struct Delivered {
    QStringList lines; // "started r1 v3"
    explicit Delivered(FlowSummaryMailbox *box) {
        const auto add = [this](const char *what) {
            return [this, what](const QJsonObject &s) {
                lines << QStringLiteral("%1 %2 v%3")
                             .arg(QLatin1String(what), s.value(QStringLiteral("id")).toString())
                             .arg(s.value(QStringLiteral("version")).toInt());
            };
        };
        QObject::connect(box, &FlowSummaryMailbox::flowStarted, box, add("started"));
        QObject::connect(box, &FlowSummaryMailbox::flowUpdated, box, add("updated"));
        QObject::connect(box, &FlowSummaryMailbox::flowFinished, box, add("finished"));
    }
};

Change changeOf(QChar c) {
    return c == u's' ? Change::Started : c == u'f' ? Change::Finished : Change::Updated;
}

} // namespace

class TestFlowSummaryMailbox : public QObject {
    Q_OBJECT

private slots:
    void coalescesPerFlow_data() {
        QTest::addColumn<QStringList>("posted"); // "<s|u|f> <id>", versions counted per post
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("one update") << QStringList{u"u a"_qs} << QStringList{u"updated a v1"_qs};
        QTest::newRow("updates keep the newest")
            << QStringList{u"u a"_qs, u"u a"_qs, u"u a"_qs} << QStringList{u"updated a v3"_qs};
        QTest::newRow("started then updated: started, newest summary")
            << QStringList{u"s a"_qs, u"u a"_qs} << QStringList{u"started a v2"_qs};
        QTest::newRow("a whole flow while busy: started and finished")
            << QStringList{u"s a"_qs, u"u a"_qs, u"f a"_qs}
            << QStringList{u"started a v3"_qs, u"finished a v3"_qs};
        QTest::newRow("flows in first-change order")
            << QStringList{u"s b"_qs, u"s a"_qs, u"u b"_qs, u"f a"_qs}
            << QStringList{u"started b v3"_qs, u"started a v4"_qs, u"finished a v4"_qs};
        QTest::newRow("a finished flow updated again stays finished")
            << QStringList{u"f a"_qs, u"u a"_qs} << QStringList{u"finished a v2"_qs};
    }
    void coalescesPerFlow() {
        QFETCH(QStringList, posted);
        QFETCH(QStringList, expected);
        FlowSummaryMailbox box;
        Delivered delivered(&box);
        int version = 0;
        for (const QString &p : posted)
            box.post(changeOf(p.at(0)), summary(p.mid(2), ++version));
        QCOMPARE(delivered.lines, QStringList{}); // nothing until the receiver's loop runs
        QTRY_COMPARE(delivered.lines, expected);
        QCOMPARE(box.pendingFlows(), 0);
    }

    void floodFromAnotherThreadHoldsOneEntryPerFlow() {
        FlowSummaryMailbox box;
        Delivered delivered(&box);
        // The receiver is busy (this thread runs no events) while the "store thread" posts
        // 100 flows × 100 changes.
        std::thread store([&box] {
            int version = 0;
            for (int change = 0; change < 100; ++change)
                for (int flow = 0; flow < 100; ++flow)
                    box.post(change == 0 ? Change::Started : Change::Updated,
                             summary(QStringLiteral("f%1").arg(flow), ++version));
        });
        store.join();
        QCOMPARE(box.pendingFlows(), 100);
        QTRY_COMPARE(delivered.lines.size(), 100);
        QCOMPARE(delivered.lines.first(), u"started f0 v9901"_qs);
        QCOMPARE(delivered.lines.last(), u"started f99 v10000"_qs);
        // Later changes are delivered again.
        box.post(Change::Finished, summary(QStringLiteral("f0"), 10001));
        QTRY_COMPARE(delivered.lines.size(), 101);
        QCOMPARE(delivered.lines.last(), u"finished f0 v10001"_qs);
    }

    void goneMailboxTakesNoMore() {
        auto *box = new FlowSummaryMailbox;
        int deliveries = 0;
        connect(box, &FlowSummaryMailbox::flowUpdated, this, [&deliveries] { ++deliveries; });
        box->post(Change::Updated, summary(QStringLiteral("a"), 1));
        delete box; // its posted delivery goes with it
        QObject probe;
        bool ran = false;
        QMetaObject::invokeMethod(
            &probe, [&ran] { ran = true; }, Qt::QueuedConnection);
        QTRY_VERIFY(ran); // the event loop ran past where the delivery would have been
        QCOMPARE(deliveries, 0);
    }
};

QTEST_GUILESS_MAIN(TestFlowSummaryMailbox)
#include "tst_flowsummarymailbox.moc"
