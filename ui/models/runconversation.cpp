#include "models/runconversation.h"

#include "models/textformat.h"

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
// How many earlier turns a turn is matched against: enough for a subagent's or a title
// request's flows in between, few enough that a 200-turn run decodes in a blink.
constexpr int kLookBack = 8;

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
int resentCount(const Decoded &prev, const QList<Entry> &sent) {
    int i = 0;
    while (i < prev.sent.size() && i < sent.size() && prev.sent.at(i).sameContent(sent.at(i)))
        ++i;
    if (i < prev.sent.size())
        return i;
    for (const Entry &r : prev.reply) {
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
    QList<Decoded> decoded;
    decoded.reserve(flows.size());
    QHash<QString, std::pair<int, int>> calls; // call id → (turn, reply step)
    double first = 0, last = 0;
    QString client, model;
    for (const QJsonObject &flow : std::as_const(flows)) {
        decoded.append(decode(flow));
        const Decoded &d = decoded.constLast();
        const int index = int(run.m_turns.size());
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

        // The earlier turn this one extends most (the latest on a tie).
        int best = 0;
        for (int k = index - 1; k >= 0 && k >= index - kLookBack; --k) {
            const int n = resentCount(decoded.at(k), d.sent);
            if (n > best) {
                best = n;
                t.extends = k;
            }
        }
        t.resent = best;
        for (qsizetype i = best; i < d.sent.size(); ++i) {
            const Entry &e = d.sent.at(i);
            // A result whose call an earlier turn showed joins that call's step.
            if (isResult(e)) {
                if (auto it = calls.constFind(e.callId); it != calls.constEnd()) {
                    Step &call = run.m_turns[it->first].reply[it->second];
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
        for (const Entry &e : d.reply) {
            // A hosted tool's result in the same reply (server_tool_use + its result).
            if (isResult(e)) {
                auto it = calls.constFind(e.callId);
                if (it != calls.constEnd() && it->first == index &&
                    !t.reply[it->second].hasResult) {
                    t.reply[it->second].hasResult = true;
                    t.reply[it->second].result = e;
                    t.reply[it->second].resultTurn = index;
                    continue;
                }
            }
            if (isCall(e)) {
                calls.insert(e.callId, {index, int(t.reply.size())});
                ++run.m_totals.toolCalls;
            }
            t.reply << stepOf(e);
        }
        if (index == 0 || t.startedAt < first)
            first = t.startedAt;
        last = std::max(last, t.startedAt + t.durationMs);
        run.m_totals.tokens.add(t.tokens);
        run.m_totals.errors += t.failed ? 1 : 0;
        if (client.isEmpty())
            client = d.client;
        if (model.isEmpty())
            model = t.model;
        run.m_turns.append(t);
    }
    run.m_totals.turns = int(run.m_turns.size());
    run.m_totals.durationMs = run.m_turns.isEmpty() ? 0 : std::max(0.0, last - first);

    // The title: what the user asked first (the last user message of the first turn: agents
    // put their environment and rules in user messages before it), who asked, which model.
    QString ask;
    if (!run.m_turns.isEmpty())
        for (const Step &s : run.m_turns.constFirst().added)
            if (s.entry.kind == Kind::Message && s.entry.role == "user"_L1 &&
                !s.entry.text.trimmed().isEmpty())
                ask = s.entry.text.simplified();
    if (ask.size() > 60)
        ask = ask.left(59) + u'…';
    QStringList who;
    for (const QString &s : {client, model})
        if (!s.isEmpty())
            who << s;
    run.m_title = ask.isEmpty() ? who.join(u" · "_s)
                                : (who.isEmpty() ? ask : ask + u" — "_s + who.join(u" · "_s));
    return run;
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
