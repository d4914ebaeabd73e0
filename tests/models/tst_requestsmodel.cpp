#include "models/requestsmodel.h"
#include "models/sampleevents.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace loopscope;
namespace s = loopscope::sample;

class TestRequestsModel : public QObject {
    Q_OBJECT

private:
    static QString cell(const RequestsModel &m, int row, int column) {
        return m.index(row, column).data().toString();
    }

private slots:
    void completeRequestInOneBatch() {
        RequestsModel model;
        QAbstractItemModelTester tester(&model);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy updated(&model, &RequestsModel::requestsUpdated);

        model.applyEvents(s::fullRequest(QStringLiteral("req_1"), 1'000'000));

        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(updated.count(), 1);
        QCOMPARE(updated.at(0).at(0).toStringList(), QStringList{QStringLiteral("req_1")});
        QCOMPARE(cell(model, 0, RequestsModel::ApiColumn), QStringLiteral("responses"));
        QCOMPARE(cell(model, 0, RequestsModel::ModelColumn), QStringLiteral("gpt-4.1-mini"));
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), QStringLiteral("200"));
        QCOMPARE(cell(model, 0, RequestsModel::IterationsColumn), QStringLiteral("2"));
        QCOMPARE(cell(model, 0, RequestsModel::CodeRunsColumn), QStringLiteral("1"));
        QCOMPARE(cell(model, 0, RequestsModel::DurationColumn), QStringLiteral("602 ms"));
        // Two upstream calls: 100+20 and 150+30 tokens.
        QCOMPARE(cell(model, 0, RequestsModel::TokensColumn), QStringLiteral("300"));

        const RequestRecord *r = model.recordById(QStringLiteral("req_1"));
        QVERIFY(r);
        QCOMPARE(r->upstreamCalls.size(), 2);
        QCOMPARE(r->codeRuns.size(), 1);
        QCOMPARE(r->codeRuns.at(0).stdoutText, QStringLiteral("42\n"));
        QCOMPARE(r->codeRuns.at(0).containerId, QStringLiteral("sbx_1"));
        QCOMPARE(r->injectedItems.size(), 1);
        QCOMPARE(r->injectedItems.at(0).toObject().value(QLatin1String("type")).toString(),
                 QStringLiteral("code_interpreter_call"));
        QCOMPARE(r->state, RequestState::Completed);
        QCOMPARE(model.index(0, 0).data(RequestsModel::HasCodeRole).toBool(), true);
    }

    void interleavedRequestsAcrossBatches() {
        RequestsModel model;
        QAbstractItemModelTester tester(&model);
        const qint64 t = 2'000'000;
        model.applyEvents(
            {s::started(QStringLiteral("a"), t),
             s::started(QStringLiteral("b"), t + 5, QStringLiteral("chat_completions"))});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), QStringLiteral("running"));
        QCOMPARE(cell(model, 1, RequestsModel::ApiColumn), QStringLiteral("chat"));
        QCOMPARE(cell(model, 0, RequestsModel::DurationColumn), QStringLiteral("…"));

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.applyEvents(
            {s::upstream(QStringLiteral("b"), 0, t + 100, 90),
             s::upstream(QStringLiteral("a"), 0, t + 120, 110),
             s::code(QStringLiteral("a"), 0, t + 150, QStringLiteral("x=1"), QString(),
                     QStringLiteral("sbx_a")),
             s::started(QStringLiteral("c"), t + 160),
             s::failed(QStringLiteral("b"), t + 170, 502, QStringLiteral("upstream down"))});
        // One coalesced dataChanged for the touched rows, one insert for the new request.
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 0);
        QCOMPARE(changed.at(0).at(1).toModelIndex().row(), 1);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(cell(model, 1, RequestsModel::StatusColumn), QStringLiteral("failed 502"));
        QCOMPARE(model.index(1, 0).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("upstream down"));
        QCOMPARE(cell(model, 0, RequestsModel::CodeRunsColumn), QStringLiteral("1"));
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), QStringLiteral("running"));
        QCOMPARE(model.runningCount(), 2);
        QCOMPARE(model.failedCount(), 1);

        model.applyEvents({s::finished(QStringLiteral("a"), t + 400, 400, 2, 1, 999),
                           s::finished(QStringLiteral("c"), t + 500, 340, 1, 0)});
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), QStringLiteral("200"));
        // The final usage is authoritative over the sum of the calls.
        QCOMPARE(cell(model, 0, RequestsModel::TokensColumn), QStringLiteral("999"));
        QCOMPARE(cell(model, 2, RequestsModel::TokensColumn), QString());
        QCOMPARE(model.runningCount(), 0);
        QCOMPARE(model.rowOf(QStringLiteral("a")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("b")), 1);
        QCOMPARE(model.rowOf(QStringLiteral("c")), 2);
    }

    void ignoresUnknownDuplicateAndUnrelatedEvents() {
        RequestsModel model;
        QAbstractItemModelTester tester(&model);
        model.applyEvents(
            {s::started(QStringLiteral("a"), 10),
             s::started(QStringLiteral("a"), 20, QStringLiteral("chat_completions")),
             s::upstream(QStringLiteral("ghost"), 0, 30, 5),
             s::sandbox(s::Kind::SandboxCreated, QStringLiteral("sbx"), 40),
             InspectorEvent::make(s::Kind::Log, {}, -1,
                                  {{QStringLiteral("message"), QStringLiteral("hi")}})});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.recordById(QStringLiteral("a"))->api, QStringLiteral("responses"));
        QCOMPARE(model.rowOf(QStringLiteral("ghost")), -1);
    }

    void retentionTrimsOldestAndKeepsLookupsRight() {
        RequestsModel model;
        QAbstractItemModelTester tester(&model);
        model.setRetentionLimit(3);
        for (int i = 0; i < 5; ++i)
            model.applyEvents({s::started(QStringLiteral("r%1").arg(i), 100 + i)});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.rowOf(QStringLiteral("r0")), -1);
        QCOMPARE(model.rowOf(QStringLiteral("r1")), -1);
        QCOMPARE(model.rowOf(QStringLiteral("r2")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("r4")), 2);
        QCOMPARE(model.index(0, 0).data(RequestsModel::RequestIdRole).toString(),
                 QStringLiteral("r2"));

        // Events of a trimmed request are dropped; those of kept ones land on the right row.
        model.applyEvents({s::finished(QStringLiteral("r0"), 300, 200, 1, 0),
                           s::finished(QStringLiteral("r3"), 300, 197, 1, 0)});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(cell(model, 1, RequestsModel::StatusColumn), QStringLiteral("200"));
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), QStringLiteral("running"));

        // An update and two inserts in one batch: the updated row survives the trim.
        model.applyEvents({s::finished(QStringLiteral("r4"), 400, 300, 1, 0),
                           s::started(QStringLiteral("r5"), 401),
                           s::started(QStringLiteral("r6"), 402)});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.rowOf(QStringLiteral("r4")), 0);
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), QStringLiteral("200"));

        // Lowering the cap trims at once.
        model.setRetentionLimit(1);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.rowOf(QStringLiteral("r6")), 0);
    }

    void clearEmptiesTheStore() {
        RequestsModel model;
        QAbstractItemModelTester tester(&model);
        model.applyEvents(s::fullRequest(QStringLiteral("a"), 1000));
        model.applyEvents(s::fullRequest(QStringLiteral("b"), 2000, QStringLiteral("sbx_2"),
                                         QStringLiteral("sess-1")));
        QCOMPARE(model.sessionIds(), QStringList{QStringLiteral("sess-1")});
        QSignalSpy counts(&model, &RequestsModel::countsChanged);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(counts.count(), 1);
        QVERIFY(!model.recordById(QStringLiteral("a")));
        // A request finishing after the clear is not resurrected; new ones appear normally.
        model.applyEvents({s::finished(QStringLiteral("b"), 3000, 5, 1, 0),
                           s::started(QStringLiteral("c"), 3001)});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.rowOf(QStringLiteral("c")), 0);
    }

    void tenThousandRequestsInOneBatch() {
        RequestsModel model;
        QAbstractItemModelTester tester(&model);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QList<InspectorEvent> batch;
        batch.reserve(20'000);
        for (int i = 0; i < 10'000; ++i) {
            const QString id = QStringLiteral("r%1").arg(i);
            batch.append(s::started(id, 1000 + i));
            batch.append(s::finished(id, 1100 + i, 100, 1, 0, 50));
        }
        model.applyEvents(batch);
        // The cap applies to the batch itself: no row is inserted only to be removed.
        QCOMPARE(model.rowCount(), RequestsModel::kDefaultRetention);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(model.rowOf(QStringLiteral("r4999")), -1);
        QCOMPARE(model.rowOf(QStringLiteral("r5000")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("r9999")), RequestsModel::kDefaultRetention - 1);
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), QStringLiteral("200"));

        // A second burst pushes the first one out with one removal and one insertion.
        batch.clear();
        for (int i = 10'000; i < 12'000; ++i)
            batch.append(s::started(QStringLiteral("r%1").arg(i), 1000 + i));
        model.applyEvents(batch);
        QCOMPARE(model.rowCount(), RequestsModel::kDefaultRetention);
        QCOMPARE(inserted.count(), 2);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(model.rowOf(QStringLiteral("r7000")), 0);
        QCOMPARE(model.rowOf(QStringLiteral("r11999")), RequestsModel::kDefaultRetention - 1);
    }

    void oldRequestsDropTheirPayloads() {
        RequestsModel model;
        QAbstractItemModelTester tester(&model);
        model.setPayloadRetention(2);
        for (int i = 0; i < 4; ++i)
            model.applyEvents(s::fullRequest(QStringLiteral("r%1").arg(i), 1000 * i));
        QCOMPARE(model.rowCount(), 4);
        for (int row = 0; row < 4; ++row) {
            const RequestRecord *r = model.record(row);
            const bool old = row < 2;
            QCOMPARE(r->payloadsDropped, old);
            QCOMPARE(r->clientRequest.isEmpty(), old);
            QCOMPARE(r->upstreamCalls.at(0).response.isEmpty(), old);
            QCOMPARE(r->injectedItems.isEmpty(), old);
            QCOMPARE(r->finalResponse.isEmpty(), old);
            // What the table and the Code panel show survives.
            QCOMPARE(r->codeRuns.at(0).code, QStringLiteral("print(6*7)"));
            QCOMPARE(r->codeRuns.at(0).stdoutText, QStringLiteral("42\n"));
            QCOMPARE(model.index(row, RequestsModel::TokensColumn).data().toString(),
                     QStringLiteral("300"));
        }

        // Long outputs of old requests are cut; a late event of an old request stays lean.
        model.setPayloadRetention(1);
        QList<InspectorEvent> big = s::fullRequest(QStringLiteral("big"), 9000);
        big[2].data[QStringLiteral("stdout")] = QString(100'000, u'x');
        big.removeLast(); // still running
        model.applyEvents(big);
        QCOMPARE(model.recordById(QStringLiteral("big"))->codeRuns.at(0).stdoutText.size(),
                 100'000);
        model.applyEvents({s::started(QStringLiteral("next"), 9500)});
        const RequestRecord *old = model.recordById(QStringLiteral("big"));
        QVERIFY(old->payloadsDropped);
        QVERIFY(old->codeRuns.at(0).stdoutText.size() < 20'000);
        model.applyEvents({s::finished(QStringLiteral("big"), 9900, 900, 2, 1)});
        QCOMPARE(old->state, RequestState::Completed);
        QVERIFY(old->finalResponse.isEmpty());
        QVERIFY(model.recordById(QStringLiteral("r3"))->payloadsDropped);
    }

    void emptyFinalUsageKeepsTheSumOfCalls() {
        RequestsModel model;
        QList<InspectorEvent> events = s::fullRequest(QStringLiteral("a"), 0);
        events.last().data.insert(QStringLiteral("usage"), QJsonObject());
        model.applyEvents(events);
        QCOMPARE(model.index(0, RequestsModel::TokensColumn).data().toString(),
                 QStringLiteral("300"));
    }

    void statusText_data() {
        QTest::addColumn<QList<InspectorEvent>>("events");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("duration");
        const QString id = QStringLiteral("x");
        QTest::newRow("running") << QList<InspectorEvent>{s::started(id, 0)}
                                 << QStringLiteral("running") << QStringLiteral("…");
        QTest::newRow("ok-fast") << QList<InspectorEvent>{s::started(id, 0),
                                                          s::finished(id, 5, 999, 1, 0)}
                                 << QStringLiteral("200") << QStringLiteral("999 ms");
        QTest::newRow("ok-slow") << QList<InspectorEvent>{s::started(id, 0),
                                                          s::finished(id, 5, 1500, 1, 0)}
                                 << QStringLiteral("200") << QStringLiteral("1.50 s");
        QTest::newRow("failed") << QList<InspectorEvent>{s::started(id, 0),
                                                         s::failed(id, 5, 400,
                                                                   QStringLiteral("bad"))}
                                << QStringLiteral("failed 400") << QStringLiteral("40 ms");
        InspectorEvent incomplete = s::finished(id, 5, 10, 10, 9);
        incomplete.data.insert(QStringLiteral("incompleteReason"), QStringLiteral("max_loops"));
        QTest::newRow("incomplete") << QList<InspectorEvent>{s::started(id, 0), incomplete}
                                    << QStringLiteral("200 incomplete") << QStringLiteral("10 ms");
    }

    void statusText() {
        QFETCH(QList<InspectorEvent>, events);
        QFETCH(QString, status);
        QFETCH(QString, duration);
        RequestsModel model;
        model.applyEvents(events);
        QCOMPARE(cell(model, 0, RequestsModel::StatusColumn), status);
        QCOMPARE(cell(model, 0, RequestsModel::DurationColumn), duration);
    }
};

QTEST_GUILESS_MAIN(TestRequestsModel)
#include "tst_requestsmodel.moc"
