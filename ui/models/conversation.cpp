#include "models/conversation.h"

#include "inspect/textformat.h"

#include "conversation/dialect.h"

#include <QJsonDocument>
#include <QMap>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace loopscope {

namespace {

using Entry = Conversation::Entry;
using Kind = Conversation::Kind;
using Format = Conversation::Format;
using Section = Conversation::Section;

const QString kCodeTool = u"litellm_code_execution"_s;

// A string that holds a JSON object or array is shown pretty-printed; anything else as text.
void setTextOrJson(Entry &e, const QJsonValue &value) {
    if (value.isObject() || value.isArray()) {
        e.text = textformat::prettyJson(value);
        e.format = Format::Json;
        return;
    }
    const QString s = value.isString() ? value.toString() : textformat::prettyJson(value);
    const QString t = s.trimmed();
    if (t.startsWith(u'{') || t.startsWith(u'[')) {
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(t.toUtf8(), &error);
        if (error.error == QJsonParseError::NoError && !doc.isNull()) {
            e.text = doc.isObject() ? textformat::prettyJson(doc.object())
                                    : textformat::prettyJson(doc.array());
            e.format = Format::Json;
            return;
        }
    }
    e.text = s;
    e.format = Format::Text;
}

using Item = ConversationItem;
using PartKind = ConversationItem::Part::Kind;

// Parts as the view reads them: text as is, the rest as a bracketed mark.
QString partsText(const QList<Item::Part> &parts) {
    QStringList out;
    for (const Item::Part &part : parts) {
        switch (part.kind) {
        case PartKind::Text:
            out << part.text;
            break;
        case PartKind::Refusal:
            out << u"[refusal] "_s + part.text;
            break;
        case PartKind::Image:
            out << u"[image]"_s;
            break;
        case PartKind::File:
            out << u"[file %1]"_s.arg(part.filename);
            break;
        case PartKind::Audio:
            out << u"[audio]"_s;
            break;
        case PartKind::Other:
            out << textformat::prettyJson(part.wire);
            break;
        }
    }
    return out.join(u'\n');
}

Entry message(Section section, const QString &role, const QString &text) {
    Entry e;
    e.section = section;
    e.kind = Kind::Message;
    e.role = role.isEmpty() ? u"user"_s : role;
    e.title = e.role;
    e.text = text;
    return e;
}

// A function call: the arguments decoded (a JSON string, or Messages' input object);
// litellm_code_execution's `code` as Python.
Entry functionCall(Section section, const QString &name, const QJsonValue &arguments,
                   const QString &callId) {
    Entry e;
    e.section = section;
    e.role = u"assistant"_s;
    e.callId = callId;
    QJsonObject args;
    bool parsed = false;
    if (arguments.isObject()) {
        args = arguments.toObject();
        parsed = true;
    } else {
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(arguments.toString().toUtf8(), &error);
        parsed = error.error == QJsonParseError::NoError && doc.isObject();
        args = doc.object();
    }
    const QString id = callId.isEmpty() ? QString() : u" ("_s + callId + u')';
    if (name == kCodeTool) {
        e.kind = Kind::CodeCall;
        e.title = u"code"_s + id;
        if (parsed && args.value(u"code"_s).isString()) {
            e.text = args.value(u"code"_s).toString();
            e.format = Format::Python;
            return e;
        }
    } else {
        e.kind = Kind::ToolCall;
        e.clientSide = true;
        e.title = u"function call %1"_s.arg(name) + id;
    }
    if (!parsed) {
        e.text = arguments.isString() ? arguments.toString() : textformat::prettyJson(arguments);
        e.format = Format::Text;
        e.note = u"arguments are not valid JSON"_s;
        return e;
    }
    e.text = textformat::prettyJson(args);
    e.format = Format::Json;
    return e;
}

// A tool the vendor runs itself (Messages server_tool_use): code or a command as source,
// anything else as its input.
Entry hostedCall(Section section, const Item &item) {
    Entry e;
    e.section = section;
    e.role = u"assistant"_s;
    e.callId = item.callId;
    e.title = item.name + (item.callId.isEmpty() ? QString() : u" ("_s + item.callId + u')');
    const QJsonObject input = item.arguments.toObject();
    if (input.value(u"code"_s).isString()) {
        e.kind = Kind::CodeCall;
        e.text = input.value(u"code"_s).toString();
        e.format = Format::Python;
    } else if (input.value(u"command"_s).isString() && input.size() == 1) {
        e.kind = Kind::CodeCall;
        e.text = input.value(u"command"_s).toString();
    } else {
        e.kind = Kind::ToolCall;
        setTextOrJson(e, item.arguments);
    }
    return e;
}

Entry toolOutput(Section section, const QString &callId, const QJsonValue &output) {
    Entry e;
    e.section = section;
    e.kind = Kind::ToolOutput;
    e.role = u"tool"_s;
    e.callId = callId;
    e.title = callId.isEmpty() ? u"tool output"_s : u"tool output (%1)"_s.arg(callId);
    if (output.isArray()) { // output parts (Responses) or content blocks (Messages)
        bool allParts = true;
        for (const QJsonValue &v : output.toArray())
            allParts = allParts && v.toObject().contains(u"type"_s);
        if (allParts) {
            e.text = partsText(Item::partsOf(output));
            return e;
        }
    }
    setTextOrJson(e, output);
    return e;
}

// code_interpreter_call: its code, then what it printed and showed. A Messages code execution
// result: what the command printed.
QList<Entry> codeRun(Section section, const Item &item) {
    const QString &id = item.callId;
    QList<Entry> out;
    Entry result;
    result.section = section;
    result.kind = Kind::ToolOutput;
    result.role = u"tool"_s;
    result.callId = id;
    if (item.wire.toObject().value(u"type"_s).toString() !=
        QLatin1String("code_interpreter_call")) {
        result.title =
            id.isEmpty() ? u"code execution result"_s : u"code execution result (%1)"_s.arg(id);
        result.text = item.stdoutText;
        if (!item.stderrText.isEmpty())
            result.text +=
                (result.text.isEmpty() ? QString() : u"\n"_s) + u"[stderr]\n"_s + item.stderrText;
        if (item.returnCode != 0)
            result.note = u"exit code %1"_s.arg(item.returnCode);
        else if (item.isError)
            result.note = u"error"_s;
        return {result};
    }
    Entry code;
    code.section = section;
    code.kind = Kind::CodeCall;
    code.role = u"assistant"_s;
    code.callId = id;
    code.title =
        id.isEmpty() ? u"code_interpreter_call"_s : u"code_interpreter_call (%1)"_s.arg(id);
    code.text = item.code;
    code.format = Format::Python;
    out << code;
    QStringList logs;
    for (const Item::Part &part : item.parts)
        logs << (part.kind == PartKind::Text    ? part.text
                 : part.kind == PartKind::Image ? u"[image]"_s
                                                : textformat::prettyJson(part.wire));
    if (!logs.isEmpty()) {
        result.title = u"code_interpreter_call outputs"_s;
        result.text = logs.join(u'\n');
        out << result;
    }
    return out;
}

Entry other(Section section, const QJsonValue &item) {
    Entry e;
    e.section = section;
    e.kind = Kind::Other;
    e.role = item.toObject().value(u"role"_s).toString();
    e.title = item.toObject().value(u"type"_s).toString(u"item"_s);
    e.text = textformat::prettyJson(item);
    e.format = item.isObject() || item.isArray() ? Format::Json : Format::Text;
    return e;
}

Entry errorEntry(Section section, const QString &text) {
    Entry e;
    e.section = section;
    e.kind = Kind::Error;
    e.role = u"error"_s;
    e.title = u"error"_s;
    e.text = text;
    return e;
}

// One item of the conversation model as the entries a person reads.
QList<Entry> entriesOf(Section section, const Item &item) {
    switch (item.kind) {
    case Item::Kind::Message: {
        Entry e = message(section, item.role, partsText(item.parts));
        return {e};
    }
    case Item::Kind::ToolCall:
        if (item.toolKind == ConversationItem::ToolKind::Hosted)
            return {hostedCall(section, item)};
        return {functionCall(section, item.name, item.arguments, item.callId)};
    case Item::Kind::ToolResult: {
        Entry e = toolOutput(section, item.callId, item.output);
        if (item.isError)
            e.note = u"error"_s;
        return {e};
    }
    case Item::Kind::CodeRun:
        return codeRun(section, item);
    case Item::Kind::Reasoning: {
        const QString summary = item.summary.join(u'\n');
        if (summary.isEmpty() && !item.redacted)
            return {};
        Entry e;
        e.section = section;
        e.kind = Kind::Reasoning;
        e.role = u"assistant"_s;
        e.title = u"reasoning"_s;
        e.text = item.redacted ? u"[redacted thinking]"_s : summary;
        return {e};
    }
    case Item::Kind::Opaque:
        break;
    }
    return {other(section, item.wire)};
}

QList<Entry> entriesOf(Section section, const QList<Item> &items) {
    QList<Entry> out;
    for (const Item &item : items)
        out << entriesOf(section, item);
    return out;
}

QList<Entry> sentEntries(const QJsonValue &bodyValue, Dialect dialect) {
    QList<Entry> out;
    if (!bodyValue.isObject()) {
        if (bodyValue.isString() && !bodyValue.toString().isEmpty())
            out << other(Section::Sent, bodyValue);
        return out;
    }
    const QJsonObject body = bodyValue.toObject();
    const Dialect d = dialectOf(dialect, body);
    const ConversationRequest request = decodeRequest(d, body);
    if (!request.instructions.isEmpty()) {
        Entry e;
        e.section = Section::Sent;
        e.kind = Kind::Instructions;
        e.role = d == Dialect::Messages ? u"system"_s : u"instructions"_s;
        e.title = e.role;
        e.text = request.instructions;
        out << e;
    }
    out << entriesOf(Section::Sent, request.items);
    return out;
}

// A reply or final body: its items by the dialect's codec, or an error.
QList<Entry> replyEntries(Section section, const QJsonValue &bodyValue, int status,
                          Dialect dialect) {
    QList<Entry> out;
    const QJsonObject body = bodyValue.toObject();
    const QString error = ConversationItem::errorMessageOf(body);
    if (!error.isEmpty()) {
        out << errorEntry(section, status > 0 ? u"HTTP %1: %2"_s.arg(status).arg(error) : error);
        return out;
    }
    if (!bodyValue.isObject()) {
        const QString text = bodyValue.isString() ? bodyValue.toString() : QString();
        if (status >= 400)
            out << errorEntry(section, text.isEmpty() ? u"HTTP %1"_s.arg(status)
                                                      : u"HTTP %1: %2"_s.arg(status).arg(text));
        else if (!text.isEmpty())
            out << other(section, bodyValue);
        return out;
    }
    const Dialect d = dialectOf(dialect, body);
    const bool known = body.value(u"choices"_s).isArray() || body.value(u"output"_s).isArray() ||
                       (d == Dialect::Messages && body.value(u"content"_s).isArray());
    if (known) {
        const ConversationResponse response = decodeResponse(d, body);
        out << entriesOf(section, response.items);
        if (d == Dialect::Responses && body.value(u"status"_s).toString() == u"incomplete"_s)
            out << errorEntry(section, u"incomplete: %1"_s.arg(response.stopDetail));
        else if (d == Dialect::Messages && response.stop == StopReason::Length)
            out << errorEntry(section, u"incomplete: %1"_s.arg(response.stopDetail));
    } else if (status >= 400) {
        out << errorEntry(section, u"HTTP %1: %2"_s.arg(status).arg(textformat::prettyJson(body)));
    } else if (!body.isEmpty()) {
        out << other(section, body);
    }
    return out;
}

// The response body of a hop: its JSON body, or its SSE events reassembled.
QJsonValue hopBody(const QJsonObject &hop, Dialect dialect) {
    const QJsonValue body = hop.value(u"body"_s);
    const QJsonArray events = hop.value(u"events"_s).toArray();
    if ((body.isNull() || body.isUndefined() || (body.isString() && !events.isEmpty())) &&
        !events.isEmpty()) {
        const QJsonObject assembled = responseFromEvents(dialect, events);
        if (!assembled.isEmpty())
            return assembled;
    }
    return body;
}

// A response hop's answer: its body or events, else its error, else its failed status.
QList<Entry> answerOf(Section section, const QJsonObject &hop, Dialect dialect) {
    const int status = hop.value(u"status"_s).toInt();
    QList<Entry> out = replyEntries(section, hopBody(hop, dialect), status, dialect);
    if (out.isEmpty() && hop.value(u"error"_s).isString())
        out << errorEntry(section, hop.value(u"error"_s).toString());
    if (out.isEmpty() && status >= 400)
        out << errorEntry(section, u"HTTP %1"_s.arg(status));
    return out;
}

int samePrefix(const QList<Entry> &a, const QList<Entry> &b) {
    int n = 0;
    while (n < a.size() && n < b.size() && a.at(n).sameContent(b.at(n)))
        ++n;
    return n;
}

} // namespace

bool Conversation::Entry::sameContent(const Entry &other) const {
    return kind == other.kind && role == other.role && title == other.title && text == other.text;
}

int Conversation::Iteration::newCount() const {
    return int(std::count_if(sent.cbegin(), sent.cend(), [](const Entry &e) { return e.isNew; }));
}

Conversation Conversation::fromFlow(const QJsonObject &flow) {
    Conversation c;
    c.m_flowId = flow.value(u"id"_s).toString();
    c.m_api = flow.value(u"api"_s).toString();
    const QJsonArray hops = flow.value(u"hops"_s).toArray();
    // Flows without a dialect's api (hand-made ones, "other") are read by the request's shape.
    QJsonObject clientBody;
    for (const QJsonValue &h : hops)
        if (h.toObject().value(u"kind"_s).toString() == QLatin1String("client_request"))
            clientBody = h.toObject().value(u"body"_s).toObject();
    const Dialect dialect = dialectOf(dialectOfApi(c.m_api), clientBody);

    // Iterations in hop order; code runs attach to their iteration (or the latest model call).
    QMap<int, int> byIteration; // iteration number → index in m_iterations
    auto iterationFor = [&](const QJsonObject &hop) -> Iteration & {
        int n = hop.value(u"iteration"_s).toInt(-1);
        if (n < 0)
            n = c.m_iterations.isEmpty() ? 0 : c.m_iterations.last().index;
        auto it = byIteration.constFind(n);
        if (it == byIteration.constEnd()) {
            Iteration iteration;
            iteration.index = n;
            c.m_iterations.append(iteration);
            it = byIteration.insert(n, int(c.m_iterations.size() - 1));
        }
        return c.m_iterations[it.value()];
    };
    for (const QJsonValue &v : hops) {
        const QJsonObject hop = v.toObject();
        const QString kind = hop.value(u"kind"_s).toString();
        if (kind == QLatin1String("upstream_request")) {
            iterationFor(hop).sent = sentEntries(hop.value(u"body"_s), dialect);
        } else if (kind == QLatin1String("upstream_response")) {
            Iteration &it = iterationFor(hop);
            it.status = hop.value(u"status"_s).toInt();
            it.latencyMs = hop.value(u"latency_ms"_s).toDouble();
            it.usage = hop.value(u"usage"_s).toObject();
            it.reply = answerOf(Section::Reply, hop, dialect);
        } else if (kind == QLatin1String("code_run")) {
            Iteration &it = iterationFor(hop);
            Entry e;
            e.section = Section::FedBack;
            e.kind = Kind::CodeRun;
            e.role = u"tool"_s;
            e.callId = hop.value(u"call_id"_s).toString();
            e.title =
                u"output fed back"_s + (e.callId.isEmpty() ? QString() : u" ("_s + e.callId + u')');
            const QJsonValue output = hop.value(u"output"_s);
            if (output.isNull() || output.isUndefined()) { // still running
                e.text = hop.value(u"stdout"_s).toString() + hop.value(u"stderr"_s).toString();
                e.note = u"running"_s;
            } else {
                setTextOrJson(e, output);
            }
            if (hop.value(u"timed_out"_s).toBool())
                e.note = u"timed out"_s;
            else if (hop.value(u"error"_s).isObject())
                e.note = hop.value(u"error"_s).toObject().value(u"name"_s).toString(u"error"_s);
            if (const QString d = hop.value(u"decision"_s).toString(); !d.isEmpty())
                e.note = e.note.isEmpty() ? d : e.note + u", "_s + d;
            it.fedBack << e;
        } else if (kind == QLatin1String("client_response")) {
            c.m_finalStatus = hop.value(u"status"_s).toInt();
            c.m_final = answerOf(Section::Final, hop, dialect);
        }
    }
    // What is new since the previous iteration: everything after the common prefix (a
    // client that rewrites history shows the rewritten tail as new).
    for (qsizetype i = 0; i < c.m_iterations.size(); ++i) {
        Iteration &it = c.m_iterations[i];
        const int keep = i == 0 ? 0 : samePrefix(c.m_iterations.at(i - 1).sent, it.sent);
        for (qsizetype k = 0; k < it.sent.size(); ++k)
            it.sent[k].isNew = k >= keep;
    }
    return c;
}

QList<Conversation::Entry> Conversation::requestEntries(const QJsonValue &body,
                                                        const QString &api) {
    return sentEntries(body, dialectOf(dialectOfApi(api), body.toObject()));
}

QList<Conversation::Entry> Conversation::answerEntries(const QJsonObject &hop, const QString &api,
                                                       const QJsonObject &requestBody) {
    if (hop.isEmpty())
        return {};
    const bool final = hop.value(u"kind"_s).toString() == QLatin1String("client_response");
    return answerOf(final ? Section::Final : Section::Reply, hop,
                    dialectOf(dialectOfApi(api), requestBody));
}

QString Conversation::sectionName(Section section) {
    switch (section) {
    case Section::Sent:
        return u"Sent to the model"_s;
    case Section::Reply:
        return u"Model reply"_s;
    case Section::FedBack:
        return u"Fed back"_s;
    case Section::Final:
        return u"Final answer"_s;
    }
    return {};
}

QString Conversation::entryText(const Entry &e) {
    QString head = u'[' + e.title + u']';
    if (e.clientSide)
        head += u" → client"_s;
    if (!e.note.isEmpty())
        head += u" (" + e.note + u')';
    return head + u'\n' + e.text;
}

QString Conversation::entriesText(const QList<Entry> &entries) {
    QString out;
    for (const Entry &e : entries)
        out += entryText(e) + u'\n';
    return out;
}

QString Conversation::iterationText(int index, bool allSent) const {
    if (index < 0 || index >= m_iterations.size())
        return {};
    const Iteration &it = m_iterations.at(index);
    QString out = u"== "_s + sectionName(Section::Sent) + u'\n';
    for (const Entry &e : it.sent)
        if (allSent || e.isNew)
            out += entryText(e) + u'\n';
    out += u"== "_s + sectionName(Section::Reply) + u'\n';
    for (const Entry &e : it.reply)
        out += entryText(e) + u'\n';
    if (!it.fedBack.isEmpty()) {
        out += u"== "_s + sectionName(Section::FedBack) + u'\n';
        for (const Entry &e : it.fedBack)
            out += entryText(e) + u'\n';
    }
    return out;
}

QString Conversation::finalText() const {
    QString out = u"== "_s + sectionName(Section::Final) + u'\n';
    for (const Entry &e : m_final)
        out += entryText(e) + u'\n';
    return out;
}

QString Conversation::text(bool allSent) const {
    QString out;
    for (int i = 0; i < m_iterations.size(); ++i)
        out += u"Iteration %1\n"_s.arg(i + 1) + iterationText(i, allSent);
    return out + finalText();
}

} // namespace loopscope
