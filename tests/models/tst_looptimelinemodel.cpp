#include "models/looptimelinemodel.h"
#include "models/requestsmodel.h"
#include "models/sampleevents.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace loopscope;
namespace s = loopscope::sample;

class TestLoopTimelineModel : public QObject {
    Q_OBJECT

private:
    static QStringList steps(const LoopTimelineModel &m) {
        QStringList out;
        for (int row = 0; row < m.rowCount(); ++row)
            out.append(m.index(row, LoopTimelineModel::StepColumn).data().toString());
        return out;
    }

private slots:
    void growsWhileTheSelectedRequestRuns() {
        RequestsModel requests;
        LoopTimelineModel timeline;
        QAbstractItemModelTester tester(&timeline);
        timeline.setRequestsModel(&requests);
        const qint64 t0 = 1'000'000;
        requests.applyEvents(
            {s::started(QStringLiteral("a"), t0), s::started(QStringLiteral("b"), t0)});
        timeline.setRequestId(QStringLiteral("a"));
        QCOMPARE(timeline.rowCount(), 0);

        QSignalSpy inserted(&timeline, &QAbstractItemModel::rowsInserted);
        QSignalSpy reset(&timeline, &QAbstractItemModel::modelReset);
        requests.applyEvents({s::upstream(QStringLiteral("a"), 0, t0 + 300, 290)});
        QCOMPARE(steps(timeline), QStringList{QStringLiteral("Model call 1")});
        // Another request's events leave the timeline alone.
        requests.applyEvents({s::upstream(QStringLiteral("b"), 0, t0 + 310, 300)});
        QCOMPARE(timeline.rowCount(), 1);

        requests.applyEvents({s::code(QStringLiteral("a"), 0, t0 + 340, QStringLiteral("print(1)"),
                                      QStringLiteral("1\n"), QStringLiteral("sbx"), 25.0),
                              s::codeError(QStringLiteral("a"), 0, t0 + 350, QStringLiteral("1/0"),
                                           QStringLiteral("sbx")),
                              s::upstream(QStringLiteral("a"), 1, t0 + 600, 240)});
        QCOMPARE(steps(timeline),
                 (QStringList{QStringLiteral("Model call 1"), QStringLiteral("Code run 1"),
                              QStringLiteral("Code run 2"), QStringLiteral("Model call 2")}));
        QCOMPARE(reset.count(), 0); // appended, never rebuilt
        QCOMPARE(inserted.count(), 2);

        // Offsets are measured from the request start: end timestamp minus duration.
        QCOMPARE(timeline.index(0, 0).data(LoopTimelineModel::StartOffsetRole).toLongLong(), 10);
        QCOMPARE(timeline.index(1, 0).data(LoopTimelineModel::StartOffsetRole).toLongLong(), 315);
        QCOMPARE(timeline.index(1, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("25 ms"));
        QCOMPARE(timeline.index(2, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("3.0 ms"));
        QCOMPARE(timeline.index(3, LoopTimelineModel::StartColumn).data().toString(),
                 QStringLiteral("+360 ms"));
        QCOMPARE(timeline.index(1, 0).data(LoopTimelineModel::KindRole).toInt(),
                 int(LoopTimelineModel::StepKind::CodeRun));
        QCOMPARE(timeline.index(2, 0).data(LoopTimelineModel::FailedRole).toBool(), true);
        QCOMPARE(timeline.index(1, 0).data(LoopTimelineModel::FailedRole).toBool(), false);
        QCOMPARE(timeline.lastCodeRunRow(), 2);
        QVERIFY(timeline.codeRunAt(1));
        QCOMPARE(timeline.codeRunAt(1)->code, QStringLiteral("print(1)"));
        QVERIFY(!timeline.upstreamCallAt(1));
        QCOMPARE(timeline.upstreamCallAt(3)->iteration, 1);

        // Bars are fractions of the request's span (600 ms so far); the last one ends at 1.
        const double end = timeline.index(3, 0).data(LoopTimelineModel::BarEndRole).toDouble();
        QCOMPARE(end, 1.0);
        const double start = timeline.index(0, 0).data(LoopTimelineModel::BarStartRole).toDouble();
        QVERIFY(qAbs(start - 10.0 / 600.0) < 1e-9);

        // Finishing stretches the span to the full duration.
        requests.applyEvents({s::finished(QStringLiteral("a"), t0 + 700, 1200, 2, 2)});
        QCOMPARE(timeline.index(3, 0).data(LoopTimelineModel::BarEndRole).toDouble(), 0.5);

        // An in-process upstream answers within the millisecond.
        requests.applyEvents({s::upstream(QStringLiteral("a"), 2, t0 + 710, 0)});
        QCOMPARE(timeline.rowCount(), 5);
        QCOMPARE(timeline.index(4, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("<1 ms"));
    }

    void switchingTrimmingAndClearing() {
        RequestsModel requests;
        LoopTimelineModel timeline;
        QAbstractItemModelTester tester(&timeline);
        timeline.setRequestsModel(&requests);
        requests.applyEvents(s::fullRequest(QStringLiteral("a"), 1000));
        requests.applyEvents({s::started(QStringLiteral("b"), 5000),
                              s::upstream(QStringLiteral("b"), 0, 5200, 100)});
        timeline.setRequestId(QStringLiteral("a"));
        QCOMPARE(timeline.rowCount(), 3);
        timeline.setRequestId(QStringLiteral("b"));
        QCOMPARE(timeline.rowCount(), 1);
        timeline.setRequestId(QStringLiteral("unknown"));
        QCOMPARE(timeline.rowCount(), 0);

        timeline.setRequestId(QStringLiteral("a"));
        requests.setRetentionLimit(1); // "a" is trimmed away
        QCOMPARE(timeline.rowCount(), 0);

        timeline.setRequestId(QStringLiteral("b"));
        QCOMPARE(timeline.rowCount(), 1);
        requests.clear();
        QCOMPARE(timeline.rowCount(), 0);
        QVERIFY(!timeline.upstreamCallAt(0));
    }
};

QTEST_GUILESS_MAIN(TestLoopTimelineModel)
#include "tst_looptimelinemodel.moc"
