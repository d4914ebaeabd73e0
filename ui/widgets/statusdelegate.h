#pragma once

#include <QStyledItemDelegate>

namespace loopscope {

// Status cells of the Requests and Runs views: an icon and colour from the row's
// FlowListModel::StatusKind (failed red, code error and incomplete with a warning icon,
// running italic, paused with a pause icon). Presentation only: the models stay GUI-free.
class StatusDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override;
};

} // namespace loopscope
