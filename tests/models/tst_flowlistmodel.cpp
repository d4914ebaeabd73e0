// FlowListModel over a REAL in-memory FlowStore: history newest first, lazy paging to the last
// flow, live rows, honest status cells, store-side search and filters. Under
// QAbstractItemModelTester throughout.
#undef QT_NO_CAST_FROM_ASCII // agentflows.h writes its JSON as plain literals
#include "storeflows.h"

#include "models/agentflows.h"

#include "models/flowlistmodel.h"
#include "models/flowqueryclient.h"

#include <algorithm>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using namespace loopscope;
namespace sf = loopscope::storeflows;
namespace s = loopscope::sample;

namespace {

struct Fixture {
    EventBus bus;
    std::unique_ptr<FlowStore> store = sf::openInMemoryStore(&bus);
    FlowQueryClient client;
    FlowListModel model{&client};
    QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};

    Fixture() { client.setFlowStore(store.get()); }

    // Loads the first page and waits for it.
    bool open() {
        QSignalSpy pages(&model, &FlowListModel::pageLoaded);
        model.setFlowStore(store.get());
        return pages.wait(10'000) || !pages.isEmpty();
    }
    bool waitIdle() {
        return QTest::qWaitFor([this] { return !model.isLoading(); }, 10'000);
    }
    QString status(int row) const {
        return model.index(row, FlowListModel::StatusColumn).data().toString();
    }
};

} // namespace

class TestFlowListModel : public QObject {
    Q_OBJECT

private slots:
    // A row says what kind of exchange it was: streamed, passed through, a replay; and the
    // method and path where the api alone says little.
    void rowsMarkTheirKindOfExchange() {
        agents::AgentRecorder r;
        const QJsonObject headers{{"content-type", "application/json"}};
        const QJsonObject reply{
            {"id", "msg_1"},
            {"type", "message"},
            {"role", "assistant"},
            {"content", QJsonArray{QJsonObject{{"type", "text"}, {"text", "hi"}}}}};
        const QJsonObject body{
            {"model", "claude-haiku-4-5"},
            {"max_tokens", 16},
            {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hi"}}}}};
        r.exchange("pass_1", "/v1/messages", headers, body, reply);
        QJsonObject streamed = body;
        streamed.insert("stream", true);
        r.exchange("pass_2", "/v1/messages", headers, streamed, reply);
        r.exchange("again_1", "/v1/messages", headers, body, reply, "pass_1");
        r.exchange("other_1", "/v1/embeddings", headers, {{"input", "x"}},
                   {{"data", QJsonArray()}});
        FlowQueryClient client;
        client.setFlowStore(r.store());
        FlowListModel model(&client);
        QAbstractItemModelTester tester(&model);
        model.setFlowStore(r.store());
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 4, 10'000);
        const auto api = [&model](const QString &id) {
            return model.index(model.rowOf(id), FlowListModel::ApiColumn).data().toString();
        };
        QCOMPARE(api("pass_1"), "messages · pass");
        QCOMPARE(api("pass_2"), "messages · SSE · pass");
        QCOMPARE(api("again_1"), "messages · pass · replay");
        QCOMPARE(api("other_1"), "POST /v1/embeddings");
        const QString tip = model.index(model.rowOf("again_1"), FlowListModel::ApiColumn)
                                .data(Qt::ToolTipRole)
                                .toString();
        QCOMPARE(tip,
                 "POST /v1/messages\nnot streamed\npassed through unchanged\nreplay of pass_1");
    }

    void historyOpensNewestFirstAndPagesToTheEnd() {
        Fixture f;
        QVERIFY(f.store);
        QCOMPARE(sf::importNumbered(*f.store, 2500), 2500);
        QVERIFY(f.open());
        QVERIFY(f.waitIdle());
        QCOMPARE(f.model.rowCount(), FlowListModel::kPageSize);
        QCOMPARE(f.model.idAt(0), QStringLiteral("f02499"));
        QCOMPARE(f.model.idAt(1), QStringLiteral("f02498"));
        QVERIFY(f.model.canFetchMore({}));

        int pages = 1;
        while (f.model.canFetchMore({})) {
            f.model.fetchMore({});
            QVERIFY(f.waitIdle());
            ++pages;
            QVERIFY(pages < 100);
        }
        QCOMPARE(f.model.rowCount(), 2500);
        QCOMPARE(pages, 13); // 2,500 / 200 rounded up
        QCOMPARE(f.model.idAt(2499), QStringLiteral("f00000"));
        // Strictly newest first all the way down, no duplicates.
        for (int row = 1; row < f.model.rowCount(); ++row)
            QVERIFY(f.model.idAt(row - 1) > f.model.idAt(row));
        QCOMPARE(f.status(0), QStringLiteral("200 · imported"));
        QCOMPARE(f.model.index(0, FlowListModel::TokensColumn).data().toString(),
                 QStringLiteral("15"));
        QVERIFY(f.model.index(0, FlowListModel::TokensColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("input 10 · output 5")));
    }

    void liveFlowsGoOnTopAndUpdateInPlace() {
        Fixture f;
        QVERIFY(f.store);
        sf::importNumbered(*f.store, 3);
        QVERIFY(f.open());
        QVERIFY(f.waitIdle());
        QCOMPARE(f.model.rowCount(), 3);

        const QString id = QStringLiteral("req_live");
        sf::runningFlow(f.bus, id);
        QTRY_COMPARE_WITH_TIMEOUT(f.model.rowCount(), 4, 10'000);
        QCOMPARE(f.model.idAt(0), id);
        QCOMPARE(f.status(0), QStringLiteral("running…"));
        QCOMPARE(f.model.runningCount(), 1);
        // Queued for a sandbox slot (sandbox.max_live): the cell says so until the wait ends.
        sf::publish(f.bus, {InspectorEvent::make(InspectorEvent::Kind::SandboxWaiting, id)});
        QTRY_COMPARE_WITH_TIMEOUT(f.status(0), QStringLiteral("waiting for a sandbox…"), 10'000);
        sf::publish(f.bus, {InspectorEvent::make(InspectorEvent::Kind::SandboxWaitEnded, id)});
        QTRY_COMPARE_WITH_TIMEOUT(f.status(0), QStringLiteral("running…"), 10'000);
        // A running flow's Duration is its elapsed time so far, and it ticks.
        QVERIFY(f.model.index(0, FlowListModel::DurationColumn).data().toString().endsWith(u'…'));
        QSignalSpy ticks(&f.model, &QAbstractItemModel::dataChanged);
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(ticks.cbegin(), ticks.cend(),
                                             [](const QList<QVariant> &args) {
                                                 return args.at(0).toModelIndex().column() ==
                                                        FlowListModel::DurationColumn;
                                             }),
                                 10'000);

        sf::publish(f.bus, {s::code(id, 0, 0, QStringLiteral("print(1)"), QStringLiteral("1\n"),
                                    QStringLiteral("sbx")),
                            s::upstream(id, 1, 0, 100, 150, 30), s::finished(id, 0, 400, 2, 1),
                            sf::exchangeFinished(id)});
        QTRY_COMPARE_WITH_TIMEOUT(f.model.index(0, 0).data(FlowListModel::StateRole).toString(),
                                  QStringLiteral("completed"), 10'000);
        QCOMPARE(f.model.rowCount(), 4); // updated in place, not added again
        QCOMPARE(f.model.runningCount(), 0);
        QCOMPARE(f.status(0), QStringLiteral("200"));
        QCOMPARE(f.model.index(0, FlowListModel::CodeRunsColumn).data().toInt(), 1);
        // Tokens are summed over both model calls: 120 + 180.
        QCOMPARE(f.model.index(0, FlowListModel::TokensColumn).data().toString(),
                 QStringLiteral("300"));

        // A reload from the store finds the same rows in the same order.
        f.store->flush();
        f.model.reload();
        QVERIFY(f.waitIdle());
        QCOMPARE(f.model.rowCount(), 4);
        QCOMPARE(f.model.idAt(0), id);
    }

    void statusesAreHonest() {
        Fixture f;
        QVERIFY(f.store);
        const QString reason = QStringLiteral(
            "max_agentic_loops (3) reached before the model gave a final answer; the last "
            "response is returned as it was");
        sf::codeErrorFlow(f.bus, QStringLiteral("req_err"));
        sf::incompleteFlow(f.bus, QStringLiteral("req_inc"), reason);
        sf::failedFlow(f.bus, QStringLiteral("req_fail"), 502);
        sf::pausedFlow(f.bus, QStringLiteral("req_pause"));
        f.store->flush();
        QVERIFY(f.open());
        QVERIFY(f.waitIdle());
        QTRY_COMPARE_WITH_TIMEOUT(f.model.rowCount(), 4, 10'000);

        const auto rowStatus = [&f](const QString &id) { return f.status(f.model.rowOf(id)); };
        const auto rowKind = [&f](const QString &id) {
            return FlowListModel::StatusKind(
                f.model.index(f.model.rowOf(id), 0).data(FlowListModel::StatusKindRole).toInt());
        };
        QCOMPARE(rowStatus(QStringLiteral("req_err")), QStringLiteral("200 · code error"));
        QCOMPARE(rowKind(QStringLiteral("req_err")), FlowListModel::StatusKind::CodeError);
        // The whole reason, in the cell and its tooltip.
        QCOMPARE(rowStatus(QStringLiteral("req_inc")),
                 QString(QStringLiteral("200 · incomplete: ") + reason));
        QVERIFY(f.model.index(f.model.rowOf(QStringLiteral("req_inc")), FlowListModel::StatusColumn)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(reason));
        QCOMPARE(rowKind(QStringLiteral("req_inc")), FlowListModel::StatusKind::Incomplete);
        QCOMPARE(rowStatus(QStringLiteral("req_fail")),
                 QStringLiteral("failed 502: upstream down"));
        QCOMPARE(rowKind(QStringLiteral("req_fail")), FlowListModel::StatusKind::Failed);
        QTRY_COMPARE_WITH_TIMEOUT(rowStatus(QStringLiteral("req_pause")), QStringLiteral("paused"),
                                  10'000);
        QCOMPARE(rowKind(QStringLiteral("req_pause")), FlowListModel::StatusKind::Paused);
        QCOMPARE(f.model.runningCount(), 1);
        // The recorded flows' model (gpt-4.1-mini) is priced by the built-in table.
        QVERIFY(f.model.anyCostKnown());
    }

    void filtersRunInTheStore() {
        Fixture f;
        QVERIFY(f.store);
        sf::importNumbered(*f.store, 450);
        sf::codeErrorFlow(f.bus, QStringLiteral("req_err"));
        sf::failedFlow(f.bus, QStringLiteral("req_fail"));
        sf::completedFlow(f.bus, QStringLiteral("req_code"), QStringLiteral("gpt-4.1-mini"),
                          QStringLiteral("print(sum(range(12345)))"));
        f.store->flush();
        QVERIFY(f.open());
        QVERIFY(f.waitIdle());

        QSignalSpy pages(&f.model, &FlowListModel::pageLoaded);
        f.model.setFilter({QStringLiteral("failed"), false, {}});
        QVERIFY(f.waitIdle());
        QTRY_VERIFY_WITH_TIMEOUT(!pages.isEmpty(), 10'000);
        QCOMPARE(f.model.rowCount(), 1);
        QCOMPARE(f.model.idAt(0), QStringLiteral("req_fail"));

        // Code errors only: read on past pages without any (the error is the newest here, but
        // the filter walks the whole history to say there is no other).
        f.model.setFilter({{}, true, {}});
        QTRY_VERIFY_WITH_TIMEOUT(!f.model.isLoading() && !f.model.hasMore(), 20'000);
        QCOMPARE(f.model.rowCount(), 1);
        QCOMPARE(f.model.idAt(0), QStringLiteral("req_err"));

        // Full-text search over code, bodies and output (the store's q=).
        f.model.setFilter({{}, false, QStringLiteral("12345")});
        QTRY_VERIFY_WITH_TIMEOUT(!f.model.isLoading() && f.model.rowCount() == 1, 10'000);
        QCOMPARE(f.model.idAt(0), QStringLiteral("req_code"));
        f.model.setFilter({{}, false, QStringLiteral("question 449")});
        QTRY_VERIFY_WITH_TIMEOUT(!f.model.isLoading() && f.model.rowCount() == 1, 10'000);
        QCOMPARE(f.model.idAt(0), QStringLiteral("f00449"));
        pages.clear();
        f.model.setFilter({{}, false, QStringLiteral("no-such-word-anywhere")});
        QTRY_VERIFY_WITH_TIMEOUT(!pages.isEmpty(), 10'000);
        QCOMPARE(f.model.rowCount(), 0);
        QVERIFY(!f.model.hasMore());

        // While searching, live flows are not guessed at: they show after the next search.
        // Heard queued here after the model (connected first), the marker says the model has
        // seen the flow; it took nothing in, not even for a later batch.
        bool heard = false;
        QObject marker;
        connect(f.store.get(), &FlowStore::flowFinished, &marker,
                [&heard](const QJsonObject &summary) {
                    heard |= summary.value(QStringLiteral("id")) == QStringLiteral("req_late");
                });
        sf::completedFlow(f.bus, QStringLiteral("req_late"));
        f.store->flush();
        QTRY_VERIFY_WITH_TIMEOUT(heard, 10'000);
        QVERIFY(!f.model.isLiveBatchPending());
        QCOMPARE(f.model.rowCount(), 0);

        f.model.setFilter({});
        QVERIFY(f.waitIdle());
        QCOMPARE(f.model.rowCount(), FlowListModel::kPageSize);
        QCOMPARE(f.model.idAt(0), QStringLiteral("req_late"));
    }

    void costColumnOnlyWhenKnownAndRemoval() {
        Fixture f;
        QVERIFY(f.store);
        QJsonObject priced{{QStringLiteral("id"), QStringLiteral("req_priced")},
                           {QStringLiteral("started_at"), 1'700'000'000'000.0},
                           {QStringLiteral("state"), QStringLiteral("completed")},
                           {QStringLiteral("status"), 200},
                           {QStringLiteral("cost_usd"), 0.0123}};
        sf::importNumbered(*f.store, 2);
        QSignalSpy cost(&f.model, &FlowListModel::anyCostKnownChanged);
        QVERIFY(f.open());
        QVERIFY(f.waitIdle());
        QVERIFY(!f.model.anyCostKnown());
        QCOMPARE(f.store->importFlows({priced}), 1);
        f.model.reload();
        QVERIFY(f.waitIdle());
        QVERIFY(f.model.anyCostKnown());
        QCOMPARE(cost.last().at(0).toBool(), true);
        const int row = f.model.rowOf(QStringLiteral("req_priced"));
        QVERIFY(row >= 0);
        QCOMPARE(f.model.index(row, FlowListModel::CostColumn).data().toString(),
                 QStringLiteral("$0.0123"));

        f.model.removeIds({QStringLiteral("req_priced")});
        QCOMPARE(f.model.rowOf(QStringLiteral("req_priced")), -1);
        QCOMPARE(f.model.rowCount(), 2);
        QVERIFY(!f.model.anyCostKnown());
        QCOMPARE(f.model.rowOf(QStringLiteral("f00000")), 1);
    }
};

QTEST_GUILESS_MAIN(TestFlowListModel)
#include "tst_flowlistmodel.moc"
