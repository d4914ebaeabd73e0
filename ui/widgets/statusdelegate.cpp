#include "widgets/statusdelegate.h"

#include "models/requestrecord.h"
#include "models/requestsmodel.h"

namespace loopscope {

void StatusDelegate::initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const {
    QStyledItemDelegate::initStyleOption(option, index);
    const auto state = RequestState(index.data(RequestsModel::StateRole).toInt());
    if (state == RequestState::Failed) {
        const bool dark = option->palette.color(QPalette::Base).lightness() < 128;
        option->palette.setColor(QPalette::Text,
                                 dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xc0, 0x1c, 0x1c));
        option->font.setBold(true);
    } else if (state == RequestState::Running) {
        option->palette.setColor(QPalette::Text, option->palette.color(QPalette::PlaceholderText));
        option->font.setItalic(true);
    }
}

} // namespace loopscope
