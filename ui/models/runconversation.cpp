#include "models/runconversation.h"

#include "inspect/textformat.h"
#include "record/flowquery.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>

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

struct Decoded {
    QList<Entry> sent;
    QList<Entry> reply;
    QString client;
};

QJsonObject hopOf(const QJsonArray &hops, QLatin1String kind) {
    for (const QJsonValue &h : hops)
        if (h.toObject().value(u"kind"_s).toString() == kind)
            return h.toObject();
    return {};
}

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

Decoded decode(const QJsonObject &flow) {
    Decoded d;
    const Conversation c = Conversation::fromFlow(flow);
    const QJsonArray hops = flow.value(u"hops"_s).toArray();
    d.client = clientOf(hopOf(hops, "client_request"_L1));
    if (!c.iterations().isEmpty()) {
        d.sent = c.iterations().constFirst().sent;
        d.reply = c.finalAnswer().isEmpty() ? c.iterations().constLast().reply : c.finalAnswer();
    } else {
        d.reply = c.finalAnswer();
    }
    QJsonObject body = hopOf(hops, "upstream_request"_L1).value(u"body"_s).toObject();
    if (body.isEmpty())
        body = hopOf(hops, "client_request"_L1).value(u"body"_s).toObject();
    if (const QJsonArray tools = body.value(u"tools"_s).toArray(); !tools.isEmpty()) {
        qsizetype at = 0;
        while (at < d.sent.size() && d.sent.at(at).kind == Kind::Instructions)
            ++at;
        d.sent.insert(at, toolsEntry(tools));
    }
    return d;
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

RunConversation::Step stepOf(const Entry &e) {
    RunConversation::Step s;
    s.entry = e;
    s.label = labelOf(e, &s.labelSaysAll);
    s.collapsed = RunConversation::collapsedByDefault(e);
    return s;
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

} // namespace

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

QStringList RunConversation::flowIds(const FlowQuery &query, const QString &runId) {
    FlowFilter filter;
    filter.runId = runId;
    filter.limit = 1000;
    QStringList ids;
    QJsonObject page = query.list(filter);
    while (true) {
        const QJsonArray data = page.value(u"data"_s).toArray();
        for (const QJsonValue &s : data)
            ids.prepend(s.toObject().value(u"id"_s).toString()); // newest first → start order
        if (!page.value(u"has_more"_s).toBool() || data.isEmpty())
            break;
        filter.before = data.last().toObject().value(u"id"_s).toString();
        page = query.list(filter);
    }
    return ids;
}

void RunConversation::appendFlows(const FlowQuery &query, const QStringList &ids, qsizetype from,
                                  qsizetype to) {
    for (qsizetype i = qMax<qsizetype>(0, from); i < qMin(to, ids.size()); ++i)
        if (const auto flow = query.flow(ids.at(i)))
            append(*flow);
}

void RunConversation::append(const QJsonObject &flow) {
    Decoded d = decode(flow);
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
    QString ask;
    for (const Step &s : first.added)
        if (s.entry.kind == Kind::Message && s.entry.role == "user"_L1 &&
            !s.entry.text.trimmed().isEmpty())
            ask = s.entry.text.simplified();
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
