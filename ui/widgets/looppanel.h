#pragma once

#include "inspect/inspectorevent.h"

#include <QJsonObject>
#include <QWidget>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QTableView;
class QTimer;

namespace loopscope {

class LoopTimelineModel;

// One flow's loop as a timeline of model calls and code runs. Steps appear when they start,
// with a ticking elapsed time (one timer, running only while a step runs); Follow keeps the
// newest running step selected and in view. Selecting a step shows its details here and
// announces it (stepSelected; codeStepSelected for the Code panel).
class LoopPanel : public QWidget {
    Q_OBJECT
public:
    explicit LoopPanel(QWidget *parent = nullptr);

    LoopTimelineModel *timelineModel() const { return m_model; }
    QTableView *view() const { return m_view; }
    QPlainTextEdit *detailsView() const { return m_details; }
    QLabel *summaryLabel() const { return m_summary; }
    QCheckBox *followToggle() const { return m_follow; }
    const QTimer *elapsedTimer() const { return m_ticker; }
    bool follows() const;

public slots:
    // The contract of every detail panel: the full flow (empty clears) and the live batches.
    void setFlow(const QJsonObject &flow);
    void applyLiveEvents(const QList<loopscope::InspectorEvent> &events);
    void setFollow(bool on);
    void selectStep(int row);

signals:
    // kind: "model_call" or "code_run"; iteration 0-based; callId set for code runs.
    void stepSelected(const QString &kind, int iteration, const QString &callId);
    void codeStepSelected(const QString &callId);

private:
    void build();
    void showDetails(int row);
    void afterChange();
    void followNewest();
    void updateSummary();

    LoopTimelineModel *m_model;
    QTableView *m_view;
    QLabel *m_summary;
    QCheckBox *m_follow;
    QPlainTextEdit *m_details;
    QTimer *m_ticker;
    bool m_programmatic = false;
    int m_detailsRow = -1;
};

} // namespace loopscope
