// LoopTimelineModel from flows as the store serves them (a real in-memory FlowStore fed the
// events core publishes) plus the live events of the shown flow: steps appear when they start,
// tick while running, finish in place; another flow resets. Under QAbstractItemModelTester.
#include "inspect/eventbus.h"
#include "models/looptimelinemodel.h"
#include "record/flowquery.h"
#include "record/flowstore.h"
#include "sampleevents.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace loopscope;
using namespace loopscope::sample;

namespace {

InspectorEvent callStarted(const QString &id, int iteration) {
    return InspectorEvent::make(
        Kind::UpstreamCallStarted, id, iteration,
        {{QStringLiteral("request"), QJsonObject{{QStringLiteral("model"), QStringLiteral("m")}}},
         {QStringLiteral("url"), QStringLiteral("http://127.0.0.1:1/v1/responses")}});
}

InspectorEvent codeStarted(const QString &id, int iteration, const QString &callId) {
    return InspectorEvent::make(Kind::CodeRunStarted, id, iteration,
                                {{QStringLiteral("callId"), callId},
                                 {QStringLiteral("code"), QStringLiteral("print(1)")},
                                 {QStringLiteral("containerId"), QStringLiteral("sbx_1")}});
}

InspectorEvent exchangeFinished(const QString &id, int status = 200) {
    return InspectorEvent::make(
        Kind::ExchangeFinished, id, -1,
        {{QStringLiteral("status"), status}, {QStringLiteral("durationMs"), 700.0}});
}

// A real store: events go through the bus (which stamps them) and the flow comes back as the
// window's loader will get it.
struct Store {
    EventBus bus;
    std::unique_ptr<FlowStore> store;
    Store() {
        FlowStoreOptions options;
        options.inMemory = true;
        store = std::make_unique<FlowStore>(options);
        store->open();
        store->attach(&bus);
    }
    QList<InspectorEvent> publish(const QList<InspectorEvent> &events) {
        QList<InspectorEvent> stamped;
        for (const InspectorEvent &e : events)
            stamped << bus.publish(e);
        return stamped;
    }
    QJsonObject flow(const QString &id) {
        store->flush();
        return store->query()->flow(id).value_or(QJsonObject());
    }
};

QStringList labels(const LoopTimelineModel &m) {
    QStringList out;
    for (int row = 0; row < m.rowCount(); ++row)
        out << m.index(row, LoopTimelineModel::StepColumn).data().toString();
    return out;
}

} // namespace

class TestLoopTimelineModel : public QObject {
    Q_OBJECT

private slots:
    void stepsOfAStoredFlow_data() {
        QTest::addColumn<QList<InspectorEvent>>("events");
        QTest::addColumn<QStringList>("steps");
        QTest::addColumn<QList<bool>>("failed");
        QTest::addColumn<QStringList>("durations");
        const QString id = QStringLiteral("req_a");
        QList<InspectorEvent> round = fullRequest(id, 0);
        round << exchangeFinished(id);
        QTest::newRow("one code round")
            << round
            << QStringList{QStringLiteral("Model call 1"), QStringLiteral("Code run 1"),
                           QStringLiteral("Model call 2")}
            << QList<bool>{false, false, false}
            << QStringList{QStringLiteral("290 ms"), QStringLiteral("25 ms"),
                           QStringLiteral("260 ms")};
        QTest::newRow("code raised")
            << QList<InspectorEvent>{started(id, 0),
                                     upstream(id, 0, 0, 1200),
                                     codeError(id, 0, 0, QStringLiteral("1/0"),
                                               QStringLiteral("sbx_1")),
                                     upstream(id, 1, 0, 80),
                                     finished(id, 0, 10, 2, 1),
                                     exchangeFinished(id)}
            << QStringList{QStringLiteral("Model call 1"), QStringLiteral("Code run 1"),
                           QStringLiteral("Model call 2")}
            << QList<bool>{false, true, false}
            << QStringList{QStringLiteral("1.2 s"), QStringLiteral("3.0 ms"),
                           QStringLiteral("80 ms")};
        QTest::newRow("model answered 500")
            << QList<InspectorEvent>{started(id, 0), upstream(id, 0, 0, 0, 0, 0, 500),
                                     failed(id, 0, 500, QStringLiteral("upstream")),
                                     exchangeFinished(id, 500)}
            << QStringList{QStringLiteral("Model call 1")} << QList<bool>{true}
            << QStringList{QStringLiteral("0 ms")};
    }
    void stepsOfAStoredFlow() {
        QFETCH(QList<InspectorEvent>, events);
        QFETCH(QStringList, steps);
        QFETCH(QList<bool>, failed);
        QFETCH(QStringList, durations);
        Store store;
        store.publish(events);
        const QJsonObject flow = store.flow(QStringLiteral("req_a"));
        QVERIFY(!flow.isEmpty());
        LoopTimelineModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFlow(flow);
        QCOMPARE(labels(model), steps);
        QVERIFY(!model.hasRunningSteps());
        for (int row = 0; row < model.rowCount(); ++row) {
            QCOMPARE(model.index(row, 0).data(LoopTimelineModel::FailedRole).toBool(),
                     failed.at(row));
            QCOMPARE(model.index(row, LoopTimelineModel::DurationColumn).data().toString(),
                     durations.at(row));
            QCOMPARE(model.index(row, 0).data(LoopTimelineModel::RunningRole).toBool(), false);
            const double start =
                model.index(row, 0).data(LoopTimelineModel::BarStartRole).toDouble();
            const double end = model.index(row, 0).data(LoopTimelineModel::BarEndRole).toDouble();
            QVERIFY(start >= 0 && start <= end && end <= 1.0);
        }
        if (steps.size() > 1) {
            QCOMPARE(model.codeRunHopAt(1).value(QStringLiteral("call_id")).toString(),
                     model.index(1, 0).data(LoopTimelineModel::CallIdRole).toString());
            QCOMPARE(model.lastCodeRunRow(), 1);
            QVERIFY(model.responseHopAt(0).value(QStringLiteral("status")).toInt() == 200);
        }
    }

    // The window's live path: a running snapshot, then the flow's events as batches.
    void stepsAppearWhenTheyStartAndFinishInPlace() {
        const QString id = QStringLiteral("req_live");
        Store store;
        const QList<InspectorEvent> head = store.publish({started(id, 0), callStarted(id, 0)});
        LoopTimelineModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFlow(store.flow(id));
        // The snapshot already holds the model call that is out.
        QCOMPARE(labels(model), QStringList{QStringLiteral("Model call 1…")});
        QVERIFY(model.hasRunningSteps());
        QCOMPARE(model.newestRunningRow(), 0);
        const qint64 sent = head.last().timestampMs;
        model.tick(sent + 1500);
        QCOMPARE(model.index(0, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("1.5 s running"));
        QCOMPARE(model.index(0, 0).data(LoopTimelineModel::BarEndRole).toDouble(), 1.0);

        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        const QList<InspectorEvent> answered =
            store.publish({upstream(id, 0, 0, 290), codeStarted(id, 0, QStringLiteral("call_0"))});
        model.applyLiveEvents(answered);
        QCOMPARE(labels(model),
                 (QStringList{QStringLiteral("Model call 1"), QStringLiteral("Code run 1…")}));
        QCOMPARE(model.index(0, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("290 ms"));
        QCOMPARE(model.newestRunningRow(), 1);
        model.tick(answered.last().timestampMs + 2000);
        QCOMPARE(model.index(1, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("2 s running"));

        // Another flow's events change nothing.
        model.applyLiveEvents({callStarted(QStringLiteral("req_other"), 0)});
        QCOMPARE(model.rowCount(), 2);

        // A snapshot older than the events keeps what the events told.
        model.setFlow(store.flow(id));
        QCOMPARE(labels(model),
                 (QStringList{QStringLiteral("Model call 1"), QStringLiteral("Code run 1…")}));
        QCOMPARE(model.newestRunningRow(), 1);

        const QList<InspectorEvent> rest =
            store.publish({code(id, 0, 0, QStringLiteral("print(1)"), QStringLiteral("1\n"),
                                QStringLiteral("sbx_1"), 2400.0),
                           callStarted(id, 1)});
        model.applyLiveEvents(rest);
        QCOMPARE(labels(model),
                 (QStringList{QStringLiteral("Model call 1"), QStringLiteral("Code run 1"),
                              QStringLiteral("Model call 2…")}));
        QCOMPARE(model.index(1, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("2.4 s"));
        const QList<InspectorEvent> end = store.publish(
            {upstream(id, 1, 0, 61'000), finished(id, 0, 0, 2, 1), exchangeFinished(id)});
        model.applyLiveEvents(end);
        QVERIFY(!model.hasRunningSteps());
        QCOMPARE(model.index(2, LoopTimelineModel::DurationColumn).data().toString(),
                 QStringLiteral("1 min 01 s"));
        // The finished flow's snapshot agrees row for row: updated in place, never reset.
        model.setFlow(store.flow(id));
        QCOMPARE(labels(model),
                 (QStringList{QStringLiteral("Model call 1"), QStringLiteral("Code run 1"),
                              QStringLiteral("Model call 2")}));
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserted.count(), 2);
        QVERIFY(!model.hasRunningSteps());
    }

    void anotherFlowResetsAndEmptyClears() {
        Store store;
        QList<InspectorEvent> a = fullRequest(QStringLiteral("req_a"), 0);
        a << exchangeFinished(QStringLiteral("req_a"));
        store.publish(a);
        store.publish({started(QStringLiteral("req_b"), 0),
                       upstream(QStringLiteral("req_b"), 0, 0, 5),
                       exchangeFinished(QStringLiteral("req_b"))});
        LoopTimelineModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFlow(store.flow(QStringLiteral("req_a")));
        QCOMPARE(model.rowCount(), 3);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setFlow(store.flow(QStringLiteral("req_b")));
        QCOMPARE(model.rowCount(), 1);
        QVERIFY(resets.count() >= 1);
        QCOMPARE(model.flowId(), QStringLiteral("req_b"));
        model.setFlow({});
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.flowId().isEmpty());
        model.applyLiveEvents({callStarted(QStringLiteral("req_b"), 1)}); // nothing shown
        QCOMPARE(model.rowCount(), 0);
    }

    // A step the flow ended without (the client went away mid-call) is not "running" forever.
    void unansweredCallOfAnEndedFlowIsFailedNotRunning() {
        const QString id = QStringLiteral("req_gone");
        Store store;
        store.publish({started(id, 0), callStarted(id, 0), exchangeFinished(id, 499),
                       failed(id, 0, 499, QStringLiteral("client disconnected"))});
        LoopTimelineModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QJsonObject flow;
        QVERIFY(QTest::qWaitFor(
            [&] {
                flow = store.flow(id);
                return flow.value(QStringLiteral("state")).toString() == QLatin1String("failed");
            },
            20'000));
        model.setFlow(flow);
        QCOMPARE(labels(model), QStringList{QStringLiteral("Model call 1")});
        QVERIFY(!model.hasRunningSteps());
        QVERIFY(model.index(0, 0).data(LoopTimelineModel::FailedRole).toBool());
    }

    void oneDurationFormat_data() {
        QTest::addColumn<double>("ms");
        QTest::addColumn<QString>("text");
        // The panel writes durations the app's one way (textformat, tested in tst_textformat).
        QTest::newRow("zero") << 0.0 << QStringLiteral("0 ms");
        QTest::newRow("sub-ms") << 0.4 << QStringLiteral("0.4 ms");
        QTest::newRow("ms") << 12.4 << QStringLiteral("12 ms");
        QTest::newRow("just under a second") << 999.0 << QStringLiteral("999 ms");
        QTest::newRow("a second") << 1000.0 << QStringLiteral("1 s");
        QTest::newRow("seconds") << 1530.0 << QStringLiteral("1.53 s");
        QTest::newRow("a minute and more") << 61'000.0 << QStringLiteral("1 min 01 s");
        QTest::newRow("minutes") << 125'000.0 << QStringLiteral("2 min 05 s");
    }
    void oneDurationFormat() {
        QFETCH(double, ms);
        QFETCH(QString, text);
        QCOMPARE(LoopTimelineModel::formatDuration(ms), text);
    }
};

QTEST_GUILESS_MAIN(TestLoopTimelineModel)
#include "tst_looptimelinemodel.moc"
