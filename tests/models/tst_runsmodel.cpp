// RunsModel over a REAL in-memory FlowStore: runs with their flows in order and totals.
#undef QT_NO_CAST_FROM_ASCII // agentflows.h writes its JSON as plain literals
#include "storeflows.h"

#include "models/agentflows.h"

#include "models/flowlistmodel.h"
#include "models/flowqueryclient.h"
#include "models/runsmodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using namespace loopscope;
namespace sf = loopscope::storeflows;

class TestRunsModel : public QObject {
    Q_OBJECT

private slots:
    // Agent runs are named by what the user asked, the client and the model, not by run_… ids.
    void runRowsShowTheirTitle() {
        agents::AgentRecorder recorder;
        recorder.claudeRun();
        recorder.codexRun();
        FlowQueryClient client;
        client.setFlowStore(recorder.store());
        RunsModel model(&client);
        QAbstractItemModelTester tester(&model);
        model.setFlowStore(recorder.store());
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 2, 10'000);
        QStringList names;
        QTRY_VERIFY_WITH_TIMEOUT(
            !model.titleOf(model.index(0, 0).data(RunsModel::RunIdRole).toString()).isEmpty(),
            10'000);
        QTRY_VERIFY_WITH_TIMEOUT(
            !model.titleOf(model.index(1, 0).data(RunsModel::RunIdRole).toString()).isEmpty(),
            10'000);
        for (int row = 0; row < 2; ++row)
            names << model.index(row, RunsModel::NameColumn).data().toString();
        QVERIFY2(names.at(0).contains(" · list the files — codex_exec · gpt-5 · 2 flows"),
                 qPrintable(names.at(0)));
        QVERIFY2(
            names.at(1).contains(" · fix the bug — claude-cli/2.1.0 · claude-sonnet-4-5 · 4 flows"),
            qPrintable(names.at(1)));
        // The id stays at hand in the tooltip.
        QVERIFY(model.index(0, RunsModel::NameColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .startsWith("run_"));
    }

    // Hidden (not live): new runs wait; going live loads them once.
    void aHiddenViewLoadsWhenShown() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        FlowQueryClient client;
        client.setFlowStore(store.get());
        RunsModel model(&client);
        QSignalSpy loaded(&model, &RunsModel::loaded);
        model.setFlowStore(store.get());
        QVERIFY(loaded.wait(10'000));
        QCOMPARE(model.rowCount(), 0);
        model.setLive(false);
        loaded.clear();
        // The store emits on its own thread; the model and this marker hear it queued here in
        // the order they connected, so once the marker has the flow, the model has seen it.
        bool heard = false;
        QObject marker;
        connect(store.get(), &FlowStore::flowFinished, &marker,
                [&heard](const QJsonObject &summary) {
                    heard |= summary.value(QStringLiteral("id")) == QStringLiteral("req_1");
                });
        sf::sessionFlow(bus, QStringLiteral("req_1"), QStringLiteral("sess-a"));
        store->flush();
        QTRY_VERIFY_WITH_TIMEOUT(heard, 10'000);
        // Hidden: the change only marked the runs stale, no reload is due.
        QVERIFY(!model.isReloadPending());
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(model.rowCount(), 0);
        model.setLive(true);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 10'000);
    }

    void runsListTheirFlowsInOrderWithTotals() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        sf::sessionFlow(bus, QStringLiteral("req_1"), QStringLiteral("sess-a"));
        sf::sessionFlow(bus, QStringLiteral("req_2"), QStringLiteral("sess-a"), true);
        sf::sessionFlow(bus, QStringLiteral("req_3"), QStringLiteral("sess-a"));
        sf::sessionFlow(bus, QStringLiteral("req_b"), QStringLiteral("sess-b"));
        store->flush();

        FlowQueryClient client;
        client.setFlowStore(store.get());
        RunsModel model(&client);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy loaded(&model, &RunsModel::loaded);
        model.setFlowStore(store.get());
        QVERIFY(loaded.wait(10'000));
        QCOMPARE(model.rowCount(), 2);

        const QModelIndex runA = model.indexOfFlow(QStringLiteral("req_1")).parent();
        QVERIFY(runA.isValid());
        QCOMPARE(model.rowCount(runA), 3);
        QCOMPARE(model.index(0, 0, runA).data(RunsModel::FlowIdRole).toString(),
                 QStringLiteral("req_1"));
        QCOMPARE(model.index(1, 0, runA).data(RunsModel::FlowIdRole).toString(),
                 QStringLiteral("req_2"));
        QCOMPARE(model.index(2, 0, runA).data(RunsModel::FlowIdRole).toString(),
                 QStringLiteral("req_3"));
        const auto cell = [&](int column) {
            return model.index(runA.row(), column).data().toString();
        };
        QCOMPARE(cell(RunsModel::CodeRunsColumn), QStringLiteral("3"));
        QCOMPARE(cell(RunsModel::ErrorsColumn), QStringLiteral("1"));
        QCOMPARE(cell(RunsModel::StatusColumn), QStringLiteral("1 code error"));
        QCOMPARE(cell(RunsModel::TokensColumn), QStringLiteral("900")); // 3 × (120 + 180)
        QCOMPARE(cell(RunsModel::ToolCallsColumn), QStringLiteral("0"));
        QVERIFY(cell(RunsModel::NameColumn).contains(QStringLiteral("3 flows")));
        QCOMPARE(model.index(1, RunsModel::StatusColumn, runA).data().toString(),
                 QStringLiteral("200 · code error"));

        // A new flow of the run shows up (reload throttled, on a worker).
        const QString runId = runA.data(RunsModel::RunIdRole).toString();
        sf::sessionFlow(bus, QStringLiteral("req_4"), QStringLiteral("sess-a"));
        QTRY_VERIFY_WITH_TIMEOUT(model.indexOfFlow(QStringLiteral("req_4")).isValid(), 10'000);
        const QModelIndex again = model.indexOfFlow(QStringLiteral("req_4"));
        QCOMPARE(again.row(), 3);
        QCOMPARE(again.parent().data(RunsModel::RunIdRole).toString(), runId);
        QCOMPARE(model.indexOfRun(runId), again.parent());
    }
};

QTEST_GUILESS_MAIN(TestRunsModel)
#include "tst_runsmodel.moc"
