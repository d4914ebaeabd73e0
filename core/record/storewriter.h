#pragma once

#include "common/backgroundlane.h"
#include "common/cooperativeyield.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStringList>
#include <QTimer>
#include <QVariant>

#include <atomic>
#include <memory>

namespace loopscope {

class StoreDatabase;
class FlowRowEncodeJob;

// One finished flow, ready to be written (made by FlowRecorder on the store thread).
struct FlowRow {
    // What the recorder hands over; encode() (on the writer thread, off the recorder's) turns
    // it into the stored columns below: JSON text, compression and the search text are a good
    // part of a flow's cost.
    QJsonObject summaryJson;
    QJsonArray hopsJson;
    // Hop index → the JSON text its "body" parses to, written in place of serialising it again
    // (RecordedFlow::verbatimBodies): a large body's re-serialisation was a fifth of recording
    // its flow.
    QList<std::pair<qsizetype, QByteArray>> verbatimBodies;
    // Fills summary, hops and the search text: from the background encoding when one was started
    // (waiting for it, or doing it here if the lane has not begun), else here.
    void encode();
    // Hands the encoding to `lane` (StoreWriter::enqueue): it starts on a spare CPU while the
    // row waits for its batch.
    void encodeIn(BackgroundLane &lane);
    std::shared_ptr<FlowRowEncodeJob> pendingEncode;
    // What the row adds to the history file once encoded, as `history.max_mb` counts it: see
    // StoreDatabase::storedBytes.
    qint64 storedBytes() const;

    QString id;
    qint64 startedAt = 0;
    qint64 endedAt = 0;
    QString runId;
    QString sessionId;
    QString state;
    int status = 0;
    QString model;
    QString path;
    QByteArray summary;   // compact JSON (empty until encode())
    QByteArray hops;      // StoredBlob::compress(compact JSON array)
    QVariant searchValue; // the search text as bound (StoreDatabase::searchValue)
    qint64 searchTextChars = 0;
    qint64 inputTokens = 0, outputTokens = 0, totalTokens = 0;
    double costUsd = 0;
    bool costKnown = false;
    int codeRuns = 0;
    int toolCalls = 0;
    QStringList runKeys; // keys that lead later flows to runId
};

// The only writer of the store (lives on its own "loopscope-writer" thread and owns the
// write connection there): flows are queued and committed together, one transaction per tick
// (every batchIntervalMs, so a kill -9 loses at most that much), then retention runs when the
// size or age limit is passed. The WAL is checkpointed once nothing has been written for
// idleCheckpointMs (a checkpoint ends in fsync, which delays requests in flight on this VM);
// SQLite's own checkpoint (every 10,000 WAL pages, StoreDatabase) remains the bound under
// traffic that never pauses. It has a thread of its own so that a long commit (a big batch,
// FTS5 segment merges, a WAL checkpoint, a slow disk) never stops the recorder taking events.
class StoreWriter : public QObject {
    Q_OBJECT
public:
    StoreWriter(StoreDatabase *db, int batchIntervalMs, int maxDays, qint64 maxBytes,
                int idleCheckpointMs, QObject *parent = nullptr);
    // A batch whose write failed (begin, an insert or the commit: a full or broken disk) is
    // kept and tried again after kFirstRetryMs, doubling to kMaxRetryMs; flows finished
    // meanwhile wait with it, at most `maxUnwritten` flows (the oldest beyond are dropped,
    // counted and logged). Readers keep seeing all of them as pending meanwhile.
    static constexpr int kFirstRetryMs = 100;
    static constexpr int kMaxRetryMs = 5000; // a disk that comes back is used within 5 s
    void setMaxUnwritten(qsizetype flows) { m_maxUnwritten = qMax<qsizetype>(1, flows); }

    ~StoreWriter() override;

    // Any thread: queues a finished flow for the next tick.
    void enqueue(FlowRow row);
    // Commits what is kept and queued now; returns false (and logs) when the transaction
    // failed (the rows are then kept for a retry).
    bool commit();
    // Test hook: writes fail (PRAGMA query_only on the write connection: every insert is
    // refused by SQLite, as on a read-only or full disk) until called again with false.
    void setFailWrites(bool fail);
    // Deletes flows older than maxDays, then the oldest flows until the stored size is under
    // maxBytes. Returns the number of flows removed.
    int applyRetention();
    // Removes every stored flow, run and run key; returns the number of flows removed.
    int clear();
    // Removes the stored flows with these ids (the window's Delete); returns how many.
    int remove(const QStringList &ids);
    // Run keys of the most recent flows, to seed the RunGrouper at start.
    QList<QPair<QString, QString>> recentRunKeys(int limit);
    bool exists(const QString &id);
    qint64 storedBytes() const { return m_storedBytes; }
    // Any thread: flows written, and flows that could not be (only logged otherwise); flows
    // queued now and the most ever queued at once (how far the writer fell behind).
    quint64 rowsWritten() const { return m_rowsWritten.load(std::memory_order_relaxed); }
    quint64 rowsFailed() const { return m_rowsFailed.load(std::memory_order_relaxed); }
    quint64 queuedPeak() const { return m_queuedPeak.load(std::memory_order_relaxed); }
    quint64 retentionPasses() const { return m_retentionPasses.load(std::memory_order_relaxed); }
    quint64 retentionRemoved() const { return m_retentionRemoved.load(std::memory_order_relaxed); }
    quint64 idleCheckpoints() const { return m_idleCheckpoints.load(std::memory_order_acquire); }
    // Any thread: whether a pause checkpoint is still to come (the WAL took writes since the
    // last one); false once it ran, until the next write.
    bool idleCheckpointDue() const { return m_idleCheckpointDue.load(std::memory_order_acquire); }
    // Any thread: flows waiting after a failed write (kept + queued while failing), flows dropped
    // past maxUnwritten, failed write attempts, and the failure now (empty: writing fine).
    quint64 unwritten() const { return m_unwritten.load(std::memory_order_relaxed); }
    quint64 rowsDropped() const { return m_rowsDropped.load(std::memory_order_relaxed); }
    quint64 writeFailures() const { return m_writeFailures.load(std::memory_order_relaxed); }
    QString writeProblem() const;

signals:
    // Rows just committed (the recorder drops them from its pending snapshot).
    void committed(const QStringList &ids);
    // Writing failed (problem: a readable line) or works again (empty problem).
    void writeProblemChanged(const QString &problem);

private:
    bool insert(const FlowRow &row, qint64 *bytes, QString *error);
    // Begin, insert every row, commit; rolled back on any failure (the error in `error`).
    bool writeBatch(const QList<FlowRow> &batch, qint64 *bytes, QString *error);
    void onTick();
    // After a failed write: keep the batch, bound what waits, schedule the retry.
    void keep(QList<FlowRow> batch, const QString &error);
    // Drops the oldest waiting flows beyond maxUnwritten.
    void trimToBound();
    // The line the window and the stats show while writes fail.
    void describeProblem();
    // Checkpoints the WAL when nothing was queued since the idle timer started.
    void checkpointWhenIdle();
    // How runs and run keys left without flows are found after a delete.
    enum class OrphanCleanup {
        Unreferenced,        // any run no flow refers to (a delete of chosen flows; scans)
        OlderThanOldestFlow, // runs and keys older than the oldest flow left (by index)
    };
    int deleteWhere(const QString &condition, const QVariantList &values, OrphanCleanup cleanup);
    // Sums the totals of these runs again from their stored flows (after some were deleted).
    static void recountRuns(const QSqlDatabase &db, const QStringList &runIds);
    // Deletes the `count` (at most one chunk) oldest flows matching `condition` (empty: any), then
    // commits what was queued meanwhile. Returns the number deleted.
    int deleteOldest(const QString &condition, const QVariantList &values, int count);

    // The write statements, prepared once (re-parsing SQL per row was a tenth of a commit).
    struct Statements {
        QSqlQuery flow, fts, run, key;
        explicit Statements(const QSqlDatabase &db);
    };

    StoreDatabase *m_db;
    std::unique_ptr<Statements> m_statements;
    QMutex m_queueMutex; // guards m_queue: the recorder enqueues from its own thread
    QList<FlowRow> m_queue;
    QList<FlowRow> m_kept; // a failed batch, retried first (writer thread)
    QTimer m_tick;
    QTimer m_retry;
    int m_retryMs = 0;
    qsizetype m_maxUnwritten = 20'000;
    QElapsedTimer m_failingSince;
    QElapsedTimer m_lastFailureLog;
    mutable QMutex m_problemMutex;
    QString m_problem; // guarded by m_problemMutex
    QString m_lastError;
    QTimer m_retention;
    QTimer m_idleCheckpoint;
    bool m_walDirty = false;      // commits since the last complete checkpoint
    CooperativeYield m_yield{{}}; // between rows, see the class
    int m_maxDays;
    qint64 m_maxBytes;
    qint64 m_storedBytes = -1;
    bool m_inRetention = false;
    std::atomic<quint64> m_rowsWritten{0};
    std::atomic<quint64> m_rowsFailed{0};
    std::atomic<quint64> m_queuedPeak{0};
    std::atomic<quint64> m_retentionPasses{0};
    std::atomic<quint64> m_retentionRemoved{0};
    std::atomic<quint64> m_idleCheckpoints{0};
    std::atomic<bool> m_idleCheckpointDue{false};
    std::atomic<quint64> m_unwritten{0};
    std::atomic<quint64> m_rowsDropped{0};
    std::atomic<quint64> m_writeFailures{0};
    // Rows are encoded here while they wait for their batch (FlowRow::encodeIn), on a spare
    // CPU; the commit encodes what it has not finished (FlowRow::encode).
    std::unique_ptr<BackgroundLane> m_encoder;
};

} // namespace loopscope
