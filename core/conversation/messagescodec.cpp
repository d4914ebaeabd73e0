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
        items << message;
        message.parts.clear();
        messageBlocks = {};
    };
    if (!content.isArray()) {
        message.parts = ConversationItem::partsOf(content);
        message.wire = content;
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
        items << item;
    }
    flush();
    if (items.isEmpty()) { // an empty turn is still a turn
        message.wire = content;
        items << message;
    }
    return items;
}

ConversationRequest MessagesCodec::decodeRequest(const QJsonObject &body) {
    ConversationRequest request;
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

} // namespace loopscope
