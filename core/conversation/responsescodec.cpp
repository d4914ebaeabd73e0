#include "conversation/responsescodec.h"

namespace loopscope {

namespace {

const QString kType = QStringLiteral("type");

bool isTerminal(const QString &type) {
    return type == QLatin1String("response.completed") ||
           type == QLatin1String("response.incomplete") || type == QLatin1String("response.failed");
}

ConversationItem message(const QString &role, const QJsonValue &content) {
    ConversationItem m;
    m.kind = ConversationItem::Kind::Message;
    m.role = role.isEmpty() ? QStringLiteral("user") : role;
    m.parts = ConversationItem::partsOf(content);
    return m;
}

} // namespace

QJsonObject ResponsesCodec::responseFromEvents(const QJsonArray &events) {
    QJsonArray items;
    QString text;
    QJsonObject started;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        const QJsonObject data = e.value(QStringLiteral("data")).toObject();
        const QString type =
            data.value(kType).toString(e.value(QStringLiteral("event")).toString());
        if (isTerminal(type))
            return data.value(QStringLiteral("response")).toObject();
        if (type == QLatin1String("response.created"))
            started = data.value(QStringLiteral("response")).toObject();
        else if (type == QLatin1String("response.output_item.done"))
            items.append(data.value(QStringLiteral("item")));
        else if (type == QLatin1String("response.output_text.delta"))
            text += data.value(QStringLiteral("delta")).toString();
    }
    if (items.isEmpty() && !text.isEmpty())
        items.append(QJsonObject{{kType, QStringLiteral("message")},
                                 {QStringLiteral("role"), QStringLiteral("assistant")},
                                 {QStringLiteral("content"),
                                  QJsonArray{QJsonObject{{kType, QStringLiteral("output_text")},
                                                         {QStringLiteral("text"), text}}}}});
    if (items.isEmpty())
        return {};
    QJsonObject response = started;
    response.insert(QStringLiteral("object"), QStringLiteral("response"));
    response.insert(QStringLiteral("output"), items);
    return response;
}

ConversationItem ResponsesCodec::decodeItem(const QJsonValue &value) {
    using Kind = ConversationItem::Kind;
    if (value.isString()) {
        ConversationItem m = message(QStringLiteral("user"), value);
        m.wire = value;
        return m;
    }
    const QJsonObject o = value.toObject();
    const QString type = o.value(kType).toString();
    ConversationItem item;
    if (type == QLatin1String("message") ||
        (type.isEmpty() && o.contains(QStringLiteral("role")))) {
        item =
            message(o.value(QStringLiteral("role")).toString(), o.value(QStringLiteral("content")));
    } else if (type == QLatin1String("function_call") ||
               type == QLatin1String("custom_tool_call")) {
        item.kind = Kind::ToolCall;
        item.toolKind = type == QLatin1String("function_call")
                            ? ConversationItem::ToolKind::Function
                            : ConversationItem::ToolKind::Custom;
        item.callId = o.value(QStringLiteral("call_id")).toString();
        item.name = o.value(QStringLiteral("name")).toString();
        item.arguments =
            o.value(type == QLatin1String("function_call") ? QStringLiteral("arguments")
                                                           : QStringLiteral("input"));
    } else if (type == QLatin1String("function_call_output") ||
               type == QLatin1String("custom_tool_call_output")) {
        item.kind = Kind::ToolResult;
        item.callId = o.value(QStringLiteral("call_id")).toString();
        item.output = o.value(QStringLiteral("output"));
    } else if (type == QLatin1String("code_interpreter_call")) {
        item.kind = Kind::CodeRun;
        item.callId = o.value(QStringLiteral("id")).toString();
        item.container = o.value(QStringLiteral("container_id")).toString();
        item.code = o.value(QStringLiteral("code")).toString();
        item.isError = o.value(QStringLiteral("status")).toString() == QLatin1String("failed");
        for (const QJsonValue &v : o.value(QStringLiteral("outputs")).toArray()) {
            const QJsonObject out = v.toObject();
            const QString outType = out.value(kType).toString();
            ConversationItem::Part part;
            part.wire = v;
            if (outType == QLatin1String("logs")) {
                part.text = out.value(QStringLiteral("logs")).toString();
                item.stdoutText += part.text;
            } else if (outType == QLatin1String("image")) {
                part.kind = ConversationItem::Part::Kind::Image;
                ++item.imageCount;
            } else {
                part.kind = ConversationItem::Part::Kind::Other;
            }
            item.parts << part;
        }
    } else if (type == QLatin1String("reasoning")) {
        item.kind = Kind::Reasoning;
        for (const QJsonValue &s : o.value(QStringLiteral("summary")).toArray())
            item.summary << s.toObject().value(QStringLiteral("text")).toString();
        item.encryptedContent = o.value(QStringLiteral("encrypted_content")).toString();
    }
    item.id = o.value(QStringLiteral("id")).toString();
    item.wire = value;
    return item;
}

ConversationRequest ResponsesCodec::decodeRequest(const QJsonObject &body) {
    ConversationRequest request;
    request.model = body.value(QStringLiteral("model")).toString();
    request.stream = body.value(QStringLiteral("stream")).toBool();
    request.instructions = body.value(QStringLiteral("instructions")).toString();
    const QJsonValue input = body.value(QStringLiteral("input"));
    if (input.isString())
        request.items << decodeItem(input);
    for (const QJsonValue &item : input.toArray())
        request.items << decodeItem(item);
    return request;
}

ConversationResponse ResponsesCodec::decodeResponse(const QJsonObject &body) {
    ConversationResponse response;
    response.error = ConversationItem::errorMessageOf(body);
    response.id = body.value(QStringLiteral("id")).toString();
    response.model = body.value(QStringLiteral("model")).toString();
    for (const QJsonValue &item : body.value(QStringLiteral("output")).toArray())
        response.items << decodeItem(item);
    const QString status = body.value(QStringLiteral("status")).toString();
    const QString incomplete = body.value(QStringLiteral("incomplete_details"))
                                   .toObject()
                                   .value(QStringLiteral("reason"))
                                   .toString();
    const bool endsInCall =
        !response.items.isEmpty() && response.items.last().kind == ConversationItem::Kind::ToolCall;
    response.stop = stopReasonFromResponses(status, incomplete, endsInCall);
    response.stopDetail = incomplete.isEmpty() ? status : incomplete;
    response.usage = Usage::fromWire(body.value(QStringLiteral("usage")).toObject());
    return response;
}

} // namespace loopscope
