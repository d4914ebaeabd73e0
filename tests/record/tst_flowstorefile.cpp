// The flow store's file: round trip across a reopen, retention by age and size, forward
// migration from schema 1, corrupt and foreign files moved aside, the in-memory mode, and a
// writer killed with SIGKILL mid-stream (a child process) leaving a sound file.
// JSON fixtures are written as plain literals here.
#undef QT_NO_CAST_FROM_ASCII
#include "inspect/eventbus.h"
#include "record/flowrecorder.h"
#include "record/flowstore.h"
#include "record/storedatabase.h"
#include "record/storedblob.h"
#include "support/sqlitefileread.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QtTest>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <sys/stat.h>

using namespace loopscope;
using Kind = InspectorEvent::Kind;

namespace {

// One complete pass-through exchange, as the proxy publishes it.
void publishExchange(EventBus &bus, const QString &id, const QString &text,
                     const QJsonObject &usage = {}) {
    InspectorEvent request =
        InspectorEvent::make(Kind::ClientRequest, id, -1,
                             {{"method", "POST"},
                              {"path", "/v1/responses"},
                              {"headers", QJsonObject{{"authorization", "Bearer …abcd"}}}});
    request.raw =
        QJsonDocument(QJsonObject{{"model", "m"}, {"input", text}}).toJson(QJsonDocument::Compact);
    bus.publish(request);
    InspectorEvent upstream =
        InspectorEvent::make(Kind::UpstreamRequest, id, 0,
                             {{"url", "http://127.0.0.1:9/v1/responses"}, {"passThrough", true}});
    upstream.raw = request.raw;
    bus.publish(upstream);
    bus.publish(Kind::UpstreamResponse, id, 0, {{"status", 200}, {"latencyMs", 1.5}});
    InspectorEvent response =
        InspectorEvent::make(Kind::ClientResponse, id, -1, {{"status", 200}, {"stream", false}});
    response.raw = QJsonDocument(QJsonObject{{"id", QString("resp_" + id)},
                                             {"output_text", QString("answer to " + text)},
                                             {"usage", usage}})
                       .toJson(QJsonDocument::Compact);
    bus.publish(response);
    bus.publish(Kind::ExchangeFinished, id, -1,
                {{"status", 200}, {"durationMs", 3.0}, {"ttfbMs", 2.0}, {"overheadMs", 0.2}});
}

QJsonObject storedFlow(const QString &id, qint64 startedAt, const QString &padding = {}) {
    return {{"id", id},
            {"object", "loopscope.flow"},
            {"started_at", startedAt},
            {"method", "POST"},
            {"path", "/v1/responses"},
            {"status", 200},
            {"state", "completed"},
            {"hops", QJsonArray{QJsonObject{{"kind", "client_request"},
                                            {"at", startedAt},
                                            {"body", QJsonObject{{"input", padding}}}}}}};
}

int countRows(const QString &path, const QString &table) {
    return readSqliteFile(path, -1, [&](QSqlDatabase db) {
        QSqlQuery q(db);
        return q.exec("SELECT count(*) FROM " + table) && q.next() ? q.value(0).toInt() : -1;
    });
}

// Every term the full-text index holds (fts5vocab reads the index itself: a row deleted with
// the wrong text leaves its terms there, whatever a search joined with the flows shows).
QStringList indexedTerms(const QString &path) {
    return readSqliteFile(path, QStringList(), [](QSqlDatabase db) {
        QStringList terms;
        QSqlQuery q(db);
        if (q.exec("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, flows_fts, 'row')") &&
            q.exec("SELECT term FROM temp.terms"))
            while (q.next())
                terms << q.value(0).toString();
        return terms;
    });
}

// Whether the file has a table of that name (the full-text index's shadow tables included).
bool hasTable(const QString &path, const QString &table) {
    return readSqliteFile(path, false, [&](QSqlDatabase db) {
        QSqlQuery q(db);
        q.prepare("SELECT 1 FROM sqlite_master WHERE name = ?");
        q.addBindValue(table);
        return q.exec() && q.next();
    });
}

// A PRAGMA's value read through a connection of its own (freelist_count, page_count, …).
qint64 pragma(const QString &path, const QString &name) {
    return readSqliteFile(path, qint64(-1), [&](QSqlDatabase db) {
        QSqlQuery q(db);
        return q.exec("PRAGMA " + name) && q.next() ? q.value(0).toLongLong() : qint64(-1);
    });
}

// A flow's hops column as stored (compressed), read through a connection of its own.
QByteArray storedHopsColumn(const QString &path, const QString &id) {
    return readSqliteFile(path, QByteArray(), [&](QSqlDatabase db) {
        QSqlQuery q(db);
        q.prepare("SELECT hops FROM flows WHERE id = ?");
        q.addBindValue(id);
        return q.exec() && q.next() ? q.value(0).toByteArray() : QByteArray();
    });
}

// FTS5's own check of its index, empty when it passes (a row taken out with other tokens than
// it went in with fails it).
QString searchIndexError(const QString &path) {
    return readSqliteFile(path, QString("not read"), [](QSqlDatabase db) {
        QSqlQuery q(db);
        return q.exec("INSERT INTO flows_fts(flows_fts) VALUES('integrity-check')")
                   ? QString()
                   : q.lastError().text();
    });
}

QString integrity(const QString &path) {
    return readSqliteFile(path, QString(), [](QSqlDatabase db) {
        QSqlQuery q(db);
        return q.exec("PRAGMA integrity_check") && q.next() ? q.value(0).toString() : QString();
    });
}

// Child mode: write flows as fast as the store takes them and report each committed count,
// until the parent kills the process.
int runChild(int argc, char *argv[]) {
    QCoreApplication app(argc, argv);
    FlowStoreOptions options;
    options.path = qEnvironmentVariable("LOOPSCOPE_RECORD_CHILD_DB");
    options.batchIntervalMs = 50;
    FlowStore store(options);
    if (!store.open())
        return 3;
    EventBus bus;
    store.attach(&bus);
    int n = 0;
    QTimer timer;
    QObject::connect(&timer, &QTimer::timeout, [&] {
        for (int i = 0; i < 10; ++i, ++n)
            publishExchange(bus, QStringLiteral("req_child%1").arg(n, 8, 10, QLatin1Char('0')),
                            QStringLiteral("text %1").arg(n));
        if (n % 50 == 0) {
            store.flush();
            std::printf("committed %d\n", n);
            std::fflush(stdout);
        }
    });
    timer.start(1);
    return app.exec();
}

} // namespace

class TstFlowStoreFile : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString dbPath() const { return m_dir->filePath("history.sqlite3"); }

    std::unique_ptr<FlowStore> openStore(FlowStoreOptions options = {}) {
        if (options.path.isEmpty() && !options.inMemory)
            options.path = dbPath();
        auto store = std::make_unique<FlowStore>(options);
        QString error;
        if (!store->open(&error)) {
            qWarning() << "open failed:" << error;
            return nullptr;
        }
        return store;
    }

private slots:
    void init() {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
    }
    void cleanup() { m_dir.reset(); }

    // The history holds every prompt and answer: its directory (when created) is 0700 and the
    // database with its -wal and -shm files 0600, whatever the umask; an older install's 0644
    // files are tightened on open.
    void historyFilesAreOnlyTheUsers_data() {
        QTest::addColumn<bool>("olderInstall");
        QTest::newRow("fresh") << false;
        QTest::newRow("older install") << true;
    }
    void historyFilesAreOnlyTheUsers() {
        QFETCH(bool, olderInstall);
        const QString dir = m_dir->filePath(QStringLiteral("data/loopscope"));
        const QString path = dir + QStringLiteral("/history.sqlite3");
        const mode_t umask = ::umask(022);
        if (olderInstall) {
            QVERIFY(QDir().mkpath(dir));
            for (const char *suffix : {"", "-wal", "-shm"}) {
                QFile file(path + QLatin1String(suffix));
                QVERIFY(file.open(QIODevice::WriteOnly));
            }
            QVERIFY(QFile::remove(path + QStringLiteral("-wal")));
            QVERIFY(QFile::remove(path + QStringLiteral("-shm")));
        }
        {
            FlowStoreOptions options;
            options.path = path;
            auto store = openStore(options);
            QVERIFY(store);
            EventBus bus;
            store->attach(&bus);
            publishExchange(bus, QStringLiteral("req_private"), QStringLiteral("secret"));
            store->flush();
            const auto mode = [](const QString &file) {
                struct stat info {};
                return ::stat(QFile::encodeName(file).constData(), &info) == 0
                           ? int(info.st_mode & 0777)
                           : -1;
            };
            if (!olderInstall)
                QCOMPARE(mode(dir), 0700);
            QCOMPARE(mode(path), 0600);
            QCOMPARE(mode(path + QStringLiteral("-wal")), 0600);
            QCOMPARE(mode(path + QStringLiteral("-shm")), 0600);
        }
        ::umask(umask);
    }

    // Checkpoints end in fsync, which delays requests around it (bench_record): the write
    // connection checkpoints every 10,000 WAL pages, and the WAL shrinks back afterwards.
    void writerCheckpointsRarely() {
        StoreDatabase db(dbPath(), false);
        QString error;
        QVERIFY2(db.openWriter(&error), qPrintable(error));
        QSqlQuery q(db.writer());
        QVERIFY(q.exec("PRAGMA wal_autocheckpoint") && q.next());
        QCOMPARE(q.value(0).toInt(), 10000);
        QVERIFY(q.exec("PRAGMA journal_size_limit") && q.next());
        QCOMPARE(q.value(0).toLongLong(), 48LL * 1024 * 1024);
        q.finish();
        db.closeWriter();
    }

    // A checkpoint ends in fsync, which delayed requests in flight: the writer runs it once the
    // traffic pauses, and that is when the database file itself takes the flows from the WAL.
    void writerCheckpointsInAPause() {
        FlowStoreOptions options;
        options.idleCheckpointMs = 200;
        auto store = openStore(options);
        QVERIFY(store);
        const qint64 before = QFileInfo(dbPath()).size();
        EventBus bus;
        store->attach(&bus);
        for (int i = 0; i < 40; ++i)
            publishExchange(bus, QStringLiteral("req_%1").arg(i),
                            QStringLiteral("question %1").arg(i));
        store->flush();
        QTRY_VERIFY_WITH_TIMEOUT(store->counters().idleCheckpoints >= 1, 10000);
        QCOMPARE(store->counters().flowsWritten, quint64(40));
        QVERIFY2(QFileInfo(dbPath()).size() > before,
                 qPrintable(QStringLiteral("%1 bytes before, %2 after")
                                .arg(before)
                                .arg(QFileInfo(dbPath()).size())));
        // Nothing written since: no second checkpoint is scheduled for an unchanged WAL (the
        // writer's own state, not a wait for a timer that should not fire).
        QVERIFY(!store->counters().idleCheckpointDue);
        // A write makes one due again.
        publishExchange(bus, QStringLiteral("req_more"), QStringLiteral("one more"));
        store->flush();
        QTRY_VERIFY_WITH_TIMEOUT(store->counters().idleCheckpoints >= 2, 10000);
    }

    // Publishers on several threads at once (the recorder's intake is its own queue, drained in
    // batches): every event is recorded, each exchange in its order, and flush() returns only
    // after all of them.
    void eventsFromManyThreadsAreAllRecordedBeforeFlushReturns() {
        auto store = openStore();
        QVERIFY(store);
        EventBus bus;
        store->attach(&bus);
        constexpr int kThreads = 4;
        constexpr int kEach = 300;
        std::vector<std::unique_ptr<QThread>> publishers;
        for (int t = 0; t < kThreads; ++t) {
            publishers.emplace_back(QThread::create([&bus, t] {
                for (int i = 0; i < kEach; ++i)
                    publishExchange(bus, QStringLiteral("req_%1_%2").arg(t).arg(i),
                                    QStringLiteral("question %1").arg(i));
            }));
            publishers.back()->start();
        }
        for (auto &publisher : publishers)
            QVERIFY(publisher->wait(60000));
        store->flush();
        const FlowStoreCounters c = store->counters();
        QCOMPARE(c.eventsReceived, quint64(kThreads * kEach * 5));
        QCOMPARE(c.eventsUnmatched, quint64(0));
        QCOMPARE(c.flowsWritten, quint64(kThreads * kEach));
        const auto last = store->query()->flow(QStringLiteral("req_3_299"));
        QVERIFY(last);
        QCOMPARE(last->value("state").toString(), QString("completed"));
        QCOMPARE(last->value("hops").toArray().size(), 4);
    }

    void roundTripAcrossReopen() {
        QJsonObject before;
        {
            auto store = openStore();
            QVERIFY(store);
            EventBus bus;
            store->attach(&bus);
            publishExchange(bus, "req_one", "first question",
                            {{"input_tokens", 3}, {"output_tokens", 4}});
            publishExchange(bus, "req_two", "second question");
            store->flush();
            before = store->query()->flow("req_one").value_or(QJsonObject());
            QCOMPARE(before.value("state").toString(), QString("completed"));
        }
        QCOMPARE(countRows(dbPath(), "flows"), 2);
        auto store = openStore();
        QVERIFY(store);
        const auto after = store->query()->flow("req_one");
        QVERIFY(after);
        QCOMPARE(*after, before);
        QCOMPARE(after->value("usage").toObject().value("total_tokens").toInt(), 7);
        QCOMPARE(after->value("hops").toArray().size(), 4);
        FlowFilter q;
        q.q = "second";
        const QJsonArray hits = store->query()->list(q).value("data").toArray();
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits.first().toObject().value("id").toString(), QString("req_two"));
        QVERIFY(!store->query()->flow("req_nope"));
        // Bodies are stored compressed: the raw column does not hold the text.
        const QByteArray column = storedHopsColumn(dbPath(), "req_one");
        QVERIFY(!column.isEmpty());
        QVERIFY(!column.contains("first question"));
        QVERIFY(StoredBlob::decompress(column).contains("first question"));
    }

    void searchPagesThroughEveryMatch() {
        auto store = openStore();
        EventBus bus;
        store->attach(&bus);
        for (int i = 0; i < 7; ++i)
            publishExchange(bus, QStringLiteral("req_p%1").arg(i),
                            i == 3 ? QString("other words") : QString("common pelican"));
        store->flush();
        FlowFilter q;
        q.q = "pelican";
        q.limit = 4;
        QStringList seen;
        for (int page = 0; page < 5; ++page) {
            const QJsonObject result = store->query()->list(q);
            for (const QJsonValue &f : result.value("data").toArray())
                seen << f.toObject().value("id").toString();
            if (!result.value("has_more").toBool())
                break;
            q.before = seen.last();
        }
        seen.sort();
        QCOMPARE(seen, (QStringList{"req_p0", "req_p1", "req_p2", "req_p4", "req_p5", "req_p6"}));
    }

    void flowsRunningAtShutdownAreKeptAsFailed() {
        {
            auto store = openStore();
            EventBus bus;
            store->attach(&bus);
            InspectorEvent request =
                InspectorEvent::make(Kind::ClientRequest, "req_inflight", -1,
                                     {{"method", "POST"}, {"path", "/v1/responses"}});
            request.raw = R"({"model":"m","stream":true})";
            bus.publish(request);
            bus.publish(Kind::ClientResponse, "req_inflight", -1,
                        {{"status", 200},
                         {"stream", true},
                         {"headers", QJsonObject{{"content-type", "text/event-stream"}}}});
            store->flush();
            QCOMPARE(store->query()->flow("req_inflight")->value("state").toString(),
                     QString("running"));
        }
        auto store = openStore();
        const auto flow = store->query()->flow("req_inflight");
        QVERIFY(flow);
        QCOMPARE(flow->value("state").toString(), QString("failed"));
        QCOMPARE(flow->value("status").toInt(), 499);
        QCOMPARE(flow->value("incomplete_reason").toString(), QString("loopscope stopped"));
    }

    void longStreamsAreCappedWithTheirEndKept_data() {
        QTest::addColumn<int>("deltas");
        QTest::newRow("short") << 100;
        QTest::newRow("at the cap") << int(FlowRecorder::kMaxSseEvents) - 1;
        QTest::newRow("past the cap") << int(FlowRecorder::kMaxSseEvents) + 4321;
    }

    // The SSE events a flow keeps are bounded: the first ones and the last kSseTail (the end
    // of a stream, here Responses' response.completed), the rest counted on the hop and in the
    // store's counters.
    void longStreamsAreCappedWithTheirEndKept() {
        QFETCH(int, deltas);
        auto store = openStore();
        EventBus bus;
        store->attach(&bus);
        const QString id = "req_long";
        InspectorEvent request = InspectorEvent::make(
            Kind::ClientRequest, id, -1, {{"method", "POST"}, {"path", "/v1/responses"}});
        request.raw = R"({"model":"m","stream":true})";
        bus.publish(request);
        bus.publish(Kind::ClientResponse, id, -1,
                    {{"status", 200},
                     {"stream", true},
                     {"headers", QJsonObject{{"content-type", "text/event-stream"}}}});
        for (int i = 0; i < deltas; ++i) {
            InspectorEvent chunk = InspectorEvent::make(Kind::ClientResponseChunk, id);
            chunk.raw = "event: response.output_text.delta\ndata: {\"type\":\"response.output_"
                        "text.delta\",\"delta\":\"d" +
                        QByteArray::number(i) + "\"}\n\n";
            bus.publish(chunk);
        }
        InspectorEvent done = InspectorEvent::make(Kind::ClientResponseChunk, id);
        done.raw = "event: response.completed\ndata: {\"type\":\"response.completed\","
                   "\"response\":{\"id\":\"resp_1\",\"status\":\"completed\"}}\n\n";
        bus.publish(done);
        bus.publish(Kind::ExchangeFinished, id, -1, {{"status", 200}, {"durationMs", 1.0}});
        store->flush();

        const auto flow = store->query()->flow(id);
        QVERIFY(flow);
        QJsonObject hop;
        for (const QJsonValue &h : flow->value("hops").toArray())
            if (h.toObject().value("kind").toString() == QLatin1String("client_response"))
                hop = h.toObject();
        const QJsonArray events = hop.value("events").toArray();
        const qsizetype total = qsizetype(deltas) + 1;
        const qsizetype kept = qMin(total, FlowRecorder::kMaxSseEvents);
        QCOMPARE(events.size(), kept);
        QCOMPARE(hop.value("events_dropped").toInteger(), qint64(total - kept));
        QCOMPARE(store->counters().sseEventsDropped, quint64(total - kept));
        const QByteArray first = QJsonDocument(events.first().toObject()).toJson();
        const QByteArray last = QJsonDocument(events.last().toObject()).toJson();
        QVERIFY2(first.contains("\"d0\""), first.constData());
        QVERIFY2(last.contains("response.completed"), last.constData());
        if (total > kept) { // the tail starts where the dropped events end
            const QByteArray tailStart =
                QJsonDocument(
                    events.at(FlowRecorder::kMaxSseEvents - FlowRecorder::kSseTail).toObject())
                    .toJson();
            QVERIFY2(tailStart.contains(QByteArray(
                         "\"d" + QByteArray::number(deltas - FlowRecorder::kSseTail + 1) + "\"")),
                     tailStart.constData());
        }
    }

    // A pass-through relays the client's bytes: the upstream request's body and the upstream
    // answer (its body, or its SSE events) are the client's. The file keeps each once; every
    // read gives both hops their copy, and search finds the words.
    void passThroughCopiesAreStoredOnce_data() {
        QTest::addColumn<bool>("streamed");
        QTest::newRow("JSON answer") << false;
        QTest::newRow("SSE answer") << true;
    }
    void passThroughCopiesAreStoredOnce() {
        QFETCH(bool, streamed);
        const QString id = "req_relay";
        {
            auto store = openStore();
            EventBus bus;
            store->attach(&bus);
            InspectorEvent request = InspectorEvent::make(
                Kind::ClientRequest, id, -1, {{"method", "POST"}, {"path", "/v1/responses"}});
            request.raw = R"({"model":"m","input":"zebraquestion"})";
            bus.publish(request);
            InspectorEvent upstream = InspectorEvent::make(
                Kind::UpstreamRequest, id, 0,
                {{"url", "http://127.0.0.1:9/v1/responses"}, {"passThrough", true}});
            upstream.raw = request.raw; // the same bytes, as the proxy forwards them
            bus.publish(upstream);
            bus.publish(Kind::UpstreamResponse, id, 0, {{"status", 200}, {"stream", streamed}});
            if (streamed) {
                bus.publish(Kind::ClientResponse, id, -1,
                            {{"status", 200},
                             {"stream", true},
                             {"headers", QJsonObject{{"content-type", "text/event-stream"}}}});
                InspectorEvent chunk = InspectorEvent::make(Kind::ClientResponseChunk, id);
                chunk.raw = "event: response.output_text.delta\ndata: {\"type\":\"response."
                            "output_text.delta\",\"delta\":\"zebraanswer\"}\n\n";
                bus.publish(chunk);
            } else {
                InspectorEvent response = InspectorEvent::make(
                    Kind::ClientResponse, id, -1, {{"status", 200}, {"stream", false}});
                response.raw = R"({"id":"resp_1","output_text":"zebraanswer"})";
                bus.publish(response);
            }
            bus.publish(Kind::ExchangeFinished, id, -1, {{"status", 200}, {"durationMs", 1.0}});
            store->flush();
        }
        // In the file: each text once, the upstream hops pointing at the client's.
        const QByteArray stored = StoredBlob::decompress(storedHopsColumn(dbPath(), id));
        QVERIFY(!stored.isEmpty());
        QCOMPARE(stored.count("zebraquestion"), 1);
        QCOMPARE(stored.count("zebraanswer"), 1);
        QVERIFY2(stored.contains(R"("body_from":"client_request")"), stored.constData());
        QVERIFY2(stored.contains(streamed ? R"("events_from":"client_response")"
                                          : R"("body_from":"client_response")"),
                 stored.constData());
        // Read back (after a reopen, so from the file): both hops whole.
        auto store = openStore();
        const auto flow = store->query()->flow(id);
        QVERIFY(flow);
        QHash<QString, QJsonObject> hops;
        for (const QJsonValue &h : flow->value("hops").toArray())
            hops.insert(h.toObject().value("kind").toString(), h.toObject());
        QCOMPARE(hops.size(), 4);
        QCOMPARE(hops["upstream_request"].value("body"), hops["client_request"].value("body"));
        QCOMPARE(hops["client_request"].value("body").toObject().value("input").toString(),
                 QString("zebraquestion"));
        const QString key = streamed ? "events" : "body";
        QCOMPARE(hops["upstream_response"].value(key), hops["client_response"].value(key));
        QVERIFY(QJsonDocument(QJsonObject{{"copy", hops["upstream_response"].value(key)}})
                    .toJson()
                    .contains("zebraanswer"));
        for (const QJsonObject &hop : std::as_const(hops)) {
            QVERIFY(!hop.contains("body_from"));
            QVERIFY(!hop.contains("events_from"));
        }
        for (const char *word : {"zebraquestion", "zebraanswer"}) {
            FlowFilter q;
            q.q = word;
            QCOMPARE(store->query()->list(q).value("data").toArray().size(), 1);
        }
    }

    // A JSON body recorded as it parsed, nothing masked, is stored as the text it came in (not
    // serialised again: a fifth of recording a large flow's CPU), and reads back the same; a
    // body that masking changed is stored masked.
    void bodiesAreStoredAsTheyCame_data() {
        QTest::addColumn<QByteArray>("request");
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<bool>("verbatim");
        // Spaces, an escape and a number written as no serialiser writes them: only the text
        // as it came holds them.
        QTest::newRow("as sent")
            << QByteArray(" {\n  \"model\" : \"m\", \"input\": \"zebra\\u0041\", \"n\": 1.50 }\n")
            << QByteArray("[ {\"id\" : \"resp_1\", \"output_text\": \"zebraanswer\" } ]") << true;
        QTest::newRow("a secret masked")
            << QByteArray("{ \"model\": \"m\", \"input\": \"zebra sk-proj-abcdefghijklmnop1234\" }")
            << QByteArray("{ \"id\": \"resp_1\", \"api_key\": \"zebraanswer-secret\" }") << false;
    }
    void bodiesAreStoredAsTheyCame() {
        QFETCH(QByteArray, request);
        QFETCH(QByteArray, answer);
        QFETCH(bool, verbatim);
        const QString id = "req_verbatim";
        {
            auto store = openStore();
            EventBus bus;
            store->attach(&bus);
            InspectorEvent client = InspectorEvent::make(
                Kind::ClientRequest, id, -1, {{"method", "POST"}, {"path", "/v1/responses"}});
            client.raw = request;
            bus.publish(client);
            InspectorEvent upstream = InspectorEvent::make(
                Kind::UpstreamRequest, id, 0,
                {{"url", "http://127.0.0.1:9/v1/responses"}, {"passThrough", true}});
            upstream.raw = request;
            bus.publish(upstream);
            bus.publish(Kind::UpstreamResponse, id, 0, {{"status", 200}, {"stream", false}});
            InspectorEvent response = InspectorEvent::make(Kind::ClientResponse, id, -1,
                                                           {{"status", 200}, {"stream", false}});
            response.raw = answer;
            bus.publish(response);
            bus.publish(Kind::ExchangeFinished, id, -1, {{"status", 200}, {"durationMs", 1.0}});
            store->flush();
        }
        const QByteArray stored = StoredBlob::decompress(storedHopsColumn(dbPath(), id));
        QVERIFY2(QJsonDocument::fromJson(stored).isArray(), stored.constData());
        QCOMPARE(stored.contains(request), verbatim);
        QCOMPARE(stored.contains(answer), verbatim);
        QVERIFY(!stored.contains("sk-proj-abcdefghijklmnop1234"));
        QVERIFY(!stored.contains("zebraanswer-secret"));
        QVERIFY2(stored.contains(R"("body_from":"client_request")"), stored.constData());
        // Read back from the file: the bodies the recorder parsed (and masked).
        auto store = openStore();
        const auto flow = store->query()->flow(id);
        QVERIFY(flow);
        QHash<QString, QJsonObject> hops;
        for (const QJsonValue &h : flow->value("hops").toArray())
            hops.insert(h.toObject().value("kind").toString(), h.toObject());
        const QJsonValue sent = hops["client_request"].value("body");
        const QJsonValue got = hops["client_response"].value("body");
        QCOMPARE(hops["upstream_request"].value("body"), sent);
        if (verbatim) {
            QCOMPARE(sent, QJsonValue(QJsonDocument::fromJson(request).object()));
            QCOMPARE(got, QJsonValue(QJsonDocument::fromJson(answer).array()));
            QCOMPARE(sent.toObject().value("input").toString(), QString("zebraA"));
        } else {
            QVERIFY(sent.toObject().value("input").toString().startsWith("zebra "));
            QVERIFY(!sent.toObject().value("input").toString().contains("abcdefghijklmnop"));
        }
        FlowFilter q;
        q.q = "zebraanswer";
        QCOMPARE(store->query()->list(q).value("data").toArray().size(), verbatim ? 1 : 0);
    }

    // The writer commits on its own thread (issue 11): while its commit waits for the file
    // (another connection holds the write lock, like a slow disk or a long checkpoint would),
    // the recorder keeps taking events, and readers see the finished flows as pending.
    void recordingGoesOnWhileTheWriterWaits() {
        auto store = openStore();
        QVERIFY(store);
        EventBus bus;
        store->attach(&bus);
        const auto finished = [&store](const QString &id) {
            const auto flow = store->query()->flow(id);
            return flow && flow->value("state").toString() == QLatin1String("completed");
        };
        {
            QSqlDatabase blocker = QSqlDatabase::addDatabase("QSQLITE", "blocker");
            blocker.setDatabaseName(dbPath());
            QVERIFY(blocker.open());
            QSqlQuery lock(blocker);
            QVERIFY2(lock.exec("BEGIN IMMEDIATE"), qPrintable(lock.lastError().text()));

            publishExchange(bus, "req_first", "written while the file is locked");
            QTRY_VERIFY_WITH_TIMEOUT(finished("req_first"), 5000);
            // Past the writer's tick (100 ms): its commit now waits for the lock (up to the
            // 10 s busy timeout). With recorder and writer on one thread, no event would be
            // taken during that wait and the next flow could not appear below.
            QTest::qWait(400);
            publishExchange(bus, "req_second", "recorded while the writer waits");
            QTRY_VERIFY_WITH_TIMEOUT(finished("req_second"), 5000);
            QCOMPARE(store->counters().flowsWritten, quint64(0)); // both still pending
            QStringList listed;
            for (const QJsonValue &f : store->query()->list({}).value("data").toArray())
                listed << f.toObject().value("id").toString();
            listed.sort();
            QCOMPARE(listed, (QStringList{"req_first", "req_second"}));

            QVERIFY(lock.exec("ROLLBACK"));
            lock.finish();
            blocker.close();
        }
        QSqlDatabase::removeDatabase("blocker");
        store->flush();
        const FlowStoreCounters c = store->counters();
        QCOMPARE(c.flowsWritten, quint64(2));
        QCOMPARE(c.flowsFailed, quint64(0));
        QCOMPARE(countRows(dbPath(), "flows"), 2);
        FlowFilter q;
        q.q = "waits";
        const QJsonArray hits = store->query()->list(q).value("data").toArray();
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits.first().toObject().value("id").toString(), QString("req_second"));
    }

    // Summaries are made only while someone listens (issue 11), and listeners that connect
    // after open() get them, queued to their own thread.
    void changeSignalsReachLateListenersOnTheirThread() {
        auto store = openStore();
        QVERIFY(store);
        EventBus bus;
        store->attach(&bus);
        publishExchange(bus, "req_unobserved", "nobody listens");
        store->flush();

        QObject receiver; // lives on this (the test's) thread
        QStringList started, updated, finished;
        bool onReceiverThread = true;
        const auto collect = [&](QStringList &into) {
            return [&into, &onReceiverThread, &receiver](const QJsonObject &summary) {
                onReceiverThread &= QThread::currentThread() == receiver.thread();
                into << summary.value("id").toString();
            };
        };
        connect(store.get(), &FlowStore::flowStarted, &receiver, collect(started));
        connect(store.get(), &FlowStore::flowUpdated, &receiver, collect(updated));
        connect(store.get(), &FlowStore::flowFinished, &receiver, collect(finished));
        publishExchange(bus, "req_observed", "somebody listens");
        store->flush();
        QTRY_COMPARE_WITH_TIMEOUT(finished, QStringList{"req_observed"}, 5000);
        QCOMPARE(started, QStringList{"req_observed"});
        QVERIFY(updated.size() >= 3); // upstream request, upstream response, client response
        QVERIFY(std::all_of(updated.cbegin(), updated.cend(),
                            [](const QString &id) { return id == "req_observed"; }));
        QVERIFY(onReceiverThread);
        // The unobserved flow was recorded all the same.
        QCOMPARE(store->query()->flow("req_unobserved")->value("state").toString(),
                 QString("completed"));
    }

    void importedFlowsAreMarkedAndRunsSurviveRestart() {
        {
            auto store = openStore();
            QJsonObject flow = storedFlow("req_imported", QDateTime::currentMSecsSinceEpoch());
            QCOMPARE(store->importFlows({flow, flow}), 2); // the second gets a fresh id
            const auto got = store->query()->flow("req_imported");
            QVERIFY(got);
            QCOMPARE(got->value("imported").toBool(), true);
            QCOMPARE(store->query()->list({}).value("data").toArray().size(), 2);
        }
        auto store = openStore();
        QCOMPARE(store->query()->list({}).value("data").toArray().size(), 2);
        // An id the file already holds is not overwritten: the import gets a fresh one.
        QCOMPARE(store->importFlows({storedFlow("req_imported", 1)}), 1);
        QCOMPARE(store->query()->list({}).value("data").toArray().size(), 3);
        QVERIFY(store->query()->flow("req_imported")->value("started_at").toDouble() > 1);
    }

    // Deleting flows takes them out of their run's totals too (the Runs view and GET /runs
    // show what is stored, not what once was).
    void deletedFlowsLeaveTheirRunsTotals() {
        auto store = openStore();
        QVERIFY(store);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QList<QJsonObject> flows;
        for (int i = 0; i < 3; ++i) {
            QJsonObject f = storedFlow(QStringLiteral("req_run%1").arg(i), now + i * 1000);
            f.insert("run_id", "run_total");
            f.insert("duration_ms", 500);
            f.insert("usage", QJsonObject{{"input_tokens", 100 * (i + 1)},
                                          {"output_tokens", 10 * (i + 1)},
                                          {"total_tokens", 110 * (i + 1)}});
            f.insert("cost_usd", 0.5 * (i + 1));
            f.insert("code_runs", i + 1);
            f.insert("tool_calls", i);
            flows.append(f);
        }
        QCOMPARE(store->importFlows(flows), 3);
        store->flush();
        const auto run = [&] {
            for (const QJsonValue &r : store->query()->runs(10))
                if (r.toObject().value("id").toString() == "run_total")
                    return r.toObject();
            return QJsonObject();
        };
        QCOMPARE(run().value("flows").toArray().size(), 3);
        QCOMPARE(run().value("usage").toObject().value("input_tokens").toInt(), 600);

        QCOMPARE(store->remove({QStringLiteral("req_run2")}), 1);
        const QJsonObject after = run();
        QCOMPARE(after.value("flows").toArray().size(), 2);
        QCOMPARE(after.value("usage").toObject().value("input_tokens").toInt(), 300);
        QCOMPARE(after.value("usage").toObject().value("output_tokens").toInt(), 30);
        QCOMPARE(after.value("usage").toObject().value("total_tokens").toInt(), 330);
        QCOMPARE(after.value("cost_usd").toDouble(), 1.5);
        QCOMPARE(after.value("code_runs").toInt(), 3);
        QCOMPARE(after.value("tool_calls").toInt(), 1);
        QCOMPARE(after.value("duration_ms").toDouble(), 1500.0); // first start to second end

        QCOMPARE(store->remove({QStringLiteral("req_run0"), QStringLiteral("req_run1")}), 2);
        QVERIFY(run().isEmpty()); // no flow left: no run
    }

    // The full-text index keeps no copy of a flow's text (schema 3): it is most of a large
    // flow's size. So a deleted flow is taken out of it with the text derived again from its
    // stored row; its words leave the index itself, not only the search results. Recorded
    // pass-through flows (their upstream copies stored as references) and imported ones.
    void deletedFlowsLeaveTheSearchIndex_data() {
        QTest::addColumn<QString>("how");
        QTest::newRow("removed") << "remove";
        QTest::newRow("retention by age") << "retention";
        QTest::newRow("cleared") << "clear";
    }
    void deletedFlowsLeaveTheSearchIndex() {
        QFETCH(QString, how);
        const qint64 day = 24LL * 3600 * 1000;
        FlowStoreOptions options;
        options.maxDays = 14;
        auto store = openStore(options);
        QVERIFY(store);
        EventBus bus;
        store->attach(&bus);
        publishExchange(bus, "req_gone", "zebrafinch");
        publishExchange(bus, "req_kept", "kingfisher");
        // Non-ASCII text, and a lone surrogate (a JSON escape no pair follows): the text is
        // bound as UTF-8 in the first case and as UTF-16 in the second, and each row must
        // leave the index with exactly the tokens it went in with.
        publishExchange(bus, "req_odd",
                        QString::fromUtf8("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac magpie"));
        {
            InspectorEvent request =
                InspectorEvent::make(Kind::ClientRequest, "req_lone", -1,
                                     {{"method", "POST"}, {"path", "/v1/responses"}});
            request.raw = R"({"model":"m","input":"puffin \ud800 tern"})";
            bus.publish(request);
            bus.publish(Kind::ExchangeFinished, "req_lone", -1, {{"status", 400}});
        }
        store->flush();
        QCOMPARE(
            store->importFlows({storedFlow(
                "req_oldimport", QDateTime::currentMSecsSinceEpoch() - 20 * day, "albatross")}),
            1);
        store->flush();
        QVERIFY(!hasTable(dbPath(), "flows_fts_content"));
        QStringList terms = indexedTerms(dbPath());
        // (The tokenizer splits ids at '_': "req_gone" is indexed as "req" and "gone".)
        for (const char *word :
             {"zebrafinch", "kingfisher", "albatross", "gone", "oldimport", "magpie", "puffin"})
            QVERIFY2(terms.contains(word), word);
        QVERIFY(terms.contains(QString::fromUtf8("cafe"))); // unicode61 folds the accent

        QStringList gone;
        if (how == "remove") {
            QCOMPARE(store->remove({"req_gone", "req_oldimport", "req_odd", "req_lone"}), 4);
            gone = {"zebrafinch", "albatross", "gone",   "oldimport", "cafe",
                    "magpie",     "odd",       "puffin", "tern",      "lone"};
        } else if (how == "retention") {
            store->applyRetention();
            QVERIFY(!store->query()->flow("req_oldimport"));
            gone = {"albatross", "oldimport"};
        } else {
            QCOMPARE(store->clear(), 5);
            gone = {"zebrafinch", "kingfisher", "albatross", "gone", "kept", "magpie", "puffin"};
        }
        terms = indexedTerms(dbPath());
        for (const QString &word : gone)
            QVERIFY2(!terms.contains(word), qPrintable(word));
        FlowFilter search;
        search.q = "kingfisher";
        QCOMPARE(store->query()->list(search).value("data").toArray().size(),
                 how == "clear" ? 0 : 1);
        if (how != "clear")
            QVERIFY(terms.contains("kingfisher"));
        QCOMPARE(countRows(dbPath(), "flows_fts"), countRows(dbPath(), "flows"));
        const QString check = searchIndexError(dbPath());
        QVERIFY2(check.isEmpty(), qPrintable(check));
    }

    // Rows indexed before the search text was bound as UTF-8 (SQLite converted the UTF-16
    // string itself) leave the index with the tokens they went in with: the same bytes for any
    // text, except one holding a lone surrogate, which SQLite spells its own way and which is
    // therefore still bound as UTF-16.
    void rowsIndexedFromUtf16LeaveTheIndex() {
        {
            auto store = openStore();
            EventBus bus;
            store->attach(&bus);
            publishExchange(bus, "req_odd",
                            QString::fromUtf8("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac magpie"));
            InspectorEvent request =
                InspectorEvent::make(Kind::ClientRequest, "req_lone", -1,
                                     {{"method", "POST"}, {"path", "/v1/responses"}});
            request.raw = R"({"model":"m","input":"puffin \ud800 tern"})";
            bus.publish(request);
            bus.publish(Kind::ExchangeFinished, "req_lone", -1, {{"status", 400}});
            store->flush();
        }
        // Index both rows again as the writer did before: the text as a string.
        {
            QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "utf16");
            db.setDatabaseName(dbPath());
            QVERIFY(db.open());
            QSqlQuery rows(db);
            QVERIFY(rows.exec("SELECT seq, summary, hops FROM flows"));
            int reindexed = 0;
            while (rows.next()) {
                const qint64 seq = rows.value(0).toLongLong();
                const QString text = StoreDatabase::searchTextOfRow(rows.value(1).toByteArray(),
                                                                    rows.value(2).toByteArray());
                QSqlQuery q(db);
                q.prepare(QLatin1String(StoreDatabase::kUnindexRowSql));
                q.addBindValue(seq);
                q.addBindValue(StoreDatabase::searchValue(text));
                QVERIFY(q.exec());
                q.prepare(QLatin1String(StoreDatabase::kIndexRowSql));
                q.addBindValue(seq);
                q.addBindValue(text);
                QVERIFY(q.exec());
                ++reindexed;
            }
            QCOMPARE(reindexed, 2);
            db.close();
        }
        QSqlDatabase::removeDatabase("utf16");
        auto store = openStore();
        QCOMPARE(store->remove({"req_odd", "req_lone"}), 2);
        QCOMPARE(indexedTerms(dbPath()), QStringList());
        const QString check = searchIndexError(dbPath());
        QVERIFY2(check.isEmpty(), qPrintable(check));
    }

    // Retention must not run after every commit: only when a size limit exists and the stored
    // size is unknown or over it.
    void retentionRunsOnlyWhenALimitCanBePassed() {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const auto importThree = [&](FlowStore &store, const QString &prefix) {
            for (int batch = 0; batch < 3; ++batch) {
                QList<QJsonObject> flows;
                for (int i = 0; i < 5; ++i)
                    flows.append(storedFlow(prefix + QString::number(batch * 5 + i),
                                            now - 1000 + batch * 5 + i));
                QCOMPARE(store.importFlows(flows), 5);
                store.flush();
            }
        };
        {
            FlowStoreOptions unlimited;
            unlimited.maxBytes = 0; // no size limit (benchmarks open stores like this)
            auto store = openStore(unlimited);
            const quint64 before = store->counters().retentionPasses;
            importThree(*store, QStringLiteral("req_unl"));
            QCOMPARE(store->counters().retentionPasses, before);
            QCOMPARE(countRows(dbPath(), "flows"), 15);
            store->clear();
        }
        auto store = openStore(); // the default 500 MB: far from it
        const quint64 before = store->counters().retentionPasses;
        importThree(*store, QStringLiteral("req_lim"));
        // At most one pass, to learn the stored size; none once it is known to be under.
        QVERIFY(store->counters().retentionPasses <= before + 1);
    }

    void retentionByAgeAndSize() {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const qint64 day = 24LL * 3600 * 1000;
        {
            FlowStoreOptions options;
            options.maxDays = 14;
            auto store = openStore(options);
            QCOMPARE(store->importFlows({storedFlow("req_old", now - 20 * day),
                                         storedFlow("req_recent", now - 2 * day)}),
                     2);
            store->applyRetention();
            QVERIFY(!store->query()->flow("req_old"));
            QVERIFY(store->query()->flow("req_recent"));
            store->clear();
        }
        FlowStoreOptions options;
        options.maxBytes = 200 * 1024;
        auto store = openStore(options);
        // ~20 KiB of incompressible-ish text per flow: 30 flows are far over 200 KiB.
        QList<QJsonObject> flows;
        for (int i = 0; i < 30; ++i) {
            QString padding;
            for (int j = 0; j < 800; ++j)
                padding += QString::number(QRandomGenerator::global()->generate64(), 36);
            flows.append(storedFlow(QStringLiteral("req_size%1").arg(i, 2, 10, QLatin1Char('0')),
                                    now - (30 - i) * 1000, padding));
        }
        QCOMPARE(store->importFlows(flows), 30);
        store->applyRetention();
        const int kept = countRows(dbPath(), "flows");
        QVERIFY2(kept > 0 && kept < 30, qPrintable(QString::number(kept)));
        // The oldest went first.
        QVERIFY(!store->query()->flow("req_size00"));
        QVERIFY(store->query()->flow("req_size29"));
        QCOMPARE(countRows(dbPath(), "flows_fts"), kept);
    }

    // A limit passed by thousands of flows is worked off in several transactions (chunks of
    // 2,000), oldest first, and ends under the limit with the full-text index in step.
    void retentionWorksOffALargeExcessInChunks() {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        FlowStoreOptions options;
        options.maxBytes = 256 * 1024;
        auto store = openStore(options);
        QVERIFY(store);
        constexpr int kFlows = 4500;
        QList<QJsonObject> flows;
        for (int i = 0; i < kFlows; ++i)
            flows.append(storedFlow(QStringLiteral("req_many%1").arg(i, 5, 10, QLatin1Char('0')),
                                    now - (kFlows - i) * 10));
        QCOMPARE(store->importFlows(flows), kFlows);
        store->flush();
        store->applyRetention();
        const int kept = countRows(dbPath(), "flows");
        QVERIFY2(kept > 0 && kept < kFlows - 2000, qPrintable(QString::number(kept)));
        QCOMPARE(countRows(dbPath(), "flows_fts"), kept);
        QCOMPARE(store->counters().retentionRemoved, quint64(kFlows - kept));
        QVERIFY(!store->query()->flow("req_many00000"));
        QVERIFY(store->query()->flow(
            QStringLiteral("req_many%1").arg(kFlows - 1, 5, 10, QLatin1Char('0'))));
        QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "chunks");
        {
            db.setDatabaseName(dbPath());
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec("SELECT coalesce(sum(bytes), 0) FROM flows") && q.next());
            QVERIFY2(q.value(0).toLongLong() <= options.maxBytes,
                     qPrintable(q.value(0).toString()));
        }
        db.close();
        db = {};
        QSqlDatabase::removeDatabase("chunks");
    }

    // history.max_mb counts what a row adds to the file: summary, compressed hops and a third
    // of its search text for the index. Schema 3 counted the text in full, as if stored: a
    // file of a few MB could count as hundreds, and retention deleted flows long before the
    // limit. A schema-3 file's counts are corrected when it is opened.
    void rowsCountWhatTheFileHolds() {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        struct Row {
            qint64 bytes = -1, summary = 0, hops = 0, text = 0;
        };
        auto readRow = [&] {
            return readSqliteFile(dbPath(), Row(), [](QSqlDatabase db) {
                Row row;
                QSqlQuery q(db);
                if (q.exec("SELECT bytes, summary, hops FROM flows WHERE id = 'req_sized'") &&
                    q.next()) {
                    const QByteArray summary = q.value(1).toByteArray();
                    const QByteArray hops = q.value(2).toByteArray();
                    row = {q.value(0).toLongLong(), summary.size(), hops.size(),
                           StoreDatabase::searchTextOfRow(summary, hops).size()};
                }
                return row;
            });
        };
        {
            auto store = openStore();
            QVERIFY(store);
            // 60 KB of text that compresses to almost nothing: the count is the index's share.
            QCOMPARE(store->importFlows({storedFlow("req_sized", now, QString(60000, u'w'))}), 1);
            store->flush();
        }
        const Row written = readRow();
        QVERIFY(written.text > 60000);
        QCOMPARE(written.bytes, written.summary + written.hops + written.text / 3);
        QVERIFY2(written.bytes < 25000, qPrintable(QString::number(written.bytes)));
        // The same row as schema 3 counted it.
        QVERIFY(readSqliteFile(dbPath(), false, [&](QSqlDatabase db) {
            QSqlQuery q(db);
            q.prepare("UPDATE flows SET bytes = ?");
            q.addBindValue(written.summary + written.hops + written.text);
            return q.exec() && q.exec("UPDATE meta SET value = '3' WHERE key = 'schema_version'");
        }));
        {
            auto store = openStore();
            QVERIFY(store);
            QVERIFY(store->query()->flow("req_sized"));
        }
        QCOMPARE(readRow().bytes, written.bytes);
        QCOMPARE(readSqliteFile(dbPath(), -1, &StoreDatabase::schemaVersion),
                 StoreDatabase::kSchemaVersion);
    }

    void migratesSchemaOneForward() {
        {
            QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "v1");
            db.setDatabaseName(dbPath());
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec("PRAGMA journal_mode=WAL")); // as the writer opens every file
            QString error;
            QVERIFY2(StoreDatabase::createSchemaV1(db, &error), qPrintable(error));
            QJsonObject flow = storedFlow("req_v1", 1000);
            const QJsonArray hops = flow.take("hops").toArray();
            q.prepare("INSERT INTO flows(id, started_at, run_id, state, status, summary, hops) "
                      "VALUES('req_v1', ?, 'run_v1', 'completed', 200, ?, ?)");
            q.addBindValue(QDateTime::currentMSecsSinceEpoch());
            q.addBindValue(QJsonDocument(flow).toJson());
            q.addBindValue(qCompress(QJsonDocument(hops).toJson()));
            QVERIFY(q.exec());
            // Schema 1 and 2 kept the text in the index (content stored): as they wrote it.
            q.prepare("INSERT INTO flows_fts(rowid, body) VALUES(last_insert_rowid(), ?)");
            q.addBindValue(QString("req_v1\n/v1/responses\nan old word: pelican\n" +
                                   QString("a large old body ").repeated(60000)));
            QVERIFY(q.exec());
            QVERIFY(q.exec("SELECT 1 FROM sqlite_master WHERE name = 'flows_fts_content'") &&
                    q.next());
            QVERIFY(q.exec("INSERT INTO runs(id, started_at, last_at, flow_count, input_tokens, "
                           "output_tokens, total_tokens, cost_usd, cost_known, code_runs) "
                           "VALUES('run_v1', 1, 2, 1, 0, 0, 0, 0, 0, 0)"));
            QCOMPARE(StoreDatabase::schemaVersion(db), 1);
            db.close();
        }
        QSqlDatabase::removeDatabase("v1");
        auto store = openStore();
        QVERIFY(store);
        // Its hops, written as the versions before zstd compressed them, read back.
        const auto v1 = store->query()->flow("req_v1");
        QVERIFY(v1);
        QCOMPARE(v1->value("hops").toArray(), storedFlow("req_v1", 1000).value("hops").toArray());
        const QJsonArray runs = store->query()->runs(10);
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs.first().toObject().value("tool_calls").toInt(), 0); // the new column
        QCOMPARE(countRows(dbPath(), "run_keys"), 0);                     // the new table
        // Schema 3: the index keeps no copy; the flow was indexed again from its row, so its
        // words are found, and a delete (deriving the same text) takes them out.
        QVERIFY(!hasTable(dbPath(), "flows_fts_content"));
        // The file was written again without the old copy's pages.
        QCOMPARE(pragma(dbPath(), "freelist_count"), 0);
        QVERIFY2(pragma(dbPath(), "page_count") < 100,
                 qPrintable(QString::number(pragma(dbPath(), "page_count"))));
        FlowFilter search;
        search.q = "req_v1";
        QCOMPARE(store->query()->list(search).value("data").toArray().size(), 1);
        QVERIFY(indexedTerms(dbPath()).contains("v1"));
        QVERIFY(!indexedTerms(dbPath()).contains("pelican")); // the old index went with its table
        QCOMPARE(store->remove({"req_v1"}), 1);
        QCOMPARE(indexedTerms(dbPath()), QStringList()); // nothing else was stored
        QVERIFY(!QFileInfo::exists(dbPath() + ".broken-*"));
        QCOMPARE(QDir(m_dir->path()).entryList({"*.broken-*"}).size(), 0);
    }

    void unusableFilesAreMovedAside_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("reason");
        QTest::newRow("garbage") << QByteArray("this is not a database at all, just text\n")
                                 << "not a SQLite database";
        QTest::newRow("foreign sqlite") << QByteArray("foreign") << "another program";
        QTest::newRow("corrupt pages") << QByteArray("corrupt") << "";
        QTest::newRow("newer schema") << QByteArray("newer") << "newer Loopscope";
    }
    void unusableFilesAreMovedAside() {
        QFETCH(QByteArray, content);
        QFETCH(QString, reason);
        if (content == "foreign" || content == "newer") {
            QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "other");
            db.setDatabaseName(dbPath());
            QVERIFY(db.open());
            QSqlQuery q(db);
            if (content == "foreign") {
                QVERIFY(q.exec("CREATE TABLE invoices(id INTEGER, total REAL)"));
            } else {
                QString error;
                QVERIFY(StoreDatabase::createSchemaV1(db, &error));
                QVERIFY(q.exec("UPDATE meta SET value='99' WHERE key='schema_version'"));
            }
            db.close();
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase("other");
        } else if (content == "corrupt") {
            {
                auto store = openStore();
                EventBus bus;
                store->attach(&bus);
                for (int i = 0; i < 50; ++i)
                    publishExchange(bus, QStringLiteral("req_c%1").arg(i), QString(500, u'x'));
                store->flush();
            }
            QFile file(dbPath());
            QVERIFY(file.open(QIODevice::ReadWrite));
            file.seek(4096 + 100); // page 2 onwards: b-tree pages overwritten
            file.write(QByteArray(8192, '\xA5'));
            file.close();
        } else {
            QFile file(dbPath());
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(content);
        }
        const QByteArray original = [&] {
            QFile f(dbPath());
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression("history file .* is unusable .*" +
                                                QRegularExpression::escape(reason) +
                                                ".* moved it to .*broken.* fresh history"));
        auto store = openStore();
        QVERIFY(store);
        const QStringList aside = QDir(m_dir->path()).entryList({"history.sqlite3.broken-*"});
        QVERIFY2(!aside.isEmpty(), qPrintable(QDir(m_dir->path()).entryList().join(',')));
        QFile moved(m_dir->filePath(aside.first()));
        QVERIFY(moved.open(QIODevice::ReadOnly));
        QCOMPARE(moved.readAll(), original); // kept as it was, for the user to inspect
        EventBus bus;
        store->attach(&bus);
        publishExchange(bus, "req_fresh", "works");
        store->flush();
        QVERIFY(store->query()->flow("req_fresh"));
        QCOMPARE(integrity(dbPath()), QString("ok"));
    }

    void inMemoryStoreNeverTouchesDisk() {
        FlowStoreOptions options;
        options.inMemory = true;
        options.path = dbPath(); // ignored
        auto store = openStore(options);
        QVERIFY(store);
        QCOMPARE(store->path(), QString(":memory:"));
        EventBus bus;
        store->attach(&bus);
        publishExchange(bus, "req_mem", "kept in memory");
        store->flush();
        QVERIFY(store->query()->flow("req_mem"));
        FlowFilter q;
        q.q = "memory";
        QCOMPARE(store->query()->list(q).value("data").toArray().size(), 1);
        QCOMPARE(QDir(m_dir->path()).entryList(QDir::Files).size(), 0);
    }

    void readsFromManyThreadsWhileWriting() {
        auto store = openStore();
        EventBus bus;
        store->attach(&bus);
        std::atomic<bool> stop{false};
        std::atomic<int> reads{0};
        QList<QThread *> threads;
        for (int t = 0; t < 3; ++t) {
            threads.append(QThread::create([&] {
                while (!stop.load()) {
                    const QJsonObject page = store->query()->list({});
                    if (page.value("object").toString() == QLatin1String("list"))
                        reads.fetch_add(1);
                }
            }));
            threads.last()->start();
        }
        for (int i = 0; i < 200; ++i)
            publishExchange(bus, QStringLiteral("req_t%1").arg(i), "threaded");
        store->flush();
        QTRY_VERIFY(reads.load() > 10);
        stop = true;
        for (QThread *t : threads) {
            t->wait();
            delete t;
        }
        FlowFilter all;
        all.limit = 1000;
        QCOMPARE(store->query()->list(all).value("data").toArray().size(), 200);
    }

    void killNineLosesAtMostTheLastBatch() {
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("LOOPSCOPE_RECORD_CHILD_DB", dbPath());
        child.setProcessEnvironment(env);
        child.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(child.waitForStarted(20000));
        int committed = 0;
        QByteArray out;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                out += child.readAllStandardOutput();
                const QList<QByteArray> lines = out.split('\n');
                for (const QByteArray &line : lines)
                    if (line.startsWith("committed "))
                        committed = qMax(committed, line.mid(10).toInt());
                return committed >= 300;
            }(),
            60000);
        child.kill(); // SIGKILL, mid-write
        QVERIFY(child.waitForFinished(20000));
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);

        QCOMPARE(integrity(dbPath()), QString("ok"));
        const int stored = countRows(dbPath(), "flows");
        QVERIFY2(stored >= committed, qPrintable(QString("%1 < %2").arg(stored).arg(committed)));
        auto store = openStore();
        QVERIFY(store);
        QCOMPARE(QDir(m_dir->path()).entryList({"*.broken-*"}).size(), 0);
        for (int i : {0, committed / 2, committed - 1}) {
            const auto flow =
                store->query()->flow(QStringLiteral("req_child%1").arg(i, 8, 10, QLatin1Char('0')));
            QVERIFY(flow);
            QCOMPARE(flow->value("state").toString(), QString("completed"));
            QCOMPARE(flow->value("hops").toArray().size(), 4);
        }
        QCOMPARE(countRows(dbPath(), "flows_fts"), stored);
    }
};

int main(int argc, char *argv[]) {
    if (qEnvironmentVariableIsSet("LOOPSCOPE_RECORD_CHILD_DB"))
        return runChild(argc, argv);
    QCoreApplication app(argc, argv);
    TstFlowStoreFile test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_flowstorefile.moc"
