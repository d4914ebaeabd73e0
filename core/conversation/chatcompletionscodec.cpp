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
        result.wireDialect = Dialect::ChatCompletions;
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
        reasoning.wireDialect = Dialect::ChatCompletions;
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
            reasoning.wireDialect = Dialect::ChatCompletions;
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
    message.wireDialect = Dialect::ChatCompletions;
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
        item.wireDialect = Dialect::ChatCompletions;
        items << item;
    }
    return items;
}

ConversationRequest ChatCompletionsCodec::decodeRequest(const QJsonObject &body) {
    ConversationRequest request;
    request.wire = body;
    request.wireDialect = Dialect::ChatCompletions;
    request.model = body.value(QStringLiteral("model")).toString();
    request.stream = body.value(QStringLiteral("stream")).toBool();
    for (const QJsonValue &m : body.value(QStringLiteral("messages")).toArray())
        request.items << decodeMessage(m.toObject());
    return request;
}

ConversationResponse ChatCompletionsCodec::decodeResponse(const QJsonObject &body) {
    ConversationResponse response;
    response.wire = body;
    response.wireDialect = Dialect::ChatCompletions;
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

namespace {

const QString kType = QStringLiteral("type");
const QString kContent = QStringLiteral("content");

// A message's parts as Chat content: a lone string part stays a string; other parts are their
// own wire when it is Chat's, else written in its vocabulary. The message-level `refusal` (a
// string part) is not content.
QJsonValue contentOf(const ConversationItem &item) {
    using PartKind = ConversationItem::Part::Kind;
    const bool own = item.wireDialect == Dialect::ChatCompletions;
    QList<ConversationItem::Part> parts;
    for (const ConversationItem::Part &part : item.parts)
        if (!(part.kind == PartKind::Refusal && part.wire.isString()))
            parts << part;
    if (parts.size() == 1 && parts.first().wire.isString() && parts.first().kind == PartKind::Text)
        return parts.first().text;
    QJsonArray content;
    for (const ConversationItem::Part &part : std::as_const(parts)) {
        QJsonObject p = own ? part.wire.toObject() : QJsonObject();
        switch (part.kind) {
        case PartKind::Text:
            if (p.isEmpty())
                p.insert(kType, QStringLiteral("text"));
            p.insert(QStringLiteral("text"), part.text);
            break;
        case PartKind::Refusal:
            p.insert(kType, QStringLiteral("refusal"));
            p.insert(QStringLiteral("refusal"), part.text);
            break;
        case PartKind::Image:
            if (p.isEmpty())
                p = {{kType, QStringLiteral("image_url")},
                     {QStringLiteral("image_url"),
                      QJsonObject{{QStringLiteral("url"), part.imageUrl()}}}};
            break;
        default:
            if (p.isEmpty() && part.wire.isObject())
                p = part.wire.toObject();
            break;
        }
        content.append(p);
    }
    return content;
}

// An assistant turn being gathered: Chat carries reasoning, content and tool calls on one
// message, the model as items in that order.
struct AssistantTurn {
    QList<const ConversationItem *> reasoning;
    const ConversationItem *message = nullptr;
    QList<const ConversationItem *> calls;
    bool isEmpty() const { return reasoning.isEmpty() && !message && calls.isEmpty(); }
};

QJsonObject callOf(const ConversationItem &call) {
    QJsonObject c = call.wireIn(Dialect::ChatCompletions);
    c.insert(kId, call.callId);
    if (call.toolKind == ConversationItem::ToolKind::Custom) {
        c.insert(kType, QStringLiteral("custom"));
        QJsonObject custom = c.value(QStringLiteral("custom")).toObject();
        custom.insert(kName, call.name);
        custom.insert(QStringLiteral("input"), call.arguments);
        c.insert(QStringLiteral("custom"), custom);
        return c;
    }
    c.insert(kType, QStringLiteral("function"));
    QJsonObject fn = c.value(kFunction).toObject();
    fn.insert(kName, call.name);
    fn.insert(kArguments, call.argumentsText());
    c.insert(kFunction, fn);
    return c;
}

QJsonObject assistantOf(const AssistantTurn &turn, const QJsonObject &fallback) {
    QJsonObject m = turn.message ? turn.message->wireIn(Dialect::ChatCompletions) : fallback;
    m.insert(QStringLiteral("role"), QStringLiteral("assistant"));
    if (turn.message && !turn.message->parts.isEmpty()) {
        const QJsonValue content = contentOf(*turn.message);
        if (!(content.isArray() && content.toArray().isEmpty()))
            m.insert(kContent, content);
        for (const ConversationItem::Part &part : turn.message->parts)
            if (part.kind == ConversationItem::Part::Kind::Refusal && part.wire.isString())
                m.insert(QStringLiteral("refusal"), part.text);
    } else if (!m.contains(kContent) || !turn.calls.isEmpty()) {
        m.insert(kContent, QJsonValue::Null); // nothing said: null, as the API sends it
    }
    // Reasoning goes back only where Chat carries it as input: the thinking blocks and the
    // reasoning_content that came on a Chat message (dialects.md §2).
    QJsonArray blocks;
    for (const ConversationItem *r : turn.reasoning) {
        if (r->wireDialect != Dialect::ChatCompletions)
            continue;
        QJsonObject block = r->wire.toObject();
        if (block.contains(QStringLiteral("role"))) { // reasoning_content of the message
            const QString key = block.contains(QStringLiteral("reasoning_content"))
                                    ? QStringLiteral("reasoning_content")
                                    : QStringLiteral("reasoning");
            m.insert(key, r->summary.join(QString()));
            continue;
        }
        if (r->redacted) {
            block.insert(QStringLiteral("data"), r->encryptedContent);
        } else {
            block.insert(QStringLiteral("thinking"), r->summary.join(QString()));
            block.insert(QStringLiteral("signature"), r->encryptedContent);
        }
        blocks.append(block);
    }
    if (!blocks.isEmpty())
        m.insert(QStringLiteral("thinking_blocks"), blocks);
    if (!turn.calls.isEmpty()) {
        QJsonArray calls;
        for (const ConversationItem *c : turn.calls)
            calls.append(callOf(*c));
        m.insert(QStringLiteral("tool_calls"), calls);
    }
    return m;
}

} // namespace

QJsonArray ChatCompletionsCodec::encodeMessages(const QList<ConversationItem> &items,
                                                const QJsonObject &fallback) {
    using Kind = ConversationItem::Kind;
    QJsonArray messages;
    AssistantTurn turn;
    const auto flush = [&] {
        if (!turn.isEmpty())
            messages.append(assistantOf(turn, fallback));
        turn = {};
    };
    for (const ConversationItem &item : items) {
        switch (item.kind) {
        case Kind::Reasoning:
            // Chat takes reasoning back on assistant messages only.
            if (!item.role.isEmpty() && item.role != QLatin1String("assistant"))
                break;
            if (turn.message || !turn.calls.isEmpty())
                flush();
            turn.reasoning << &item;
            break;
        case Kind::ToolCall:
            // A hosted call (Anthropic's server_tool_use) ran on the server; the client has
            // nothing to answer, so it is no Chat tool call.
            if (item.toolKind == ConversationItem::ToolKind::Hosted)
                break;
            // A Chat message that came without calls ends its turn: these are the next one's.
            if (turn.message && turn.message->wireDialect == Dialect::ChatCompletions &&
                !turn.message->wire.toObject().contains(QStringLiteral("tool_calls")))
                flush();
            turn.calls << &item;
            break;
        case Kind::Message:
            if (item.role == QLatin1String("assistant")) {
                if (turn.message || !turn.calls.isEmpty())
                    flush();
                turn.message = &item;
                break;
            }
            flush();
            {
                QJsonObject m = item.wireIn(Dialect::ChatCompletions);
                // What other items carry (a call is the assistant's, reasoning too) is theirs.
                for (const char *key :
                     {"tool_calls", "thinking_blocks", "reasoning_content", "reasoning"})
                    m.remove(QLatin1String(key));
                m.insert(QStringLiteral("role"), item.role);
                m.insert(kContent, contentOf(item));
                messages.append(m);
            }
            break;
        case Kind::ToolResult: {
            flush();
            QJsonObject m = item.wireIn(Dialect::ChatCompletions);
            if (!m.contains(QStringLiteral("role")))
                m.insert(QStringLiteral("role"), QStringLiteral("tool"));
            m.insert(QStringLiteral("tool_call_id"), item.callId);
            ConversationItem output;
            output.parts = ConversationItem::partsOf(item.output);
            output.wireDialect = item.wireDialect;
            m.insert(kContent, item.output.isArray() ? contentOf(output)
                                                     : QJsonValue(item.output.toString()));
            messages.append(m);
            break;
        }
        case Kind::CodeRun: // Chat has no code run of its own: its output as the model's words
        case Kind::Opaque:
            if (item.wireDialect == Dialect::ChatCompletions && item.wire.isObject()) {
                flush();
                messages.append(item.wire);
            }
            break;
        }
    }
    flush();
    return messages;
}

QJsonObject ChatCompletionsCodec::encodeRequest(const ConversationRequest &request) {
    QJsonObject body =
        request.wireDialect == Dialect::ChatCompletions ? request.wire : QJsonObject();
    if (!request.model.isEmpty())
        body.insert(QStringLiteral("model"), request.model);
    if (request.stream || body.contains(QStringLiteral("stream")))
        body.insert(QStringLiteral("stream"), request.stream);
    QJsonArray messages = encodeMessages(request.items);
    if (!request.instructions.isEmpty())
        messages.prepend(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                     {kContent, request.instructions}});
    body.insert(QStringLiteral("messages"), messages);
    return body;
}

QJsonObject ChatCompletionsCodec::encodeResponse(const ConversationResponse &response) {
    QJsonObject body =
        response.wireDialect == Dialect::ChatCompletions ? response.wire : QJsonObject();
    if (!response.error.isEmpty()) {
        QJsonObject error = body.value(QStringLiteral("error")).toObject();
        error.insert(QStringLiteral("message"), response.error);
        body.insert(QStringLiteral("error"), error);
        return body;
    }
    if (!response.id.isEmpty())
        body.insert(kId, response.id);
    body.insert(QStringLiteral("object"), QStringLiteral("chat.completion"));
    if (!response.model.isEmpty())
        body.insert(QStringLiteral("model"), response.model);
    QJsonArray choices = body.value(QStringLiteral("choices")).toArray();
    QJsonObject choice =
        choices.isEmpty() ? QJsonObject{{QStringLiteral("index"), 0}} : choices.first().toObject();
    const QJsonArray messages =
        encodeMessages(response.items, choice.value(QStringLiteral("message")).toObject());
    // One choice holds one message: the model's items are one assistant turn.
    choice.insert(QStringLiteral("message"),
                  messages.isEmpty()
                      ? QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                    {kContent, QJsonValue::Null}}
                      : messages.first());
    const QString finish = stopReasonToChat(response.stop, response.stopDetail);
    choice.insert(QStringLiteral("finish_reason"),
                  finish.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(finish));
    if (choices.isEmpty())
        choices.append(choice);
    else
        choices.replace(0, choice);
    body.insert(QStringLiteral("choices"), choices);
    const QJsonObject usage = response.usage.toChat(body.value(QStringLiteral("usage")).toObject());
    if (!usage.isEmpty())
        body.insert(QStringLiteral("usage"), usage);
    return body;
}

} // namespace loopscope
