#pragma once

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QSet>
#include <QString>

namespace loopscope {

// Turns one intercepted Responses request into OpenAI's SSE event sequence, live:
// `response.created` is written at once, each code_interpreter_call with OpenAI's native events
// while it runs (in_progress, code delta/done, interpreting, completed), and the model's final
// items when the loop is over, closed by `response.completed` (or `response.incomplete`) carrying
// the same response id. The model's items of a round that ran code (reasoning, commentary) are
// streamed when that round's answer arrives, so output_index follows the order things happened.
// Every event has a `sequence_number`; every item gets output_item.added/done; message text gets
// content_part.added before its deltas, a reasoning summary reasoning_summary_part.added before
// its. This is the order `client.responses.stream()` in the official SDKs validates. Pure:
// returns bytes.
class ResponsesStreamWriter {
public:
    // `skeleton`: the response as known before the model answers (id, created_at, model, ...).
    QByteArray begin(const QJsonObject &skeleton);
    // A code_interpreter_call item about to run (id, code, container_id set).
    QByteArray codeCallStarted(const QJsonObject &item);
    // The same item after its run (outputs filled, status "completed").
    QByteArray codeCallFinished(const QJsonObject &item);
    // One whole item the model produced in a round before the final answer (it must have an
    // id); finish() does not stream it again.
    QByteArray modelItem(const QJsonObject &item);
    // Streams every item of the final response not already streamed, then the terminal event:
    // `response.incomplete` when status is "incomplete", `response.failed` when "failed",
    // otherwise `response.completed`. The response's id is forced to the skeleton's.
    QByteArray finish(QJsonObject finalResponse);
    // An OpenAI `error` event; the stream must end after it.
    QByteArray error(const QString &code, const QString &message);

    QString responseId() const { return m_responseId; }
    int eventCount() const { return m_sequence; }

    static QByteArray sseEvent(const QString &type, const QJsonObject &payload);

private:
    QByteArray emitEvent(const QString &type, QJsonObject payload);
    QByteArray streamItem(QJsonObject item);

    QString m_responseId;
    int m_sequence = 0;
    int m_nextOutputIndex = 0;
    QHash<QString, int> m_outputIndexById; // code_interpreter_call id -> output_index
    QSet<QString> m_streamedIds;           // every item streamed so far (with an id)
};

} // namespace loopscope
