#pragma once

#include "models/requestfilter.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QTableView;
class QTimer;

namespace loopscope {

class RequestFilterProxyModel;
class RequestsModel;

// The live request table with search, filters (API, status, has code, session) and auto-follow.
class RequestsPanel : public QWidget {
    Q_OBJECT
public:
    explicit RequestsPanel(RequestsModel *model, QWidget *parent = nullptr);

    RequestFilterProxyModel *proxyModel() const { return m_proxy; }
    QTableView *view() const { return m_view; }
    QLineEdit *searchField() const { return m_search; }
    QComboBox *apiFilter() const { return m_api; }
    QComboBox *statusFilter() const { return m_status; }
    QComboBox *codeFilter() const { return m_code; }
    QComboBox *sessionFilter() const { return m_session; }
    QCheckBox *followCheck() const { return m_follow; }

    QString currentRequestId() const;
    bool autoFollow() const;
    // The filter as set in the controls (the search text applies after a short debounce).
    RequestFilter filterFromControls() const;

public slots:
    void focusSearch();
    void selectRequest(const QString &requestId);
    void setAutoFollow(bool follow);
    void applyFilter();

signals:
    void currentRequestChanged(const QString &requestId);
    void clearRequested();

private:
    void onRowsInserted();
    void refreshSessions();

    RequestsModel *m_model;
    RequestFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_search;
    QComboBox *m_api;
    QComboBox *m_status;
    QComboBox *m_code;
    QComboBox *m_session;
    QCheckBox *m_follow;
    QTimer *m_searchDebounce;
    QString m_current;
};

} // namespace loopscope
