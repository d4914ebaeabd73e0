#pragma once

#include "models/requestfilter.h"

#include <QSortFilterProxyModel>

namespace loopscope {

class RequestsModel;

// Sort/filter view over a RequestsModel; acceptance is RequestFilter::matches on the row's record.
class RequestFilterProxyModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit RequestFilterProxyModel(QObject *parent = nullptr);

    void setRequestsModel(RequestsModel *model);
    RequestsModel *requestsModel() const { return m_requests; }

    void setFilter(const RequestFilter &filter);
    const RequestFilter &filter() const { return m_filter; }

    QString requestIdAt(int proxyRow) const;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    using QSortFilterProxyModel::setSourceModel; // only RequestsModel sources

    RequestsModel *m_requests = nullptr;
    RequestFilter m_filter;
};

} // namespace loopscope
