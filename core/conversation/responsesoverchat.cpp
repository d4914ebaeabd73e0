#include "conversation/responsesoverchat.h"

#include "common/randomid.h"
#include "conversation/chatcompletionscodec.h"
#include "conversation/responsescodec.h"

#include <QDateTime>
#include <QJsonDocument>

namespace loopscope {

namespace {

using Kind = ConversationItem::Kind;
using PartKind = ConversationItem::Part::Kind;

const QString kType = QStringLiteral("type");
const QString kRole = QStringLiteral("role");
const QString kContent = QStringLiteral("content");
const QString kText = QStringLiteral("text");
const QString kName = QStringLiteral("name");
const QString kToolCalls = QStringLiteral("tool_calls");
const QString kFunction = QStringLiteral("function");

// One Responses content part as a chat content part; an unknown part is kept as it came (a
// server that does not know it says so, rather than Loopscope dropping it).
QJsonObject chatPart(const ConversationItem::Part &part) {
    const QJsonObject o = part.wire.toObject();
    switch (part.kind) {
    case PartKind::Text:
    case PartKind::Refusal:
        return {{kType, kText}, {kText, part.text}};
    case PartKind::Image: {
        QJsonObject url;
        const QJsonValue image = o.value(QStringLiteral("image_url"));
        url.insert(QStringLiteral("url"),
                   image.isObject() ? image.toObject().value(QStringLiteral("url")) : image);
        if (o.value(QStringLiteral("detail")).isString())
            url.insert(QStringLiteral("detail"), o.value(QStringLiteral("detail")));
        return {{kType, QStringLiteral("image_url")}, {QStringLiteral("image_url"), url}};
    }
    case PartKind::File: {
        QJsonObject file;
        for (const char *key : {"file_data", "file_id", "filename"})
            if (o.contains(QLatin1String(key)))
                file.insert(QLatin1String(key), o.value(QLatin1String(key)));
        return {{kType, QStringLiteral("file")}, {QStringLiteral("file"), file}};
    }
    case PartKind::Audio:
        return {{kType, QStringLiteral("input_audio")},
                {QStringLiteral("input_audio"), o.value(QStringLiteral("input_audio"))}};
    case PartKind::Other:
        break;
    }
    return o;
}

// Text-only content as one string (what every chat server takes, for every role), else parts.
QJsonValue chatContent(const QList<ConversationItem::Part> &parts) {
    bool textOnly = true;
    QStringList texts;
    for (const ConversationItem::Part &part : parts) {
        textOnly = textOnly && (part.kind == PartKind::Text || part.kind == PartKind::Refusal);
        texts << part.text;
    }
    if (textOnly)
        return texts.join(u'\n');
    QJsonArray out;
    for (const ConversationItem::Part &part : parts)
        out.append(chatPart(part));
    return out;
}

// A tool result's output as chat's tool content: a string, or the text of its parts.
QJsonValue toolContent(const QJsonValue &output) {
    if (output.isString())
        return output;
    if (output.isArray())
        return chatContent(ConversationItem::partsOf(output));
    return QString::fromUtf8(QJsonDocument::fromVariant(output.toVariant()).toJson());
}

class MessageBuilder {
public:
    void add(QJsonObject message) {
        if (!m_thinking.isEmpty() &&
            message.value(kRole).toString() == QLatin1String("assistant")) {
            message.insert(QStringLiteral("thinking_blocks"), m_thinking);
            m_thinking = {};
        }
        m_messages.append(message);
    }
    // Signed thinking that goes back to an Anthropic upstream: it opens the next assistant turn.
    void addThinking(const QJsonObject &block) { m_thinking.append(block); }
    // A tool call joins the assistant message just before it (its text, or earlier calls).
    void addToolCall(const QJsonObject &call) {
        if (!m_messages.isEmpty() && m_thinking.isEmpty()) {
            QJsonObject last = m_messages.last().toObject();
            if (last.value(kRole).toString() == QLatin1String("assistant")) {
                QJsonArray calls = last.value(kToolCalls).toArray();
                calls.append(call);
                last.insert(kToolCalls, calls);
                m_messages[m_messages.size() - 1] = last;
                return;
            }
        }
        add(QJsonObject{{kRole, QStringLiteral("assistant")},
                        {kContent, QJsonValue::Null},
                        {kToolCalls, QJsonArray{call}}});
    }
    QJsonArray messages() const { return m_messages; }

private:
    QJsonArray m_messages;
    QJsonArray m_thinking;
};

// A Responses reasoning item that came from Anthropic thinking (see thinkingEncrypted()) as the
// thinking block it was.
QJsonObject thinkingBlockOf(const ConversationItem &item) {
    if (item.encryptedContent.startsWith(ResponsesOverChat::kRedactedPrefix))
        return {{kType, QStringLiteral("redacted_thinking")},
                {QStringLiteral("data"),
                 item.encryptedContent.mid(ResponsesOverChat::kRedactedPrefix.size())}};
    QString text;
    const QJsonObject wire = item.wire.toObject();
    for (const QJsonValue &part : wire.value(kContent).toArray())
        text += part.toObject().value(kText).toString();
    if (text.isEmpty())
        text = item.summary.join(QString());
    return {{kType, QStringLiteral("thinking")},
            {QStringLiteral("thinking"), text},
            {QStringLiteral("signature"), item.encryptedContent}};
}

// Adds one item; returns the reason when chat has no place for it.
QString addItem(MessageBuilder &out, const ConversationItem &item, bool keepThinking) {
    switch (item.kind) {
    case Kind::Message: {
        QString role = item.role;
        if (role == QLatin1String("developer"))
            role = QStringLiteral("system");
        out.add({{kRole, role}, {kContent, chatContent(item.parts)}});
        return {};
    }
    case Kind::Reasoning: // chat takes no reasoning back (dialects.md §2), Anthropic does
        if (keepThinking && !item.encryptedContent.isEmpty())
            out.addThinking(thinkingBlockOf(item));
        return {};
    case Kind::ToolCall:
        if (item.toolKind == ConversationItem::ToolKind::Custom) {
            out.addToolCall({{QStringLiteral("id"), item.callId},
                             {kType, QStringLiteral("custom")},
                             {QStringLiteral("custom"),
                              QJsonObject{{kName, item.name},
                                          {QStringLiteral("input"), item.arguments.toString()}}}});
        } else {
            out.addToolCall(
                {{QStringLiteral("id"), item.callId},
                 {kType, kFunction},
                 {kFunction, QJsonObject{{kName, item.name},
                                         {QStringLiteral("arguments"), item.argumentsText()}}}});
        }
        return {};
    case Kind::ToolResult:
        out.add({{kRole, QStringLiteral("tool")},
                 {QStringLiteral("tool_call_id"), item.callId},
                 {kContent, toolContent(item.output)}});
        return {};
    case Kind::CodeRun: {
        // An earlier turn's code run: the model sees the code it wrote and what it printed.
        const QString id = item.callId.isEmpty() ? randomId("ci_") : item.callId;
        out.addToolCall(
            {{QStringLiteral("id"), id},
             {kType, kFunction},
             {kFunction,
              QJsonObject{
                  {kName, QStringLiteral("code_interpreter")},
                  {QStringLiteral("arguments"),
                   QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("code"), item.code}})
                                         .toJson(QJsonDocument::Compact))}}}});
        out.add({{kRole, QStringLiteral("tool")},
                 {QStringLiteral("tool_call_id"), id},
                 {kContent, item.stdoutText}});
        return {};
    }
    case Kind::Opaque:
        break;
    }
    const QString type = item.wire.toObject().value(kType).toString();
    return QStringLiteral("input item of type '%1' cannot be sent to a Chat Completions upstream")
        .arg(type.isEmpty() ? QStringLiteral("unknown") : type);
}

QJsonValue chatToolChoice(const QJsonValue &choice) {
    const QJsonObject o = choice.toObject();
    const QString type = o.value(kType).toString();
    if (type == QLatin1String("function"))
        return QJsonObject{{kType, kFunction}, {kFunction, QJsonObject{{kName, o.value(kName)}}}};
    if (type == QLatin1String("custom"))
        return QJsonObject{{kType, QStringLiteral("custom")},
                           {QStringLiteral("custom"), QJsonObject{{kName, o.value(kName)}}}};
    if (type == QLatin1String("allowed_tools")) {
        QJsonArray tools;
        for (const QJsonValue &t : o.value(QStringLiteral("tools")).toArray())
            tools.append(chatToolChoice(t));
        return QJsonObject{{kType, QStringLiteral("allowed_tools")},
                           {QStringLiteral("allowed_tools"),
                            QJsonObject{{QStringLiteral("mode"), o.value(QStringLiteral("mode"))},
                                        {QStringLiteral("tools"), tools}}}};
    }
    return choice; // "auto", "none", "required"
}

} // namespace

ResponsesOverChat::ChatRequest ResponsesOverChat::chatRequest(const QJsonObject &request,
                                                              const QJsonArray &history,
                                                              bool keepThinking) {
    ChatRequest result;
    MessageBuilder messages;
    const QString instructions = request.value(QStringLiteral("instructions")).toString();
    if (!instructions.isEmpty())
        messages.add({{kRole, QStringLiteral("system")}, {kContent, instructions}});
    QList<ConversationItem> items;
    for (const QJsonValue &item : history)
        items << ResponsesCodec::decodeItem(item);
    items << ResponsesCodec::decodeRequest(request).items;
    for (const ConversationItem &item : std::as_const(items)) {
        if (const QString why = addItem(messages, item, keepThinking); !why.isEmpty()) {
            result.error = why;
            result.errorParam = QStringLiteral("input");
            return result;
        }
    }

    QJsonObject &body = result.body;
    body.insert(QStringLiteral("model"), request.value(QStringLiteral("model")));
    body.insert(QStringLiteral("messages"), messages.messages());
    QJsonArray tools;
    for (const QJsonValue &t : request.value(QStringLiteral("tools")).toArray()) {
        const QJsonObject tool = t.toObject();
        const QString type = tool.value(kType).toString();
        if (type == QLatin1String("function")) {
            QJsonObject fn{{kName, tool.value(kName)}};
            for (const char *key : {"description", "parameters", "strict"})
                if (tool.contains(QLatin1String(key)) && !tool.value(QLatin1String(key)).isNull())
                    fn.insert(QLatin1String(key), tool.value(QLatin1String(key)));
            tools.append(QJsonObject{{kType, kFunction}, {kFunction, fn}});
        } else if (type == QLatin1String("custom")) {
            QJsonObject custom = tool;
            custom.remove(kType);
            tools.append(
                QJsonObject{{kType, QStringLiteral("custom")}, {QStringLiteral("custom"), custom}});
        } else {
            result.error = QStringLiteral("tool of type '%1' is not available over a Chat "
                                          "Completions upstream (only function and custom tools, "
                                          "and code_interpreter, which Loopscope runs)")
                               .arg(type);
            result.errorParam = QStringLiteral("tools");
            return result;
        }
    }
    if (!tools.isEmpty())
        body.insert(QStringLiteral("tools"), tools);
    if (request.contains(QStringLiteral("tool_choice")) && !tools.isEmpty())
        body.insert(QStringLiteral("tool_choice"),
                    chatToolChoice(request.value(QStringLiteral("tool_choice"))));
    for (const char *key : {"parallel_tool_calls", "temperature", "top_p", "user",
                            "safety_identifier", "prompt_cache_key", "service_tier"})
        if (request.contains(QLatin1String(key)) && !request.value(QLatin1String(key)).isNull())
            body.insert(QLatin1String(key), request.value(QLatin1String(key)));
    if (const QJsonValue max = request.value(QStringLiteral("max_output_tokens")); max.isDouble())
        body.insert(QStringLiteral("max_tokens"), max);
    if (const QJsonValue top = request.value(QStringLiteral("top_logprobs")); top.isDouble()) {
        body.insert(QStringLiteral("logprobs"), true);
        body.insert(QStringLiteral("top_logprobs"), top);
    }
    const QJsonObject text = request.value(kText).toObject();
    const QJsonObject format = text.value(QStringLiteral("format")).toObject();
    const QString formatType = format.value(kType).toString();
    if (formatType == QLatin1String("json_schema")) {
        QJsonObject schema = format;
        schema.remove(kType);
        body.insert(QStringLiteral("response_format"),
                    QJsonObject{{kType, formatType}, {QStringLiteral("json_schema"), schema}});
    } else if (formatType == QLatin1String("json_object")) {
        body.insert(QStringLiteral("response_format"), QJsonObject{{kType, formatType}});
    }
    if (text.value(QStringLiteral("verbosity")).isString())
        body.insert(QStringLiteral("verbosity"), text.value(QStringLiteral("verbosity")));
    const QJsonValue effort =
        request.value(QStringLiteral("reasoning")).toObject().value(QStringLiteral("effort"));
    if (effort.isString())
        body.insert(QStringLiteral("reasoning_effort"), effort);
    if (request.value(QStringLiteral("stream")).toBool()) {
        body.insert(QStringLiteral("stream"), true);
        body.insert(QStringLiteral("stream_options"),
                    QJsonObject{{QStringLiteral("include_usage"), true}});
    }
    return result;
}

ResponsesOverChat::Ids ResponsesOverChat::mintIds(int callCount) {
    Ids ids;
    ids.response = randomId("resp_");
    ids.reasoning = randomId("rs_");
    ids.message = randomId("msg_");
    for (int i = 0; i < callCount; ++i)
        ids.calls << randomId("fc_");
    return ids;
}

QJsonObject ResponsesOverChat::envelope(const QJsonObject &request, const QString &id,
                                        qint64 createdAt, const QString &model) {
    const auto echo = [&request](const char *key, const QJsonValue &fallback) {
        const QJsonValue v = request.value(QLatin1String(key));
        return v.isUndefined() ? fallback : v;
    };
    QJsonObject text = request.value(kText).toObject();
    if (!text.contains(QStringLiteral("format")))
        text.insert(QStringLiteral("format"), QJsonObject{{kType, kText}});
    return {
        {QStringLiteral("id"), id},
        {QStringLiteral("object"), QStringLiteral("response")},
        {QStringLiteral("created_at"), createdAt},
        {QStringLiteral("status"), QStringLiteral("in_progress")},
        {QStringLiteral("background"), false},
        {QStringLiteral("error"), QJsonValue::Null},
        {QStringLiteral("incomplete_details"), QJsonValue::Null},
        {QStringLiteral("instructions"), echo("instructions", QJsonValue::Null)},
        {QStringLiteral("max_output_tokens"), echo("max_output_tokens", QJsonValue::Null)},
        {QStringLiteral("model"), model},
        {QStringLiteral("output"), QJsonArray()},
        {QStringLiteral("parallel_tool_calls"), echo("parallel_tool_calls", true)},
        {QStringLiteral("previous_response_id"), echo("previous_response_id", QJsonValue::Null)},
        {QStringLiteral("reasoning"),
         echo("reasoning", QJsonObject{{QStringLiteral("effort"), QJsonValue::Null},
                                       {QStringLiteral("summary"), QJsonValue::Null}})},
        {QStringLiteral("store"), echo("store", true)},
        {QStringLiteral("temperature"), echo("temperature", 1.0)},
        {kText, text},
        {QStringLiteral("tool_choice"), echo("tool_choice", QStringLiteral("auto"))},
        {QStringLiteral("tools"), echo("tools", QJsonArray())},
        {QStringLiteral("top_p"), echo("top_p", 1.0)},
        {QStringLiteral("truncation"), echo("truncation", QStringLiteral("disabled"))},
        {QStringLiteral("usage"), QJsonValue::Null},
        {QStringLiteral("user"), echo("user", QJsonValue::Null)},
        {QStringLiteral("metadata"), echo("metadata", QJsonObject())}};
}

QJsonObject ResponsesOverChat::reasoningItem(const QString &id, const QString &text,
                                             const QString &encrypted) {
    QJsonObject item{{QStringLiteral("id"), id},
                     {kType, QStringLiteral("reasoning")},
                     {QStringLiteral("summary"), QJsonArray()},
                     {kContent, QJsonArray{QJsonObject{{kType, QStringLiteral("reasoning_text")},
                                                       {kText, text}}}}};
    if (!encrypted.isEmpty())
        item.insert(QStringLiteral("encrypted_content"), encrypted);
    return item;
}

QString ResponsesOverChat::thinkingEncrypted(const QJsonObject &block) {
    if (block.value(kType).toString() == QLatin1String("redacted_thinking"))
        return kRedactedPrefix + block.value(QStringLiteral("data")).toString();
    return block.value(QStringLiteral("signature")).toString();
}

QJsonObject ResponsesOverChat::messageItem(const QString &id, const QString &text,
                                           const QString &refusal) {
    QJsonArray content;
    if (!text.isEmpty() || refusal.isEmpty())
        content.append(QJsonObject{{kType, QStringLiteral("output_text")},
                                   {QStringLiteral("annotations"), QJsonArray()},
                                   {QStringLiteral("logprobs"), QJsonArray()},
                                   {kText, text}});
    if (!refusal.isEmpty())
        content.append(
            QJsonObject{{kType, QStringLiteral("refusal")}, {QStringLiteral("refusal"), refusal}});
    return {{QStringLiteral("id"), id},
            {kType, QStringLiteral("message")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {kRole, QStringLiteral("assistant")},
            {kContent, content}};
}

QJsonObject ResponsesOverChat::toolCallItem(const QString &id, const ConversationItem &call) {
    if (call.toolKind == ConversationItem::ToolKind::Custom)
        return {{QStringLiteral("id"), id},
                {kType, QStringLiteral("custom_tool_call")},
                {QStringLiteral("status"), QStringLiteral("completed")},
                {QStringLiteral("call_id"), call.callId},
                {kName, call.name},
                {QStringLiteral("input"), call.arguments.toString()}};
    return {{QStringLiteral("id"), id},
            {kType, QStringLiteral("function_call")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("call_id"), call.callId},
            {kName, call.name},
            {QStringLiteral("arguments"), call.argumentsText()}};
}

QJsonObject ResponsesOverChat::usageFromChat(const QJsonObject &u) {
    const qint64 input = u.value(QStringLiteral("prompt_tokens")).toInteger();
    const qint64 output = u.value(QStringLiteral("completion_tokens")).toInteger();
    const qint64 total = u.value(QStringLiteral("total_tokens")).toInteger(input + output);
    const QJsonObject details = u.value(QStringLiteral("prompt_tokens_details")).toObject();
    const qint64 cached = details.value(QStringLiteral("cached_tokens")).toInteger();
    const qint64 written = details.value(QStringLiteral("cache_write_tokens")).toInteger();
    const qint64 reasoning = u.value(QStringLiteral("completion_tokens_details"))
                                 .toObject()
                                 .value(QStringLiteral("reasoning_tokens"))
                                 .toInteger();
    return {{QStringLiteral("input_tokens"), input},
            {QStringLiteral("input_tokens_details"),
             QJsonObject{{QStringLiteral("cached_tokens"), cached},
                         {QStringLiteral("cache_write_tokens"), written}}},
            {QStringLiteral("output_tokens"), output},
            {QStringLiteral("output_tokens_details"),
             QJsonObject{{QStringLiteral("reasoning_tokens"), reasoning}}},
            {QStringLiteral("total_tokens"), total}};
}

void ResponsesOverChat::applyFinish(QJsonObject &response, const QString &finishReason) {
    const StopReason stop = stopReasonFromChat(finishReason);
    if (stop == StopReason::Length || stop == StopReason::ContentFilter) {
        response.insert(QStringLiteral("status"), QStringLiteral("incomplete"));
        response.insert(
            QStringLiteral("incomplete_details"),
            QJsonObject{{QStringLiteral("reason"), stop == StopReason::Length
                                                       ? QStringLiteral("max_output_tokens")
                                                       : QStringLiteral("content_filter")}});
        return;
    }
    response.insert(QStringLiteral("status"), QStringLiteral("completed"));
    response.insert(QStringLiteral("incomplete_details"), QJsonValue::Null);
}

QJsonObject ResponsesOverChat::responseFromChat(const QJsonObject &completion,
                                                const QJsonObject &request, const Ids &ids) {
    const ConversationResponse decoded = ChatCompletionsCodec::decodeResponse(completion);
    const QString model = completion.value(QStringLiteral("model"))
                              .toString(request.value(QStringLiteral("model")).toString());
    const QJsonValue created = completion.value(QStringLiteral("created"));
    QJsonObject response = envelope(
        request, ids.response,
        created.isDouble() ? created.toInteger() : QDateTime::currentSecsSinceEpoch(), model);
    QJsonArray output;
    int call = 0;
    int reasoning = 0;
    for (const ConversationItem &item : decoded.items) {
        if (item.kind == Kind::Reasoning) {
            // Anthropic thinking (thinking_blocks) keeps its signature, one item per block.
            const QString encrypted = item.encryptedContent.isEmpty()
                                          ? QString()
                                          : thinkingEncrypted(item.wire.toObject());
            output.append(reasoningItem(reasoning++ == 0 ? ids.reasoning : randomId("rs_"),
                                        item.summary.join(QString()), encrypted));
        } else if (item.kind == Kind::Message) {
            QString text;
            QString refusal;
            for (const ConversationItem::Part &part : item.parts)
                (part.kind == PartKind::Refusal ? refusal : text) += part.text;
            output.append(messageItem(ids.message, text, refusal));
        } else if (item.kind == Kind::ToolCall) {
            const QString id = call < ids.calls.size() ? ids.calls.at(call) : randomId("fc_");
            ++call;
            output.append(toolCallItem(id, item));
        }
    }
    response.insert(QStringLiteral("output"), output);
    applyFinish(response, decoded.stopDetail);
    if (completion.value(QStringLiteral("usage")).isObject())
        response.insert(QStringLiteral("usage"),
                        usageFromChat(completion.value(QStringLiteral("usage")).toObject()));
    return response;
}

QJsonArray ResponsesOverChat::chainItems(const QJsonObject &request) {
    const QJsonValue input = request.value(QStringLiteral("input"));
    if (input.isString())
        return {QJsonObject{{kType, QStringLiteral("message")},
                            {kRole, QStringLiteral("user")},
                            {kContent, input}}};
    return input.toArray();
}

} // namespace loopscope
