#pragma once

#include <QStyledItemDelegate>

namespace loopscope {

// Paints a LoopTimelineModel row's bar (BarStartRole..BarEndRole of the cell width): model calls
// in blue, code runs in green, failures in red, running steps translucent; outlined when selected.
class TimelineBarDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
};

} // namespace loopscope
