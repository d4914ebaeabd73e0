#pragma once

#include "models/conversation.h"

#include <QAbstractItemModel>

namespace loopscope {

// A flow's conversation as a tree: one top-level row per iteration ("Iteration 1", …) and a
// last "Final answer" row; their children are the entries — what was sent (only the items new
// since the previous iteration unless showAllSent), the model's reply with decoded tool calls,
// the output fed back. Roles below carry the parts a view needs.
class ConversationModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Roles {
        SectionRole = Qt::UserRole + 1, // Conversation::Section as int
        KindRole,                       // Conversation::Kind as int
        SpeakerRole,                    // "user", "assistant", "tool", …
        TextRole,                       // the entry's readable body
        FormatRole,                     // Conversation::Format as int
        CallIdRole,
        NoteRole,
        IsNewRole,
        ClientSideRole,
        IterationRole, // top-level rows: the iteration index, -1 for the final answer
    };

    explicit ConversationModel(QObject *parent = nullptr);

    void setFlow(const QJsonObject &flow); // an empty object clears it
    const Conversation &conversation() const { return m_conversation; }

    void setShowAllSent(bool all);
    bool showAllSent() const { return m_showAllSent; }

    // The entries listed under a top-level row (row = iteration index, or the final row).
    QList<Conversation::Entry> entries(int topRow) const;
    int finalRow() const; // -1 without a final answer

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    void rebuild();

    Conversation m_conversation;
    QList<QList<Conversation::Entry>> m_rows; // visible entries per top-level row
    bool m_showAllSent = false;
};

} // namespace loopscope
