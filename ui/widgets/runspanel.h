#pragma once

#include <QSet>
#include <QWidget>

class QLabel;
class QTreeView;

namespace loopscope {

class RunsModel;

// Whole agent runs (RunsModel): each run with its totals, expandable to every flow in order.
// Selecting a flow row asks the window to show that flow (flowSelected).
class RunsPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunsPanel(RunsModel *model, QWidget *parent = nullptr);

    QTreeView *view() const { return m_view; }
    QLabel *messageLabel() const { return m_message; }
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

    RunsModel *m_model;
    QTreeView *m_view;
    QLabel *m_message;
    QString m_currentFlow;
    QString m_currentRun;
    QSet<QString> m_expandedRuns; // kept across reloads (a reload resets the model)
};

} // namespace loopscope
