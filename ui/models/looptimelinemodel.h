#pragma once

#include "inspect/inspectorevent.h"

#include <QAbstractTableModel>
#include <QJsonObject>
#include <QList>

#include <vector>

namespace loopscope {

// One flow's loop as a timeline: a row per model call and per code run, in loop order, each
// with its offset from the flow's start and its duration. Built from a flow (FlowQuery::flow
// JSON: summary + hops) and kept current by the live events of that flow, so a step appears
// when it STARTS ("Model call 2…") and shows its elapsed time until it ends (tick()).
// Rows only grow while a flow runs; another flow (or a reordered snapshot) resets the model.
class LoopTimelineModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StepColumn, StartColumn, DurationColumn, TimelineColumn, ColumnCount };
    enum class StepKind { UpstreamCall, CodeRun };
    enum Role {
        KindRole = Qt::UserRole + 1, // int(StepKind)
        IterationRole,               // loop iteration, 0-based
        CallIdRole,                  // code runs: the call id; empty for model calls
        OrdinalRole,                 // 1-based per kind ("Code run 2")
        StartOffsetRole,             // ms from the flow's start (qint64)
        DurationRole,                // ms (double); while running the elapsed time so far
        BarStartRole,                // fraction 0..1 of the flow's span
        BarEndRole,                  // fraction 0..1 of the flow's span
        FailedRole,                  // upstream error / non-2xx, or code error / timeout
        RunningRole,                 // started, not finished
    };

    explicit LoopTimelineModel(QObject *parent = nullptr);

    // The full flow (an empty object clears). The same flow again (a newer snapshot) updates
    // rows in place; steps known only from live events so far are kept.
    void setFlow(const QJsonObject &flow);
    // Batches of events of all flows; those of the shown flow start and finish steps.
    void applyLiveEvents(const QList<loopscope::InspectorEvent> &events);
    // Running steps' elapsed time is measured up to `nowMs` (wall clock, like event times).
    void tick(qint64 nowMs);

    QString flowId() const { return m_flowId; }
    bool hasRunningSteps() const;
    bool flowEnded() const { return m_flowEnded; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The hops behind a row: a model call's upstream_request and (once answered)
    // upstream_response; a code run's code_run hop (as of the last snapshot or event).
    QJsonObject requestHopAt(int row) const;
    QJsonObject responseHopAt(int row) const;
    QJsonObject codeRunHopAt(int row) const;
    int lastCodeRunRow() const;
    int newestRunningRow() const; // -1 when nothing runs
    int rowOfCodeRun(const QString &callId) const;

    // "850 ms", "1.2 s", "2 min 5 s": one format for every duration on the panel.
    // textformat::formatDuration, the app's one format.
    static QString formatDuration(double ms);

private:
    struct Step {
        StepKind kind = StepKind::UpstreamCall;
        int iteration = 0;
        QString callId;
        qint64 startMs = 0;     // wall clock
        double durationMs = -1; // -1 while running
        bool failed = false;
        int ordinal = 1;
        QJsonObject requestHop; // model calls
        QJsonObject resultHop;  // upstream_response or code_run
        bool sameAs(const Step &o) const {
            return kind == o.kind && iteration == o.iteration && callId == o.callId;
        }
    };

    static std::vector<Step> stepsOf(const QJsonArray &hops);
    int find(StepKind kind, int iteration, const QString &callId) const;
    void setSteps(std::vector<Step> steps);
    void appendStep(Step step);
    void changedRow(int row);
    void renumber();
    double elapsedOf(const Step &s) const;
    qint64 spanMs() const;

    QString m_flowId;
    qint64 m_flowStartMs = 0;
    qint64 m_flowEndMs = 0; // 0 while the flow runs
    bool m_flowEnded = false;
    qint64 m_nowMs = 0;
    std::vector<Step> m_steps;
};

} // namespace loopscope
