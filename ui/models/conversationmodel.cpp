#include "models/conversationmodel.h"

using namespace Qt::StringLiterals;

namespace loopscope {

namespace {
// Internal id of a child index: its top-level row + 1 (0 marks top-level rows).
constexpr quintptr kTop = 0;
} // namespace

ConversationModel::ConversationModel(QObject *parent)
    : QAbstractItemModel(parent) {}

void ConversationModel::setFlow(const QJsonObject &flow) {
    beginResetModel();
    m_conversation = Conversation::fromFlow(flow);
    rebuild();
    endResetModel();
}

void ConversationModel::setShowAllSent(bool all) {
    if (all == m_showAllSent)
        return;
    beginResetModel();
    m_showAllSent = all;
    rebuild();
    endResetModel();
}

void ConversationModel::rebuild() {
    m_rows.clear();
    for (const Conversation::Iteration &it : m_conversation.iterations()) {
        QList<Conversation::Entry> row;
        for (const Conversation::Entry &e : it.sent)
            if (m_showAllSent || e.isNew)
                row << e;
        row << it.reply << it.fedBack;
        m_rows << row;
    }
    if (!m_conversation.finalAnswer().isEmpty())
        m_rows << m_conversation.finalAnswer();
}

QList<Conversation::Entry> ConversationModel::entries(int topRow) const {
    return topRow >= 0 && topRow < m_rows.size() ? m_rows.at(topRow) : QList<Conversation::Entry>();
}

int ConversationModel::finalRow() const {
    return m_conversation.finalAnswer().isEmpty() ? -1 : int(m_rows.size() - 1);
}

QModelIndex ConversationModel::index(int row, int column, const QModelIndex &parent) const {
    if (!hasIndex(row, column, parent))
        return {};
    if (!parent.isValid())
        return createIndex(row, column, kTop);
    return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex ConversationModel::parent(const QModelIndex &child) const {
    if (!child.isValid() || child.internalId() == kTop)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kTop);
}

int ConversationModel::rowCount(const QModelIndex &parent) const {
    if (!parent.isValid())
        return int(m_rows.size());
    if (parent.internalId() != kTop || parent.column() != 0)
        return 0;
    return int(m_rows.value(parent.row()).size());
}

int ConversationModel::columnCount(const QModelIndex &) const {
    return 1;
}

QVariant ConversationModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.internalId() == kTop) {
        const bool isFinal = index.row() == finalRow();
        const auto &iterations = m_conversation.iterations();
        switch (role) {
        case Qt::DisplayRole:
            if (isFinal)
                return tr("Final answer");
            return tr("Iteration %1").arg(iterations.at(index.row()).index + 1);
        case Qt::ToolTipRole:
            if (isFinal)
                return tr("What the client received (HTTP %1)").arg(m_conversation.finalStatus());
            return tr("new items sent: %1").arg(iterations.at(index.row()).newCount());
        case IterationRole:
            return isFinal ? -1 : iterations.at(index.row()).index;
        case SectionRole:
            return isFinal ? int(Conversation::Section::Final) : QVariant();
        default:
            return {};
        }
    }
    const int top = int(index.internalId() - 1);
    if (top < 0 || top >= m_rows.size() || index.row() >= m_rows.at(top).size())
        return {};
    const Conversation::Entry &e = m_rows.at(top).at(index.row());
    switch (role) {
    case Qt::DisplayRole: {
        const QString first = e.text.section(u'\n', 0, 0);
        return QString(e.title + u": "_s +
                       (first.size() > 80 ? QString(first.left(79) + u"…"_s) : first));
    }
    case Qt::ToolTipRole:
        return e.text.left(2000);
    case SectionRole:
        return int(e.section);
    case KindRole:
        return int(e.kind);
    case SpeakerRole:
        return e.role;
    case TextRole:
        return e.text;
    case FormatRole:
        return int(e.format);
    case CallIdRole:
        return e.callId;
    case NoteRole:
        return e.note;
    case IsNewRole:
        return e.isNew;
    case ClientSideRole:
        return e.clientSide;
    case IterationRole:
        return top == finalRow() ? -1 : m_conversation.iterations().at(top).index;
    default:
        return {};
    }
}

QHash<int, QByteArray> ConversationModel::roleNames() const {
    QHash<int, QByteArray> names = QAbstractItemModel::roleNames();
    names.insert(SectionRole, "section");
    names.insert(KindRole, "kind");
    names.insert(SpeakerRole, "speaker");
    names.insert(TextRole, "text");
    names.insert(FormatRole, "format");
    names.insert(CallIdRole, "callId");
    names.insert(NoteRole, "note");
    names.insert(IsNewRole, "isNew");
    names.insert(ClientSideRole, "clientSide");
    names.insert(IterationRole, "iteration");
    return names;
}

} // namespace loopscope
