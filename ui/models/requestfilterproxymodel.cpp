#include "models/requestfilterproxymodel.h"

#include "models/requestsmodel.h"

namespace loopscope {

RequestFilterProxyModel::RequestFilterProxyModel(QObject *parent)
    : QSortFilterProxyModel(parent) {
    setSortRole(RequestsModel::SortRole);
    setDynamicSortFilter(true);
}

void RequestFilterProxyModel::setRequestsModel(RequestsModel *model) {
    m_requests = model;
    setSourceModel(model);
}

void RequestFilterProxyModel::setFilter(const RequestFilter &filter) {
    if (filter == m_filter)
        return;
    m_filter = filter;
    invalidateFilter();
}

QString RequestFilterProxyModel::requestIdAt(int proxyRow) const {
    return index(proxyRow, 0).data(RequestsModel::RequestIdRole).toString();
}

bool RequestFilterProxyModel::filterAcceptsRow(int sourceRow,
                                               const QModelIndex &sourceParent) const {
    if (sourceParent.isValid() || !m_requests)
        return false;
    const RequestRecord *record = m_requests->record(sourceRow);
    return record && m_filter.matches(*record);
}

} // namespace loopscope
