#include "models/runconversation.h"

#include "inspect/textformat.h"
#include "record/flowquery.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace loopscope {

namespace {

using Entry = Conversation::Entry;
using Kind = Conversation::Kind;

// A block longer than this is collapsed like the conversation view collapses it.
constexpr int kLongLines = 40;
constexpr qsizetype kLongChars = 4000;
// A prompt up to this long is read at a glance (a title request's one-liner).
constexpr int kShortLines = 3;
constexpr qsizetype kShortChars = 300;

// The agent's name as its requests say it: Codex's `originator`, else the user-agent's
// product ("claude-cli/2.1.0 (external, cli)" → "claude-cli/2.1.0").
QString clientOf(const QJsonObject &clientRequest) {
    const QJsonObject headers = clientRequest.value(u"headers"_s).toObject();
    QString originator, agent;
    for (auto it = headers.begin(); it != headers.end(); ++it) {
        if (it.key().compare(u"originator"_s, Qt::CaseInsensitive) == 0)
            originator = it.value().toString();
        else if (it.key().compare(u"user-agent"_s, Qt::CaseInsensitive) == 0)
            agent = it.value().toString();
    }
    if (!originator.isEmpty())
        return originator;
    return agent.section(u' ', 0, 0);
}

// The request's tool list as one entry after the instructions (shown collapsed).
Entry toolsEntry(const QJsonArray &tools) {
    QStringList names;
    for (const QJsonValue &t : tools) {
        const QJsonObject o = t.toObject();
        QString name = o.value(u"name"_s).toString();
        if (name.isEmpty())
            name = o.value(u"function"_s).toObject().value(u"name"_s).toString();
        if (name.isEmpty())
            name = o.value(u"type"_s).toString();
        names << name;
    }
    Entry e;
    e.section = Conversation::Section::Sent;
    e.kind = Kind::Instructions;
    e.role = u"tools"_s;
    e.title = u"tools (%1): %2"_s.arg(tools.size()).arg(names.join(u", "_s));
    e.text = textformat::prettyJson(tools);
    e.format = Conversation::Format::Json;
    return e;
}

// How many leading items of `sent` are `prev`'s request followed by its reply. Reasoning the
// client does not send back (or resends differently) does not break the match.
int resentCount(const QList<Entry> &prevSent, const QList<Entry> &prevReply,
                const QList<Entry> &sent) {
    int i = 0;
    while (i < prevSent.size() && i < sent.size() && prevSent.at(i).sameContent(sent.at(i)))
        ++i;
    if (i < prevSent.size())
        return i;
    for (const Entry &r : prevReply) {
        if (i < sent.size() && r.sameContent(sent.at(i)))
            ++i;
        else if (r.kind != Kind::Reasoning && r.kind != Kind::Error)
            break;
    }
    return i;
}

// A tool call's gist: Claude Code's Bash `command`, Codex's exec_command `cmd`, a path, a
// pattern or a URL, first match wins.
// `all`: the label is everything the call says.
QString labelOf(const Entry &e, bool *all) {
    if (e.kind == Kind::CodeCall) {
        *all = !e.text.contains(u'\n');
        return e.text.section(u'\n', 0, 0);
    }
    if (e.kind != Kind::ToolCall || e.format != Conversation::Format::Json)
        return {};
    const QJsonObject args = QJsonDocument::fromJson(e.text.toUtf8()).object();
    *all = args.size() == 1;
    for (const QString &key :
         {u"command"_s, u"cmd"_s, u"file_path"_s, u"path"_s, u"pattern"_s, u"url"_s, u"query"_s}) {
        const QJsonValue v = args.value(key);
        if (v.isString()) {
            *all = *all && !v.toString().contains(u'\n');
            return v.toString().section(u'\n', 0, 0);
        }
        if (v.isArray()) {
            QStringList words;
            for (const QJsonValue &w : v.toArray())
                words << w.toString();
            return words.join(u' ');
        }
    }
    *all = false;
    return {};
}

bool isCall(const Entry &e) {
    return (e.kind == Kind::ToolCall || e.kind == Kind::CodeCall) && !e.callId.isEmpty();
}

bool isResult(const Entry &e) {
    return e.kind == Kind::ToolOutput && !e.callId.isEmpty();
}

QString usageText(const RunConversation::Tokens &t) {
    QString out = u"in %1 · out %2"_s.arg(t.input).arg(t.output);
    if (t.cacheRead > 0 || t.cacheWrite > 0)
        out += u" · cache read %1 · cache write %2"_s.arg(t.cacheRead).arg(t.cacheWrite);
    if (t.costKnown)
        out += u" · $"_s + QString::number(t.cost, 'f', 4);
    return out;
}

// Texts this long are interned (one copy however often a run repeats them); shorter ones cost
// less than their lookup.
constexpr qsizetype kInternChars = 256;

} // namespace

struct RunConversation::Decoded {
    QList<Entry> sent;
    QList<Entry> reply;
    QString client;
};

QString RunConversation::interned(const QString &text) {
    if (text.size() < kInternChars)
        return text;
    if (const auto it = m_texts.constFind(text); it != m_texts.constEnd())
        return *it;
    m_texts.insert(text);
    return text;
}

RunConversation::Decoded RunConversation::decode(const FlowExchange &flow) {
    Decoded d;
    const QString api = flow.summary.value(u"api"_s).toString();
    const QJsonValue body = flow.request.value(u"body"_s);
    d.client = clientOf(flow.request);
    if (body.isObject()) {
        d.sent = sentEntries(body.toObject(), api);
    } else { // not JSON: nothing for the next request to extend
        d.sent = Conversation::requestEntries(body, api);
        m_lastBody = {};
    }
    d.reply = Conversation::answerEntries(flow.answer, api, body.toObject());
    for (Entry &e : d.reply)
        e.text = interned(e.text);
    return d;
}

QList<Conversation::Entry> RunConversation::sentEntries(const QJsonObject &body,
                                                        const QString &api) {
    // An agent's request is the last one plus a few items: when everything but the history is
    // the same and the history starts with the last one's, only the new items are decoded
    // (decoding the whole history every turn made a long run quadratic).
    const QString history = body.contains(u"messages"_s) ? u"messages"_s : u"input"_s;
    const QJsonArray items = body.value(history).toArray();
    const QJsonArray lastItems = m_lastBody.value(history).toArray();
    const bool extendsLast = !m_recent.isEmpty() && api == m_lastApi && !lastItems.isEmpty() &&
                             items.size() >= lastItems.size() && [&] {
                                 for (qsizetype i = 0; i < lastItems.size(); ++i)
                                     if (items.at(i) != lastItems.at(i))
                                         return false;
                                 QJsonObject rest = body, lastRest = m_lastBody;
                                 rest.remove(history);
                                 lastRest.remove(history);
                                 return rest == lastRest;
                             }();
    QList<Entry> sent;
    if (extendsLast) {
        QJsonObject tail = body;
        QJsonArray added;
        for (qsizetype i = lastItems.size(); i < items.size(); ++i)
            added.append(items.at(i));
        tail.insert(history, added);
        sent = m_recent.constLast().sent;
        QList<Entry> more = Conversation::requestEntries(tail, api);
        qsizetype skip = 0; // the prompt, decoded with the tail, is the last turn's
        while (skip < more.size() && more.at(skip).kind == Kind::Instructions)
            ++skip;
        for (qsizetype i = skip; i < more.size(); ++i) {
            more[i].text = interned(more.at(i).text);
            sent.append(more.at(i));
        }
    } else {
        sent = Conversation::requestEntries(body, api);
        if (const QJsonArray tools = body.value(u"tools"_s).toArray(); !tools.isEmpty()) {
            if (tools != m_lastTools.first) // an agent's tool list is the same turn after turn
                m_lastTools = {tools, toolsEntry(tools)};
            qsizetype at = 0;
            while (at < sent.size() && sent.at(at).kind == Kind::Instructions)
                ++at;
            sent.insert(at, m_lastTools.second);
        }
        // Interned before matching: a resent prompt then compares by pointer, and the kept
        // turns share one copy of each long block.
        for (Entry &e : sent)
            e.text = interned(e.text);
    }
    m_lastBody = body;
    m_lastApi = api;
    return sent;
}

RunConversation::Step RunConversation::stepOf(const Entry &e) {
    Step s;
    s.entry = e;
    s.label = labelOf(e, &s.labelSaysAll);
    s.collapsed = collapsedByDefault(e);
    return s;
}

void RunConversation::Tokens::add(const Tokens &other) {
    input += other.input;
    output += other.output;
    cacheRead += other.cacheRead;
    cacheWrite += other.cacheWrite;
    cost += other.cost;
    costKnown = costKnown || other.costKnown;
}

bool RunConversation::collapsedByDefault(const Entry &e) {
    if (e.kind == Kind::Instructions && e.role == "tools"_L1)
        return true;
    const qsizetype lines = e.text.count(u'\n');
    if (e.kind == Kind::Instructions || e.role == "system"_L1 || e.role == "developer"_L1)
        return lines >= kShortLines || e.text.size() > kShortChars;
    return e.text.size() > kLongChars || lines >= kLongLines;
}

RunConversation RunConversation::fromFlows(QList<QJsonObject> flows) {
    std::stable_sort(flows.begin(), flows.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return a.value(u"started_at"_s).toDouble() < b.value(u"started_at"_s).toDouble();
    });
    RunConversation run;
    for (const QJsonObject &flow : std::as_const(flows))
        run.append(flow);
    return run;
}

void RunConversation::finish() {
    m_recent.clear();
    m_texts.clear(); // what the turns show stays shared among them
    m_lastTools = {};
    m_lastBody = {};
}

qsizetype RunConversation::appendRun(const FlowQuery &query, const QString &runId, qsizetype from,
                                     qsizetype limit) {
    return query.readRun(runId, from, limit, [this](FlowExchange &&flow) {
        append(flow);
        return true;
    });
}

void RunConversation::append(const QJsonObject &flow) {
    append(FlowExchange::fromFlow(flow));
}

void RunConversation::append(const FlowExchange &exchange) {
    Decoded d = decode(exchange);
    const QJsonObject &flow = exchange.summary;
    const int index = int(m_turns.size());
    Turn t;
    t.flowId = flow.value(u"id"_s).toString();
    t.model = flow.value(u"model"_s).toString();
    t.state = flow.value(u"state"_s).toString();
    t.status = flow.value(u"status"_s).toInt();
    t.startedAt = flow.value(u"started_at"_s).toDouble();
    t.durationMs = flow.value(u"duration_ms"_s).toDouble();
    const QJsonObject usage = flow.value(u"usage"_s).toObject();
    t.tokens.input = qint64(usage.value(u"input_tokens"_s).toDouble());
    t.tokens.output = qint64(usage.value(u"output_tokens"_s).toDouble());
    t.tokens.cacheRead = qint64(usage.value(u"cache_read_tokens"_s).toDouble());
    t.tokens.cacheWrite = qint64(usage.value(u"cache_write_tokens"_s).toDouble());
    t.tokens.costKnown = flow.value(u"cost_usd"_s).isDouble();
    t.tokens.cost = flow.value(u"cost_usd"_s).toDouble();
    t.failed = t.status >= 400 || t.state == "failed"_L1;

    // The earlier turn this one extends most (the latest on a tie), among the last few.
    int best = 0;
    for (int k = int(m_recent.size()) - 1; k >= 0; --k) {
        const int n = resentCount(m_recent.at(k).sent, m_recent.at(k).reply, d.sent);
        if (n > best) {
            best = n;
            t.extends = index - int(m_recent.size()) + k;
        }
    }
    t.resent = best;
    for (qsizetype i = best; i < d.sent.size(); ++i) {
        const Entry &e = d.sent.at(i);
        // A result whose call an earlier turn showed joins that call's step.
        if (isResult(e)) {
            if (auto it = m_calls.constFind(e.callId); it != m_calls.constEnd()) {
                Step &call = m_turns[it->first].reply[it->second];
                if (!call.hasResult) {
                    call.hasResult = true;
                    call.result = e;
                    call.resultTurn = index;
                    continue;
                }
            }
        }
        t.added << stepOf(e);
    }
    for (const Entry &e : std::as_const(d.reply)) {
        // A hosted tool's result in the same reply (server_tool_use + its result).
        if (isResult(e)) {
            auto it = m_calls.constFind(e.callId);
            if (it != m_calls.constEnd() && it->first == index && !t.reply[it->second].hasResult) {
                t.reply[it->second].hasResult = true;
                t.reply[it->second].result = e;
                t.reply[it->second].resultTurn = index;
                continue;
            }
        }
        if (isCall(e)) {
            m_calls.insert(e.callId, {index, int(t.reply.size())});
            ++m_totals.toolCalls;
        }
        t.reply << stepOf(e);
    }
    if (index == 0 || t.startedAt < m_first)
        m_first = t.startedAt;
    m_last = std::max(m_last, t.startedAt + t.durationMs);
    m_totals.tokens.add(t.tokens);
    m_totals.errors += t.failed ? 1 : 0;
    m_totals.turns = index + 1;
    m_totals.durationMs = std::max(0.0, m_last - m_first);
    // Only the last few requests are kept whole: a long run's are most of its size.
    m_recent.append({std::move(d.sent), std::move(d.reply)});
    if (m_recent.size() > kLookBack)
        m_recent.removeFirst();
    m_turns.append(t);
    if (index == 0)
        m_title = titleOf(m_turns.constFirst(), d.client);
}

QString RunConversation::titleOf(const Turn &first, const QString &client) {
    // What the user asked first (the last user message of the first turn: agents put their
    // environment and rules in user messages before it), who asked, which model.
    // Claude Code puts <system-reminder> blocks before the prompt in the same message.
    static const QRegularExpression reminder(u"<system-reminder>.*?</system-reminder>"_s,
                                             QRegularExpression::DotMatchesEverythingOption);
    QString ask;
    for (const Step &s : first.added) {
        if (s.entry.kind != Kind::Message || s.entry.role != "user"_L1)
            continue;
        const QString text = QString(s.entry.text).remove(reminder).simplified();
        if (!text.isEmpty())
            ask = text;
    }
    if (ask.size() > 60)
        ask = ask.left(59) + u'…';
    QStringList who;
    for (const QString &s : {client, first.model})
        if (!s.isEmpty())
            who << s;
    return ask.isEmpty() ? who.join(u" · "_s)
                         : (who.isEmpty() ? ask : ask + u" — "_s + who.join(u" · "_s));
}

QString RunConversation::stepText(const Step &s) {
    QString out = Conversation::entryText(s.entry);
    if (!s.entry.text.endsWith(u'\n'))
        out += u'\n';
    if (s.hasResult) {
        out += Conversation::entryText(s.result);
        if (!s.result.text.endsWith(u'\n'))
            out += u'\n';
    }
    return out;
}

QString RunConversation::turnText(int index) const {
    if (index < 0 || index >= m_turns.size())
        return {};
    const Turn &t = m_turns.at(index);
    QString out = u"model: %1 · status: %2 · %3\n"_s.arg(t.model)
                      .arg(t.failed ? u"failed (%1)"_s.arg(t.status) : QString::number(t.status))
                      .arg(usageText(t.tokens));
    out += u"== Added\n"_s;
    for (const Step &s : t.added)
        out += stepText(s);
    out += u"== Reply\n"_s;
    for (const Step &s : t.reply)
        out += stepText(s);
    return out;
}

QString RunConversation::text() const {
    QString out;
    for (int i = 0; i < m_turns.size(); ++i)
        out += u"Turn %1\n"_s.arg(i + 1) + turnText(i);
    return out;
}

} // namespace loopscope
