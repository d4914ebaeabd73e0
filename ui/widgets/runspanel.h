#pragma once

#include <QSet>
#include <QWidget>

class QLabel;
class QPushButton;
class QTreeView;

namespace loopscope {

class RunsModel;
class RunView;

// Whole agent runs (RunsModel): each run with its totals, expandable to every flow in order,
// and below them the selected run read as one conversation (RunView). Selecting a flow row
// asks the window to show that flow (flowSelected); two runs selected can be compared
// (RunCompareWindow).
class RunsPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunsPanel(RunsModel *model, QWidget *parent = nullptr);

    QTreeView *view() const { return m_view; }
    QLabel *messageLabel() const { return m_message; }
    RunView *runView() const { return m_runView; }
    QPushButton *compareButton() const { return m_compare; }
    // The run ids of the selected run rows (a flow row counts for its run), in row order.
    QStringList selectedRuns() const;
    void compareSelectedRuns();
    QString currentFlowId() const { return m_currentFlow; }
    // Selects the flow's row (expanding its run); false when it is in no listed run.
    bool selectFlow(const QString &flowId);

signals:
    void flowSelected(const QString &flowId);

protected:
    // The model follows the store only while this view can be seen (RunsModel::setLive).
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    void restoreSelection();
    void showCurrentRun(bool force);

    RunsModel *m_model;
    QTreeView *m_view;
    QLabel *m_message;
    RunView *m_runView;
    QPushButton *m_compare;
    QString m_shownRunState; // flow count and last flow's status of the run the view shows
    QString m_currentFlow;
    QString m_currentRun;
    QSet<QString> m_expandedRuns; // kept across reloads (a reload resets the model)
};

} // namespace loopscope
