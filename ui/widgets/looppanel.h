#pragma once

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTableView;

namespace loopscope {

class LoopTimelineModel;
class RequestsModel;
struct CodeRunRecord;

// The selected request's loop as a timeline of model calls and code runs. Selecting a model
// call shows its details here; selecting a code run announces it for the Code panel.
class LoopPanel : public QWidget {
    Q_OBJECT
public:
    explicit LoopPanel(RequestsModel *requests, QWidget *parent = nullptr);

    LoopTimelineModel *timelineModel() const { return m_model; }
    QTableView *view() const { return m_view; }
    QPlainTextEdit *detailsView() const { return m_details; }

public slots:
    void setRequestId(const QString &requestId);
    void selectStep(int row);

signals:
    // A code run was picked (by the user, or as the request's latest one).
    void codeRunSelected(const loopscope::CodeRunRecord &run);

private:
    void showDetails(int row);

    LoopTimelineModel *m_model;
    QTableView *m_view;
    QLabel *m_summary;
    QPlainTextEdit *m_details;
};

} // namespace loopscope
