#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTimer;

namespace loopscope {

class FlowListModel;

// The Requests table over the flow store (FlowListModel): newest first, scrolling lazily
// through the whole history; search over every flow's bodies, code and output (the store's
// full-text search), state and code-error filters, auto-follow of new flows and a right-click
// menu (built by the window: contextMenuRequested).
class RequestsPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kFollowIntervalMs = 250; // Follow selects the newest at most this often

    explicit RequestsPanel(FlowListModel *model, QWidget *parent = nullptr);

    FlowListModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QLineEdit *searchField() const { return m_search; }
    QComboBox *stateFilter() const { return m_state; }
    QCheckBox *codeErrorsCheck() const { return m_codeErrors; }
    QCheckBox *followCheck() const { return m_follow; }
    // "No flows match …" / "No flows recorded yet" / "Searching…" under the filters.
    QLabel *messageLabel() const { return m_message; }

    QString currentRequestId() const;
    bool autoFollow() const;

public slots:
    void focusSearch();
    // Selects the flow when it is loaded in the table (returns whether it was).
    bool selectRequest(const QString &requestId);
    void setAutoFollow(bool follow);
    void applyFilter();

signals:
    void currentRequestChanged(const QString &requestId);
    void clearRequested();
    void contextMenuRequested(const QString &requestId, const QPoint &globalPos);

private:
    void onRowsInserted(int first);
    void updateMessage();
    void widenStatusColumn(int first, int last);

    FlowListModel *m_model;
    QTableView *m_view;
    QLineEdit *m_search;
    QComboBox *m_state;
    QCheckBox *m_codeErrors;
    QCheckBox *m_follow;
    QLabel *m_message;
    QTimer *m_searchDebounce;
    QTimer *m_followThrottle;
    bool m_followPending = false;
    QString m_current;
};

} // namespace loopscope
