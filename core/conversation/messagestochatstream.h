#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace loopscope {

// An Anthropic Messages stream turned, event by event, into the chat.completion.chunk objects
// an OpenAI client expects (dialects.md §5), in OpenAI's order: a first chunk with the role,
// then the deltas as the blocks stream — text_delta → content, thinking_delta →
// reasoning_content, a finished thinking block (its signature) → thinking_blocks (all of them
// so far, as the SDK's accumulator keeps the last value of a field it does not know), a
// tool_use start → a tool call (index, id, name, "") and input_json_delta → its arguments —
// then message_delta's stop reason as the finish_reason chunk, and at message_stop the usage
// chunk (empty choices) when the client asked for it. An `error` event becomes a chunk with an
// OpenAI `error` object, and the stream ends there. Pure: events in, chunks out.
class MessagesToChatStream {
public:
    explicit MessagesToChatStream(bool includeUsage);

    // One decoded Messages event's data (it carries its own "type").
    QList<QJsonObject> feed(const QJsonObject &event);
    // The stream ended in an error event.
    bool failed() const { return m_failed; }
    // The message_stop arrived.
    bool finished() const { return m_finished; }

private:
    QJsonObject chunk(const QJsonObject &delta, const QJsonValue &finish = {}) const;

    bool m_includeUsage = false;
    QString m_id;
    QString m_model;
    qint64 m_created = 0;
    QJsonObject m_usage; // the Messages usage, message_delta's counts over message_start's
    QString m_stop;
    int m_nextCall = 0;
    struct Block {
        QString type;
        int call = -1; // tool_use: its tool_calls index
        bool hadInput = false;
        QJsonObject wire; // thinking: the block as it adds up
    };
    QList<Block> m_blocks; // by content block index
    QJsonArray m_thinking; // finished thinking blocks
    bool m_failed = false;
    bool m_finished = false;
};

} // namespace loopscope
