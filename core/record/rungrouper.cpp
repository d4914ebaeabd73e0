#include "record/rungrouper.h"

#include "conversation/dialect.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QRandomGenerator>

#include <algorithm>
#include <optional>
#include <utility>

namespace loopscope {

namespace {

QString textOf(const QJsonValue &content) {
    if (content.isString())
        return content.toString();
    QString text;
    for (const QJsonValue &part : content.toArray()) {
        const QJsonObject p = part.toObject();
        if (p.value(QStringLiteral("text")).isString())
            text += p.value(QStringLiteral("text")).toString();
    }
    return text;
}

// What identifies a message or item for prefix continuity: role and text, or the call id.
// Clients re-send earlier turns with cosmetic differences (extra null fields, part shapes), so
// only these survive normalisation. Empty = not part of the conversation (reasoning items).
QByteArray normalized(const QJsonObject &item) {
    const QString type = item.value(QStringLiteral("type")).toString();
    QJsonObject n;
    if (type == QLatin1String("function_call")) {
        n.insert(QStringLiteral("f"), item.value(QStringLiteral("call_id")));
    } else if (type == QLatin1String("function_call_output")) {
        n.insert(QStringLiteral("o"), item.value(QStringLiteral("call_id")));
    } else if (type == QLatin1String("reasoning")) {
        return {};
    } else if (item.contains(QStringLiteral("role"))) {
        n.insert(QStringLiteral("r"), item.value(QStringLiteral("role")));
        n.insert(QStringLiteral("c"), textOf(item.value(QStringLiteral("content"))));
        QJsonArray calls;
        for (const QJsonValue &call : item.value(QStringLiteral("tool_calls")).toArray())
            calls.append(call.toObject().value(QStringLiteral("id")));
        // Anthropic content blocks: the calls a turn made and the results it answers with.
        for (const QJsonValue &b : item.value(QStringLiteral("content")).toArray()) {
            const QJsonObject block = b.toObject();
            const QString blockType = block.value(QStringLiteral("type")).toString();
            if (blockType == QLatin1String("tool_use") ||
                blockType == QLatin1String("server_tool_use"))
                calls.append(block.value(QStringLiteral("id")));
            else if (blockType == QLatin1String("tool_result"))
                calls.append(block.value(QStringLiteral("tool_use_id")));
        }
        if (!calls.isEmpty())
            n.insert(QStringLiteral("t"), calls);
        if (item.contains(QStringLiteral("tool_call_id")))
            n.insert(QStringLiteral("i"), item.value(QStringLiteral("tool_call_id")));
    } else {
        n.insert(QStringLiteral("y"), type);
        n.insert(QStringLiteral("id"), item.value(QStringLiteral("id")));
    }
    return QJsonDocument(n).toJson(QJsonDocument::Compact);
}

bool isReply(const QJsonObject &item) {
    return item.value(QStringLiteral("role")).toString() == QLatin1String("assistant") ||
           item.value(QStringLiteral("type")).toString() == QLatin1String("function_call");
}

QJsonArray conversationOf(const QString &api, const QJsonObject &request) {
    if (api == QLatin1String("chat_completions") || api == QLatin1String("messages"))
        return request.value(QStringLiteral("messages")).toArray();
    const QJsonValue input = request.value(QStringLiteral("input"));
    if (input.isString())
        return {QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                            {QStringLiteral("content"), input.toString()}}};
    return input.toArray();
}

QJsonArray replyOf(const QString &api, const QJsonObject &response) {
    if (api == QLatin1String("messages")) { // one assistant turn of content blocks
        if (!response.value(QStringLiteral("content")).isArray())
            return {};
        return QJsonArray{
            QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                        {QStringLiteral("content"), response.value(QStringLiteral("content"))}}};
    }
    if (api == QLatin1String("chat_completions")) {
        const QJsonObject message = response.value(QStringLiteral("choices"))
                                        .toArray()
                                        .first()
                                        .toObject()
                                        .value(QStringLiteral("message"))
                                        .toObject();
        return message.isEmpty() ? QJsonArray() : QJsonArray{message};
    }
    return response.value(QStringLiteral("output")).toArray();
}

// Chained hash h_k = sha1(h_{k-1} || item_k): every prefix costs one step.
QByteArray chainHash(const QByteArray &previous, const QByteArray &item) {
    QCryptographicHash hash(QCryptographicHash::Sha1);
    hash.addData(previous);
    hash.addData(item);
    return hash.result();
}

QString prefixKey(const QByteArray &hash) {
    return QStringLiteral("prefix:") + QString::fromLatin1(hash.toHex());
}

QString conversationId(const QJsonObject &request) {
    const QJsonValue c = request.value(QStringLiteral("conversation"));
    if (c.isString())
        return c.toString();
    return c.toObject().value(QStringLiteral("id")).toString();
}

} // namespace

QString RunGrouper::clientSessionId(const QJsonObject &request, const QJsonObject &headers) {
    const QJsonObject metadata = request.value(QStringLiteral("metadata")).toObject();
    if (const QString s = metadata.value(QStringLiteral("session_id")).toString(); !s.isEmpty())
        return s;
    for (const char *header : {"x-claude-code-session-id", "session-id", "thread-id"})
        if (const QString s = headers.value(QLatin1String(header)).toString(); !s.isEmpty())
            return s;
    const QJsonObject turn =
        QJsonDocument::fromJson(
            headers.value(QStringLiteral("x-codex-turn-metadata")).toString().toUtf8())
            .object();
    if (const QString s = turn.value(QStringLiteral("session_id")).toString(); !s.isEmpty())
        return s;
    if (const QString s = request.value(QStringLiteral("prompt_cache_key")).toString();
        !s.isEmpty())
        return s;
    const QJsonObject user =
        QJsonDocument::fromJson(metadata.value(QStringLiteral("user_id")).toString().toUtf8())
            .object();
    return user.value(QStringLiteral("session_id")).toString();
}

QStringList RunGrouper::requestKeys(const QJsonObject &request, const QString &sessionId) {
    QStringList keys;
    const QString session = !sessionId.isEmpty() ? sessionId
                                                 : request.value(QStringLiteral("metadata"))
                                                       .toObject()
                                                       .value(QStringLiteral("session_id"))
                                                       .toString();
    if (!session.isEmpty())
        keys << QStringLiteral("session:") + session;
    if (const QString conv = conversationId(request); !conv.isEmpty())
        keys << QStringLiteral("conv:") + conv;
    return keys;
}

QStringList RunGrouper::lookupKeys(const QString &api, const QJsonObject &request,
                                   const QString &sessionId, ConversationChain *chain) {
    QStringList keys = requestKeys(request, sessionId);
    const QString previous = request.value(QStringLiteral("previous_response_id")).toString();
    if (!previous.isEmpty())
        keys.insert(keys.isEmpty() ? 0 : 1, QStringLiteral("resp:") + previous);
    const QJsonArray items = conversationOf(api, request);
    for (const QJsonValue &v : items) {
        const QJsonObject item = v.toObject();
        if (item.value(QStringLiteral("type")).toString() == QLatin1String("function_call_output"))
            keys << QStringLiteral("call:") + item.value(QStringLiteral("call_id")).toString();
        else if (item.value(QStringLiteral("role")).toString() == QLatin1String("tool"))
            keys << QStringLiteral("call:") + item.value(QStringLiteral("tool_call_id")).toString();
        for (const QJsonValue &b : item.value(QStringLiteral("content")).toArray())
            if (b.toObject().value(QStringLiteral("type")).toString() ==
                QLatin1String("tool_result"))
                keys << QStringLiteral("call:") +
                            b.toObject().value(QStringLiteral("tool_use_id")).toString();
    }
    // Longest earlier conversation first: the most recent flow this one continues. Only up
    // to the last reply: no prefix key ends after it.
    qsizetype end = items.size();
    while (end > 0 && !isReply(items.at(end - 1).toObject()))
        --end;
    QByteArray hash;
    QStringList prefixes;
    for (qsizetype i = 0; i < end; ++i) {
        const QJsonObject item = items.at(i).toObject();
        const QByteArray n = normalized(item);
        if (n.isEmpty())
            continue;
        hash = chainHash(hash, n);
        if (isReply(item))
            prefixes.prepend(prefixKey(hash));
    }
    keys << prefixes;
    if (chain)
        *chain = {hash, end};
    return keys;
}

QStringList RunGrouper::responseKeys(const QString &api, const QJsonObject &request,
                                     const QJsonObject &response) {
    return responseKeys(api, request, response, ConversationChain());
}

QStringList RunGrouper::responseKeys(const QString &api, const QJsonObject &request,
                                     const QJsonObject &response, const ConversationChain &chain) {
    QStringList keys;
    const QString id = response.value(QStringLiteral("id")).toString();
    if (!id.isEmpty() && api == QLatin1String("responses"))
        keys << QStringLiteral("resp:") + id;
    const QJsonArray reply = replyOf(api, response);
    for (const QJsonValue &v : reply) {
        const QJsonObject item = v.toObject();
        if (item.value(QStringLiteral("type")).toString() == QLatin1String("function_call"))
            keys << QStringLiteral("call:") + item.value(QStringLiteral("call_id")).toString();
        for (const QJsonValue &call : item.value(QStringLiteral("tool_calls")).toArray())
            keys << QStringLiteral("call:") +
                        call.toObject().value(QStringLiteral("id")).toString();
        for (const QJsonValue &b : item.value(QStringLiteral("content")).toArray())
            if (b.toObject().value(QStringLiteral("type")).toString() == QLatin1String("tool_use"))
                keys << QStringLiteral("call:") +
                            b.toObject().value(QStringLiteral("id")).toString();
    }
    if (reply.isEmpty())
        return keys;
    const QJsonArray items = conversationOf(api, request);
    QByteArray hash = chain.items <= items.size() ? chain.hash : QByteArray();
    for (qsizetype i = chain.items <= items.size() ? chain.items : 0; i < items.size(); ++i)
        if (const QByteArray n = normalized(items.at(i).toObject()); !n.isEmpty())
            hash = chainHash(hash, n);
    for (const QJsonValue &v : reply) {
        QJsonObject item = v.toObject();
        // Output messages carry no role in some shapes; what the client echoes back has one.
        if (item.value(QStringLiteral("type")).toString() == QLatin1String("message") &&
            !item.contains(QStringLiteral("role")))
            item.insert(QStringLiteral("role"), QStringLiteral("assistant"));
        if (const QByteArray n = normalized(item); !n.isEmpty())
            hash = chainHash(hash, n);
    }
    keys << prefixKey(hash);
    return keys;
}

int RunGrouper::toolCallCount(const QString &api, const QJsonObject &response) {
    const ConversationResponse decoded =
        decodeResponse(dialectOf(dialectOfApi(api), response), response);
    return int(std::count_if(decoded.items.cbegin(), decoded.items.cend(), [](const auto &item) {
        return item.kind == ConversationItem::Kind::ToolCall;
    }));
}

namespace {

constexpr int kRunNumberDigits = 16;

QString runIdOf(quint64 number) {
    return QStringLiteral("run_") +
           QString::number(number, 16).rightJustified(kRunNumberDigits, u'0');
}

// The number in a run id of newRunId()'s form, or nothing (then the id is kept as a string).
std::optional<quint64> runNumberOf(const QString &runId) {
    if (runId.size() != 4 + kRunNumberDigits || !runId.startsWith(QLatin1String("run_")))
        return std::nullopt;
    for (qsizetype i = 4; i < runId.size(); ++i) {
        const QChar c = runId.at(i);
        if (!((c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f')))
            return std::nullopt;
    }
    bool ok = false;
    const quint64 number = QStringView(runId).mid(4).toULongLong(&ok, 16);
    return ok ? std::optional<quint64>(number) : std::nullopt;
}

} // namespace

QString RunGrouper::newRunId() {
    return runIdOf(QRandomGenerator::global()->generate64());
}

QString RunGrouper::Generation::find(quint64 keyHash) const {
    if (const auto it = numbered.constFind(keyHash); it != numbered.constEnd())
        return runIdOf(it.value());
    if (const auto it = named.constFind(keyHash); it != named.constEnd())
        return it.value();
    return {};
}

void RunGrouper::Generation::insert(quint64 keyHash, const QString &runId) {
    // A key remembered again belongs to its newest run: only one of the two maps holds it.
    if (const std::optional<quint64> number = runNumberOf(runId)) {
        named.remove(keyHash);
        numbered.insert(keyHash, *number);
    } else {
        numbered.remove(keyHash);
        named.insert(keyHash, runId);
    }
}

RunGrouper::RunGrouper(int keysPerGeneration)
    : m_keysPerGeneration(qMax(1, keysPerGeneration))
    , m_seed(size_t(QRandomGenerator::system()->generate64())) {}

quint64 RunGrouper::hashOf(const QString &key) const {
    quint64 hash = qHash(key, m_seed);
    if constexpr (sizeof(size_t) < sizeof(quint64)) // 32-bit: two seeds for 64 bits
        hash = (hash << 32) | qHash(key, ~m_seed);
    return hash;
}

QString RunGrouper::find(const QStringList &keys) const {
    for (const QString &key : keys) {
        const quint64 hash = hashOf(key);
        if (QString run = m_newer.find(hash); !run.isEmpty())
            return run;
        if (QString run = m_older.find(hash); !run.isEmpty())
            return run;
    }
    return {};
}

void RunGrouper::remember(const QStringList &keys, const QString &runId) {
    for (const QString &key : keys) {
        if (m_newer.size() >= m_keysPerGeneration) {
            m_older = std::exchange(m_newer, {});
            m_newer.numbered.reserve(m_keysPerGeneration);
        }
        m_newer.insert(hashOf(key), runId);
    }
}

} // namespace loopscope
