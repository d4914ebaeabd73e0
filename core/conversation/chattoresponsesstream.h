#pragma once

#include "conversation/responsesoverchat.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QString>

namespace loopscope {

// A Chat Completions stream turned, chunk by chunk, into the Responses stream a client of the
// Responses API expects, in OpenAI's event order: response.created, response.in_progress, then
// per item output_item.added — for a message content_part.added, output_text.delta…,
// output_text.done, content_part.done; for reasoning (reasoning_content) reasoning_text.delta…
// and .done; for a tool call function_call_arguments.delta… and .done — output_item.done, and
// last response.completed (or response.incomplete) with the whole response. An item is closed
// when the next one starts, so output_index follows the order the model wrote things. Every
// event carries its sequence_number. The final response is built from the same pieces as
// ResponsesOverChat::responseFromChat, so a stream and a JSON answer of the same completion
// agree. Pure: chunks in, bytes out.
class ChatToResponsesStream {
public:
    // `request`: the client's Responses body (echoed in the response, as OpenAI does).
    explicit ChatToResponsesStream(QJsonObject request);

    // response.created + response.in_progress.
    QByteArray begin();
    // One decoded chat.completion.chunk.
    QByteArray feed(const QJsonObject &chunk);
    // Closes what is open, then the terminal event.
    QByteArray finish();
    // An OpenAI `error` event (the chat stream failed); the stream ends after it.
    QByteArray fail(const QString &code, const QString &message);

    QString responseId() const { return m_ids.response; }
    // The response the terminal event carried (empty before finish()).
    QJsonObject finalResponse() const { return m_final; }

private:
    enum class Open { None, Reasoning, Message, Call };
    QByteArray emitEvent(const QString &type, QJsonObject payload);
    QByteArray openReasoning();
    QByteArray openMessage();
    QByteArray openCall(int index);
    QByteArray closeOpen();
    QJsonObject snapshot(const QString &status) const;

    struct CallState {
        QString itemId;
        QString callId;
        QString name;
        QString arguments;
        bool custom = false;
        int outputIndex = -1;
        // The call as the model's item, with these arguments (empty while it streams).
        ConversationItem item(const QString &withArguments) const {
            ConversationItem c;
            c.kind = ConversationItem::Kind::ToolCall;
            c.toolKind =
                custom ? ConversationItem::ToolKind::Custom : ConversationItem::ToolKind::Function;
            c.callId = callId;
            c.name = name;
            c.arguments = withArguments;
            return c;
        }
    };

    QJsonObject m_request;
    ResponsesOverChat::Ids m_ids;
    qint64 m_createdAt = 0;
    QString m_model;
    int m_sequence = 0;
    int m_nextOutput = 0;
    Open m_open = Open::None;
    int m_openIndex = -1; // output_index of the open item
    int m_openCall = -1;  // the chat tool-call index open
    QString m_reasoning;
    QString m_encrypted; // the reasoning's encrypted_content (an Anthropic thinking signature)
    QString m_text;
    QString m_refusal;
    QMap<int, CallState> m_calls;
    QJsonArray m_output; // finished items, in output_index order
    QString m_finish;
    QJsonObject m_usage;
    QJsonObject m_final;
};

} // namespace loopscope
