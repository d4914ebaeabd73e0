#include "conversation/responsesstreamwriter.h"

#include "common/randomid.h"
#include "conversation/ssewriter.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace loopscope {

namespace {

const QString kId = QStringLiteral("id");
const QString kType = QStringLiteral("type");
const QString kStatus = QStringLiteral("status");
const QString kOutputIndex = QStringLiteral("output_index");
const QString kItemId = QStringLiteral("item_id");
const QString kItem = QStringLiteral("item");

} // namespace

QByteArray ResponsesStreamWriter::sseEvent(const QString &type, const QJsonObject &payload) {
    return SseWriter::frame(type.toUtf8(), payload);
}

QByteArray ResponsesStreamWriter::emitEvent(const QString &type, QJsonObject payload) {
    payload.insert(kType, type);
    payload.insert(QStringLiteral("sequence_number"), m_sequence++);
    return sseEvent(type, payload);
}

QByteArray ResponsesStreamWriter::begin(const QJsonObject &skeleton) {
    QJsonObject response = skeleton;
    m_responseId = response.value(kId).toString();
    if (m_responseId.isEmpty()) {
        m_responseId = randomId("resp_");
        response.insert(kId, m_responseId);
    }
    response.insert(QStringLiteral("object"), QStringLiteral("response"));
    response.insert(kStatus, QStringLiteral("in_progress"));
    response.insert(QStringLiteral("output"), QJsonArray());
    const QJsonObject wrapped{{QStringLiteral("response"), response}};
    // Sequenced statements: the operands of `a + b` may be evaluated in either order.
    QByteArray out = emitEvent(QStringLiteral("response.created"), wrapped);
    out += emitEvent(QStringLiteral("response.in_progress"), wrapped);
    return out;
}

QByteArray ResponsesStreamWriter::codeCallStarted(const QJsonObject &item) {
    const QString id = item.value(kId).toString();
    const int index = m_nextOutputIndex++;
    m_outputIndexById.insert(id, index);
    m_streamedIds.insert(id);

    QJsonObject added = item;
    added.insert(kStatus, QStringLiteral("in_progress"));
    added.insert(QStringLiteral("code"), QString());
    added.insert(QStringLiteral("outputs"), QJsonValue::Null);
    const QJsonObject ref{{kOutputIndex, index}, {kItemId, id}};
    const QString code = item.value(QStringLiteral("code")).toString();

    QJsonObject delta = ref;
    delta.insert(QStringLiteral("delta"), code);
    QJsonObject done = ref;
    done.insert(QStringLiteral("code"), code);
    QByteArray out = emitEvent(QStringLiteral("response.output_item.added"),
                               {{kOutputIndex, index}, {kItem, added}});
    out += emitEvent(QStringLiteral("response.code_interpreter_call.in_progress"), ref);
    out += emitEvent(QStringLiteral("response.code_interpreter_call_code.delta"), delta);
    out += emitEvent(QStringLiteral("response.code_interpreter_call_code.done"), done);
    out += emitEvent(QStringLiteral("response.code_interpreter_call.interpreting"), ref);
    return out;
}

QByteArray ResponsesStreamWriter::codeCallFinished(const QJsonObject &item) {
    const QString id = item.value(kId).toString();
    QByteArray out;
    if (!m_outputIndexById.contains(id))
        out += codeCallStarted(item);
    const int index = m_outputIndexById.value(id);
    const QJsonObject ref{{kOutputIndex, index}, {kItemId, id}};
    out += emitEvent(QStringLiteral("response.code_interpreter_call.completed"), ref);
    out += emitEvent(QStringLiteral("response.output_item.done"),
                     {{kOutputIndex, index}, {kItem, item}});
    return out;
}

QByteArray ResponsesStreamWriter::modelItem(const QJsonObject &item) {
    return streamItem(item);
}

QByteArray ResponsesStreamWriter::streamItem(QJsonObject item) {
    const QString type = item.value(kType).toString();
    if (m_streamedIds.contains(item.value(kId).toString()))
        return {};
    if (type == QLatin1String("code_interpreter_call"))
        return codeCallFinished(item); // announces it first
    // The SDK requires a non-empty id on every item except function calls.
    if (item.value(kId).toString().isEmpty() && type != QLatin1String("function_call"))
        item.insert(kId, randomId(type == QLatin1String("message") ? "msg_" : "item_"));
    const int index = m_nextOutputIndex++;
    const QString id = item.value(kId).toString();
    if (!id.isEmpty())
        m_streamedIds.insert(id);
    QByteArray out;

    if (type == QLatin1String("reasoning")) {
        // Added with an empty summary, then each summary part as OpenAI streams it; the
        // encrypted_content is in the item from the start (as OpenAI sends it).
        QJsonObject added = item;
        added.insert(QStringLiteral("summary"), QJsonArray());
        out += emitEvent(QStringLiteral("response.output_item.added"),
                         {{kOutputIndex, index}, {kItem, added}});
        const QJsonArray summary = item.value(QStringLiteral("summary")).toArray();
        for (int s = 0; s < summary.size(); ++s) {
            const QJsonObject part = summary.at(s).toObject();
            const QString text = part.value(QStringLiteral("text")).toString();
            const QJsonObject ref{
                {kOutputIndex, index}, {kItemId, id}, {QStringLiteral("summary_index"), s}};
            QJsonObject emptyPart = part;
            emptyPart.insert(QStringLiteral("text"), QString());
            QJsonObject partAdded = ref;
            partAdded.insert(QStringLiteral("part"), emptyPart);
            out += emitEvent(QStringLiteral("response.reasoning_summary_part.added"), partAdded);
            QJsonObject delta = ref;
            delta.insert(QStringLiteral("delta"), text);
            out += emitEvent(QStringLiteral("response.reasoning_summary_text.delta"), delta);
            QJsonObject done = ref;
            done.insert(QStringLiteral("text"), text);
            out += emitEvent(QStringLiteral("response.reasoning_summary_text.done"), done);
            QJsonObject partDone = ref;
            partDone.insert(QStringLiteral("part"), part);
            out += emitEvent(QStringLiteral("response.reasoning_summary_part.done"), partDone);
        }
    } else if (type == QLatin1String("message")) {
        QJsonObject added = item;
        added.insert(kStatus, QStringLiteral("in_progress"));
        added.insert(QStringLiteral("content"), QJsonArray());
        out += emitEvent(QStringLiteral("response.output_item.added"),
                         {{kOutputIndex, index}, {kItem, added}});
        const QJsonArray content = item.value(QStringLiteral("content")).toArray();
        for (int c = 0; c < content.size(); ++c) {
            const QJsonObject part = content.at(c).toObject();
            const QJsonObject ref{
                {kOutputIndex, index}, {kItemId, id}, {QStringLiteral("content_index"), c}};
            const bool isText = part.value(kType).toString() == QLatin1String("output_text");
            QJsonObject emptyPart = part;
            if (isText)
                emptyPart.insert(QStringLiteral("text"), QString());
            QJsonObject added = ref;
            added.insert(QStringLiteral("part"), emptyPart);
            out += emitEvent(QStringLiteral("response.content_part.added"), added);
            if (isText) {
                const QString text = part.value(QStringLiteral("text")).toString();
                QJsonObject delta = ref;
                delta.insert(QStringLiteral("delta"), text);
                delta.insert(QStringLiteral("logprobs"), QJsonArray());
                out += emitEvent(QStringLiteral("response.output_text.delta"), delta);
                QJsonObject done = ref;
                done.insert(QStringLiteral("text"), text);
                done.insert(QStringLiteral("logprobs"), QJsonArray());
                out += emitEvent(QStringLiteral("response.output_text.done"), done);
            }
            QJsonObject partDone = ref;
            partDone.insert(QStringLiteral("part"), part);
            out += emitEvent(QStringLiteral("response.content_part.done"), partDone);
        }
    } else if (type == QLatin1String("function_call")) {
        QJsonObject added = item;
        added.insert(QStringLiteral("arguments"), QString());
        out += emitEvent(QStringLiteral("response.output_item.added"),
                         {{kOutputIndex, index}, {kItem, added}});
        const QString args = item.value(QStringLiteral("arguments")).toString();
        QJsonObject ref{{kOutputIndex, index}};
        if (!id.isEmpty())
            ref.insert(kItemId, id);
        QJsonObject delta = ref;
        delta.insert(QStringLiteral("delta"), args);
        out += emitEvent(QStringLiteral("response.function_call_arguments.delta"), delta);
        QJsonObject done = ref;
        done.insert(QStringLiteral("arguments"), args);
        out += emitEvent(QStringLiteral("response.function_call_arguments.done"), done);
    } else {
        out += emitEvent(QStringLiteral("response.output_item.added"),
                         {{kOutputIndex, index}, {kItem, item}});
    }
    out += emitEvent(QStringLiteral("response.output_item.done"),
                     {{kOutputIndex, index}, {kItem, item}});
    return out;
}

QByteArray ResponsesStreamWriter::finish(QJsonObject finalResponse) {
    if (m_responseId.isEmpty())
        m_responseId = finalResponse.value(kId).toString();
    finalResponse.insert(kId, m_responseId);

    // Items get ids here (when the upstream gave none) so the terminal event repeats them exactly.
    QJsonArray output = finalResponse.value(QStringLiteral("output")).toArray();
    QByteArray out;
    for (int i = 0; i < output.size(); ++i) {
        QJsonObject item = output.at(i).toObject();
        const QString type = item.value(kType).toString();
        if (item.value(kId).toString().isEmpty() && type != QLatin1String("function_call")) {
            item.insert(kId, randomId(type == QLatin1String("message") ? "msg_" : "item_"));
            output[i] = item;
        }
        out += streamItem(item);
    }
    finalResponse.insert(QStringLiteral("output"), output);

    const QString status = finalResponse.value(kStatus).toString();
    QString terminal = QStringLiteral("response.completed");
    if (status == QLatin1String("incomplete"))
        terminal = QStringLiteral("response.incomplete");
    else if (status == QLatin1String("failed"))
        terminal = QStringLiteral("response.failed");
    else
        finalResponse.insert(kStatus, QStringLiteral("completed"));
    out += emitEvent(terminal, {{QStringLiteral("response"), finalResponse}});
    return out;
}

QByteArray ResponsesStreamWriter::error(const QString &code, const QString &message) {
    return emitEvent(QStringLiteral("error"), {{QStringLiteral("code"), code},
                                               {QStringLiteral("message"), message},
                                               {QStringLiteral("param"), QJsonValue::Null}});
}

} // namespace loopscope
