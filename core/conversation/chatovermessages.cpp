#include "conversation/chatovermessages.h"

#include "common/openaierror.h"
#include "conversation/chatcompletionscodec.h"
#include "conversation/messagescodec.h"
#include "conversation/stopreason.h"

#include <QDateTime>
#include <QJsonDocument>

namespace loopscope {

namespace {

using Kind = ConversationItem::Kind;
using PartKind = ConversationItem::Part::Kind;

const QString kType = QStringLiteral("type");
const QString kText = QStringLiteral("text");
const QString kName = QStringLiteral("name");
const QString kRole = QStringLiteral("role");
const QString kContent = QStringLiteral("content");
const QString kSource = QStringLiteral("source");

QString compact(const QJsonObject &o) {
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

// A file part (a PDF as a data URL in file_data) as a document block.
QJsonObject documentBlock(const ConversationItem::Part &part) {
    const QJsonObject file = part.wire.toObject().value(QStringLiteral("file")).toObject();
    const QString data = file.value(QStringLiteral("file_data")).toString();
    if (!data.startsWith(QLatin1String("data:")))
        return {};
    const qsizetype comma = data.indexOf(u',');
    return {{kType, QStringLiteral("document")},
            {kSource,
             QJsonObject{{kType, QStringLiteral("base64")},
                         {QStringLiteral("media_type"), data.mid(5, comma - 5).section(u';', 0, 0)},
                         {QStringLiteral("data"), data.mid(comma + 1)}}}};
}

// Message parts as content blocks; `error` says which part has no Messages form.
QJsonArray blocksOf(const QList<ConversationItem::Part> &parts, QString *error) {
    QJsonArray blocks;
    for (const ConversationItem::Part &part : parts) {
        switch (part.kind) {
        case PartKind::Text:
        case PartKind::Refusal:
            if (!part.text.isEmpty()) // Anthropic refuses empty text blocks
                blocks.append(QJsonObject{{kType, kText}, {kText, part.text}});
            break;
        case PartKind::Image:
            blocks.append(MessagesCodec::imageBlock(part.imageUrl()));
            break;
        case PartKind::File:
            if (const QJsonObject doc = documentBlock(part); !doc.isEmpty()) {
                blocks.append(doc);
                break;
            }
            *error = QStringLiteral("a file part without file_data cannot be sent to an "
                                    "Anthropic upstream");
            return {};
        case PartKind::Audio:
        case PartKind::Other:
            *error = QStringLiteral("content part of type '%1' cannot be sent to an Anthropic "
                                    "upstream")
                         .arg(part.wire.toObject().value(kType).toString());
            return {};
        }
    }
    return blocks;
}

// Turns in order, consecutive turns of one role merged (Anthropic wants them alternating, and
// parallel tool results in one user turn).
class TurnBuilder {
public:
    void add(const QString &role, const QJsonArray &blocks) {
        if (blocks.isEmpty())
            return;
        if (!m_turns.isEmpty()) {
            QJsonObject last = m_turns.last().toObject();
            if (last.value(kRole).toString() == role) {
                QJsonArray content = last.value(kContent).toArray();
                for (const QJsonValue &b : blocks)
                    content.append(b);
                last.insert(kContent, content);
                m_turns[m_turns.size() - 1] = last;
                return;
            }
        }
        m_turns.append(QJsonObject{{kRole, role}, {kContent, blocks}});
    }
    QJsonArray turns() const { return m_turns; }

private:
    QJsonArray m_turns;
};

// A reasoning item as Anthropic's thinking (or redacted_thinking) block, signature kept.
QJsonObject thinkingBlockOf(const ConversationItem &item) {
    return MessagesCodec::encodeBlocks(item).first().toObject();
}

QJsonValue toolResultContent(const QJsonValue &output, QString *error) {
    if (output.isString())
        return output;
    if (output.isArray())
        return blocksOf(ConversationItem::partsOf(output), error);
    if (output.isNull() || output.isUndefined())
        return QString();
    return QString::fromUtf8(QJsonDocument::fromVariant(output.toVariant()).toJson());
}

QJsonValue toolChoiceOf(const QJsonValue &choice, QString *error) {
    if (choice.isString()) {
        const QString c = choice.toString();
        if (c == QLatin1String("auto"))
            return QJsonObject{{kType, QStringLiteral("auto")}};
        if (c == QLatin1String("required"))
            return QJsonObject{{kType, QStringLiteral("any")}};
        if (c == QLatin1String("none"))
            return QJsonObject{{kType, QStringLiteral("none")}};
    } else if (choice.toObject().value(kType).toString() == QLatin1String("function")) {
        return QJsonObject{
            {kType, QStringLiteral("tool")},
            {kName, choice.toObject().value(QStringLiteral("function")).toObject().value(kName)}};
    }
    *error = QStringLiteral("this tool_choice cannot be sent to an Anthropic upstream");
    return {};
}

// Chat parameters with no Messages equivalent: refused by name rather than dropped.
bool unsupported(const QString &key, const QJsonValue &v) {
    if (v.isNull() || v.isUndefined())
        return false;
    if (key == QLatin1String("n"))
        return v.toInt(1) != 1;
    if (key == QLatin1String("logprobs"))
        return v.toBool();
    if (key == QLatin1String("response_format"))
        return v.toObject().value(kType).toString() != QLatin1String("text");
    if (key == QLatin1String("modalities")) {
        for (const QJsonValue &m : v.toArray())
            if (m.toString() != QLatin1String("text"))
                return true;
        return false;
    }
    static const QStringList never = {
        QStringLiteral("audio"),         QStringLiteral("prediction"),
        QStringLiteral("logit_bias"),    QStringLiteral("frequency_penalty"),
        QStringLiteral("seed"),          QStringLiteral("presence_penalty"),
        QStringLiteral("top_logprobs"),  QStringLiteral("functions"),
        QStringLiteral("function_call"), QStringLiteral("web_search_options")};
    return never.contains(key);
}

} // namespace

int ChatOverMessages::thinkingBudget(const QString &effort) {
    if (effort == QLatin1String("minimal") || effort == QLatin1String("low"))
        return 1024;
    if (effort == QLatin1String("medium"))
        return 2048;
    if (effort == QLatin1String("high") || effort == QLatin1String("xhigh"))
        return 4096;
    return 0;
}

ChatOverMessages::MessagesRequest ChatOverMessages::messagesRequest(const QJsonObject &chat) {
    MessagesRequest result;
    const auto fail = [&result](const QString &error, const QString &param) {
        result.error = error;
        result.errorParam = param;
        result.body = {};
        return result;
    };
    for (auto it = chat.begin(); it != chat.end(); ++it)
        if (unsupported(it.key(), it.value()))
            return fail(QStringLiteral("'%1' has no equivalent in Anthropic's Messages API, "
                                       "which this route speaks")
                            .arg(it.key()),
                        it.key());

    QStringList system;
    TurnBuilder turns;
    QString error;
    const ConversationRequest decoded = ChatCompletionsCodec::decodeRequest(chat);
    for (const ConversationItem &item : decoded.items) {
        switch (item.kind) {
        case Kind::Message: {
            if (item.role == QLatin1String("system") || item.role == QLatin1String("developer")) {
                if (const QString text = item.text(); !text.isEmpty())
                    system << text;
                break;
            }
            const QString role =
                item.role == QLatin1String("assistant") ? item.role : QStringLiteral("user");
            const QJsonArray blocks = blocksOf(item.parts, &error);
            if (!error.isEmpty())
                return fail(error, QStringLiteral("messages"));
            turns.add(role, blocks);
            break;
        }
        case Kind::Reasoning:
            // Only signed thinking can go back (dialects.md §2); reasoning_content alone is
            // the model's text without the signature Anthropic checks.
            if (!item.encryptedContent.isEmpty())
                turns.add(QStringLiteral("assistant"), {thinkingBlockOf(item)});
            break;
        case Kind::ToolCall: {
            QJsonObject input;
            if (item.arguments.isObject()) {
                input = item.arguments.toObject();
            } else if (const QString text = item.arguments.toString(); !text.trimmed().isEmpty()) {
                const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
                if (!doc.isObject())
                    return fail(QStringLiteral("the arguments of tool call '%1' are not a JSON "
                                               "object; Anthropic takes tool input as one")
                                    .arg(item.callId),
                                QStringLiteral("messages"));
                input = doc.object();
            }
            turns.add(QStringLiteral("assistant"), {QJsonObject{{kType, QStringLiteral("tool_use")},
                                                                {QStringLiteral("id"), item.callId},
                                                                {kName, item.name},
                                                                {QStringLiteral("input"), input}}});
            break;
        }
        case Kind::ToolResult: {
            const QJsonValue content = toolResultContent(item.output, &error);
            if (!error.isEmpty())
                return fail(error, QStringLiteral("messages"));
            QJsonObject block{{kType, QStringLiteral("tool_result")},
                              {QStringLiteral("tool_use_id"), item.callId},
                              {kContent, content}};
            turns.add(QStringLiteral("user"), {block});
            break;
        }
        case Kind::CodeRun:
        case Kind::Opaque:
            return fail(QStringLiteral("a message of this kind cannot be sent to an Anthropic "
                                       "upstream"),
                        QStringLiteral("messages"));
        }
    }

    QJsonObject body{{QStringLiteral("model"), chat.value(QStringLiteral("model"))},
                     {QStringLiteral("messages"), turns.turns()}};
    if (!system.isEmpty())
        body.insert(QStringLiteral("system"), system.join(QStringLiteral("\n\n")));

    QJsonArray tools;
    for (const QJsonValue &t : chat.value(QStringLiteral("tools")).toArray()) {
        const QJsonObject tool = t.toObject();
        if (tool.value(kType).toString() != QLatin1String("function"))
            return fail(QStringLiteral("tool type '%1' cannot be sent to an Anthropic upstream "
                                       "(function tools can)")
                            .arg(tool.value(kType).toString()),
                        QStringLiteral("tools"));
        const QJsonObject fn = tool.value(QStringLiteral("function")).toObject();
        QJsonObject out{{kName, fn.value(kName)}};
        if (fn.value(QStringLiteral("description")).isString())
            out.insert(QStringLiteral("description"), fn.value(QStringLiteral("description")));
        const QJsonValue schema = fn.value(QStringLiteral("parameters"));
        out.insert(QStringLiteral("input_schema"),
                   schema.isObject() ? schema
                                     : QJsonObject{{kType, QStringLiteral("object")},
                                                   {QStringLiteral("properties"), QJsonObject()}});
        tools.append(out);
    }
    if (!tools.isEmpty())
        body.insert(QStringLiteral("tools"), tools);

    QJsonObject choice;
    if (const QJsonValue c = chat.value(QStringLiteral("tool_choice"));
        !c.isUndefined() && !c.isNull()) {
        choice = toolChoiceOf(c, &error).toObject();
        if (!error.isEmpty())
            return fail(error, QStringLiteral("tool_choice"));
    }
    if (chat.value(QStringLiteral("parallel_tool_calls")) == QJsonValue(false) &&
        !tools.isEmpty()) {
        if (choice.isEmpty())
            choice.insert(kType, QStringLiteral("auto"));
        choice.insert(QStringLiteral("disable_parallel_tool_use"), true);
    }
    if (!choice.isEmpty() && !tools.isEmpty()) // Anthropic takes tool_choice only beside tools
        body.insert(QStringLiteral("tool_choice"), choice);

    int budget = 0;
    if (chat.value(QStringLiteral("thinking")).isObject()) { // LiteLLM's pass-through name
        body.insert(QStringLiteral("thinking"), chat.value(QStringLiteral("thinking")));
        budget = chat.value(QStringLiteral("thinking"))
                     .toObject()
                     .value(QStringLiteral("budget_tokens"))
                     .toInt();
    } else if (const QString effort = chat.value(QStringLiteral("reasoning_effort")).toString();
               !effort.isEmpty()) {
        budget = thinkingBudget(effort);
        if (budget > 0)
            body.insert(QStringLiteral("thinking"),
                        QJsonObject{{kType, QStringLiteral("enabled")},
                                    {QStringLiteral("budget_tokens"), budget}});
    }
    QJsonValue maxTokens = chat.value(QStringLiteral("max_completion_tokens"));
    if (!maxTokens.isDouble())
        maxTokens = chat.value(QStringLiteral("max_tokens"));
    body.insert(QStringLiteral("max_tokens"),
                maxTokens.isDouble() ? maxTokens : QJsonValue(kDefaultMaxTokens + budget));

    for (const char *key : {"temperature", "top_p"})
        if (chat.value(QLatin1String(key)).isDouble())
            body.insert(QLatin1String(key), chat.value(QLatin1String(key)));
    const QJsonValue stop = chat.value(QStringLiteral("stop"));
    if (stop.isString())
        body.insert(QStringLiteral("stop_sequences"), QJsonArray{stop});
    else if (stop.isArray())
        body.insert(QStringLiteral("stop_sequences"), stop);
    // `user` and its successor `safety_identifier` name the end user, as metadata.user_id does.
    for (const char *key : {"user", "safety_identifier"})
        if (chat.value(QLatin1String(key)).isString() && !body.contains(QStringLiteral("metadata")))
            body.insert(QStringLiteral("metadata"),
                        QJsonObject{{QStringLiteral("user_id"), chat.value(QLatin1String(key))}});
    // OpenAI-side settings with nothing to act on them in Messages: left out, and named.
    for (const char *key : {"store", "metadata", "service_tier", "prompt_cache_key", "verbosity"})
        if (const QJsonValue v = chat.value(QLatin1String(key)); !v.isNull() && !v.isUndefined())
            result.ignored << QLatin1String(key);
    if (chat.value(QStringLiteral("stream")).toBool())
        body.insert(QStringLiteral("stream"), true);
    result.body = body;
    return result;
}

QString ChatOverMessages::finishReasonOf(const QString &stopReason) {
    const StopReason reason = stopReasonFromMessages(stopReason);
    return reason == StopReason::Unknown ? QStringLiteral("stop") : stopReasonToChat(reason, {});
}

QJsonObject ChatOverMessages::chatUsage(const QJsonObject &u) {
    const qint64 input = u.value(QStringLiteral("input_tokens")).toInteger();
    const qint64 read = u.value(QStringLiteral("cache_read_input_tokens")).toInteger();
    const qint64 write = u.value(QStringLiteral("cache_creation_input_tokens")).toInteger();
    const qint64 output = u.value(QStringLiteral("output_tokens")).toInteger();
    const qint64 prompt = input + read + write;
    return {{QStringLiteral("prompt_tokens"), prompt},
            {QStringLiteral("completion_tokens"), output},
            {QStringLiteral("total_tokens"), prompt + output},
            {QStringLiteral("prompt_tokens_details"),
             QJsonObject{{QStringLiteral("cached_tokens"), read},
                         {QStringLiteral("cache_write_tokens"), write}}}};
}

QJsonArray ChatOverMessages::thinkingBlocks(const QList<ConversationItem> &items) {
    QJsonArray blocks;
    for (const ConversationItem &item : items)
        if (item.kind == Kind::Reasoning && !item.encryptedContent.isEmpty())
            blocks.append(item.wire.isObject() ? item.wire.toObject() : thinkingBlockOf(item));
    return blocks;
}

QJsonObject ChatOverMessages::completionFromMessage(const QJsonObject &message) {
    const ConversationResponse decoded = MessagesCodec::decodeResponse(message);
    QStringList texts;
    QStringList reasoning;
    QJsonArray calls;
    for (const ConversationItem &item : decoded.items) {
        if (item.kind == Kind::Message) {
            for (const ConversationItem::Part &part : item.parts) // blocks join as they stream
                if (part.kind == PartKind::Text && !part.text.isEmpty())
                    texts << part.text;
        } else if (item.kind == Kind::Reasoning && !item.redacted) {
            reasoning << item.summary.join(QString());
        } else if (item.kind == Kind::ToolCall) {
            calls.append(QJsonObject{
                {QStringLiteral("id"), item.callId},
                {kType, QStringLiteral("function")},
                {QStringLiteral("function"),
                 QJsonObject{{kName, item.name},
                             {QStringLiteral("arguments"), compact(item.arguments.toObject())}}}});
        }
    }
    QJsonObject assistant{{kRole, QStringLiteral("assistant")},
                          {kContent, texts.isEmpty() ? QJsonValue() : texts.join(QString())},
                          {QStringLiteral("refusal"), QJsonValue::Null}};
    if (!calls.isEmpty())
        assistant.insert(QStringLiteral("tool_calls"), calls);
    if (!reasoning.isEmpty())
        assistant.insert(QStringLiteral("reasoning_content"), reasoning.join(QString()));
    if (const QJsonArray blocks = thinkingBlocks(decoded.items); !blocks.isEmpty())
        assistant.insert(QStringLiteral("thinking_blocks"), blocks);
    QJsonObject completion{{QStringLiteral("id"), message.value(QStringLiteral("id"))},
                           {QStringLiteral("object"), QStringLiteral("chat.completion")},
                           {QStringLiteral("created"), QDateTime::currentSecsSinceEpoch()},
                           {QStringLiteral("model"), message.value(QStringLiteral("model"))},
                           {QStringLiteral("choices"),
                            QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                                   {QStringLiteral("message"), assistant},
                                                   {QStringLiteral("logprobs"), QJsonValue::Null},
                                                   {QStringLiteral("finish_reason"),
                                                    finishReasonOf(decoded.stopDetail)}}}}};
    if (message.value(QStringLiteral("usage")).isObject())
        completion.insert(QStringLiteral("usage"),
                          chatUsage(message.value(QStringLiteral("usage")).toObject()));
    return completion;
}

int ChatOverMessages::clientStatus(int upstreamStatus) {
    return upstreamStatus == 529 ? 503 : upstreamStatus;
}

QJsonObject ChatOverMessages::openAiError(int status, const QByteArray &body) {
    const QJsonObject parsed = QJsonDocument::fromJson(body).object();
    const QJsonObject error = parsed.value(QStringLiteral("error")).toObject();
    QString message = error.value(QStringLiteral("message")).toString();
    QString type = error.value(kType).toString();
    if (message.isEmpty())
        message = QStringLiteral("Anthropic upstream answered %1: %2")
                      .arg(status)
                      .arg(QString::fromUtf8(body.left(2048)));
    if (type.isEmpty())
        type = QStringLiteral("upstream_error");
    return OpenAiError::object(message, type, type);
}

} // namespace loopscope
