#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QStringList>
#include <QTimer>

#include <atomic>

namespace loopscope {

class StoreDatabase;

// One finished flow, ready to be written (made by FlowRecorder on the store thread).
struct FlowRow {
    QString id;
    qint64 startedAt = 0;
    qint64 endedAt = 0;
    QString runId;
    QString sessionId;
    QString state;
    int status = 0;
    QString model;
    QString path;
    QByteArray summary; // compact JSON
    QByteArray hops;    // qCompress(compact JSON array)
    QString searchText;
    qint64 inputTokens = 0, outputTokens = 0, totalTokens = 0;
    double costUsd = 0;
    bool costKnown = false;
    int codeRuns = 0;
    int toolCalls = 0;
    QStringList runKeys; // keys that lead later flows to runId
};

// The only writer of the store (lives on the store thread, owns the write connection): flows
// are queued and committed together, one transaction per tick (every batchIntervalMs, so a
// kill -9 loses at most that much), then retention runs when the size or age limit is passed.
class StoreWriter : public QObject {
    Q_OBJECT
public:
    StoreWriter(StoreDatabase *db, int batchIntervalMs, int maxDays, qint64 maxBytes,
                QObject *parent = nullptr);

    void enqueue(FlowRow row);
    // Commits what is queued now; returns false (and logs) when the transaction failed.
    bool commit();
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
    // Any thread: flows written, and flows that could not be (only logged otherwise).
    quint64 rowsWritten() const { return m_rowsWritten.load(std::memory_order_relaxed); }
    quint64 rowsFailed() const { return m_rowsFailed.load(std::memory_order_relaxed); }

signals:
    // Rows just committed (the recorder drops them from its pending snapshot).
    void committed(const QStringList &ids);

private:
    bool insert(const FlowRow &row);
    int deleteWhere(const QString &condition, const QVariantList &values);

    StoreDatabase *m_db;
    QList<FlowRow> m_queue;
    QTimer m_tick;
    QTimer m_retention;
    int m_maxDays;
    qint64 m_maxBytes;
    qint64 m_storedBytes = -1;
    std::atomic<quint64> m_rowsWritten{0};
    std::atomic<quint64> m_rowsFailed{0};
};

} // namespace loopscope
