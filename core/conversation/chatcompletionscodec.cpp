#include "conversation/chatcompletionscodec.h"

#include <QMap>

namespace loopscope {

namespace {

const QString kId = QStringLiteral("id");
const QString kData = QStringLiteral("data");
const QString kFunction = QStringLiteral("function");
const QString kArguments = QStringLiteral("arguments");
const QString kName = QStringLiteral("name");

} // namespace

QJsonObject ChatCompletionsCodec::responseFromEvents(const QJsonArray &events) {
    QJsonValue content = QJsonValue::Null; // null until a chunk carries text, as the SDK keeps it
    QString reasoning; // reasoning_content deltas (DeepSeek's, vLLM's and llama.cpp's reasoning)
    QMap<int, QJsonObject> calls;
    QJsonObject last;
    QJsonObject error;
    QString id;
    QJsonValue finish = QJsonValue::Null;
    for (const QJsonValue &e : events) {
        const QJsonObject data = e.toObject().value(kData).toObject();
        if (data.isEmpty())
            continue;
        if (data.value(QStringLiteral("error")).isObject())
            error = data;
        last = data;
        if (id.isEmpty())
            id = data.value(kId).toString();
        const QJsonObject choice =
            data.value(QStringLiteral("choices")).toArray().first().toObject();
        if (choice.value(QStringLiteral("finish_reason")).isString())
            finish = choice.value(QStringLiteral("finish_reason"));
        const QJsonObject delta = choice.value(QStringLiteral("delta")).toObject();
        if (const QJsonValue part = delta.value(QStringLiteral("content")); part.isString())
            content = QString(content.toString() + part.toString());
        reasoning += delta.value(QStringLiteral("reasoning_content")).toString();
        for (const QJsonValue &c : delta.value(QStringLiteral("tool_calls")).toArray()) {
            const QJsonObject call = c.toObject();
            QJsonObject &acc = calls[call.value(QStringLiteral("index")).toInt()];
            if (call.value(kId).isString())
                acc.insert(kId, call.value(kId));
            acc.insert(QStringLiteral("type"), QStringLiteral("function"));
            QJsonObject fn = acc.value(kFunction).toObject();
            const QJsonObject part = call.value(kFunction).toObject();
            if (part.value(kName).isString())
                fn.insert(kName, part.value(kName));
            fn.insert(kArguments,
                      QString(fn.value(kArguments).toString() + part.value(kArguments).toString()));
            acc.insert(kFunction, fn);
        }
    }
    if (!error.isEmpty())
        return error;
    if (last.isEmpty())
        return {};
    QJsonObject message{{QStringLiteral("role"), QStringLiteral("assistant")},
                        {QStringLiteral("content"), content}};
    if (!reasoning.isEmpty())
        message.insert(QStringLiteral("reasoning_content"), reasoning);
    if (!calls.isEmpty()) {
        QJsonArray list;
        for (const QJsonObject &c : std::as_const(calls))
            list.append(c);
        message.insert(QStringLiteral("tool_calls"), list);
    }
    QJsonObject response{{kId, id},
                         {QStringLiteral("object"), QStringLiteral("chat.completion")},
                         {QStringLiteral("choices"),
                          QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                                 {QStringLiteral("message"), message},
                                                 {QStringLiteral("finish_reason"), finish}}}}};
    for (const char *key : {"created", "model"})
        if (last.contains(QLatin1String(key)))
            response.insert(QLatin1String(key), last.value(QLatin1String(key)));
    if (last.value(QStringLiteral("usage")).isObject())
        response.insert(QStringLiteral("usage"), last.value(QStringLiteral("usage")));
    return response;
}

QList<ConversationItem> ChatCompletionsCodec::decodeMessage(const QJsonObject &m) {
    using Kind = ConversationItem::Kind;
    const QString role = m.value(QStringLiteral("role")).toString();
    QList<ConversationItem> items;
    if (role == QLatin1String("tool") || role == QLatin1String("function")) {
        ConversationItem result;
        result.kind = Kind::ToolResult;
        result.callId = m.value(QStringLiteral("tool_call_id")).toString();
        result.name = m.value(kName).toString();
        result.output = m.value(QStringLiteral("content"));
        result.wire = m;
        return {result};
    }
    // Anthropic's thinking as a chat message carries it (LiteLLM's thinking_blocks, what
    // ChatOverMessages writes): one Reasoning item per block, its signature kept.
    for (const QJsonValue &b : m.value(QStringLiteral("thinking_blocks")).toArray()) {
        const QJsonObject block = b.toObject();
        ConversationItem reasoning;
        reasoning.kind = Kind::Reasoning;
        reasoning.role = role;
        reasoning.redacted =
            block.value(QStringLiteral("type")) == QLatin1String("redacted_thinking");
        if (reasoning.redacted) {
            reasoning.encryptedContent = block.value(QStringLiteral("data")).toString();
        } else {
            reasoning.summary << block.value(QStringLiteral("thinking")).toString();
            reasoning.encryptedContent = block.value(QStringLiteral("signature")).toString();
        }
        reasoning.wire = block;
        items << reasoning;
    }
    for (const QString &key : {QStringLiteral("reasoning_content"), QStringLiteral("reasoning")}) {
        if (!items.isEmpty())
            break; // the thinking blocks said it, signed
        if (const QString r = m.value(key).toString(); !r.isEmpty()) {
            ConversationItem reasoning;
            reasoning.kind = Kind::Reasoning;
            reasoning.role = role;
            reasoning.summary << r;
            reasoning.wire = m;
            items << reasoning;
            break;
        }
    }
    const QJsonValue content = m.value(QStringLiteral("content"));
    const QJsonArray calls = m.value(QStringLiteral("tool_calls")).toArray();
    ConversationItem message;
    message.kind = Kind::Message;
    message.role = role.isEmpty() ? QStringLiteral("user") : role;
    message.wire = m;
    const bool emptyBesideCalls =
        !calls.isEmpty() && content.isString() && content.toString().isEmpty();
    if (!(content.isNull() || content.isUndefined()) && !emptyBesideCalls)
        message.parts = ConversationItem::partsOf(content);
    if (const QJsonValue refusal = m.value(QStringLiteral("refusal")); refusal.isString()) {
        ConversationItem::Part part;
        part.kind = ConversationItem::Part::Kind::Refusal;
        part.text = refusal.toString();
        part.wire = refusal;
        message.parts << part;
    }
    const bool hasContent =
        !message.parts.isEmpty() || (content.isString() && !emptyBesideCalls) || content.isArray();
    if (hasContent || calls.isEmpty())
        items << message;
    for (const QJsonValue &c : calls) {
        const QJsonObject call = c.toObject();
        ConversationItem item;
        item.kind = Kind::ToolCall;
        item.callId = call.value(kId).toString();
        if (call.value(QStringLiteral("type")).toString() == QLatin1String("custom")) {
            const QJsonObject custom = call.value(QStringLiteral("custom")).toObject();
            item.toolKind = ConversationItem::ToolKind::Custom;
            item.name = custom.value(kName).toString();
            item.arguments = custom.value(QStringLiteral("input"));
        } else {
            const QJsonObject fn = call.value(kFunction).toObject();
            item.name = fn.value(kName).toString();
            item.arguments = fn.value(kArguments);
        }
        item.wire = c;
        items << item;
    }
    return items;
}

ConversationRequest ChatCompletionsCodec::decodeRequest(const QJsonObject &body) {
    ConversationRequest request;
    request.model = body.value(QStringLiteral("model")).toString();
    request.stream = body.value(QStringLiteral("stream")).toBool();
    for (const QJsonValue &m : body.value(QStringLiteral("messages")).toArray())
        request.items << decodeMessage(m.toObject());
    return request;
}

ConversationResponse ChatCompletionsCodec::decodeResponse(const QJsonObject &body) {
    ConversationResponse response;
    response.error = ConversationItem::errorMessageOf(body);
    response.id = body.value(kId).toString();
    response.model = body.value(QStringLiteral("model")).toString();
    const QJsonArray choices = body.value(QStringLiteral("choices")).toArray();
    if (!choices.isEmpty()) {
        const QJsonObject choice = choices.first().toObject();
        QJsonObject m = choice.value(QStringLiteral("message")).toObject();
        if (!m.contains(QStringLiteral("role")))
            m.insert(QStringLiteral("role"), QStringLiteral("assistant"));
        response.items = decodeMessage(m);
        response.stopDetail = choice.value(QStringLiteral("finish_reason")).toString();
        response.stop = stopReasonFromChat(response.stopDetail);
    }
    response.usage = Usage::fromWire(body.value(QStringLiteral("usage")).toObject());
    return response;
}

} // namespace loopscope
