#include "upstream/responsechainstore.h"

#include <QJsonDocument>
#include <QSet>

namespace loopscope {

void ResponseChainStore::add(const QString &responseId, const QString &previous,
                             const QJsonArray &turnItems) {
    if (responseId.isEmpty() || m_turns.contains(responseId))
        return;
    Turn turn;
    turn.previous = previous;
    turn.items = turnItems;
    turn.bytes = QJsonDocument(turnItems).toJson(QJsonDocument::Compact).size();
    m_bytes += turn.bytes;
    m_turns.insert(responseId, std::move(turn));
    m_order.append(responseId);
    while (!m_order.isEmpty() && (m_order.size() > kMaxResponses || m_bytes > kMaxBytes)) {
        const auto it = m_turns.constFind(m_order.takeFirst());
        if (it != m_turns.constEnd()) {
            m_bytes -= it->bytes;
            m_turns.erase(it);
        }
    }
}

std::optional<QJsonArray> ResponseChainStore::chain(const QString &responseId,
                                                    QString *missing) const {
    QList<const Turn *> turns;
    QSet<QString> seen; // a cycle cannot be built through add(), but a chain is walked safely
    for (QString id = responseId; !id.isEmpty();) {
        const auto it = m_turns.constFind(id);
        if (it == m_turns.constEnd() || seen.contains(id)) {
            if (missing)
                *missing = id;
            return std::nullopt;
        }
        seen.insert(id);
        turns.prepend(&it.value());
        id = it->previous;
    }
    QJsonArray items;
    for (const Turn *turn : std::as_const(turns))
        for (const QJsonValue &item : turn->items)
            items.append(item);
    return items;
}

} // namespace loopscope
