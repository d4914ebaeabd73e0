#pragma once

#include "models/runconversation.h"

#include <QWidget>

class QLabel;
class QPushButton;
class QTableWidget;

namespace loopscope {

class DiffView;
class FlowQueryClient;

// Two agent runs side by side (e.g. the same task before and after a prompt change): their
// totals (turns, tokens with cache reads and writes apart, cost, duration, tool calls, errors)
// with the difference, and the runs' conversations turn by turn as a line diff, so the same
// steps face each other and differing text is tinted. A window of its own: Close, Esc.
class RunCompareWindow : public QWidget {
    Q_OBJECT
public:
    explicit RunCompareWindow(QWidget *parent = nullptr);

    // Reads both runs off the GUI thread, then shows them (deleted on close).
    static RunCompareWindow *open(QWidget *parent, FlowQueryClient *client, const QString &left,
                                  const QString &right);

    void setRuns(const RunConversation &left, const QString &leftName, const RunConversation &right,
                 const QString &rightName);

    QTableWidget *totalsTable() const { return m_table; }
    DiffView *diffView() const { return m_diff; }
    QPushButton *closeButton() const { return m_close; }
    QLabel *statusLabel() const { return m_status; }

signals:
    void loaded();

protected:
    void keyPressEvent(QKeyEvent *event) override; // Esc closes

private:
    QLabel *m_status;
    QTableWidget *m_table;
    DiffView *m_diff;
    QPushButton *m_close;
};

} // namespace loopscope
