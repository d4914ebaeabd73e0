// A store whose disk fails for a while: SQLite refuses every write to the real history file
// (FlowStore::failWritesForTests, PRAGMA query_only on the writer's connection), flows go on
// being recorded, stay readable and are kept in memory up to their bound; once writes work
// again every kept flow is in the file, exactly as it was shown, and the ones past the bound
// are counted and said, never silently gone.
#undef QT_NO_CAST_FROM_ASCII
#include "inspect/eventbus.h"
#include "record/flowstore.h"
#include "support/sqlitefileread.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace loopscope;
using Kind = InspectorEvent::Kind;

namespace {

// One complete pass-through exchange, as the proxy publishes it.
void publishExchange(EventBus &bus, const QString &id) {
    InspectorEvent request = InspectorEvent::make(Kind::ClientRequest, id, -1,
                                                  {{"method", "POST"}, {"path", "/v1/responses"}});
    request.raw = QJsonDocument(QJsonObject{{"model", "m"}, {"input", QString("question " + id)}})
                      .toJson(QJsonDocument::Compact);
    bus.publish(request);
    InspectorEvent response =
        InspectorEvent::make(Kind::ClientResponse, id, -1, {{"status", 200}, {"stream", false}});
    response.raw = QJsonDocument(QJsonObject{{"id", QString("resp_" + id)},
                                             {"output_text", QString("answer " + id)}})
                       .toJson(QJsonDocument::Compact);
    bus.publish(response);
    bus.publish(Kind::ExchangeFinished, id, -1, {{"status", 200}, {"durationMs", 3.0}});
}

QStringList storedIds(const QString &path) {
    return readSqliteFile(path, QStringList(), [](QSqlDatabase db) {
        QStringList ids;
        QSqlQuery q(db);
        if (q.exec("SELECT id FROM flows ORDER BY id"))
            while (q.next())
                ids << q.value(0).toString();
        return ids;
    });
}

QString flowId(int i) {
    return QStringLiteral("req_%1").arg(i, 4, 10, QLatin1Char('0'));
}

} // namespace

class TstStoreFailure : public QObject {
    Q_OBJECT

private slots:
    void flowsSurviveAFailingDisk_data() {
        QTest::addColumn<int>("flows");
        QTest::addColumn<int>("bound"); // FlowStoreOptions::maxUnwrittenFlows
        QTest::newRow("within the memory bound") << 40 << 100;
        QTest::newRow("exactly the bound") << 25 << 25;
        QTest::newRow("past the memory bound") << 40 << 15;
    }

    void flowsSurviveAFailingDisk() {
        QFETCH(int, flows);
        QFETCH(int, bound);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("history.sqlite3");
        FlowStoreOptions options;
        options.path = path;
        options.maxUnwrittenFlows = bound;
        options.batchIntervalMs = 20;
        auto store = std::make_unique<FlowStore>(options);
        QVERIFY(store->open());
        EventBus bus;
        store->attach(&bus);
        QStringList problems; // writeProblemChanged, queued to this thread
        QObject context;
        QObject::connect(store.get(), &FlowStore::writeProblemChanged, &context,
                         [&problems](const QString &p) { problems << p; });

        publishExchange(bus, "req_before");
        store->flush();
        QCOMPARE(storedIds(path), QStringList{"req_before"});

        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression("^loopscope: history: cannot write to .*"
                                                "history\\.sqlite3 .*kept in memory.*retrying$"));
        store->failWritesForTests(true);
        for (int i = 0; i < flows; ++i)
            publishExchange(bus, flowId(i));
        store->flush(); // a write is tried now, and refused

        const int kept = qMin(flows, bound);
        const int dropped = flows - kept;
        FlowStoreCounters c = store->counters();
        QVERIFY(c.writeFailures >= 1);
        QCOMPARE(c.flowsUnwritten, quint64(kept));
        QCOMPARE(c.flowsDropped, quint64(dropped));
        QCOMPARE(c.flowsWritten, quint64(1));
        QCOMPARE(storedIds(path), QStringList{"req_before"}); // nothing reached the file
        const QString problem = store->writeProblem();
        QVERIFY2(problem.startsWith("History cannot be written"), qPrintable(problem));
        if (dropped > 0)
            QVERIFY2(problem.contains(QStringLiteral("%1 dropped").arg(dropped)),
                     qPrintable(problem));
        QTRY_VERIFY(!problems.isEmpty() && !problems.constLast().isEmpty());

        // Readers see the kept flows as they will be stored (the newest `kept`); the dropped
        // ones are gone from memory too, not shown as if they would come back.
        QMap<QString, QJsonObject> shown;
        for (int i = 0; i < flows; ++i) {
            const auto flow = store->query()->flow(flowId(i));
            QCOMPARE(flow.has_value(), i >= dropped);
            if (flow)
                shown.insert(flowId(i), *flow);
        }
        QCOMPARE(shown.size(), kept);

        QTest::ignoreMessage(QtInfoMsg,
                             QRegularExpression(QStringLiteral("^loopscope: history: writing "
                                                               "again after \\d+ s; %1 waiting")
                                                    .arg(kept)));
        store->failWritesForTests(false);
        // No flush: the writer's own retry writes them (back-off at most 5 s).
        QTRY_COMPARE_WITH_TIMEOUT(store->counters().flowsUnwritten, quint64(0), 30'000);
        QTRY_VERIFY(!problems.isEmpty() && problems.constLast().isEmpty());
        QCOMPARE(store->writeProblem(), QString());
        QStringList expected = shown.keys();
        expected.prepend("req_before");
        expected.sort();
        QCOMPARE(storedIds(path), expected);
        c = store->counters();
        QCOMPARE(c.flowsWritten, quint64(1 + kept));
        QCOMPARE(c.flowsDropped, quint64(dropped));

        // Exactly what was shown, read back from the file after a reopen.
        store.reset();
        store = std::make_unique<FlowStore>(options);
        QVERIFY(store->open());
        for (auto it = shown.constBegin(); it != shown.constEnd(); ++it) {
            const auto flow = store->query()->flow(it.key());
            QVERIFY2(flow, qPrintable(it.key()));
            QCOMPARE(*flow, it.value());
        }
    }

    // Clearing the history while the disk fails forgets the kept flows as well: they do not
    // come back when it recovers.
    void clearForgetsKeptFlows() {
        QTemporaryDir dir;
        FlowStoreOptions options;
        options.path = dir.filePath("history.sqlite3");
        FlowStore store(options);
        QVERIFY(store.open());
        EventBus bus;
        store.attach(&bus);
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression("^loopscope: history: cannot write"));
        store.failWritesForTests(true);
        for (int i = 0; i < 5; ++i)
            publishExchange(bus, flowId(i));
        store.flush();
        QCOMPARE(store.counters().flowsUnwritten, quint64(5));
        store.clear();
        QCOMPARE(store.counters().flowsUnwritten, quint64(0));
        QCOMPARE(store.query()->count(), 0);
        store.failWritesForTests(false);
        publishExchange(bus, "req_after");
        store.flush();
        QCOMPARE(storedIds(options.path), QStringList{"req_after"});
    }
};

QTEST_GUILESS_MAIN(TstStoreFailure)
#include "tst_storefailure.moc"
