#include "widgets/statusdelegate.h"

#include "models/flowlistmodel.h"

#include <QApplication>
#include <QStyle>

namespace loopscope {

void StatusDelegate::initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const {
    QStyledItemDelegate::initStyleOption(option, index);
    // Both FlowListModel and RunsModel answer the same role number for the status kind.
    const QVariant kindValue = index.data(FlowListModel::StatusKindRole);
    if (!kindValue.isValid())
        return;
    const auto kind = FlowListModel::StatusKind(kindValue.toInt());
    const bool dark = option->palette.color(QPalette::Base).lightness() < 128;
    QStyle *style = option->widget ? option->widget->style() : QApplication::style();
    const auto withIcon = [option, style](QStyle::StandardPixmap pixmap) {
        option->icon = style->standardIcon(pixmap);
        option->features |= QStyleOptionViewItem::HasDecoration;
    };
    switch (kind) {
    case FlowListModel::StatusKind::Failed:
        option->palette.setColor(QPalette::Text,
                                 dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xc0, 0x1c, 0x1c));
        option->font.setBold(true);
        withIcon(QStyle::SP_MessageBoxCritical);
        break;
    case FlowListModel::StatusKind::CodeError:
        option->palette.setColor(QPalette::Text,
                                 dark ? QColor(0xff, 0xa0, 0x4a) : QColor(0xa3, 0x4a, 0x00));
        withIcon(QStyle::SP_MessageBoxWarning);
        break;
    case FlowListModel::StatusKind::Incomplete:
        withIcon(QStyle::SP_MessageBoxWarning);
        break;
    case FlowListModel::StatusKind::Paused:
        option->font.setBold(true);
        withIcon(QStyle::SP_MediaPause);
        break;
    case FlowListModel::StatusKind::Running:
        option->palette.setColor(QPalette::Text, option->palette.color(QPalette::PlaceholderText));
        option->font.setItalic(true);
        break;
    case FlowListModel::StatusKind::Ok:
        break;
    }
}

} // namespace loopscope
