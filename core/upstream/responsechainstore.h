#pragma once

#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QString>

#include <optional>

namespace loopscope {

// The Responses conversations Loopscope keeps for upstreams that keep none (a bridged chat-only
// route): per response id the items of its turn (the input it was given, then its output) and
// the response it continued, so `previous_response_id` and `conversation` resolve the moment a
// response completed — no store round trip, and it works with --no-history too. Bounded: at most
// kMaxResponses turns and kMaxBytes of item JSON; the oldest turns go first, and a chain that
// reaches a forgotten turn is answered as not found (never half a conversation). Proxy thread.
class ResponseChainStore {
public:
    static constexpr int kMaxResponses = 4096;
    static constexpr qint64 kMaxBytes = 128 * 1024 * 1024;

    // Records a finished turn. `previous`: the response it continued (empty: none).
    void add(const QString &responseId, const QString &previous, const QJsonArray &turnItems);
    // Every item before a request continuing `responseId`, oldest first; nullopt when that
    // response, or one it continued, is not kept. `missing` names the id that was not found.
    std::optional<QJsonArray> chain(const QString &responseId, QString *missing = nullptr) const;
    bool contains(const QString &responseId) const { return m_turns.contains(responseId); }

    // A conversation's latest response (empty when the conversation has none yet).
    QString conversationHead(const QString &conversationId) const {
        return m_conversations.value(conversationId);
    }
    void setConversationHead(const QString &conversationId, const QString &responseId) {
        m_conversations.insert(conversationId, responseId);
    }

    int size() const { return int(m_turns.size()); }
    qint64 bytes() const { return m_bytes; }

private:
    struct Turn {
        QString previous;
        QJsonArray items;
        qint64 bytes = 0;
    };
    QHash<QString, Turn> m_turns;
    QList<QString> m_order; // oldest first
    QHash<QString, QString> m_conversations;
    qint64 m_bytes = 0;
};

} // namespace loopscope
