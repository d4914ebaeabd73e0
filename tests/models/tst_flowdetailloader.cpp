// FlowQueryClient and FlowDetailLoader over a REAL in-memory FlowStore fed InspectorEvents.
#include "storeflows.h"

#include "common/futurechain.h"
#include "models/flowdetailloader.h"
#include "models/flowqueryclient.h"

#include <QSignalSpy>
#include <QtTest>

using namespace loopscope;
namespace sf = loopscope::storeflows;
namespace s = loopscope::sample;

namespace {

QStringList hopKinds(const QJsonObject &flow) {
    QStringList out;
    for (const QJsonValue &h : flow.value(QStringLiteral("hops")).toArray())
        out << h.toObject().value(QStringLiteral("kind")).toString();
    return out;
}

} // namespace

class TestFlowDetailLoader : public QObject {
    Q_OBJECT

private slots:
    void clientAnswersOnTheCallersThread() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        sf::completedFlow(bus, QStringLiteral("req_a"));
        sf::completedFlow(bus, QStringLiteral("req_b"));
        store->flush();

        FlowQueryClient client;
        client.setFlowStore(store.get());
        QJsonObject list;
        QThread *answeredOn = nullptr;
        whenFinished(client.list({}), this, [&](const QFuture<QJsonObject> &f) {
            list = f.result();
            answeredOn = QThread::currentThread();
        });
        QTRY_VERIFY_WITH_TIMEOUT(answeredOn, 10'000);
        QCOMPARE(answeredOn, QThread::currentThread());
        const QJsonArray data = list.value(QStringLiteral("data")).toArray();
        QCOMPARE(data.size(), 2);
        QCOMPARE(data.at(0).toObject().value(QStringLiteral("id")).toString(),
                 QStringLiteral("req_b")); // newest first

        QJsonObject flow;
        whenFinished(client.flow(QStringLiteral("req_a")), this,
                     [&](const QFuture<QJsonObject> &f) { flow = f.result(); });
        QTRY_VERIFY_WITH_TIMEOUT(!flow.isEmpty(), 10'000);
        QCOMPARE(hopKinds(flow).first(), QStringLiteral("client_request"));
        QVERIFY(hopKinds(flow).contains(QStringLiteral("code_run")));

        bool unknownDone = false;
        whenFinished(client.flow(QStringLiteral("req_nope")), this,
                     [&](const QFuture<QJsonObject> &f) {
                         QVERIFY(f.result().isEmpty());
                         unknownDone = true;
                     });
        QTRY_VERIFY_WITH_TIMEOUT(unknownDone, 10'000);

        QJsonArray runs;
        bool runsDone = false;
        whenFinished(client.runs(10), this, [&](const QFuture<QJsonArray> &f) {
            runs = f.result();
            runsDone = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(runsDone, 10'000);
        QVERIFY(!runs.isEmpty());
        QJsonObject run;
        whenFinished(client.run(runs.at(0).toObject().value(QStringLiteral("id")).toString()), this,
                     [&](const QFuture<QJsonObject> &f) { run = f.result(); });
        QTRY_VERIFY_WITH_TIMEOUT(!run.isEmpty(), 10'000);

        QList<QJsonObject> full;
        whenFinished(client.flows({}, {}), this,
                     [&](const QFuture<QList<QJsonObject>> &f) { full = f.result(); });
        QTRY_COMPARE_WITH_TIMEOUT(full.size(), 2, 10'000);
        QCOMPARE(full.at(0).value(QStringLiteral("id")).toString(), QStringLiteral("req_a"));
    }

    void clientWithoutStoreAnswersEmpty() {
        FlowQueryClient client;
        QVERIFY(client.list({}).isFinished());
        QVERIFY(client.list({}).result().isEmpty());
        QVERIFY(client.flow(QStringLiteral("x")).result().isEmpty());
        QVERIFY(client.runs().result().isEmpty());
    }

    void loaderLoadsAndFollowsTheSelectedFlow() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        FlowQueryClient client;
        client.setFlowStore(store.get());
        FlowDetailLoader loader(&client);
        loader.setFlowStore(store.get());
        QSignalSpy loaded(&loader, &FlowDetailLoader::flowLoaded);

        const QString id = QStringLiteral("req_live");
        sf::runningFlow(bus, id);
        store->flush();
        loader.load(id);
        QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 10'000);
        QJsonObject flow = loaded.last().at(0).toJsonObject();
        QCOMPARE(flow.value(QStringLiteral("id")).toString(), id);
        QCOMPARE(flow.value(QStringLiteral("state")).toString(), QStringLiteral("running"));

        // The running flow's code run and end reach the loader without another load() call.
        sf::publish(bus, {s::code(id, 0, 0, QStringLiteral("print(1)"), QStringLiteral("1\n"),
                                  QStringLiteral("sbx_9")),
                          s::upstream(id, 1, 0, 100), s::finished(id, 0, 400, 2, 1),
                          sf::exchangeFinished(id)});
        QTRY_VERIFY_WITH_TIMEOUT(loader.currentFlow().value(QStringLiteral("state")).toString() ==
                                     QLatin1String("completed"),
                                 10'000);
        flow = loader.currentFlow();
        QCOMPARE(flow.value(QStringLiteral("code_runs")).toInt(), 1);
        QVERIFY(hopKinds(flow).contains(QStringLiteral("code_run")));

        // An empty id clears at once.
        loaded.clear();
        loader.load({});
        QCOMPARE(loaded.size(), 1);
        QVERIFY(loaded.at(0).at(0).toJsonObject().isEmpty());
        QVERIFY(loader.currentFlow().isEmpty());
    }

    void reloadsAreCoalesced() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        FlowQueryClient client;
        client.setFlowStore(store.get());
        FlowDetailLoader loader(&client);
        loader.setFlowStore(store.get());
        const QString id = QStringLiteral("req_busy");
        sf::runningFlow(bus, id);
        store->flush();
        loader.load(id);
        QTRY_VERIFY_WITH_TIMEOUT(!loader.currentFlow().isEmpty(), 10'000);
        const int before = loader.loadsStarted();

        // 200 live updates in one burst (each a flowUpdated of the selected flow).
        constexpr int kUpdates = 200;
        for (int i = 0; i < kUpdates; ++i)
            bus.publish(s::code(id, 0, 0, QStringLiteral("print(%1)").arg(i),
                                QStringLiteral("%1\n").arg(i), QStringLiteral("sbx_1")));
        store->flush();
        QTRY_COMPARE_WITH_TIMEOUT(loader.currentFlow().value(QStringLiteral("code_runs")).toInt(),
                                  kUpdates, 20'000);
        QTRY_VERIFY_WITH_TIMEOUT(!loader.isLoading(), 10'000);
        // Coalesced: far fewer loads than changes (one per ~100 ms at most, never two at once).
        const int loads = loader.loadsStarted() - before;
        QVERIFY2(loads >= 1 && loads < kUpdates / 4, qPrintable(QString::number(loads)));
    }

    void staleAnswersForAnOlderSelectionAreDropped() {
        EventBus bus;
        auto store = sf::openInMemoryStore(&bus);
        QVERIFY(store);
        sf::completedFlow(bus, QStringLiteral("req_old"));
        sf::completedFlow(bus, QStringLiteral("req_new"));
        store->flush();
        FlowQueryClient client;
        client.setFlowStore(store.get());
        FlowDetailLoader loader(&client);
        loader.setFlowStore(store.get());
        QSignalSpy loaded(&loader, &FlowDetailLoader::flowLoaded);

        // Selection moves on before the first answer is in: only the newer one is delivered.
        loader.load(QStringLiteral("req_old"));
        loader.load(QStringLiteral("req_new"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 10'000);
        // Never two loads at once: idle after two started means both answers are in, the old
        // one dropped.
        QTRY_VERIFY_WITH_TIMEOUT(!loader.isLoading(), 10'000);
        QVERIFY(loader.loadsStarted() >= 2);
        QCOMPARE(loaded.size(), 1);
        QCOMPARE(loaded.at(0).at(0).toJsonObject().value(QStringLiteral("id")).toString(),
                 QStringLiteral("req_new"));
        QCOMPARE(loader.currentId(), QStringLiteral("req_new"));

        // Another flow's changes do not reload the selected one.
        // The store emits on its own thread: both the loader and this marker hear it queued to
        // this thread, in the order they connected, so once the marker has req_other's signal
        // the loader has had its chance to (wrongly) reload.
        const int loads = loader.loadsStarted();
        bool heard = false;
        QObject marker;
        connect(store.get(), &FlowStore::flowFinished, &marker,
                [&heard](const QJsonObject &summary) {
                    if (summary.value(QStringLiteral("id")) == QStringLiteral("req_other"))
                        heard = true;
                });
        sf::completedFlow(bus, QStringLiteral("req_other"));
        store->flush();
        QTRY_VERIFY_WITH_TIMEOUT(heard, 10'000);
        QVERIFY(!loader.isLoading());
        QCOMPARE(loader.loadsStarted(), loads);
    }
};

QTEST_GUILESS_MAIN(TestFlowDetailLoader)
#include "tst_flowdetailloader.moc"
