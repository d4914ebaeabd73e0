#pragma once

#include "record/flowquery.h"
#include "record/modelprice.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QThread>

#include <memory>

namespace loopscope {

class EventBus;
class FlowRecorder;
class StoreDatabase;
class StoreWriter;

struct FlowStoreOptions {
    // SQLite file (WAL). Empty with inMemory=false → <AppDataLocation>/history.sqlite3.
    QString path;
    bool inMemory = false;                 // --no-history: same store, never touches disk
    int maxDays = 14;                      // history.max_days
    qint64 maxBytes = 500LL * 1024 * 1024; // history.max_mb
    int batchIntervalMs = 100;             // writer tick; a batch is at most this old (≤ 200 ms)
    int idleCheckpointMs = 1000;           // WAL checkpoint once nothing was written this long
    QHash<QString, ModelPrice> prices;     // model_list model_name → model_info prices
    // Finished flows kept in memory while the disk refuses writes (StoreWriter): ~10 s of
    // 2,000 requests/s, a few hundred MB at most; the oldest beyond are dropped and counted.
    qsizetype maxUnwrittenFlows = 20'000;
};

// What reached the store (for benchmarks and diagnostics; any thread).
struct FlowStoreCounters {
    quint64 eventsReceived = 0;     // events the recorder took off its queue
    quint64 eventsUnmatched = 0;    // with a request id but no running flow (dropped)
    quint64 flowsWritten = 0;       // rows committed (an import of a stored flow counts too)
    quint64 flowsFailed = 0;        // rows that could not be written and were dropped
    quint64 flowsUnwritten = 0;     // finished flows kept in memory while writes fail (retried)
    quint64 flowsDropped = 0;       // of those, dropped past maxUnwrittenFlows (counted, logged)
    quint64 writeFailures = 0;      // failed write attempts (each retried)
    quint64 intakeDropped = 0;      // events the recorder's bounded intake refused
    quint64 sseEventsDropped = 0;   // SSE events of flows past the per-flow cap, not kept
    quint64 writerQueuedPeak = 0;   // most finished flows ever waiting for the writer at once
    quint64 retentionPasses = 0;    // times retention looked at the stored size and age
    quint64 retentionRemoved = 0;   // flows retention deleted (history.max_days / max_mb)
    quint64 idleCheckpoints = 0;    // WAL checkpoints the writer ran in a pause of the traffic
    bool idleCheckpointDue = false; // one is still to come: the WAL took writes since the last
};

// The flow store: one FlowRecorder (folds InspectorEvents into flows) on the "loopscope-store"
// thread and one StoreWriter (the only write connection; batched transactions, retention) on
// the "loopscope-writer" thread, plus FlowQuery for readers. Two threads so that a commit
// never stops event intake: with both on one thread, a commit of a big batch stalled the
// recorder for seconds at 2,000 req/s and the queued events piled up (issue 11). Owned by the
// app (ProxyService), so history survives a proxy restart from the window. Create, then
// open(), then attach(bus).
class FlowStore : public QObject {
    Q_OBJECT
public:
    explicit FlowStore(FlowStoreOptions options, QObject *parent = nullptr);
    ~FlowStore() override; // flushes the last batch, then stops the thread

    // Opens (or creates, migrates, or moves a corrupt/foreign file aside and recreates) the
    // database. False with one readable line when even a fresh store cannot be made.
    bool open(QString *error = nullptr);
    // Every event published on `bus` is recorded (queued to the store thread).
    void attach(EventBus *bus);
    const FlowStoreOptions &options() const { return m_options; }
    QString path() const; // the file in use, ":memory:" for --no-history

    // Thread-safe read interface (valid after open()).
    const FlowQuery *query() const { return m_query.get(); }

    // Writes; any thread except the store threads (they run there and block until done).
    int clear();                                          // → number of flows removed
    int remove(const QStringList &ids);                   // stored flows only; → removed
    int importFlows(const QList<QJsonObject> &fullFlows); // "imported":true, read-only
    // Waits until every event published before this call is folded in and every finished
    // flow is committed (tests, shutdown, benchmarks).
    void flush();
    // Applies retention now (normally hourly and at open).
    void applyRetention();
    FlowStoreCounters counters() const;
    // Whether anything listens to flowStarted/flowUpdated: only then does the recorder build
    // those summaries. Any thread.
    bool hasLiveObservers() const;
    // Any thread: why history is not being written now ("" while it is), one readable line.
    QString writeProblem() const;
    // Test hook: every write fails (a real SQLite refusal, PRAGMA query_only on the write
    // connection) until called with false; flows are kept and retried meanwhile.
    void failWritesForTests(bool fail);

signals:
    // A flow changed: summary as the spec. Emitted on the store thread (forwarded directly,
    // so an unobserved signal costs nothing per event): connect with a receiver or context
    // object living on your thread, and the call is queued there.
    void flowStarted(const QJsonObject &summary);
    void flowUpdated(const QJsonObject &summary);
    void flowFinished(const QJsonObject &summary);
    // Writing history started failing (`problem`: writeProblem()) or works again (empty).
    // Emitted on the writer thread.
    void writeProblemChanged(const QString &problem);

private:
    FlowStoreOptions m_options;
    QThread m_thread;       // the recorder's
    QThread m_writerThread; // the writer's
    std::unique_ptr<StoreDatabase> m_db;
    FlowRecorder *m_recorder = nullptr; // lives in m_thread
    StoreWriter *m_writer = nullptr;    // lives in m_writerThread
    std::unique_ptr<FlowQuery> m_query;
    // The bus attach() took: its deferred events are waited for before each barrier.
    QPointer<EventBus> m_bus;
    void waitForPublishers();
};

} // namespace loopscope
