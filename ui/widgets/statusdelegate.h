#pragma once

#include <QStyledItemDelegate>

namespace loopscope {

// Colours the Requests table's status cell from the row's RequestState: failed in red, running
// in the palette's placeholder colour and italic. Presentation only: the model stays GUI-free.
class StatusDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override;
};

} // namespace loopscope
