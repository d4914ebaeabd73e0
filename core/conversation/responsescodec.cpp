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
        m.wireDialect = Dialect::Responses;
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
    item.wireDialect = Dialect::Responses;
    return item;
}

ConversationRequest ResponsesCodec::decodeRequest(const QJsonObject &body) {
    ConversationRequest request;
    request.wire = body;
    request.wireDialect = Dialect::Responses;
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
    response.wire = body;
    response.wireDialect = Dialect::Responses;
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

namespace {

// A message's parts as Responses content: a lone string part stays a string; other parts are
// their own wire when it is Responses', else written in its vocabulary.
QJsonValue contentOf(const ConversationItem &item) {
    using PartKind = ConversationItem::Part::Kind;
    const bool own = item.wireDialect == Dialect::Responses;
    if (item.parts.size() == 1 && item.parts.first().wire.isString() &&
        item.parts.first().kind == PartKind::Text)
        return item.parts.first().text;
    const bool output = item.role == QLatin1String("assistant");
    QJsonArray content;
    for (const ConversationItem::Part &part : item.parts) {
        QJsonObject p = own ? part.wire.toObject() : QJsonObject();
        switch (part.kind) {
        case PartKind::Text:
            if (p.isEmpty()) {
                p.insert(kType,
                         output ? QStringLiteral("output_text") : QStringLiteral("input_text"));
                if (output)
                    p.insert(QStringLiteral("annotations"), QJsonArray());
            }
            p.insert(QStringLiteral("text"), part.text);
            break;
        case PartKind::Refusal:
            p.insert(kType, QStringLiteral("refusal"));
            p.insert(QStringLiteral("refusal"), part.text);
            break;
        case PartKind::Image:
            if (p.isEmpty())
                p = {{kType, QStringLiteral("input_image")},
                     {QStringLiteral("image_url"), part.imageUrl()},
                     {QStringLiteral("detail"), QStringLiteral("auto")}};
            break;
        default: // files, audio, other: as they came
            if (p.isEmpty() && part.wire.isObject())
                p = part.wire.toObject();
            break;
        }
        content.append(p);
    }
    return content;
}

void putId(QJsonObject &o, const QString &id) {
    if (!id.isEmpty())
        o.insert(QStringLiteral("id"), id);
}

} // namespace

QJsonValue ResponsesCodec::encodeItem(const ConversationItem &item) {
    using Kind = ConversationItem::Kind;
    if (item.wireDialect == Dialect::Responses && item.wire.isString() &&
        item.kind == Kind::Message && item.parts.size() == 1)
        return item.parts.first().text; // `input` as a bare string
    QJsonObject o = item.wireIn(Dialect::Responses);
    switch (item.kind) {
    case Kind::Message:
        if (o.isEmpty() || o.contains(kType))
            o.insert(kType, QStringLiteral("message"));
        o.insert(QStringLiteral("role"), item.role);
        o.insert(QStringLiteral("content"), contentOf(item));
        putId(o, item.id);
        break;
    case Kind::Reasoning: {
        o.insert(kType, QStringLiteral("reasoning"));
        putId(o, item.id);
        QJsonArray summary;
        const QJsonArray was = o.value(QStringLiteral("summary")).toArray();
        for (int i = 0; i < item.summary.size(); ++i) {
            QJsonObject s = i < was.size() ? was.at(i).toObject()
                                           : QJsonObject{{kType, QStringLiteral("summary_text")}};
            s.insert(QStringLiteral("text"), item.summary.at(i));
            summary.append(s);
        }
        o.insert(QStringLiteral("summary"), summary);
        if (!item.encryptedContent.isEmpty())
            o.insert(QStringLiteral("encrypted_content"), item.encryptedContent);
        break;
    }
    case Kind::ToolCall:
        putId(o, item.id);
        o.insert(QStringLiteral("call_id"), item.callId);
        o.insert(QStringLiteral("name"), item.name);
        if (item.toolKind == ConversationItem::ToolKind::Custom) {
            o.insert(kType, QStringLiteral("custom_tool_call"));
            o.insert(QStringLiteral("input"), item.arguments);
        } else if (item.toolKind == ConversationItem::ToolKind::Hosted) {
            // Another vendor's server-side call (Anthropic's server_tool_use): it ran there and
            // its CodeRun says what it did; the client has nothing to answer.
            return QJsonValue(QJsonValue::Undefined);
        } else {
            o.insert(kType, QStringLiteral("function_call"));
            o.insert(QStringLiteral("arguments"), item.argumentsText());
        }
        break;
    case Kind::ToolResult: {
        if (!o.value(kType).toString().startsWith(QLatin1String("custom")))
            o.insert(kType, QStringLiteral("function_call_output"));
        o.insert(QStringLiteral("call_id"), item.callId);
        putId(o, item.id);
        ConversationItem output;
        output.parts = ConversationItem::partsOf(item.output);
        output.wireDialect = item.wireDialect;
        o.insert(QStringLiteral("output"),
                 item.output.isString() || item.output.isNull() || item.output.isUndefined()
                     ? QJsonValue(item.output.toString())
                     : contentOf(output));
        break;
    }
    case Kind::CodeRun:
        o.insert(kType, QStringLiteral("code_interpreter_call"));
        o.insert(QStringLiteral("id"), item.callId);
        o.insert(QStringLiteral("container_id"), item.container);
        o.insert(QStringLiteral("code"), item.code);
        if (!o.contains(QStringLiteral("outputs"))) {
            QJsonArray outputs;
            if (!item.stdoutText.isEmpty())
                outputs.append(QJsonObject{{kType, QStringLiteral("logs")},
                                           {QStringLiteral("logs"), item.stdoutText}});
            o.insert(QStringLiteral("outputs"), outputs);
        }
        if (item.isError)
            o.insert(QStringLiteral("status"), QStringLiteral("failed"));
        else if (!o.contains(QStringLiteral("status")))
            o.insert(QStringLiteral("status"), QStringLiteral("completed"));
        break;
    case Kind::Opaque: // as it came; another dialect's unknowns are not Responses'
        return item.wireDialect.value_or(Dialect::Responses) == Dialect::Responses
                   ? item.wire
                   : QJsonValue(QJsonValue::Undefined);
    }
    return o;
}

QJsonObject ResponsesCodec::encodeRequest(const ConversationRequest &request) {
    QJsonObject body = request.wireDialect == Dialect::Responses ? request.wire : QJsonObject();
    if (!request.model.isEmpty())
        body.insert(QStringLiteral("model"), request.model);
    if (!request.instructions.isEmpty())
        body.insert(QStringLiteral("instructions"), request.instructions);
    if (request.stream || body.contains(QStringLiteral("stream")))
        body.insert(QStringLiteral("stream"), request.stream);
    const bool bare = request.items.size() == 1 && body.value(QStringLiteral("input")).isString();
    if (bare) {
        body.insert(QStringLiteral("input"), encodeItem(request.items.first()));
    } else {
        QJsonArray input;
        for (const ConversationItem &item : request.items)
            if (const QJsonValue v = encodeItem(item); !v.isUndefined())
                input.append(v);
        body.insert(QStringLiteral("input"), input);
    }
    return body;
}

QJsonObject ResponsesCodec::encodeResponse(const ConversationResponse &response) {
    QJsonObject body = response.wireDialect == Dialect::Responses ? response.wire : QJsonObject();
    if (!response.error.isEmpty()) {
        QJsonObject error = body.value(QStringLiteral("error")).toObject();
        error.insert(QStringLiteral("message"), response.error);
        body.insert(QStringLiteral("error"), error);
        if (response.items.isEmpty())
            return body;
    }
    if (!response.id.isEmpty())
        body.insert(QStringLiteral("id"), response.id);
    body.insert(QStringLiteral("object"), QStringLiteral("response"));
    if (!response.model.isEmpty())
        body.insert(QStringLiteral("model"), response.model);
    QJsonArray output;
    for (const ConversationItem &item : response.items)
        if (const QJsonValue v = encodeItem(item); !v.isUndefined())
            output.append(v);
    body.insert(QStringLiteral("output"), output);
    const QString status = stopReasonToResponsesStatus(response.stop, response.stopDetail);
    if (!status.isEmpty())
        body.insert(QStringLiteral("status"), status);
    const QString incomplete = stopReasonToResponsesIncomplete(response.stop, response.stopDetail);
    if (!incomplete.isEmpty())
        body.insert(QStringLiteral("incomplete_details"),
                    QJsonObject{{QStringLiteral("reason"), incomplete}});
    else if (body.value(QStringLiteral("incomplete_details")).isObject())
        body.insert(QStringLiteral("incomplete_details"), QJsonValue::Null);
    const QJsonObject usage =
        response.usage.toResponses(body.value(QStringLiteral("usage")).toObject());
    if (!usage.isEmpty())
        body.insert(QStringLiteral("usage"), usage);
    return body;
}

} // namespace loopscope
