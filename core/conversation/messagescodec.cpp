#include "conversation/messagescodec.h"

#include "conversation/ssewriter.h"

#include <QJsonDocument>
#include <QMap>

namespace loopscope {

QJsonObject MessagesCodec::responseFromEvents(const QJsonArray &events) {
    QJsonObject message;
    QMap<int, QJsonObject> blocks;
    QMap<int, QString> partialJson;
    for (const QJsonValue &e : events) {
        const QJsonObject data = e.toObject().value(QStringLiteral("data")).toObject();
        const QString type = data.value(QStringLiteral("type")).toString();
        const int index = data.value(QStringLiteral("index")).toInt();
        if (type == QLatin1String("message_start")) {
            message = data.value(QStringLiteral("message")).toObject();
        } else if (type == QLatin1String("content_block_start")) {
            blocks[index] = data.value(QStringLiteral("content_block")).toObject();
        } else if (type == QLatin1String("content_block_delta")) {
            const QJsonObject delta = data.value(QStringLiteral("delta")).toObject();
            const QString kind = delta.value(QStringLiteral("type")).toString();
            QJsonObject &block = blocks[index];
            const auto append = [&block, &delta](const char *field, const char *from) {
                const QString joined = block.value(QLatin1String(field)).toString() +
                                       delta.value(QLatin1String(from)).toString();
                block.insert(QLatin1String(field), joined);
            };
            if (kind == QLatin1String("text_delta"))
                append("text", "text");
            else if (kind == QLatin1String("thinking_delta"))
                append("thinking", "thinking");
            else if (kind == QLatin1String("signature_delta"))
                append("signature", "signature");
            else if (kind == QLatin1String("input_json_delta"))
                partialJson[index] += delta.value(QStringLiteral("partial_json")).toString();
            else if (kind == QLatin1String("citations_delta")) {
                QJsonArray citations = block.value(QStringLiteral("citations")).toArray();
                citations.append(delta.value(QStringLiteral("citation")));
                block.insert(QStringLiteral("citations"), citations);
            }
        } else if (type == QLatin1String("message_delta")) {
            const QJsonObject delta = data.value(QStringLiteral("delta")).toObject();
            for (auto it = delta.constBegin(); it != delta.constEnd(); ++it)
                message.insert(it.key(), it.value());
            QJsonObject usage = message.value(QStringLiteral("usage")).toObject();
            const QJsonObject more = data.value(QStringLiteral("usage")).toObject();
            for (auto it = more.constBegin(); it != more.constEnd(); ++it)
                if (!it.value().isNull())
                    usage.insert(it.key(), it.value());
            message.insert(QStringLiteral("usage"), usage);
        }
    }
    if (message.isEmpty())
        return {};
    QJsonArray content;
    for (auto it = blocks.begin(); it != blocks.end(); ++it) {
        if (partialJson.contains(it.key())) // an empty input stays the start's {}
            if (const QString json = partialJson.value(it.key()); !json.isEmpty())
                it->insert(QStringLiteral("input"),
                           QJsonDocument::fromJson(json.toUtf8()).object());
        content.append(*it);
    }
    message.insert(QStringLiteral("content"), content);
    return message;
}

QByteArray MessagesCodec::event(const char *type, QJsonObject data) {
    data.insert(QStringLiteral("type"), QLatin1String(type));
    return SseWriter::frame(type, data);
}

QByteArray MessagesCodec::blockEvents(int index, const QJsonObject &block) {
    const QString type = block.value(QStringLiteral("type")).toString();
    const QJsonObject at{{QStringLiteral("index"), index}};
    auto delta = [&at](const char *kind, const char *field, const QJsonValue &value) {
        QJsonObject d = at;
        d.insert(QStringLiteral("delta"), QJsonObject{{QStringLiteral("type"), QLatin1String(kind)},
                                                      {QLatin1String(field), value}});
        return event("content_block_delta", d);
    };
    QJsonObject start = block;
    QByteArray deltas;
    if (type == QLatin1String("text")) {
        start.insert(QStringLiteral("text"), QString());
        deltas += delta("text_delta", "text", block.value(QStringLiteral("text")));
        const QJsonValue citations = block.value(QStringLiteral("citations"));
        if (citations.isArray()) {
            start.insert(QStringLiteral("citations"), QJsonArray());
            for (const QJsonValue &citation : citations.toArray())
                deltas += delta("citations_delta", "citation", citation);
        }
    } else if (type == QLatin1String("thinking")) {
        start.insert(QStringLiteral("thinking"), QString());
        start.insert(QStringLiteral("signature"), QString());
        deltas += delta("thinking_delta", "thinking", block.value(QStringLiteral("thinking")));
        deltas += delta("signature_delta", "signature", block.value(QStringLiteral("signature")));
    } else if (block.contains(QStringLiteral("input"))) { // tool_use, server_tool_use, mcp_tool_use
        start.insert(QStringLiteral("input"), QJsonObject());
        const QJsonObject input = block.value(QStringLiteral("input")).toObject();
        if (!input.isEmpty())
            deltas += delta("input_json_delta", "partial_json",
                            QString::fromUtf8(QJsonDocument(input).toJson(QJsonDocument::Compact)));
    }
    QJsonObject started = at;
    started.insert(QStringLiteral("content_block"), start);
    return event("content_block_start", started) + deltas + event("content_block_stop", at);
}

QByteArray MessagesCodec::streamFromMessage(const QJsonObject &message) {
    QJsonObject head = message;
    head.insert(QStringLiteral("content"), QJsonArray());
    head.insert(QStringLiteral("stop_reason"), QJsonValue::Null);
    head.insert(QStringLiteral("stop_sequence"), QJsonValue::Null);
    QByteArray out = event("message_start", {{QStringLiteral("message"), head}});
    const QJsonArray content = message.value(QStringLiteral("content")).toArray();
    for (int i = 0; i < content.size(); ++i)
        out += blockEvents(i, content.at(i).toObject());
    // Output counts are cumulative, so the last one stands; server tool use is known at the end.
    const QJsonObject usage = message.value(QStringLiteral("usage")).toObject();
    QJsonObject finalUsage{
        {QStringLiteral("output_tokens"), usage.value(QStringLiteral("output_tokens"))}};
    if (usage.contains(QStringLiteral("server_tool_use")))
        finalUsage.insert(QStringLiteral("server_tool_use"),
                          usage.value(QStringLiteral("server_tool_use")));
    out += event(
        "message_delta",
        {{QStringLiteral("delta"),
          QJsonObject{
              {QStringLiteral("stop_reason"), message.value(QStringLiteral("stop_reason"))},
              {QStringLiteral("stop_sequence"), message.value(QStringLiteral("stop_sequence"))}}},
         {QStringLiteral("usage"), finalUsage}});
    return out + event("message_stop", {});
}

namespace {

bool isPartBlock(const QString &type) {
    return type == QLatin1String("text") || type == QLatin1String("image") ||
           type == QLatin1String("document");
}

// A code execution tool's result block (code_execution_tool_result, bash_code_execution_…,
// text_editor_code_execution_…): its stdout/stderr/return code, or the error it reports.
ConversationItem codeRunOf(const QJsonObject &block) {
    ConversationItem run;
    run.kind = ConversationItem::Kind::CodeRun;
    run.callId = block.value(QStringLiteral("tool_use_id")).toString();
    const QJsonObject content = block.value(QStringLiteral("content")).toObject();
    const QString type = content.value(QStringLiteral("type")).toString();
    if (type.endsWith(QLatin1String("_error"))) {
        run.isError = true;
        run.stderrText = content.value(QStringLiteral("error_code")).toString();
        return run;
    }
    run.stdoutText = content.value(QStringLiteral("stdout")).toString();
    run.stderrText = content.value(QStringLiteral("stderr")).toString();
    run.returnCode = content.value(QStringLiteral("return_code")).toInt();
    run.isError = run.returnCode != 0;
    if (content.value(QStringLiteral("content")).isString()) // the text editor's view of a file
        run.stdoutText = content.value(QStringLiteral("content")).toString();
    return run;
}

} // namespace

QList<ConversationItem> MessagesCodec::decodeContent(const QString &role,
                                                     const QJsonValue &content) {
    using Kind = ConversationItem::Kind;
    QList<ConversationItem> items;
    ConversationItem message;
    message.kind = Kind::Message;
    message.role = role;
    QJsonArray messageBlocks;
    const auto flush = [&] {
        if (messageBlocks.isEmpty())
            return;
        message.wire = messageBlocks;
        message.wireDialect = Dialect::Messages;
        items << message;
        message.parts.clear();
        messageBlocks = {};
    };
    if (!content.isArray()) {
        message.parts = ConversationItem::partsOf(content);
        message.wire = content;
        message.wireDialect = Dialect::Messages;
        return {message};
    }
    for (const QJsonValue &v : content.toArray()) {
        const QJsonObject block = v.toObject();
        const QString type = block.value(QStringLiteral("type")).toString();
        if (isPartBlock(type)) {
            message.parts << ConversationItem::partsOf(QJsonArray{v});
            messageBlocks.append(v);
            continue;
        }
        flush();
        ConversationItem item;
        if (type == QLatin1String("thinking")) {
            item.kind = Kind::Reasoning;
            item.summary << block.value(QStringLiteral("thinking")).toString();
            item.encryptedContent = block.value(QStringLiteral("signature")).toString();
        } else if (type == QLatin1String("redacted_thinking")) {
            item.kind = Kind::Reasoning;
            item.redacted = true;
            item.encryptedContent = block.value(QStringLiteral("data")).toString();
        } else if (type == QLatin1String("tool_use") || type == QLatin1String("server_tool_use") ||
                   type == QLatin1String("mcp_tool_use")) {
            item.kind = Kind::ToolCall;
            item.toolKind = type == QLatin1String("tool_use") ? ConversationItem::ToolKind::Function
                                                              : ConversationItem::ToolKind::Hosted;
            item.callId = block.value(QStringLiteral("id")).toString();
            item.name = block.value(QStringLiteral("name")).toString();
            item.arguments = block.value(QStringLiteral("input"));
        } else if (type == QLatin1String("tool_result")) {
            item.kind = Kind::ToolResult;
            item.callId = block.value(QStringLiteral("tool_use_id")).toString();
            item.output = block.value(QStringLiteral("content"));
            item.isError = block.value(QStringLiteral("is_error")).toBool();
        } else if (type.endsWith(QLatin1String("code_execution_tool_result"))) {
            item = codeRunOf(block);
        }
        item.role = role;
        item.wire = v;
        item.wireDialect = Dialect::Messages;
        items << item;
    }
    flush();
    if (items.isEmpty()) { // an empty turn is still a turn
        message.wire = content;
        message.wireDialect = Dialect::Messages;
        items << message;
    }
    return items;
}

ConversationRequest MessagesCodec::decodeRequest(const QJsonObject &body) {
    ConversationRequest request;
    request.wire = body;
    request.wireDialect = Dialect::Messages;
    request.model = body.value(QStringLiteral("model")).toString();
    request.stream = body.value(QStringLiteral("stream")).toBool();
    const QJsonValue system = body.value(QStringLiteral("system"));
    if (system.isString()) {
        request.instructions = system.toString();
    } else {
        QStringList texts;
        for (const QJsonValue &b : system.toArray())
            texts << b.toObject().value(QStringLiteral("text")).toString();
        request.instructions = texts.join(u'\n');
    }
    for (const QJsonValue &v : body.value(QStringLiteral("messages")).toArray()) {
        const QJsonObject m = v.toObject();
        request.items << decodeContent(
            m.value(QStringLiteral("role")).toString(QStringLiteral("user")),
            m.value(QStringLiteral("content")));
    }
    return request;
}

ConversationResponse MessagesCodec::decodeResponse(const QJsonObject &body) {
    ConversationResponse response;
    response.wire = body;
    response.wireDialect = Dialect::Messages;
    response.error = ConversationItem::errorMessageOf(body);
    if (!response.error.isEmpty())
        return response;
    response.id = body.value(QStringLiteral("id")).toString();
    response.model = body.value(QStringLiteral("model")).toString();
    if (body.contains(QStringLiteral("content")))
        response.items =
            decodeContent(body.value(QStringLiteral("role")).toString(QStringLiteral("assistant")),
                          body.value(QStringLiteral("content")));
    response.stopDetail = body.value(QStringLiteral("stop_reason")).toString();
    response.stop = stopReasonFromMessages(response.stopDetail);
    response.usage = Usage::fromWire(body.value(QStringLiteral("usage")).toObject());
    return response;
}

namespace {

const QString kType = QStringLiteral("type");

// A message's parts as Messages blocks (their own wire when it is Messages').
QJsonArray blocksOf(const ConversationItem &item) {
    using PartKind = ConversationItem::Part::Kind;
    const bool own = item.wireDialect == Dialect::Messages;
    QJsonArray blocks;
    for (const ConversationItem::Part &part : item.parts) {
        QJsonObject b = own ? part.wire.toObject() : QJsonObject();
        switch (part.kind) {
        case PartKind::Text:
        case PartKind::Refusal: // Anthropic says a refusal in words, with stop_reason "refusal"
            if (b.isEmpty())
                b.insert(kType, QStringLiteral("text"));
            b.insert(QStringLiteral("text"), part.text);
            break;
        case PartKind::Image:
            if (b.isEmpty())
                b = MessagesCodec::imageBlock(part.imageUrl());
            break;
        default:
            if (b.isEmpty() && part.wire.isObject())
                b = part.wire.toObject();
            break;
        }
        if (!b.isEmpty())
            blocks.append(b);
    }
    return blocks;
}

QJsonValue toolResultContentOf(const ConversationItem &item) {
    if (!item.output.isArray())
        return item.output.toString();
    ConversationItem output;
    output.parts = ConversationItem::partsOf(item.output);
    output.wireDialect = item.wireDialect;
    return blocksOf(output);
}

// The role a turn holding `item` has in Messages, which knows only user and assistant.
QString roleOf(const ConversationItem &item) {
    using Kind = ConversationItem::Kind;
    if (item.role == QLatin1String("assistant") || item.role == QLatin1String("user"))
        return item.role;
    switch (item.kind) {
    case Kind::Message:
    case Kind::ToolResult:
        return QStringLiteral("user"); // system/developer text outside `system` reads as user's
    default:
        return QStringLiteral("assistant");
    }
}

} // namespace

QJsonObject MessagesCodec::imageBlock(const QString &url) {
    if (url.startsWith(QLatin1String("data:"))) {
        const qsizetype comma = url.indexOf(u',');
        const QString meta = url.mid(5, comma - 5); // "image/png;base64"
        return {{kType, QStringLiteral("image")},
                {QStringLiteral("source"),
                 QJsonObject{{kType, QStringLiteral("base64")},
                             {QStringLiteral("media_type"), meta.section(u';', 0, 0)},
                             {QStringLiteral("data"), url.mid(comma + 1)}}}};
    }
    return {{kType, QStringLiteral("image")},
            {QStringLiteral("source"),
             QJsonObject{{kType, QStringLiteral("url")}, {QStringLiteral("url"), url}}}};
}

QJsonArray MessagesCodec::encodeBlocks(const ConversationItem &item) {
    using Kind = ConversationItem::Kind;
    QJsonObject b = item.wireIn(Dialect::Messages);
    switch (item.kind) {
    case Kind::Message:
        return blocksOf(item);
    case Kind::Reasoning:
        if (item.redacted) {
            b.insert(kType, QStringLiteral("redacted_thinking"));
            b.insert(QStringLiteral("data"), item.encryptedContent);
        } else {
            b.insert(kType, QStringLiteral("thinking"));
            b.insert(QStringLiteral("thinking"), item.summary.join(QString()));
            b.insert(QStringLiteral("signature"), item.encryptedContent);
        }
        break;
    case Kind::ToolCall: {
        if (item.toolKind != ConversationItem::ToolKind::Hosted)
            b.insert(kType, QStringLiteral("tool_use"));
        else if (!b.contains(kType))
            b.insert(kType, QStringLiteral("server_tool_use"));
        b.insert(QStringLiteral("id"), item.callId);
        b.insert(QStringLiteral("name"), item.name);
        QJsonValue input = item.arguments;
        if (input.isString()) // OpenAI's arguments are JSON text
            input = QJsonDocument::fromJson(input.toString().toUtf8()).object();
        b.insert(QStringLiteral("input"), input.isObject() ? input : QJsonObject());
        break;
    }
    case Kind::ToolResult:
        b.insert(kType, QStringLiteral("tool_result"));
        b.insert(QStringLiteral("tool_use_id"), item.callId);
        b.insert(QStringLiteral("content"), toolResultContentOf(item));
        if (item.isError || b.contains(QStringLiteral("is_error")))
            b.insert(QStringLiteral("is_error"), item.isError);
        break;
    case Kind::CodeRun:
        if (b.isEmpty()) // a run of another dialect as the bash tool's result
            b = {{kType, QStringLiteral("bash_code_execution_tool_result")},
                 {QStringLiteral("tool_use_id"), item.callId},
                 {QStringLiteral("content"),
                  QJsonObject{{kType, QStringLiteral("bash_code_execution_result")},
                              {QStringLiteral("stdout"), item.stdoutText},
                              {QStringLiteral("stderr"), item.stderrText},
                              {QStringLiteral("return_code"), item.returnCode},
                              {QStringLiteral("content"), QJsonArray()}}}};
        break;
    case Kind::Opaque: // as it came; another dialect's unknowns are not Messages'
        if (item.wireDialect.value_or(Dialect::Messages) == Dialect::Messages &&
            !item.wire.isUndefined())
            return {item.wire};
        return {};
    }
    return {b};
}

QJsonArray MessagesCodec::encodeMessages(const QList<ConversationItem> &items) {
    QJsonArray messages;
    QString role;
    QList<const ConversationItem *> turn;
    const auto flush = [&] {
        if (turn.isEmpty())
            return;
        QJsonValue content;
        const ConversationItem &only = *turn.first();
        if (turn.size() == 1 && only.kind == ConversationItem::Kind::Message &&
            only.wireDialect == Dialect::Messages && !only.wire.isArray()) {
            content = only.wire.isString() ? QJsonValue(only.text()) : only.wire;
        } else {
            QJsonArray blocks;
            for (const ConversationItem *item : std::as_const(turn))
                for (const QJsonValue &b : encodeBlocks(*item))
                    blocks.append(b);
            content = blocks;
        }
        messages.append(
            QJsonObject{{QStringLiteral("role"), role}, {QStringLiteral("content"), content}});
        turn.clear();
    };
    // Consecutive items of one role make one turn, as Anthropic combines consecutive turns.
    for (const ConversationItem &item : items) {
        const QString r = roleOf(item);
        if (r != role)
            flush();
        role = r;
        turn << &item;
    }
    flush();
    return messages;
}

QJsonObject MessagesCodec::encodeRequest(const ConversationRequest &request) {
    QJsonObject body = request.wireDialect == Dialect::Messages ? request.wire : QJsonObject();
    if (!request.model.isEmpty())
        body.insert(QStringLiteral("model"), request.model);
    if (request.stream || body.contains(QStringLiteral("stream")))
        body.insert(QStringLiteral("stream"), request.stream);
    if (!request.instructions.isEmpty() &&
        decodeRequest(QJsonObject{{QStringLiteral("system"), body.value(QStringLiteral("system"))}})
                .instructions != request.instructions)
        body.insert(QStringLiteral("system"), request.instructions);
    body.insert(QStringLiteral("messages"), encodeMessages(request.items));
    return body;
}

QJsonObject MessagesCodec::encodeResponse(const ConversationResponse &response) {
    QJsonObject body = response.wireDialect == Dialect::Messages ? response.wire : QJsonObject();
    if (!response.error.isEmpty()) {
        QJsonObject error =
            body.value(QStringLiteral("error")).toObject({{kType, QStringLiteral("api_error")}});
        error.insert(QStringLiteral("message"), response.error);
        body.insert(kType, QStringLiteral("error"));
        body.insert(QStringLiteral("error"), error);
        return body;
    }
    if (!response.id.isEmpty())
        body.insert(QStringLiteral("id"), response.id);
    body.insert(kType, QStringLiteral("message"));
    body.insert(QStringLiteral("role"), QStringLiteral("assistant"));
    if (!response.model.isEmpty())
        body.insert(QStringLiteral("model"), response.model);
    QJsonArray content;
    for (const ConversationItem &item : response.items)
        for (const QJsonValue &b : encodeBlocks(item))
            content.append(b);
    body.insert(QStringLiteral("content"), content);
    const QString stop = stopReasonToMessages(response.stop, response.stopDetail);
    body.insert(QStringLiteral("stop_reason"),
                stop.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(stop));
    if (!body.contains(QStringLiteral("stop_sequence")))
        body.insert(QStringLiteral("stop_sequence"), QJsonValue::Null);
    const QJsonObject usage =
        response.usage.toMessages(body.value(QStringLiteral("usage")).toObject());
    if (!usage.isEmpty())
        body.insert(QStringLiteral("usage"), usage);
    return body;
}

} // namespace loopscope
