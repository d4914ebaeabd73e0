#include "models/conversation.h"

#include "models/textformat.h"

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

// Message content: a string, or parts (input_text/output_text/text/refusal, images, files).
QString contentText(const QJsonValue &content) {
    if (content.isString())
        return content.toString();
    if (!content.isArray())
        return textformat::prettyJson(content);
    QStringList parts;
    for (const QJsonValue &v : content.toArray()) {
        const QJsonObject part = v.toObject();
        const QString type = part.value(u"type"_s).toString();
        if (part.value(u"text"_s).isString())
            parts << part.value(u"text"_s).toString();
        else if (part.value(u"refusal"_s).isString())
            parts << u"[refusal] "_s + part.value(u"refusal"_s).toString();
        else if (type.contains(u"image"_s))
            parts << u"[image]"_s;
        else if (type.contains(u"file"_s))
            parts << u"[file %1]"_s.arg(part.value(u"filename"_s).toString());
        else if (type.contains(u"audio"_s))
            parts << u"[audio]"_s;
        else
            parts << textformat::prettyJson(part);
    }
    return parts.join(u'\n');
}

Entry message(Section section, const QString &role, const QJsonValue &content) {
    Entry e;
    e.section = section;
    e.kind = Kind::Message;
    e.role = role.isEmpty() ? u"user"_s : role;
    e.title = e.role;
    e.text = contentText(content);
    return e;
}

// A function call: the arguments string decoded; litellm_code_execution's `code` as Python.
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

Entry toolOutput(Section section, const QString &callId, const QJsonValue &output) {
    Entry e;
    e.section = section;
    e.kind = Kind::ToolOutput;
    e.role = u"tool"_s;
    e.callId = callId;
    e.title = callId.isEmpty() ? u"tool output"_s : u"tool output (%1)"_s.arg(callId);
    if (output.isArray()) { // Responses output parts
        bool allParts = true;
        for (const QJsonValue &v : output.toArray())
            allParts = allParts && v.toObject().contains(u"type"_s);
        if (allParts) {
            e.text = contentText(output);
            return e;
        }
    }
    setTextOrJson(e, output);
    return e;
}

QList<Entry> codeInterpreterCall(Section section, const QJsonObject &item) {
    const QString id = item.value(u"id"_s).toString();
    Entry code;
    code.section = section;
    code.kind = Kind::CodeCall;
    code.role = u"assistant"_s;
    code.callId = id;
    code.title =
        id.isEmpty() ? u"code_interpreter_call"_s : u"code_interpreter_call (%1)"_s.arg(id);
    code.text = item.value(u"code"_s).toString();
    code.format = Format::Python;
    QList<Entry> out{code};
    QStringList logs;
    for (const QJsonValue &v : item.value(u"outputs"_s).toArray()) {
        const QJsonObject o = v.toObject();
        if (o.value(u"type"_s).toString() == QLatin1String("logs"))
            logs << o.value(u"logs"_s).toString();
        else if (o.value(u"type"_s).toString() == QLatin1String("image"))
            logs << u"[image]"_s;
        else
            logs << textformat::prettyJson(o);
    }
    if (!logs.isEmpty()) {
        Entry out2;
        out2.section = section;
        out2.kind = Kind::ToolOutput;
        out2.role = u"tool"_s;
        out2.callId = id;
        out2.title = u"code_interpreter_call outputs"_s;
        out2.text = logs.join(u'\n');
        out.append(out2);
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

// One Responses item (input or output side).
QList<Entry> responsesItem(Section section, const QJsonValue &value) {
    const QJsonObject item = value.toObject();
    const QString type = item.value(u"type"_s).toString();
    if (value.isString())
        return {message(section, u"user"_s, value)};
    if (type == QLatin1String("message") || (type.isEmpty() && item.contains(u"role"_s)))
        return {message(section, item.value(u"role"_s).toString(), item.value(u"content"_s))};
    if (type == QLatin1String("function_call"))
        return {functionCall(section, item.value(u"name"_s).toString(), item.value(u"arguments"_s),
                             item.value(u"call_id"_s).toString())};
    if (type == QLatin1String("function_call_output"))
        return {toolOutput(section, item.value(u"call_id"_s).toString(), item.value(u"output"_s))};
    if (type == QLatin1String("code_interpreter_call"))
        return codeInterpreterCall(section, item);
    if (type == QLatin1String("reasoning")) {
        QStringList summary;
        for (const QJsonValue &s : item.value(u"summary"_s).toArray())
            summary << s.toObject().value(u"text"_s).toString();
        if (summary.isEmpty())
            return {};
        Entry e;
        e.section = section;
        e.kind = Kind::Reasoning;
        e.role = u"assistant"_s;
        e.title = u"reasoning"_s;
        e.text = summary.join(u'\n');
        return {e};
    }
    return {other(section, value)};
}

// One Chat message (request or reply side): content, then each tool call decoded.
QList<Entry> chatMessage(Section section, const QJsonObject &m) {
    const QString role = m.value(u"role"_s).toString();
    QList<Entry> out;
    if (role == QLatin1String("tool")) {
        out << toolOutput(section, m.value(u"tool_call_id"_s).toString(), m.value(u"content"_s));
        return out;
    }
    const QJsonValue content = m.value(u"content"_s);
    const QJsonArray calls = m.value(u"tool_calls"_s).toArray();
    if (!(content.isNull() || content.isUndefined()) &&
        !(calls.size() > 0 && content.isString() && content.toString().isEmpty()))
        out << message(section, role, content);
    for (const QJsonValue &c : calls) {
        const QJsonObject call = c.toObject();
        const QJsonObject fn = call.value(u"function"_s).toObject();
        out << functionCall(section, fn.value(u"name"_s).toString(), fn.value(u"arguments"_s),
                            call.value(u"id"_s).toString());
    }
    if (out.isEmpty() && m.value(u"refusal"_s).isString())
        out << message(section, role, QString(u"[refusal] "_s + m.value(u"refusal"_s).toString()));
    if (out.isEmpty()) // an empty assistant turn is still a turn
        out << message(section, role, QString());
    return out;
}

QList<Entry> sentEntries(const QJsonValue &bodyValue) {
    QList<Entry> out;
    if (!bodyValue.isObject()) {
        if (bodyValue.isString() && !bodyValue.toString().isEmpty())
            out << other(Section::Sent, bodyValue);
        return out;
    }
    const QJsonObject body = bodyValue.toObject();
    if (body.value(u"messages"_s).isArray()) {
        for (const QJsonValue &m : body.value(u"messages"_s).toArray())
            out << chatMessage(Section::Sent, m.toObject());
        return out;
    }
    if (const QString instructions = body.value(u"instructions"_s).toString();
        !instructions.isEmpty()) {
        Entry e;
        e.section = Section::Sent;
        e.kind = Kind::Instructions;
        e.role = u"instructions"_s;
        e.title = u"instructions"_s;
        e.text = instructions;
        out << e;
    }
    const QJsonValue input = body.value(u"input"_s);
    if (input.isString())
        out << message(Section::Sent, u"user"_s, input);
    for (const QJsonValue &item : input.toArray())
        out << responsesItem(Section::Sent, item);
    return out;
}

QString errorMessage(const QJsonValue &body) {
    const QJsonValue error = body.toObject().value(u"error"_s);
    if (error.isObject())
        return error.toObject().value(u"message"_s).toString(textformat::prettyJson(error));
    if (error.isString())
        return error.toString();
    return {};
}

// A reply or final body: Responses `output`, Chat `choices[0].message`, or an error.
QList<Entry> replyEntries(Section section, const QJsonValue &bodyValue, int status) {
    QList<Entry> out;
    const QJsonObject body = bodyValue.toObject();
    const QString error = errorMessage(bodyValue);
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
    if (body.value(u"choices"_s).isArray()) {
        const QJsonObject choice = body.value(u"choices"_s).toArray().first().toObject();
        QJsonObject m = choice.value(u"message"_s).toObject();
        if (!m.contains(u"role"_s))
            m.insert(u"role"_s, u"assistant"_s);
        out << chatMessage(section, m);
    } else if (body.value(u"output"_s).isArray()) {
        for (const QJsonValue &item : body.value(u"output"_s).toArray())
            out << responsesItem(section, item);
        if (body.value(u"status"_s).toString() == QLatin1String("incomplete")) {
            const QString reason =
                body.value(u"incomplete_details"_s).toObject().value(u"reason"_s).toString();
            out << errorEntry(section, u"incomplete: %1"_s.arg(reason));
        }
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
    bool chat = c.m_api == QLatin1String("chat_completions");
    if (c.m_api.isEmpty()) // hand-made flows: decide by the request's shape
        for (const QJsonValue &h : hops)
            if (h.toObject().value(u"kind"_s).toString() == QLatin1String("client_request"))
                chat = h.toObject().value(u"body"_s).toObject().contains(u"messages"_s);
    const Dialect dialect = chat ? Dialect::ChatCompletions : dialectOfApi(c.m_api);

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
            iterationFor(hop).sent = sentEntries(hop.value(u"body"_s));
        } else if (kind == QLatin1String("upstream_response")) {
            Iteration &it = iterationFor(hop);
            it.status = hop.value(u"status"_s).toInt();
            it.latencyMs = hop.value(u"latency_ms"_s).toDouble();
            it.usage = hop.value(u"usage"_s).toObject();
            it.reply = replyEntries(Section::Reply, hopBody(hop, dialect), it.status);
            if (it.reply.isEmpty() && hop.value(u"error"_s).isString())
                it.reply << errorEntry(Section::Reply, hop.value(u"error"_s).toString());
            if (it.reply.isEmpty() && it.status >= 400)
                it.reply << errorEntry(Section::Reply, u"HTTP %1"_s.arg(it.status));
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
            c.m_final = replyEntries(Section::Final, hopBody(hop, dialect), c.m_finalStatus);
            if (c.m_final.isEmpty() && c.m_finalStatus >= 400)
                c.m_final << errorEntry(Section::Final, u"HTTP %1"_s.arg(c.m_finalStatus));
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
