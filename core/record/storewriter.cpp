#include "record/storewriter.h"

#include "record/recordedflow.h"
#include "record/storedatabase.h"
#include "record/storedblob.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QScopedValueRollback>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace loopscope {

namespace {

constexpr int kRetentionIntervalMs = 10 * 60 * 1000;
constexpr qint64 kDayMs = 24LL * 3600 * 1000;
constexpr qint64 kSlowCommitMs = 1000;
constexpr int kRetentionChunk = 2000; // flows deleted per retention transaction

} // namespace

StoreWriter::StoreWriter(StoreDatabase *db, int batchIntervalMs, int maxDays, qint64 maxBytes,
                         int idleCheckpointMs, QObject *parent)
    : QObject(parent)
    , m_db(db)
    , m_maxDays(maxDays)
    , m_maxBytes(maxBytes)
    , m_encoder(std::make_unique<BackgroundLane>(QStringLiteral("loopscope-encode"))) {
    m_tick.setSingleShot(true);
    m_tick.setInterval(qBound(1, batchIntervalMs, 200));
    connect(&m_tick, &QTimer::timeout, this, &StoreWriter::onTick);
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &StoreWriter::commit);
    m_retention.setInterval(kRetentionIntervalMs);
    connect(&m_retention, &QTimer::timeout, this, &StoreWriter::applyRetention);
    m_retention.start();
    m_idleCheckpoint.setSingleShot(true);
    m_idleCheckpoint.setInterval(qMax(1, idleCheckpointMs));
    connect(&m_idleCheckpoint, &QTimer::timeout, this, &StoreWriter::checkpointWhenIdle);
}

void StoreWriter::checkpointWhenIdle() {
    if (!m_walDirty) {
        m_idleCheckpointDue.store(false, std::memory_order_release);
        return;
    }
    {
        QMutexLocker lock(&m_queueMutex);
        if (!m_queue.isEmpty())
            return; // its commit starts the idle clock again
    }
    // PASSIVE: never waits for readers; frames a reader still needs stay for the next try.
    QSqlQuery q(m_db->writer());
    if (!q.exec(QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)")) || !q.next()) {
        qWarning().noquote() << "loopscope: history: checkpoint failed:" << q.lastError().text();
        return; // SQLite's own checkpoint (wal_autocheckpoint) still bounds the WAL
    }
    const int busy = q.value(0).toInt();
    const int walFrames = q.value(1).toInt();
    const int checkpointed = q.value(2).toInt();
    if (busy != 0 || checkpointed < walFrames) {
        m_idleCheckpoint.start();
        return;
    }
    m_walDirty = false;
    // Due cleared first: whoever sees the new count (acquire) sees it cleared.
    m_idleCheckpointDue.store(false, std::memory_order_relaxed);
    m_idleCheckpoints.fetch_add(1, std::memory_order_release);
}

// The columns of one row, made from its JSON: compact text, compression and the search text,
// a good part of a flow's recording cost (3-4 ms of CPU for a 1 MB body).
class FlowRowEncodeJob : public BackgroundJob {
public:
    FlowRowEncodeJob(QJsonObject summaryJson, QJsonArray hopsJson,
                     QList<std::pair<qsizetype, QByteArray>> verbatimBodies)
        : m_summaryJson(std::move(summaryJson))
        , m_hopsJson(std::move(hopsJson))
        , m_verbatimBodies(std::move(verbatimBodies)) {}

    // Set once the job is done.
    QByteArray summary;
    QByteArray hops;
    QVariant searchValue; // StoreDatabase::searchValue
    qint64 searchTextChars = 0;

protected:
    void run() override {
        QJsonObject summaryJson;
        QJsonArray hopsJson;
        QList<std::pair<qsizetype, QByteArray>> verbatimBodies;
        {
            QMutexLocker lock(&m_inputMutex); // each run reads its own shallow copy
            summaryJson = m_summaryJson;
            hopsJson = m_hopsJson;
            verbatimBodies = m_verbatimBodies;
        }
        QByteArray s = QJsonDocument(summaryJson).toJson(QJsonDocument::Compact);
        // Compressed at a fast level (StoredBlob): compressing was the largest single cost of
        // recording a large flow.
        const QJsonArray stored = RecordedFlow::storedHops(hopsJson);
        QByteArray h = StoredBlob::compress(storedText(stored, verbatimBodies));
        // From what is stored, so that a delete can derive the same text from the row.
        const QString t = RecordedFlow::searchTextOfStored(summaryJson, stored);
        QVariant v = StoreDatabase::searchValue(t);
        if (keep([&] {
                summary = std::move(s);
                hops = std::move(h);
                searchValue = std::move(v);
                searchTextChars = t.size();
            })) {
            QMutexLocker lock(&m_inputMutex);
            m_summaryJson = {};
            m_hopsJson = {};
            m_verbatimBodies = {};
        }
    }

private:
    // The stored hops as compact JSON text, each hop of `verbatim` written with its body's
    // text as it came (which parses to the hop's body) instead of serialising that again.
    static QByteArray storedText(const QJsonArray &stored,
                                 const QList<std::pair<qsizetype, QByteArray>> &verbatim) {
        if (verbatim.isEmpty())
            return QJsonDocument(stored).toJson(QJsonDocument::Compact);
        QByteArray out;
        out.reserve([&] {
            qsizetype total = 256;
            for (const auto &body : verbatim)
                total += body.second.size();
            return total;
        }());
        out += '[';
        for (qsizetype i = 0; i < stored.size(); ++i) {
            if (i > 0)
                out += ',';
            QJsonObject hop = stored.at(i).toObject();
            const auto text = std::find_if(verbatim.cbegin(), verbatim.cend(),
                                           [i](const auto &body) { return body.first == i; });
            if (text == verbatim.cend() || !hop.contains(QLatin1String("body")) ||
                !startsAJsonContainer(text->second)) {
                out += QJsonDocument(hop).toJson(QJsonDocument::Compact);
                continue;
            }
            hop.remove(QLatin1String("body"));
            QByteArray rest = QJsonDocument(hop).toJson(QJsonDocument::Compact);
            rest.chop(1); // its closing brace: the body follows as the last member
            out += rest;
            out += hop.isEmpty() ? "\"body\":" : ",\"body\":";
            out += text->second;
            out += '}';
        }
        out += ']';
        return out;
    }
    // An object's or array's text with nothing before it but JSON whitespace (a byte order
    // mark, which a document may begin with, could not stand inside another one).
    static bool startsAJsonContainer(const QByteArray &text) {
        for (const char c : text) {
            if (c == '{' || c == '[')
                return true;
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                return false;
        }
        return false;
    }

    QMutex m_inputMutex;
    QJsonObject m_summaryJson;
    QJsonArray m_hopsJson;
    QList<std::pair<qsizetype, QByteArray>> m_verbatimBodies;
};

void FlowRow::encodeIn(BackgroundLane &lane) {
    if (!summary.isEmpty() || pendingEncode)
        return;
    pendingEncode = std::make_shared<FlowRowEncodeJob>(std::exchange(summaryJson, {}),
                                                       std::exchange(hopsJson, {}),
                                                       std::exchange(verbatimBodies, {}));
    lane.submit(pendingEncode);
}

qint64 FlowRow::storedBytes() const {
    return StoreDatabase::storedBytes(summary.size(), hops.size(), searchTextChars);
}

void FlowRow::encode() {
    if (!summary.isEmpty())
        return;
    if (!pendingEncode)
        pendingEncode = std::make_shared<FlowRowEncodeJob>(std::exchange(summaryJson, {}),
                                                           std::exchange(hopsJson, {}),
                                                           std::exchange(verbatimBodies, {}));
    pendingEncode->finish();
    summary = std::move(pendingEncode->summary);
    hops = std::move(pendingEncode->hops);
    searchValue = std::move(pendingEncode->searchValue);
    searchTextChars = pendingEncode->searchTextChars;
    pendingEncode.reset();
}

StoreWriter::~StoreWriter() {
    QMutexLocker lock(&m_queueMutex);
    if (const qsizetype lost = m_kept.size() + m_queue.size(); lost > 0)
        qWarning().noquote() << QStringLiteral("loopscope: history: %1 flow(s) could not be "
                                               "written before exit: %2")
                                    .arg(lost)
                                    .arg(writeProblem());
}

StoreWriter::Statements::Statements(const QSqlDatabase &db)
    : flow(db)
    , fts(db)
    , run(db)
    , key(db) {
    flow.prepare(QStringLiteral(
        "INSERT OR IGNORE INTO flows(id, started_at, run_id, session_id, state, status, model, "
        "path, summary, hops, bytes) VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
    fts.prepare(QLatin1String(StoreDatabase::kIndexRowSql));
    run.prepare(QStringLiteral(
        "INSERT INTO runs(id, started_at, last_at, flow_count, input_tokens, output_tokens, "
        "total_tokens, cost_usd, cost_known, code_runs, tool_calls) "
        "VALUES(?,?,?,1,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
        "started_at=min(started_at, excluded.started_at), "
        "last_at=max(last_at, excluded.last_at), flow_count=flow_count+1, "
        "input_tokens=input_tokens+excluded.input_tokens, "
        "output_tokens=output_tokens+excluded.output_tokens, "
        "total_tokens=total_tokens+excluded.total_tokens, "
        "cost_usd=cost_usd+excluded.cost_usd, cost_known=cost_known+excluded.cost_known, "
        "code_runs=code_runs+excluded.code_runs, tool_calls=tool_calls+excluded.tool_calls"));
    key.prepare(QStringLiteral("INSERT OR REPLACE INTO run_keys(key, run_id, at) VALUES(?,?,?)"));
}

void StoreWriter::enqueue(FlowRow row) {
    if (m_encoder)
        row.encodeIn(*m_encoder);
    bool wasEmpty = false;
    {
        QMutexLocker lock(&m_queueMutex);
        wasEmpty = m_queue.isEmpty();
        m_queue.append(std::move(row));
        const auto size = quint64(m_queue.size());
        if (size > m_queuedPeak.load(std::memory_order_relaxed))
            m_queuedPeak.store(size, std::memory_order_relaxed);
    }
    // The tick lives on the writer thread: start it there (one posted call per batch).
    if (wasEmpty)
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (!m_tick.isActive())
                    m_tick.start();
            },
            Qt::QueuedConnection);
}

bool StoreWriter::insert(const FlowRow &row, qint64 *added, QString *error) {
    if (!m_statements)
        m_statements = std::make_unique<Statements>(m_db->writer());
    QSqlQuery &q = m_statements->flow;
    const qint64 bytes = row.storedBytes();
    q.addBindValue(row.id);
    q.addBindValue(row.startedAt);
    q.addBindValue(row.runId.isEmpty() ? QVariant() : QVariant(row.runId));
    q.addBindValue(row.sessionId.isEmpty() ? QVariant() : QVariant(row.sessionId));
    q.addBindValue(row.state);
    q.addBindValue(row.status);
    q.addBindValue(row.model);
    q.addBindValue(row.path);
    q.addBindValue(row.summary);
    q.addBindValue(row.hops);
    q.addBindValue(bytes);
    if (!q.exec()) {
        *error = q.lastError().text();
        return false;
    }
    if (q.numRowsAffected() == 0)
        return true; // already stored (an import of a flow we have)
    const qint64 seq = q.lastInsertId().toLongLong();
    QSqlQuery &fts = m_statements->fts;
    fts.addBindValue(seq);
    fts.addBindValue(row.searchValue);
    fts.exec();
    if (!row.runId.isEmpty()) {
        QSqlQuery &run = m_statements->run;
        run.addBindValue(row.runId);
        run.addBindValue(row.startedAt);
        run.addBindValue(qMax(row.endedAt, row.startedAt));
        run.addBindValue(row.inputTokens);
        run.addBindValue(row.outputTokens);
        run.addBindValue(row.totalTokens);
        run.addBindValue(row.costKnown ? row.costUsd : 0.0);
        run.addBindValue(row.costKnown ? 1 : 0);
        run.addBindValue(row.codeRuns);
        run.addBindValue(row.toolCalls);
        if (!run.exec())
            qWarning().noquote() << "loopscope: history: run" << row.runId << ":"
                                 << run.lastError().text();
        QSqlQuery &key = m_statements->key;
        for (const QString &k : row.runKeys) {
            key.addBindValue(k);
            key.addBindValue(row.runId);
            key.addBindValue(row.startedAt);
            key.exec();
        }
    }
    *added += bytes;
    return true;
}

bool StoreWriter::writeBatch(const QList<FlowRow> &batch, qint64 *bytes, QString *error) {
    QSqlDatabase db = m_db->writer();
    if (!db.transaction()) {
        *error = QStringLiteral("cannot begin a write: ") + db.lastError().text();
        return false;
    }
    for (const FlowRow &row : batch) {
        // One refused insert fails the batch: what refuses one row (a full or read-only disk,
        // an I/O error) refuses the next, and a half-written batch would be lost on retry.
        if (!insert(row, bytes, error)) {
            *error = QStringLiteral("cannot store flow %1: %2").arg(row.id, *error);
            db.rollback();
            return false;
        }
        m_yield.afterUnitOfWork(batch.size());
    }
    if (!db.commit()) {
        *error = QStringLiteral("commit failed: ") + db.lastError().text();
        db.rollback();
        return false;
    }
    return true;
}

void StoreWriter::onTick() {
    // While a write is failing the retry timer drives; the tick only bounds what waits.
    if (m_retry.isActive()) {
        trimToBound();
        return;
    }
    commit();
}

bool StoreWriter::commit() {
    QList<FlowRow> batch = std::exchange(m_kept, {});
    {
        QMutexLocker lock(&m_queueMutex);
        batch.append(std::exchange(m_queue, {})); // the kept ones finished first
    }
    if (batch.isEmpty())
        return true;
    m_retry.stop();
    QElapsedTimer clock;
    clock.start();
    QStringList ids;
    ids.reserve(batch.size());
    for (FlowRow &row : batch) {
        row.encode(); // before the transaction: it holds the file's write lock (once per row)
        ids << row.id;
        m_yield.afterUnitOfWork(batch.size());
    }
    const qint64 encodedMs = clock.elapsed();
    qint64 bytes = 0;
    QString error;
    const bool ok = writeBatch(batch, &bytes, &error);
    // A commit this slow means the writer falls behind the traffic: say where the time went.
    if (clock.elapsed() >= kSlowCommitMs)
        qInfo().noquote() << QStringLiteral("loopscope: history: slow write: %1 flow(s) in %2 ms "
                                            "(encode %3 ms, write %4 ms)")
                                 .arg(batch.size())
                                 .arg(clock.elapsed())
                                 .arg(encodedMs)
                                 .arg(clock.elapsed() - encodedMs);
    if (!ok) {
        keep(std::move(batch), error);
        return false;
    }
    m_rowsWritten.fetch_add(quint64(batch.size()), std::memory_order_relaxed);
    if (m_storedBytes >= 0)
        m_storedBytes += bytes;
    if (!m_db->inMemory()) {
        m_walDirty = true;
        m_idleCheckpointDue.store(true, std::memory_order_release);
        m_idleCheckpoint.start(); // (re)starts: fires only after a pause in the traffic
    }
    if (m_retryMs > 0) { // the disk is back: say so, and that nothing kept was lost
        qInfo().noquote() << QStringLiteral("loopscope: history: writing again after %1 s; %2 "
                                            "waiting flow(s) written")
                                 .arg(m_failingSince.elapsed() / 1000)
                                 .arg(batch.size());
        m_retryMs = 0;
        {
            QMutexLocker lock(&m_problemMutex);
            m_problem.clear();
        }
        emit writeProblemChanged({});
    }
    m_unwritten.store(0, std::memory_order_relaxed);
    emit committed(ids);
    // Only with a size limit, and only when over it or the size is not known yet (a pass
    // reads rows; without a limit — maxBytes 0, as benchmarks open stores — it once ran after
    // every commit and summed the whole table each time).
    if (m_maxBytes > 0 && (m_storedBytes < 0 || m_storedBytes > m_maxBytes))
        applyRetention();
    return true;
}

void StoreWriter::keep(QList<FlowRow> batch, const QString &error) {
    m_kept = std::move(batch);
    m_writeFailures.fetch_add(1, std::memory_order_relaxed);
    trimToBound();
    const bool first = m_retryMs == 0;
    m_retryMs = first ? kFirstRetryMs : qMin(m_retryMs * 2, kMaxRetryMs);
    m_retry.start(m_retryMs);
    if (first)
        m_failingSince.start();
    m_lastError = error;
    describeProblem();
    // A line when it starts and one a minute while it lasts: a dead disk must not flood the log.
    if (first || m_lastFailureLog.elapsed() > 60'000) {
        m_lastFailureLog.start();
        qWarning().noquote()
            << QStringLiteral("loopscope: history: cannot write to %1 (%2); %3 flow(s) kept in "
                              "memory (at most %4), %5 dropped so far; retrying")
                   .arg(m_db->path(), error)
                   .arg(m_kept.size())
                   .arg(m_maxUnwritten)
                   .arg(m_rowsDropped.load(std::memory_order_relaxed));
    }
    if (first)
        emit writeProblemChanged(writeProblem());
}

void StoreWriter::trimToBound() {
    QStringList dropped;
    {
        QMutexLocker lock(&m_queueMutex);
        qsizetype excess = m_kept.size() + m_queue.size() - m_maxUnwritten;
        // The oldest go first: the kept batch, then the queue.
        for (; excess > 0 && !m_kept.isEmpty(); --excess)
            dropped << m_kept.takeFirst().id;
        for (; excess > 0 && !m_queue.isEmpty(); --excess)
            dropped << m_queue.takeFirst().id;
        m_unwritten.store(quint64(m_kept.size() + m_queue.size()), std::memory_order_relaxed);
    }
    m_rowsDropped.fetch_add(quint64(dropped.size()), std::memory_order_relaxed);
    m_rowsFailed.fetch_add(quint64(dropped.size()), std::memory_order_relaxed);
    if (m_retryMs > 0)
        describeProblem(); // the counts of the line the window shows
    if (dropped.isEmpty())
        return;
    emit committed(dropped); // the recorder forgets their pending copies: they are gone
}

void StoreWriter::describeProblem() {
    const quint64 dropped = m_rowsDropped.load(std::memory_order_relaxed);
    QString text = QStringLiteral("History cannot be written (%1): %2 flow(s) kept in memory")
                       .arg(m_lastError)
                       .arg(m_unwritten.load(std::memory_order_relaxed));
    if (dropped > 0)
        text +=
            QStringLiteral(", %1 dropped (the oldest, past %2)").arg(dropped).arg(m_maxUnwritten);
    text += QStringLiteral(", retrying");
    QMutexLocker lock(&m_problemMutex);
    m_problem = text;
}

QString StoreWriter::writeProblem() const {
    QMutexLocker lock(&m_problemMutex);
    return m_problem;
}

void StoreWriter::setFailWrites(bool fail) {
    QSqlQuery q(m_db->writer());
    if (!q.exec(QStringLiteral("PRAGMA query_only = %1").arg(fail ? 1 : 0)))
        qWarning().noquote() << "loopscope: history: test hook failed:" << q.lastError().text();
}

int StoreWriter::deleteWhere(const QString &condition, const QVariantList &values,
                             OrphanCleanup cleanup) {
    QSqlDatabase db = m_db->writer();
    db.transaction();
    QSqlQuery q(db);
    const auto bindTo = [&values](QSqlQuery &query) {
        for (const QVariant &v : values)
            query.addBindValue(v);
    };
    const auto bind = [&q, &bindTo] { bindTo(q); };
    // The stored size is kept by subtraction: summing every row's bytes reads the whole
    // table (hundreds of MB once the history is near its limit).
    q.prepare(QStringLiteral("SELECT coalesce(sum(bytes), 0) FROM flows WHERE ") + condition);
    bind();
    const qint64 bytes = q.exec() && q.next() ? q.value(0).toLongLong() : 0;
    // The runs these flows belong to: their totals are summed again from the flows left.
    QStringList runs;
    q.prepare(QStringLiteral("SELECT DISTINCT run_id FROM flows WHERE run_id IS NOT NULL AND (") +
              condition + u')');
    bind();
    if (q.exec())
        while (q.next())
            runs << q.value(0).toString();
    // Out of the index first, with the text derived from each row (the index keeps none).
    {
        QSqlQuery rows(db);
        rows.setForwardOnly(true); // one row's hops at a time
        rows.prepare(QStringLiteral("SELECT seq, summary, hops FROM flows WHERE ") + condition);
        bindTo(rows);
        QSqlQuery unindex(db);
        unindex.prepare(QLatin1String(StoreDatabase::kUnindexRowSql));
        if (rows.exec())
            while (rows.next())
                if (!StoreDatabase::runSearchStatement(unindex, rows.value(0).toLongLong(),
                                                       rows.value(1).toByteArray(),
                                                       rows.value(2).toByteArray()))
                    qWarning().noquote() << "loopscope: history: cannot unindex a deleted flow:"
                                         << unindex.lastError().text();
    }
    q.prepare(QStringLiteral("DELETE FROM flows WHERE ") + condition);
    bind();
    q.exec();
    const int removed = q.numRowsAffected();
    if (removed > 0) { // else no run or key lost a flow
        if (cleanup == OrphanCleanup::OlderThanOldestFlow) {
            // Oldest-first deletes: a run whose last flow started before the oldest flow left
            // has no flow left, and keys older than it belong to deleted flows. Both by index.
            q.exec(QStringLiteral("DELETE FROM runs WHERE last_at < (SELECT "
                                  "coalesce(min(started_at), 9223372036854775807) FROM flows)"));
            q.exec(QStringLiteral("DELETE FROM run_keys WHERE at < (SELECT "
                                  "coalesce(min(started_at), 9223372036854775807) FROM flows)"));
        } else {
            q.exec(QStringLiteral("DELETE FROM runs WHERE id NOT IN (SELECT run_id FROM flows "
                                  "WHERE run_id IS NOT NULL)"));
            q.exec(
                QStringLiteral("DELETE FROM run_keys WHERE run_id NOT IN (SELECT id FROM runs)"));
        }
        recountRuns(db, runs);
    }
    if (!db.commit())
        return 0;
    if (m_storedBytes >= 0)
        m_storedBytes = qMax<qint64>(0, m_storedBytes - bytes);
    return qMax(0, removed);
}

void StoreWriter::recountRuns(const QSqlDatabase &db, const QStringList &runIds) {
    // The same totals the insert adds up (StoreWriter::Statements::run), from each flow's stored
    // summary, so a run's flow count, tokens, cost, code runs and tool calls never include a
    // deleted flow. Runs with no flow left were removed before this.
    for (qsizetype i = 0; i < runIds.size(); i += StoreDatabase::kIdsPerStatement) {
        const QStringList ids = runIds.mid(i, StoreDatabase::kIdsPerStatement);
        QSqlQuery q(db);
        q.prepare(QStringLiteral(
                      "UPDATE runs SET started_at = t.started_at, last_at = t.last_at, "
                      "flow_count = t.n, input_tokens = t.input_tokens, output_tokens = "
                      "t.output_tokens, total_tokens = t.total_tokens, cost_usd = t.cost_usd, "
                      "cost_known = t.cost_known, code_runs = t.code_runs, tool_calls = "
                      "t.tool_calls FROM (SELECT run_id, count(*) AS n, min(started_at) AS "
                      "started_at, max(started_at + CAST(coalesce(json_extract(s, "
                      "'$.duration_ms'), 0) AS INTEGER)) AS last_at, "
                      "coalesce(sum(json_extract(s, '$.usage.input_tokens')), 0) AS input_tokens, "
                      "coalesce(sum(json_extract(s, '$.usage.output_tokens')), 0) AS "
                      "output_tokens, coalesce(sum(json_extract(s, '$.usage.total_tokens')), 0) "
                      "AS total_tokens, total(json_extract(s, '$.cost_usd')) AS cost_usd, "
                      "sum(json_type(s, '$.cost_usd') IN ('real', 'integer')) AS cost_known, "
                      "coalesce(sum(json_extract(s, '$.code_runs')), 0) AS code_runs, "
                      "coalesce(sum(json_extract(s, '$.tool_calls')), 0) AS tool_calls FROM "
                      "(SELECT run_id, started_at, CAST(summary AS TEXT) AS s FROM flows WHERE "
                      "run_id IN (%1)) GROUP BY run_id) AS t WHERE runs.id = t.run_id")
                      .arg(StoreDatabase::placeholders(ids.size())));
        for (const QString &id : ids)
            q.addBindValue(id);
        if (!q.exec())
            qWarning().noquote() << "loopscope: history: cannot recount runs:"
                                 << q.lastError().text();
    }
}

int StoreWriter::deleteOldest(const QString &condition, const QVariantList &values, int count) {
    // In chunks: one transaction per kRetentionChunk flows keeps the FTS index's pending
    // deletes and the WAL small, and the flows that arrive meanwhile are committed between
    // chunks instead of piling up in the queue (one 31,000-flow delete took RSS from 55 to
    // 280 MB at 2,000 flows/s in bench_record --sustained).
    const QString oldest =
        QStringLiteral("seq IN (SELECT seq FROM flows%1 ORDER BY started_at, seq LIMIT %2)")
            .arg(condition.isEmpty() ? QString() : QStringLiteral(" WHERE ") + condition)
            .arg(qBound(0, count, kRetentionChunk));
    const int removed = deleteWhere(oldest, values, OrphanCleanup::OlderThanOldestFlow);
    commit();
    return removed;
}

int StoreWriter::applyRetention() {
    if (m_inRetention)
        return 0; // a commit between two chunks of this pass
    const QScopedValueRollback inRetention(m_inRetention, true);
    commit();
    m_retentionPasses.fetch_add(1, std::memory_order_relaxed);
    QSqlDatabase db = m_db->writer();
    int removed = 0;
    if (m_maxDays > 0) {
        const qint64 cutoff = QDateTime::currentMSecsSinceEpoch() - qint64(m_maxDays) * kDayMs;
        for (int n = 1; n > 0; removed += n)
            n = deleteOldest(QStringLiteral("started_at < ?"), {cutoff}, kRetentionChunk);
    }
    QSqlQuery q(db);
    if (m_storedBytes < 0 && q.exec(QStringLiteral("SELECT coalesce(sum(bytes), 0) FROM flows")) &&
        q.next())
        m_storedBytes = q.value(0).toLongLong(); // once per run; kept by addition after
    // Oldest first, down to 90% of the limit so retention does not run at every commit.
    if (m_maxBytes > 0 && m_storedBytes > m_maxBytes) {
        const qint64 target = m_maxBytes * 9 / 10;
        while (m_storedBytes > target) {
            // As many of the oldest flows as make up the excess, at most one chunk.
            qint64 sum = 0;
            int count = 0;
            q.exec(QStringLiteral("SELECT bytes FROM flows ORDER BY started_at, seq LIMIT %1")
                       .arg(kRetentionChunk));
            while (sum < m_storedBytes - target && q.next()) {
                sum += q.value(0).toLongLong();
                ++count;
            }
            q.finish();
            const int n = count > 0 ? deleteOldest(QString(), {}, count) : 0;
            if (n == 0)
                break;
            removed += n;
        }
    }
    if (removed > 0) {
        m_retentionRemoved.fetch_add(quint64(removed), std::memory_order_relaxed);
        q.exec(QStringLiteral("PRAGMA incremental_vacuum"));
        qInfo().noquote()
            << QStringLiteral("loopscope: history retention removed %1 flow(s)").arg(removed);
    }
    return removed;
}

int StoreWriter::clear() {
    commit();
    // Flows a failing disk kept are cleared too (the user asked for an empty history).
    QStringList unwritten;
    {
        QMutexLocker lock(&m_queueMutex);
        for (const FlowRow &row : std::as_const(m_kept))
            unwritten << row.id;
        for (const FlowRow &row : std::as_const(m_queue))
            unwritten << row.id;
        m_kept.clear();
        m_queue.clear();
        m_unwritten.store(0, std::memory_order_relaxed);
    }
    if (!unwritten.isEmpty())
        emit committed(unwritten);
    QSqlDatabase db = m_db->writer();
    QSqlQuery q(db);
    db.transaction();
    q.exec(QStringLiteral("SELECT count(*) FROM flows"));
    const int removed = q.next() ? q.value(0).toInt() : 0;
    q.exec(QStringLiteral("DELETE FROM flows"));
    q.exec(QStringLiteral("INSERT INTO flows_fts(flows_fts) VALUES('delete-all')"));
    q.exec(QStringLiteral("DELETE FROM runs"));
    q.exec(QStringLiteral("DELETE FROM run_keys"));
    db.commit();
    q.exec(QStringLiteral("PRAGMA incremental_vacuum"));
    m_storedBytes = 0;
    return removed;
}

int StoreWriter::remove(const QStringList &ids) {
    if (ids.isEmpty())
        return 0;
    commit();
    QVariantList values;
    for (const QString &id : ids)
        values << id;
    return deleteWhere(QStringLiteral("id IN (%1)").arg(StoreDatabase::placeholders(ids.size())),
                       values, OrphanCleanup::Unreferenced);
}

QList<QPair<QString, QString>> StoreWriter::recentRunKeys(int limit) {
    QList<QPair<QString, QString>> keys;
    QSqlQuery q(m_db->writer());
    q.prepare(QStringLiteral("SELECT key, run_id FROM run_keys ORDER BY at DESC LIMIT ?"));
    q.addBindValue(limit);
    if (!q.exec())
        return keys;
    while (q.next())
        keys.append({q.value(0).toString(), q.value(1).toString()});
    return keys;
}

bool StoreWriter::exists(const QString &id) {
    QSqlQuery q(m_db->writer());
    q.prepare(QStringLiteral("SELECT 1 FROM flows WHERE id = ?"));
    q.addBindValue(id);
    return q.exec() && q.next();
}

} // namespace loopscope
