#include "conversation/messagestochatstream.h"

#include "common/openaierror.h"
#include "conversation/chatovermessages.h"

#include <QDateTime>

namespace loopscope {

namespace {

const QString kType = QStringLiteral("type");
const QString kIndex = QStringLiteral("index");
const QString kDelta = QStringLiteral("delta");
const QString kToolCalls = QStringLiteral("tool_calls");
const QString kFunction = QStringLiteral("function");
const QString kArguments = QStringLiteral("arguments");

} // namespace

MessagesToChatStream::MessagesToChatStream(bool includeUsage)
    : m_includeUsage(includeUsage)
    , m_created(QDateTime::currentSecsSinceEpoch()) {}

QJsonObject MessagesToChatStream::chunk(const QJsonObject &delta, const QJsonValue &finish) const {
    return {{QStringLiteral("id"), m_id},
            {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
            {QStringLiteral("created"), m_created},
            {QStringLiteral("model"), m_model},
            {QStringLiteral("choices"),
             QJsonArray{QJsonObject{{kIndex, 0},
                                    {kDelta, delta},
                                    {QStringLiteral("logprobs"), QJsonValue::Null},
                                    {QStringLiteral("finish_reason"),
                                     finish.isUndefined() ? QJsonValue::Null : finish}}}}};
}

QList<QJsonObject> MessagesToChatStream::feed(const QJsonObject &event) {
    if (m_failed || m_finished)
        return {};
    const QString type = event.value(kType).toString();
    if (type == QLatin1String("message_start")) {
        const QJsonObject message = event.value(QStringLiteral("message")).toObject();
        m_id = message.value(QStringLiteral("id")).toString();
        m_model = message.value(QStringLiteral("model")).toString();
        m_usage = message.value(QStringLiteral("usage")).toObject();
        return {chunk({{QStringLiteral("role"), QStringLiteral("assistant")},
                       {QStringLiteral("content"), QString()}})};
    }
    if (type == QLatin1String("content_block_start")) {
        const int index = event.value(kIndex).toInt();
        const QJsonObject block = event.value(QStringLiteral("content_block")).toObject();
        while (m_blocks.size() <= index)
            m_blocks.append(Block());
        Block &b = m_blocks[index];
        b.type = block.value(kType).toString();
        b.wire = block;
        if (b.type == QLatin1String("tool_use")) {
            b.call = m_nextCall++;
            return {chunk(
                {{kToolCalls, QJsonArray{QJsonObject{
                                  {kIndex, b.call},
                                  {QStringLiteral("id"), block.value(QStringLiteral("id"))},
                                  {kType, kFunction},
                                  {kFunction, QJsonObject{{QStringLiteral("name"),
                                                           block.value(QStringLiteral("name"))},
                                                          {kArguments, QString()}}}}}}})};
        }
        if (b.type == QLatin1String("redacted_thinking")) {
            m_thinking.append(block);
            return {chunk({{QStringLiteral("thinking_blocks"), m_thinking}})};
        }
        if (b.type == QLatin1String("text") &&
            !block.value(QStringLiteral("text")).toString().isEmpty())
            return {chunk({{QStringLiteral("content"), block.value(QStringLiteral("text"))}})};
        return {};
    }
    if (type == QLatin1String("content_block_delta")) {
        const int index = event.value(kIndex).toInt();
        if (index < 0 || index >= m_blocks.size())
            return {};
        Block &b = m_blocks[index];
        const QJsonObject delta = event.value(kDelta).toObject();
        const QString kind = delta.value(kType).toString();
        if (kind == QLatin1String("text_delta"))
            return {chunk({{QStringLiteral("content"), delta.value(QStringLiteral("text"))}})};
        if (kind == QLatin1String("thinking_delta")) {
            const QString text = delta.value(QStringLiteral("thinking")).toString();
            b.wire.insert(QStringLiteral("thinking"),
                          QString(b.wire.value(QStringLiteral("thinking")).toString() + text));
            return {chunk({{QStringLiteral("reasoning_content"), text}})};
        }
        if (kind == QLatin1String("signature_delta")) {
            b.wire.insert(QStringLiteral("signature"),
                          QString(b.wire.value(QStringLiteral("signature")).toString() +
                                  delta.value(QStringLiteral("signature")).toString()));
            return {};
        }
        if (kind == QLatin1String("input_json_delta") && b.call >= 0) {
            const QString part = delta.value(QStringLiteral("partial_json")).toString();
            if (part.isEmpty())
                return {};
            b.hadInput = true;
            return {chunk({{kToolCalls, QJsonArray{QJsonObject{
                                            {kIndex, b.call},
                                            {kFunction, QJsonObject{{kArguments, part}}}}}}})};
        }
        return {};
    }
    if (type == QLatin1String("content_block_stop")) {
        const int index = event.value(kIndex).toInt();
        if (index < 0 || index >= m_blocks.size())
            return {};
        const Block &b = m_blocks.at(index);
        if (b.type == QLatin1String("thinking")) {
            m_thinking.append(b.wire);
            return {chunk({{QStringLiteral("thinking_blocks"), m_thinking}})};
        }
        if (b.call >= 0 && !b.hadInput) // a tool without input still has a JSON object
            return {chunk({{kToolCalls,
                            QJsonArray{QJsonObject{
                                {kIndex, b.call},
                                {kFunction, QJsonObject{{kArguments, QStringLiteral("{}")}}}}}}})};
        return {};
    }
    if (type == QLatin1String("message_delta")) {
        const QJsonObject usage = event.value(QStringLiteral("usage")).toObject();
        for (auto it = usage.begin(); it != usage.end(); ++it)
            if (!it.value().isNull())
                m_usage.insert(it.key(), it.value());
        m_stop = event.value(kDelta).toObject().value(QStringLiteral("stop_reason")).toString();
        return {chunk(QJsonObject(), ChatOverMessages::finishReasonOf(m_stop))};
    }
    if (type == QLatin1String("message_stop")) {
        m_finished = true;
        if (!m_includeUsage)
            return {};
        QJsonObject last = chunk({});
        last.insert(QStringLiteral("choices"), QJsonArray());
        last.insert(QStringLiteral("usage"), ChatOverMessages::chatUsage(m_usage));
        return {last};
    }
    if (type == QLatin1String("error")) {
        m_failed = true;
        const QJsonObject error = event.value(QStringLiteral("error")).toObject();
        const QString kind = error.value(kType).toString(QStringLiteral("upstream_error"));
        return {{{QStringLiteral("error"),
                  OpenAiError::object(error.value(QStringLiteral("message")).toString(), kind, kind)
                      .value(QStringLiteral("error"))}}};
    }
    return {}; // ping, and events a later API version adds
}

} // namespace loopscope
