#include "widgets/timelinebardelegate.h"

#include "models/looptimelinemodel.h"

#include <QPainter>

namespace loopscope {

void TimelineBarDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                                const QModelIndex &index) const {
    QStyledItemDelegate::paint(painter, option, index); // background and selection
    const double start = index.data(LoopTimelineModel::BarStartRole).toDouble();
    const double end = index.data(LoopTimelineModel::BarEndRole).toDouble();
    const bool failed = index.data(LoopTimelineModel::FailedRole).toBool();
    const bool running = index.data(LoopTimelineModel::RunningRole).toBool();
    const bool code = index.data(LoopTimelineModel::KindRole).toInt() ==
                      int(LoopTimelineModel::StepKind::CodeRun);
    const QRect area = option.rect.adjusted(4, 4, -4, -4);
    const int x = area.left() + int(start * area.width());
    const int w = std::max(3, int((end - start) * area.width()));
    // Fixed colours, never the selection's: a selected row keeps its bar visible.
    const QColor color = failed ? QColor(0xd0, 0x3b, 0x3b)
                         : code ? QColor(0x2e, 0xa0, 0x43)
                                : QColor(0x3b, 0x7d, 0xd8);
    const bool selected = option.state & QStyle::State_Selected;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    // Outlined against the selection colour, whatever the theme.
    painter->setPen(selected ? QPen(option.palette.color(QPalette::HighlightedText), 1.5)
                             : QPen(Qt::NoPen));
    QColor fill = color;
    if (running)
        fill.setAlpha(150); // still growing
    painter->setBrush(fill);
    painter->drawRoundedRect(QRect(x, area.top(), w, area.height()), 3, 3);
    painter->restore();
}

} // namespace loopscope
