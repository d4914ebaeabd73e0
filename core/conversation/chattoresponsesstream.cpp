#include "conversation/chattoresponsesstream.h"

#include "common/randomid.h"
#include "conversation/ssewriter.h"

#include <QDateTime>

namespace loopscope {

namespace {

const QString kType = QStringLiteral("type");
const QString kOutputIndex = QStringLiteral("output_index");
const QString kItemId = QStringLiteral("item_id");
const QString kItem = QStringLiteral("item");
const QString kDelta = QStringLiteral("delta");
const QString kContentIndex = QStringLiteral("content_index");
const QString kPart = QStringLiteral("part");

} // namespace

ChatToResponsesStream::ChatToResponsesStream(QJsonObject request)
    : m_request(std::move(request))
    , m_ids(ResponsesOverChat::mintIds(0))
    , m_createdAt(QDateTime::currentSecsSinceEpoch())
    , m_model(m_request.value(QStringLiteral("model")).toString()) {}

QByteArray ChatToResponsesStream::emitEvent(const QString &type, QJsonObject payload) {
    payload.insert(kType, type);
    payload.insert(QStringLiteral("sequence_number"), m_sequence++);
    return SseWriter::frame(type.toUtf8(), payload);
}

QJsonObject ChatToResponsesStream::snapshot(const QString &status) const {
    QJsonObject response =
        ResponsesOverChat::envelope(m_request, m_ids.response, m_createdAt, m_model);
    response.insert(QStringLiteral("status"), status);
    return response;
}

QByteArray ChatToResponsesStream::begin() {
    const QJsonObject wrapped{
        {QStringLiteral("response"), snapshot(QStringLiteral("in_progress"))}};
    QByteArray out = emitEvent(QStringLiteral("response.created"), wrapped);
    out += emitEvent(QStringLiteral("response.in_progress"), wrapped);
    return out;
}

QByteArray ChatToResponsesStream::openReasoning() {
    QByteArray out = closeOpen();
    m_open = Open::Reasoning;
    m_openIndex = m_nextOutput++;
    QJsonObject added = ResponsesOverChat::reasoningItem(m_ids.reasoning, QString());
    added.insert(QStringLiteral("content"), QJsonArray());
    out += emitEvent(QStringLiteral("response.output_item.added"),
                     {{kOutputIndex, m_openIndex}, {kItem, added}});
    out += emitEvent(QStringLiteral("response.content_part.added"),
                     {{kOutputIndex, m_openIndex},
                      {kItemId, m_ids.reasoning},
                      {kContentIndex, 0},
                      {kPart, QJsonObject{{kType, QStringLiteral("reasoning_text")},
                                          {QStringLiteral("text"), QString()}}}});
    return out;
}

QByteArray ChatToResponsesStream::openMessage() {
    QByteArray out = closeOpen();
    m_open = Open::Message;
    m_openIndex = m_nextOutput++;
    QJsonObject added = ResponsesOverChat::messageItem(m_ids.message, QString(), QString());
    added.insert(QStringLiteral("status"), QStringLiteral("in_progress"));
    added.insert(QStringLiteral("content"), QJsonArray());
    out += emitEvent(QStringLiteral("response.output_item.added"),
                     {{kOutputIndex, m_openIndex}, {kItem, added}});
    return out;
}

QByteArray ChatToResponsesStream::openCall(int index) {
    QByteArray out = closeOpen();
    CallState &call = m_calls[index];
    m_open = Open::Call;
    m_openCall = index;
    m_openIndex = call.outputIndex = m_nextOutput++;
    call.itemId = QStringLiteral("fc_") + randomHex128();
    QJsonObject added = ResponsesOverChat::toolCallItem(call.itemId, call.item(QString()));
    added.insert(QStringLiteral("status"), QStringLiteral("in_progress"));
    out += emitEvent(QStringLiteral("response.output_item.added"),
                     {{kOutputIndex, m_openIndex}, {kItem, added}});
    return out;
}

QByteArray ChatToResponsesStream::closeOpen() {
    QByteArray out;
    const QJsonObject ref{{kOutputIndex, m_openIndex}};
    QJsonObject item;
    switch (m_open) {
    case Open::None:
        return {};
    case Open::Reasoning: {
        QJsonObject done = ref;
        done.insert(kItemId, m_ids.reasoning);
        done.insert(kContentIndex, 0);
        QJsonObject textDone = done;
        textDone.insert(QStringLiteral("text"), m_reasoning);
        out += emitEvent(QStringLiteral("response.reasoning_text.done"), textDone);
        done.insert(kPart, QJsonObject{{kType, QStringLiteral("reasoning_text")},
                                       {QStringLiteral("text"), m_reasoning}});
        out += emitEvent(QStringLiteral("response.content_part.done"), done);
        item = ResponsesOverChat::reasoningItem(m_ids.reasoning, m_reasoning, m_encrypted);
        break;
    }
    case Open::Message: {
        item = ResponsesOverChat::messageItem(m_ids.message, m_text, m_refusal);
        const QJsonArray content = item.value(QStringLiteral("content")).toArray();
        int c = 0;
        if (!m_text.isEmpty()) { // its part was opened by the first delta
            QJsonObject done = ref;
            done.insert(kItemId, m_ids.message);
            done.insert(kContentIndex, c);
            QJsonObject textDone = done;
            textDone.insert(QStringLiteral("text"), m_text);
            textDone.insert(QStringLiteral("logprobs"), QJsonArray());
            out += emitEvent(QStringLiteral("response.output_text.done"), textDone);
            done.insert(kPart, content.at(c));
            out += emitEvent(QStringLiteral("response.content_part.done"), done);
            ++c;
        }
        for (; c < content.size(); ++c) { // a part that had no deltas: added and done whole
            const QJsonObject part = content.at(c).toObject();
            QJsonObject p = ref;
            p.insert(kItemId, m_ids.message);
            p.insert(kContentIndex, c);
            QJsonObject empty = part;
            const bool refusal = part.value(kType).toString() == QLatin1String("refusal");
            empty.insert(refusal ? QStringLiteral("refusal") : QStringLiteral("text"), QString());
            QJsonObject added = p;
            added.insert(kPart, empty);
            out += emitEvent(QStringLiteral("response.content_part.added"), added);
            if (refusal) {
                QJsonObject delta = p;
                delta.insert(kDelta, m_refusal);
                out += emitEvent(QStringLiteral("response.refusal.delta"), delta);
                QJsonObject rdone = p;
                rdone.insert(QStringLiteral("refusal"), m_refusal);
                out += emitEvent(QStringLiteral("response.refusal.done"), rdone);
            } else {
                QJsonObject tdone = p;
                tdone.insert(QStringLiteral("text"), QString());
                tdone.insert(QStringLiteral("logprobs"), QJsonArray());
                out += emitEvent(QStringLiteral("response.output_text.done"), tdone);
            }
            QJsonObject done = p;
            done.insert(kPart, part);
            out += emitEvent(QStringLiteral("response.content_part.done"), done);
        }
        break;
    }
    case Open::Call: {
        const CallState &call = m_calls[m_openCall];
        item = ResponsesOverChat::toolCallItem(call.itemId, call.item(call.arguments));
        QJsonObject done = ref;
        done.insert(kItemId, call.itemId);
        if (call.custom) {
            done.insert(QStringLiteral("input"), call.arguments);
            out += emitEvent(QStringLiteral("response.custom_tool_call_input.done"), done);
        } else {
            done.insert(QStringLiteral("name"), call.name);
            done.insert(QStringLiteral("arguments"), call.arguments);
            out += emitEvent(QStringLiteral("response.function_call_arguments.done"), done);
        }
        break;
    }
    }
    out += emitEvent(QStringLiteral("response.output_item.done"),
                     {{kOutputIndex, m_openIndex}, {kItem, item}});
    m_output.append(item);
    m_open = Open::None;
    return out;
}

QByteArray ChatToResponsesStream::feed(const QJsonObject &chunk) {
    QByteArray out;
    if (chunk.value(QStringLiteral("model")).isString())
        m_model = chunk.value(QStringLiteral("model")).toString();
    if (chunk.value(QStringLiteral("usage")).isObject())
        m_usage = chunk.value(QStringLiteral("usage")).toObject();
    const QJsonObject choice = chunk.value(QStringLiteral("choices")).toArray().first().toObject();
    const QJsonObject delta = choice.value(kDelta).toObject();

    QString reasoning = delta.value(QStringLiteral("reasoning_content")).toString();
    if (reasoning.isEmpty())
        reasoning = delta.value(QStringLiteral("reasoning")).toString();
    if (!reasoning.isEmpty()) {
        if (m_open != Open::Reasoning)
            out += openReasoning();
        m_reasoning += reasoning;
        out +=
            emitEvent(QStringLiteral("response.reasoning_text.delta"), {{kOutputIndex, m_openIndex},
                                                                        {kItemId, m_ids.reasoning},
                                                                        {kContentIndex, 0},
                                                                        {kDelta, reasoning}});
    }
    // A finished Anthropic thinking block (ChatOverMessages' thinking_blocks): its signature
    // becomes the reasoning item's encrypted_content.
    if (const QJsonArray blocks = delta.value(QStringLiteral("thinking_blocks")).toArray();
        !blocks.isEmpty() && m_open == Open::Reasoning)
        m_encrypted = ResponsesOverChat::thinkingEncrypted(blocks.last().toObject());
    const QString text = delta.value(QStringLiteral("content")).toString();
    if (!text.isEmpty()) {
        if (m_open != Open::Message)
            out += openMessage();
        const QJsonObject ref{
            {kOutputIndex, m_openIndex}, {kItemId, m_ids.message}, {kContentIndex, 0}};
        if (m_text.isEmpty()) {
            QJsonObject added = ref;
            added.insert(kPart, QJsonObject{{kType, QStringLiteral("output_text")},
                                            {QStringLiteral("annotations"), QJsonArray()},
                                            {QStringLiteral("logprobs"), QJsonArray()},
                                            {QStringLiteral("text"), QString()}});
            out += emitEvent(QStringLiteral("response.content_part.added"), added);
        }
        m_text += text;
        QJsonObject d = ref;
        d.insert(kDelta, text);
        d.insert(QStringLiteral("logprobs"), QJsonArray());
        out += emitEvent(QStringLiteral("response.output_text.delta"), d);
    }
    if (const QString refusal = delta.value(QStringLiteral("refusal")).toString();
        !refusal.isEmpty()) {
        if (m_open != Open::Message)
            out += openMessage();
        m_refusal += refusal; // streamed whole when the message closes
    }
    for (const QJsonValue &v : delta.value(QStringLiteral("tool_calls")).toArray()) {
        const QJsonObject c = v.toObject();
        const int index = c.value(QStringLiteral("index")).toInt();
        const bool known = m_calls.contains(index);
        CallState &call = m_calls[index];
        const bool custom = c.value(kType).toString() == QLatin1String("custom");
        const QJsonObject fn =
            c.value(custom ? QStringLiteral("custom") : QStringLiteral("function")).toObject();
        if (c.value(QStringLiteral("id")).isString())
            call.callId = c.value(QStringLiteral("id")).toString();
        if (fn.value(QStringLiteral("name")).isString())
            call.name = fn.value(QStringLiteral("name")).toString();
        call.custom = call.custom || custom;
        if (!known)
            out += openCall(index);
        const QString part =
            fn.value(custom ? QStringLiteral("input") : QStringLiteral("arguments")).toString();
        if (part.isEmpty())
            continue;
        call.arguments += part;
        out +=
            emitEvent(custom ? QStringLiteral("response.custom_tool_call_input.delta")
                             : QStringLiteral("response.function_call_arguments.delta"),
                      {{kOutputIndex, call.outputIndex}, {kItemId, call.itemId}, {kDelta, part}});
    }
    if (choice.value(QStringLiteral("finish_reason")).isString())
        m_finish = choice.value(QStringLiteral("finish_reason")).toString();
    return out;
}

QByteArray ChatToResponsesStream::finish() {
    QByteArray out = closeOpen();
    QJsonObject response = snapshot(QStringLiteral("completed"));
    response.insert(QStringLiteral("output"), m_output);
    ResponsesOverChat::applyFinish(response, m_finish);
    if (!m_usage.isEmpty())
        response.insert(QStringLiteral("usage"), ResponsesOverChat::usageFromChat(m_usage));
    m_final = response;
    const bool incomplete =
        response.value(QStringLiteral("status")).toString() == QLatin1String("incomplete");
    out += emitEvent(incomplete ? QStringLiteral("response.incomplete")
                                : QStringLiteral("response.completed"),
                     {{QStringLiteral("response"), response}});
    return out;
}

QByteArray ChatToResponsesStream::fail(const QString &code, const QString &message) {
    return emitEvent(QStringLiteral("error"), {{QStringLiteral("code"), code},
                                               {QStringLiteral("message"), message},
                                               {QStringLiteral("param"), QJsonValue::Null}});
}

} // namespace loopscope
