#pragma once

#include "inspect/inspectorevent.h"
#include "models/requestrecord.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

#include <deque>

namespace loopscope {

// The store of client requests, one row each in arrival order, folded from InspectorEvents that
// arrive in batches. Lookups by request id are O(1): rows live in a deque addressed by an
// ever-growing absolute index, so trimming the oldest rows (retention cap) never renumbers.
// Each batch emits at most one remove, one coalesced dataChanged and one insert.
class RequestsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        ApiColumn,
        ModelColumn,
        StatusColumn,
        IterationsColumn,
        CodeRunsColumn,
        DurationColumn,
        TokensColumn,
        ColumnCount
    };
    enum Role {
        RequestIdRole = Qt::UserRole + 1,
        SortRole,  // raw value of the cell for sorting
        StateRole, // int(RequestState)
        HasCodeRole,
        SessionIdRole,
        ApiRole,
    };
    static constexpr int kDefaultRetention = 5000;
    static constexpr int kDefaultPayloadRetention = 200;

    explicit RequestsModel(QObject *parent = nullptr);
    ~RequestsModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Rows kept at most; the oldest go first. Values below 1 are treated as 1.
    void setRetentionLimit(int limit);
    int retentionLimit() const { return m_retention; }

    // How many of the newest requests keep their full payloads (JSON documents, long outputs);
    // older ones keep their table data only (RequestRecord::dropPayloads).
    void setPayloadRetention(int count);
    int payloadRetention() const { return m_payloadRetention; }

    int rowOf(const QString &requestId) const; // -1 when unknown (or trimmed)
    const RequestRecord *record(int row) const;
    const RequestRecord *recordById(const QString &requestId) const;
    QStringList sessionIds() const; // distinct, non-empty, sorted
    int runningCount() const;
    int failedCount() const;

public slots:
    void applyEvents(const QList<loopscope::InspectorEvent> &events);
    void applyEvent(const loopscope::InspectorEvent &event);
    void clear();

signals:
    // After each batch: the requests whose record changed (new ones included), in no order.
    void requestsUpdated(const QStringList &requestIds);
    void countsChanged();

private:
    void trimTo(int limit);
    void dropOldPayloads();

    std::deque<RequestRecord> m_rows;
    QHash<QString, qint64> m_absoluteIndex; // request id -> absolute index
    qint64 m_base = 0;                      // absolute index of row 0
    int m_retention = kDefaultRetention;
    int m_payloadRetention = kDefaultPayloadRetention;
    qint64 m_payloadsKeptFrom = 0; // absolute index below which payloads are dropped
};

} // namespace loopscope
