#include "demo/demomodel.h"

#include "common/anthropicerror.h"
#include "common/openaierror.h"
#include "conversation/ssewriter.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace loopscope {

namespace {

struct Conversation {
    QString lastUserText;
    bool hasToolOutput = false;
    QString lastToolOutput;
    bool hasFunctionTool = false;
    QString toolName;
    QString codeParameter = QStringLiteral("code");
};

struct Decision {
    bool toolCall = false;
    QString text;
    QString toolName;
    QString arguments;
};

QString textOf(const QJsonValue &content) {
    if (content.isString())
        return content.toString();
    QString text;
    for (const QJsonValue &part : content.toArray()) {
        const QJsonObject p = part.toObject();
        if (p.value(QStringLiteral("text")).isString()) {
            if (!text.isEmpty())
                text += u'\n';
            text += p.value(QStringLiteral("text")).toString();
        }
    }
    return text;
}

// Picks the function tool the demo calls and its string parameter for the code.
void chooseTool(Conversation &c, const QString &name, const QJsonObject &parameters) {
    const QJsonObject properties = parameters.value(QStringLiteral("properties")).toObject();
    QString param;
    if (properties.contains(QStringLiteral("code")))
        param = QStringLiteral("code");
    for (auto it = properties.begin(); param.isEmpty() && it != properties.end(); ++it)
        if (it.value().toObject().value(QStringLiteral("type")).toString() ==
            QLatin1String("string"))
            param = it.key();
    const bool preferred = name == QLatin1String("litellm_code_execution");
    const bool better =
        !c.hasFunctionTool || preferred ||
        (c.toolName != QLatin1String("litellm_code_execution") && param == QLatin1String("code") &&
         c.codeParameter != QLatin1String("code"));
    if (!better)
        return;
    c.hasFunctionTool = true;
    c.toolName = name;
    c.codeParameter = param.isEmpty() ? QStringLiteral("code") : param;
}

Conversation readResponses(const QJsonObject &body) {
    Conversation c;
    const QJsonValue input = body.value(QStringLiteral("input"));
    if (input.isString()) {
        c.lastUserText = input.toString();
    } else {
        for (const QJsonValue &v : input.toArray()) {
            const QJsonObject item = v.toObject();
            const QString type = item.value(QStringLiteral("type")).toString();
            if (type == QLatin1String("function_call_output")) {
                c.hasToolOutput = true;
                c.lastToolOutput = textOf(item.value(QStringLiteral("output")));
            } else if ((type.isEmpty() || type == QLatin1String("message")) &&
                       item.value(QStringLiteral("role")).toString() == QLatin1String("user")) {
                c.lastUserText = textOf(item.value(QStringLiteral("content")));
                c.hasToolOutput = false; // a new question starts a new turn
            }
        }
    }
    for (const QJsonValue &v : body.value(QStringLiteral("tools")).toArray()) {
        const QJsonObject tool = v.toObject();
        if (tool.value(QStringLiteral("type")).toString() == QLatin1String("function"))
            chooseTool(c, tool.value(QStringLiteral("name")).toString(),
                       tool.value(QStringLiteral("parameters")).toObject());
    }
    return c;
}

Conversation readChat(const QJsonObject &body) {
    Conversation c;
    for (const QJsonValue &v : body.value(QStringLiteral("messages")).toArray()) {
        const QJsonObject message = v.toObject();
        const QString role = message.value(QStringLiteral("role")).toString();
        if (role == QLatin1String("user")) {
            c.lastUserText = textOf(message.value(QStringLiteral("content")));
            c.hasToolOutput = false;
        } else if (role == QLatin1String("tool")) {
            c.hasToolOutput = true;
            c.lastToolOutput = textOf(message.value(QStringLiteral("content")));
        }
    }
    for (const QJsonValue &v : body.value(QStringLiteral("tools")).toArray()) {
        const QJsonObject tool = v.toObject();
        if (tool.value(QStringLiteral("type")).toString() == QLatin1String("function")) {
            const QJsonObject fn = tool.value(QStringLiteral("function")).toObject();
            chooseTool(c, fn.value(QStringLiteral("name")).toString(),
                       fn.value(QStringLiteral("parameters")).toObject());
        }
    }
    return c;
}

Decision decide(const Conversation &c) {
    Decision d;
    if (c.hasToolOutput) {
        d.text = DemoModel::answerForToolOutput(c.lastToolOutput);
        return d;
    }
    const QString code = DemoModel::codeForMessage(c.lastUserText);
    if (c.hasFunctionTool && !code.isEmpty()) {
        d.toolCall = true;
        d.toolName = c.toolName;
        // Anthropic's code execution tool (served by Loopscope) offers bash: the Python goes
        // through python3 there.
        const QString payload = c.toolName == QLatin1String("bash_code_execution")
                                    ? QStringLiteral("python3 - <<'PY'\n%1\nPY").arg(code)
                                    : code;
        d.arguments = QString::fromUtf8(
            QJsonDocument(QJsonObject{{c.codeParameter, payload}}).toJson(QJsonDocument::Compact));
        return d;
    }
    if (c.hasFunctionTool) {
        d.text = QStringLiteral("(Loopscope demo model, scripted and offline) I run Python with "
                                "the tool I am given: ask me e.g. \"what is 17*23?\" or paste a "
                                "```python block.");
    } else if (!code.isEmpty()) {
        d.text = QStringLiteral("(Loopscope demo model, scripted and offline) I would compute "
                                "this with code, but no code tool was offered. Send "
                                "tools: [{\"type\": \"code_interpreter\"}] through Loopscope to "
                                "see the loop.");
    } else {
        d.text = QStringLiteral("(Loopscope demo model, scripted and offline) Hello! Offer me "
                                "the code_interpreter tool and ask e.g. \"what is 17*23?\" to see "
                                "a code-execution loop.");
    }
    return d;
}

// Splits text into a few deltas the way a streaming model would (word boundaries).
QStringList deltasOf(const QString &text) {
    QStringList parts;
    static const QRegularExpression word(QStringLiteral("\\S+\\s*|\\s+"));
    auto it = word.globalMatch(text);
    while (it.hasNext())
        parts << it.next().captured(0);
    if (parts.isEmpty())
        parts << text;
    return parts;
}

int tokensOf(qsizetype chars) {
    return int(qMax<qsizetype>(1, (chars + 3) / 4));
}

QByteArray sse(const QByteArray &event, const QJsonObject &data) {
    return SseWriter::frame(event, data);
}

struct Ids {
    QString stem;
    explicit Ids(const QByteArray &body)
        : stem(QString::fromLatin1(
              QCryptographicHash::hash(body, QCryptographicHash::Sha256).toHex().left(24))) {}
    QString with(const char *prefix) const { return QString::fromLatin1(prefix) + stem; }
};

// ---- Responses API ----

QJsonObject responsesMessage(const Ids &ids, const QString &text, const QString &status) {
    QJsonArray content;
    if (!text.isNull())
        content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                   {QStringLiteral("text"), text},
                                   {QStringLiteral("annotations"), QJsonArray()}});
    return {{QStringLiteral("id"), ids.with("msg_")},
            {QStringLiteral("type"), QStringLiteral("message")},
            {QStringLiteral("status"), status},
            {QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("content"), content}};
}

QJsonObject responsesFunctionCall(const Ids &ids, const Decision &d, const QString &arguments,
                                  const QString &status) {
    return {{QStringLiteral("id"), ids.with("fc_")},
            {QStringLiteral("type"), QStringLiteral("function_call")},
            {QStringLiteral("status"), status},
            {QStringLiteral("call_id"), ids.with("call_")},
            {QStringLiteral("name"), d.toolName},
            {QStringLiteral("arguments"), arguments}};
}

QJsonObject responsesObject(const QJsonObject &request, const Ids &ids, qint64 created,
                            const QString &status, const QJsonArray &output,
                            const QJsonValue &usage) {
    auto orDefault = [&](const char *key, const QJsonValue &fallback) {
        const QJsonValue v = request.value(QLatin1String(key));
        return v.isUndefined() ? fallback : v;
    };
    return {
        {QStringLiteral("id"), ids.with("resp_")},
        {QStringLiteral("object"), QStringLiteral("response")},
        {QStringLiteral("created_at"), created},
        {QStringLiteral("status"), status},
        {QStringLiteral("error"), QJsonValue()},
        {QStringLiteral("incomplete_details"), QJsonValue()},
        {QStringLiteral("instructions"), orDefault("instructions", QJsonValue())},
        {QStringLiteral("max_output_tokens"), orDefault("max_output_tokens", QJsonValue())},
        {QStringLiteral("model"), DemoModel::modelId()},
        {QStringLiteral("output"), output},
        {QStringLiteral("parallel_tool_calls"), orDefault("parallel_tool_calls", true)},
        {QStringLiteral("previous_response_id"), orDefault("previous_response_id", QJsonValue())},
        {QStringLiteral("reasoning"), QJsonObject{{QStringLiteral("effort"), QJsonValue()},
                                                  {QStringLiteral("summary"), QJsonValue()}}},
        {QStringLiteral("store"), orDefault("store", false)},
        {QStringLiteral("temperature"), orDefault("temperature", 1.0)},
        {QStringLiteral("text"),
         QJsonObject{{QStringLiteral("format"),
                      QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}}}}},
        {QStringLiteral("tool_choice"), orDefault("tool_choice", QStringLiteral("auto"))},
        {QStringLiteral("tools"), orDefault("tools", QJsonArray())},
        {QStringLiteral("top_p"), orDefault("top_p", 1.0)},
        {QStringLiteral("truncation"), QStringLiteral("disabled")},
        {QStringLiteral("usage"), usage},
        {QStringLiteral("user"), orDefault("user", QJsonValue())},
        {QStringLiteral("metadata"), orDefault("metadata", QJsonObject())}};
}

QJsonObject responsesUsage(qsizetype inChars, qsizetype outChars) {
    const int in = tokensOf(inChars), out = tokensOf(outChars);
    return {
        {QStringLiteral("input_tokens"), in},
        {QStringLiteral("input_tokens_details"), QJsonObject{{QStringLiteral("cached_tokens"), 0}}},
        {QStringLiteral("output_tokens"), out},
        {QStringLiteral("output_tokens_details"),
         QJsonObject{{QStringLiteral("reasoning_tokens"), 0}}},
        {QStringLiteral("total_tokens"), in + out}};
}

DemoModel::Reply responses(const QJsonObject &request, const QByteArray &raw) {
    const Decision d = decide(readResponses(request));
    const Ids ids(raw);
    const qint64 created = QDateTime::currentSecsSinceEpoch();
    const QString produced = d.toolCall ? d.arguments : d.text;
    const QJsonObject finalItem =
        d.toolCall ? responsesFunctionCall(ids, d, d.arguments, QStringLiteral("completed"))
                   : responsesMessage(ids, d.text, QStringLiteral("completed"));
    const QJsonObject usage = responsesUsage(raw.size(), produced.size());
    const QJsonObject complete = responsesObject(request, ids, created, QStringLiteral("completed"),
                                                 QJsonArray{finalItem}, usage);
    DemoModel::Reply reply;
    if (!request.value(QStringLiteral("stream")).toBool()) {
        reply.contentType = "application/json";
        reply.chunks << QJsonDocument(complete).toJson(QJsonDocument::Compact);
        return reply;
    }
    reply.contentType = "text/event-stream";
    int sequence = 0;
    auto event = [&](const char *type, QJsonObject data) {
        data.insert(QStringLiteral("type"), QLatin1String(type));
        data.insert(QStringLiteral("sequence_number"), sequence++);
        reply.chunks << sse(type, data);
    };
    const QJsonObject pending = responsesObject(
        request, ids, created, QStringLiteral("in_progress"), QJsonArray(), QJsonValue());
    event("response.created", {{QStringLiteral("response"), pending}});
    event("response.in_progress", {{QStringLiteral("response"), pending}});
    const QString itemId = finalItem.value(QStringLiteral("id")).toString();
    const QJsonValue outputIndex = 0;
    if (d.toolCall) {
        event("response.output_item.added",
              {{QStringLiteral("output_index"), outputIndex},
               {QStringLiteral("item"),
                responsesFunctionCall(ids, d, QString(), QStringLiteral("in_progress"))}});
        event("response.function_call_arguments.delta",
              {{QStringLiteral("item_id"), itemId},
               {QStringLiteral("output_index"), outputIndex},
               {QStringLiteral("delta"), d.arguments}});
        event("response.function_call_arguments.done",
              {{QStringLiteral("item_id"), itemId},
               {QStringLiteral("output_index"), outputIndex},
               {QStringLiteral("arguments"), d.arguments}});
    } else {
        const QJsonObject emptyPart{{QStringLiteral("type"), QStringLiteral("output_text")},
                                    {QStringLiteral("text"), QString()},
                                    {QStringLiteral("annotations"), QJsonArray()}};
        QJsonObject fullPart = emptyPart;
        fullPart.insert(QStringLiteral("text"), d.text);
        event("response.output_item.added",
              {{QStringLiteral("output_index"), outputIndex},
               {QStringLiteral("item"),
                responsesMessage(ids, QString(), QStringLiteral("in_progress"))}});
        const QJsonObject at{{QStringLiteral("item_id"), itemId},
                             {QStringLiteral("output_index"), outputIndex},
                             {QStringLiteral("content_index"), 0}};
        QJsonObject added = at;
        added.insert(QStringLiteral("part"), emptyPart);
        event("response.content_part.added", added);
        for (const QString &piece : deltasOf(d.text)) {
            QJsonObject delta = at;
            delta.insert(QStringLiteral("delta"), piece);
            delta.insert(QStringLiteral("logprobs"), QJsonArray());
            event("response.output_text.delta", delta);
        }
        QJsonObject textDone = at;
        textDone.insert(QStringLiteral("text"), d.text);
        textDone.insert(QStringLiteral("logprobs"), QJsonArray());
        event("response.output_text.done", textDone);
        QJsonObject partDone = at;
        partDone.insert(QStringLiteral("part"), fullPart);
        event("response.content_part.done", partDone);
    }
    event("response.output_item.done",
          {{QStringLiteral("output_index"), outputIndex}, {QStringLiteral("item"), finalItem}});
    event("response.completed", {{QStringLiteral("response"), complete}});
    return reply;
}

// ---- Chat Completions API ----

QJsonObject chatChunk(const Ids &ids, qint64 created, const QJsonObject &delta,
                      const QJsonValue &finishReason) {
    return {{QStringLiteral("id"), ids.with("chatcmpl-")},
            {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
            {QStringLiteral("created"), created},
            {QStringLiteral("model"), DemoModel::modelId()},
            {QStringLiteral("system_fingerprint"), QJsonValue()},
            {QStringLiteral("choices"),
             QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                    {QStringLiteral("delta"), delta},
                                    {QStringLiteral("logprobs"), QJsonValue()},
                                    {QStringLiteral("finish_reason"), finishReason}}}}};
}

DemoModel::Reply chat(const QJsonObject &request, const QByteArray &raw) {
    const Decision d = decide(readChat(request));
    const Ids ids(raw);
    const qint64 created = QDateTime::currentSecsSinceEpoch();
    const int promptTokens = tokensOf(raw.size());
    const int completionTokens = tokensOf((d.toolCall ? d.arguments : d.text).size());
    const QJsonObject usage{{QStringLiteral("prompt_tokens"), promptTokens},
                            {QStringLiteral("completion_tokens"), completionTokens},
                            {QStringLiteral("total_tokens"), promptTokens + completionTokens}};
    const QJsonObject toolCall{
        {QStringLiteral("id"), ids.with("call_")},
        {QStringLiteral("type"), QStringLiteral("function")},
        {QStringLiteral("function"), QJsonObject{{QStringLiteral("name"), d.toolName},
                                                 {QStringLiteral("arguments"), d.arguments}}}};
    const QString finish = d.toolCall ? QStringLiteral("tool_calls") : QStringLiteral("stop");
    DemoModel::Reply reply;
    if (!request.value(QStringLiteral("stream")).toBool()) {
        QJsonObject message{
            {QStringLiteral("role"), QStringLiteral("assistant")},
            {QStringLiteral("content"), d.toolCall ? QJsonValue() : QJsonValue(d.text)},
            {QStringLiteral("refusal"), QJsonValue()}};
        if (d.toolCall)
            message.insert(QStringLiteral("tool_calls"), QJsonArray{toolCall});
        const QJsonObject completion{
            {QStringLiteral("id"), ids.with("chatcmpl-")},
            {QStringLiteral("object"), QStringLiteral("chat.completion")},
            {QStringLiteral("created"), created},
            {QStringLiteral("model"), DemoModel::modelId()},
            {QStringLiteral("system_fingerprint"), QJsonValue()},
            {QStringLiteral("choices"),
             QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                    {QStringLiteral("message"), message},
                                    {QStringLiteral("logprobs"), QJsonValue()},
                                    {QStringLiteral("finish_reason"), finish}}}},
            {QStringLiteral("usage"), usage}};
        reply.contentType = "application/json";
        reply.chunks << QJsonDocument(completion).toJson(QJsonDocument::Compact);
        return reply;
    }
    reply.contentType = "text/event-stream";
    if (d.toolCall) {
        QJsonObject opening = toolCall;
        opening.insert(QStringLiteral("index"), 0);
        opening.insert(QStringLiteral("function"),
                       QJsonObject{{QStringLiteral("name"), d.toolName},
                                   {QStringLiteral("arguments"), QString()}});
        reply.chunks << sse({}, chatChunk(ids, created,
                                          {{QStringLiteral("role"), QStringLiteral("assistant")},
                                           {QStringLiteral("content"), QJsonValue()},
                                           {QStringLiteral("tool_calls"), QJsonArray{opening}}},
                                          QJsonValue()));
        const QJsonObject args{
            {QStringLiteral("index"), 0},
            {QStringLiteral("function"), QJsonObject{{QStringLiteral("arguments"), d.arguments}}}};
        reply.chunks << sse({}, chatChunk(ids, created,
                                          {{QStringLiteral("tool_calls"), QJsonArray{args}}},
                                          QJsonValue()));
    } else {
        reply.chunks << sse({}, chatChunk(ids, created,
                                          {{QStringLiteral("role"), QStringLiteral("assistant")},
                                           {QStringLiteral("content"), QString()},
                                           {QStringLiteral("refusal"), QJsonValue()}},
                                          QJsonValue()));
        for (const QString &piece : deltasOf(d.text))
            reply.chunks << sse(
                {}, chatChunk(ids, created, {{QStringLiteral("content"), piece}}, QJsonValue()));
    }
    reply.chunks << sse({}, chatChunk(ids, created, {}, finish));
    const QJsonObject streamOptions = request.value(QStringLiteral("stream_options")).toObject();
    if (streamOptions.value(QStringLiteral("include_usage")).toBool()) {
        QJsonObject last = chatChunk(ids, created, {}, QJsonValue());
        last.insert(QStringLiteral("choices"), QJsonArray());
        last.insert(QStringLiteral("usage"), usage);
        reply.chunks << sse({}, last);
    }
    reply.chunks << SseWriter::done();
    return reply;
}

// ---- Anthropic Messages ----

Conversation readMessages(const QJsonObject &body) {
    Conversation c;
    for (const QJsonValue &v : body.value(QStringLiteral("messages")).toArray()) {
        const QJsonObject message = v.toObject();
        if (message.value(QStringLiteral("role")).toString() != QLatin1String("user"))
            continue;
        const QJsonValue content = message.value(QStringLiteral("content"));
        bool toolResult = false;
        for (const QJsonValue &b : content.toArray()) {
            const QJsonObject block = b.toObject();
            if (block.value(QStringLiteral("type")).toString() == QLatin1String("tool_result")) {
                toolResult = true;
                c.lastToolOutput = textOf(block.value(QStringLiteral("content")));
            }
        }
        if (toolResult) {
            c.hasToolOutput = true;
        } else {
            c.lastUserText = textOf(content);
            c.hasToolOutput = false; // a new question starts a new turn
        }
    }
    for (const QJsonValue &v : body.value(QStringLiteral("tools")).toArray()) {
        const QJsonObject tool = v.toObject();
        // Client tools carry an input_schema; server tools (web_search_…) are typed instead.
        if (tool.contains(QStringLiteral("input_schema")))
            chooseTool(c, tool.value(QStringLiteral("name")).toString(),
                       tool.value(QStringLiteral("input_schema")).toObject());
    }
    return c;
}

QJsonObject messagesUsage(int in, int out) {
    return {{QStringLiteral("input_tokens"), in},
            {QStringLiteral("cache_creation_input_tokens"), 0},
            {QStringLiteral("cache_read_input_tokens"), 0},
            {QStringLiteral("output_tokens"), out}};
}

DemoModel::Reply messages(const QJsonObject &request, const QByteArray &raw) {
    const Decision d = decide(readMessages(request));
    const Ids ids(raw);
    const int in = tokensOf(raw.size());
    const int out = tokensOf((d.toolCall ? d.arguments : d.text).size());
    const QString model = request.value(QStringLiteral("model")).toString(DemoModel::modelId());
    const QJsonObject toolUse{
        {QStringLiteral("type"), QStringLiteral("tool_use")},
        {QStringLiteral("id"), ids.with("toolu_")},
        {QStringLiteral("name"), d.toolName},
        {QStringLiteral("input"), QJsonDocument::fromJson(d.arguments.toUtf8()).object()}};
    const QString stopReason = d.toolCall ? QStringLiteral("tool_use") : QStringLiteral("end_turn");
    QJsonObject message{{QStringLiteral("id"), ids.with("msg_")},
                        {QStringLiteral("type"), QStringLiteral("message")},
                        {QStringLiteral("role"), QStringLiteral("assistant")},
                        {QStringLiteral("model"), model},
                        {QStringLiteral("content"), QJsonArray()},
                        {QStringLiteral("stop_reason"), QJsonValue()},
                        {QStringLiteral("stop_sequence"), QJsonValue()},
                        {QStringLiteral("usage"), messagesUsage(in, 1)}};
    DemoModel::Reply reply;
    if (!request.value(QStringLiteral("stream")).toBool()) {
        message.insert(
            QStringLiteral("content"),
            QJsonArray{d.toolCall ? toolUse
                                  : QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                                {QStringLiteral("text"), d.text}}});
        message.insert(QStringLiteral("stop_reason"), stopReason);
        message.insert(QStringLiteral("usage"), messagesUsage(in, out));
        reply.contentType = "application/json";
        reply.chunks << QJsonDocument(message).toJson(QJsonDocument::Compact);
        return reply;
    }
    // Anthropic's event order: message_start, ping, per block start / deltas / stop,
    // message_delta (stop reason, output tokens), message_stop.
    reply.contentType = "text/event-stream";
    const auto event = [&reply](const char *type, QJsonObject data) {
        data.insert(QStringLiteral("type"), QLatin1String(type));
        reply.chunks << sse(type, data);
    };
    event("message_start", {{QStringLiteral("message"), message}});
    event("ping", {});
    QJsonObject opening = d.toolCall ? toolUse
                                     : QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                                   {QStringLiteral("text"), QString()}};
    if (d.toolCall)
        opening.insert(QStringLiteral("input"), QJsonObject());
    event("content_block_start",
          {{QStringLiteral("index"), 0}, {QStringLiteral("content_block"), opening}});
    const QStringList pieces = d.toolCall ? QStringList{d.arguments} : deltasOf(d.text);
    for (const QString &piece : pieces)
        event(
            "content_block_delta",
            {{QStringLiteral("index"), 0},
             {QStringLiteral("delta"),
              d.toolCall ? QJsonObject{{QStringLiteral("type"), QStringLiteral("input_json_delta")},
                                       {QStringLiteral("partial_json"), piece}}
                         : QJsonObject{{QStringLiteral("type"), QStringLiteral("text_delta")},
                                       {QStringLiteral("text"), piece}}}});
    event("content_block_stop", {{QStringLiteral("index"), 0}});
    event("message_delta",
          {{QStringLiteral("delta"), QJsonObject{{QStringLiteral("stop_reason"), stopReason},
                                                 {QStringLiteral("stop_sequence"), QJsonValue()}}},
           {QStringLiteral("usage"), QJsonObject{{QStringLiteral("output_tokens"), out}}}});
    event("message_stop", {});
    return reply;
}

DemoModel::Reply messagesError(int status, const QString &message) {
    DemoModel::Reply reply;
    reply.status = status;
    reply.contentType = "application/json";
    reply.chunks << AnthropicError::json(status, message);
    return reply;
}

DemoModel::Reply error(int status, const QString &message, const QString &code) {
    DemoModel::Reply reply;
    reply.status = status;
    reply.contentType = "application/json";
    reply.chunks << OpenAiError::json(message, QStringLiteral("invalid_request_error"), code);
    return reply;
}

} // namespace

QString DemoModel::codeForMessage(const QString &text) {
    static const QRegularExpression fence(
        QStringLiteral("```(?:python|py|python3)?[ \\t]*\\r?\\n(.*?)```"),
        QRegularExpression::DotMatchesEverythingOption);
    const auto fenced = fence.match(text);
    if (fenced.hasMatch()) {
        QString code = fenced.captured(1);
        while (code.endsWith(u'\n') || code.endsWith(u'\r'))
            code.chop(1);
        if (!code.trimmed().isEmpty())
            return code;
    }
    // A plain arithmetic question: the longest balanced expression with an operator.
    QString normalized = text;
    normalized.replace(QChar(0x00D7), u'*').replace(QChar(0x00F7), u'/');
    static const QRegularExpression times(QStringLiteral("(\\d)\\s*[xX]\\s*(\\d)"));
    normalized.replace(times, QStringLiteral("\\1*\\2"));
    static const QRegularExpression candidate(QStringLiteral("[0-9.()+\\-*/%^\\s]+"));
    static const QRegularExpression hasOperation(
        QStringLiteral("[\\d)]\\s*(\\*\\*|[-+*/%^])\\s*[\\d(.]"));
    QString best;
    auto it = candidate.globalMatch(normalized);
    while (it.hasNext()) {
        QString expr = it.next().captured(0).trimmed();
        while (!expr.isEmpty() && !expr.back().isDigit() && expr.back() != u')')
            expr.chop(1);
        while (!expr.isEmpty() && !expr.front().isDigit() && expr.front() != u'(' &&
               expr.front() != u'-' && expr.front() != u'.')
            expr.remove(0, 1);
        // Drop parentheses the question left open or closed ("what is (2+3").
        while (expr.startsWith(u'(') && expr.count(u'(') > expr.count(u')'))
            expr = expr.mid(1).trimmed();
        while (expr.endsWith(u')') && expr.count(u')') > expr.count(u'('))
            expr = expr.chopped(1).trimmed();
        if (expr.count(u'(') != expr.count(u')') || !hasOperation.match(expr).hasMatch())
            continue;
        if (expr.size() > best.size())
            best = expr;
    }
    if (best.isEmpty())
        return {};
    best.replace(QStringLiteral("^"), QStringLiteral("**"));
    return QStringLiteral("print(%1)").arg(best);
}

QString DemoModel::answerForToolOutput(const QString &output) {
    const QString out = output.trimmed();
    if (out.isEmpty())
        return QStringLiteral("The code ran and printed nothing.");
    // The error line follows whatever the code printed before it failed.
    if (out.contains(QLatin1String("[execution error]")) ||
        out.contains(QLatin1String("Traceback (most recent call last)")))
        return QStringLiteral("The code failed:\n%1").arg(out);
    if (!out.contains(u'\n'))
        return out.endsWith(u'.') ? QStringLiteral("The result is %1").arg(out)
                                  : QStringLiteral("The result is %1.").arg(out);
    return QStringLiteral("The code printed:\n%1").arg(out);
}

DemoModel::Reply DemoModel::handle(const QByteArray &method, const QString &path,
                                   const QByteArray &body) {
    if (method == "GET" &&
        (path == QLatin1String("/models") || path == QLatin1String("/models/") + modelId())) {
        const QJsonObject model{
            {QStringLiteral("id"), modelId()},
            {QStringLiteral("object"), QStringLiteral("model")},
            {QStringLiteral("created"), 0},
            {QStringLiteral("owned_by"), QStringLiteral("loopscope (scripted offline demo)")}};
        Reply reply;
        reply.contentType = "application/json";
        const QJsonObject out =
            path == QLatin1String("/models")
                ? QJsonObject{{QStringLiteral("object"), QStringLiteral("list")},
                              {QStringLiteral("data"), QJsonArray{model}}}
                : model;
        reply.chunks << QJsonDocument(out).toJson(QJsonDocument::Compact);
        return reply;
    }
    if (AnthropicError::isMessagesPath(path)) {
        const bool count = path == QLatin1String("/messages/count_tokens");
        if (path != QLatin1String("/messages") && !count)
            return messagesError(
                404, QStringLiteral("The Loopscope demo model does not serve %1").arg(path));
        if (method != "POST")
            return messagesError(405, QStringLiteral("Use POST for %1").arg(path));
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
        if (parseError.error != QJsonParseError::NoError || !doc.isObject())
            return messagesError(400, QStringLiteral("Request body must be a JSON object"));
        if (!count)
            return messages(doc.object(), body);
        Reply reply;
        reply.contentType = "application/json";
        reply.chunks << QJsonDocument(
                            QJsonObject{{QStringLiteral("input_tokens"), tokensOf(body.size())}})
                            .toJson(QJsonDocument::Compact);
        return reply;
    }
    const bool isResponses = path == QLatin1String("/responses");
    const bool isChat = path == QLatin1String("/chat/completions");
    if (!isResponses && !isChat)
        return error(404,
                     QStringLiteral("The Loopscope demo model does not serve %1 %2")
                         .arg(QString::fromLatin1(method), path),
                     QStringLiteral("unknown_url"));
    if (method != "POST")
        return error(405, QStringLiteral("Use POST for %1").arg(path),
                     QStringLiteral("method_not_allowed"));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject())
        return error(400, QStringLiteral("Request body must be a JSON object"),
                     QStringLiteral("invalid_json"));
    return isResponses ? responses(doc.object(), body) : chat(doc.object(), body);
}

} // namespace loopscope
