#pragma once

#include "models/requestrecord.h"

#include <QAbstractTableModel>
#include <QPointer>

#include <vector>

namespace loopscope {

class RequestsModel;

// The selected request's loop as a timeline: one row per upstream call and per code run, in
// loop order, each with its offset from the request start and its duration. Rows are appended
// while the request runs (the loop only grows), and reset when another request is selected.
class LoopTimelineModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StepColumn, StartColumn, DurationColumn, TimelineColumn, ColumnCount };
    enum class StepKind { UpstreamCall, CodeRun };
    enum Role {
        KindRole = Qt::UserRole + 1, // int(StepKind)
        SourceIndexRole,             // index into the record's upstreamCalls or codeRuns
        StartOffsetRole,             // ms from request start (qint64)
        DurationRole,                // ms (double)
        BarStartRole,                // fraction 0..1 of the request's span
        BarEndRole,                  // fraction 0..1 of the request's span
        FailedRole,                  // upstream error / non-2xx, or code error / timeout
    };

    explicit LoopTimelineModel(QObject *parent = nullptr);

    void setRequestsModel(RequestsModel *model);
    void setRequestId(const QString &requestId);
    QString requestId() const { return m_requestId; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The record behind a row; valid until the next batch is applied. Null for the other kind.
    const UpstreamCallRecord *upstreamCallAt(int row) const;
    const CodeRunRecord *codeRunAt(int row) const;
    // Row of the request's most recent code run, or -1.
    int lastCodeRunRow() const;

private:
    struct Step {
        StepKind kind;
        int sourceIndex;
        qint64 startOffsetMs;
        double durationMs;
        bool failed;
        int ordinal; // 1-based per kind, for labels
    };

    const RequestRecord *currentRecord() const;
    std::vector<Step> buildSteps(const RequestRecord &record, qint64 *span) const;
    void refresh();
    void onRequestsUpdated(const QStringList &ids);

    QPointer<RequestsModel> m_requests;
    QString m_requestId;
    std::vector<Step> m_steps;
    qint64 m_spanMs = 1;
};

} // namespace loopscope
