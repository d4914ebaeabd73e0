#include "loop/messagesloopbridge.h"

#include "common/anthropicerror.h"
#include "conversation/chatcompletionscodec.h"
#include "conversation/messagescodec.h"
#include "http/responsesink.h"
#include "interception/anthropiccodeexecution.h"
#include "interception/codeexecutiontool.h"
#include "interception/interceptionkeys.h"
#include "sandbox/sandboxregistry.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QRandomGenerator>

namespace loopscope {

namespace {

using ACE = AnthropicCodeExecution;

const QString kType = QStringLiteral("type");
const QString kContent = QStringLiteral("content");
const QString kRole = QStringLiteral("role");
const QString kId = QStringLiteral("id");
const QString kName = QStringLiteral("name");
const QString kInput = QStringLiteral("input");
const QString kToolUse = QStringLiteral("tool_use");

// Usage counts that add up over the upstream calls of one request.
const char *const kUsageCounts[] = {"input_tokens", "cache_creation_input_tokens",
                                    "cache_read_input_tokens", "output_tokens"};

QString compact(const QJsonObject &object) {
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QJsonObject zeroUsage() {
    QJsonObject usage;
    for (const char *key : kUsageCounts)
        usage.insert(QLatin1String(key), 0);
    return usage;
}

} // namespace

MessagesLoopBridge::MessagesLoopBridge(const QJsonObject &clientBody, ResponseSink *sink,
                                       bool stream, QObject *parent)
    : QObject(parent)
    , m_sink(sink)
    , m_stream(stream)
    , m_toolType(ACE::declaredToolType(clientBody.value(QStringLiteral("tools")).toArray()))
    , m_model(clientBody.value(QStringLiteral("model")).toString())
    , m_subTools(ACE::subToolNames(m_toolType))
    , m_usage(zeroUsage()) {
    m_messageId = mintId("msg_");
    m_ping.setInterval(kPingIntervalMs);
    connect(&m_ping, &QTimer::timeout, this, [this] {
        if (m_sink && m_sink->isStarted() && !m_sink->isFinished() && !m_sink->isClientGone())
            m_sink->writeChunk(MessagesCodec::event("ping", {}));
    });
}

QString MessagesLoopBridge::mintId(const char *prefix) {
    QByteArray nonce(16, Qt::Uninitialized);
    for (char &c : nonce)
        c = char(QRandomGenerator::system()->bounded(256));
    return QLatin1String(prefix) + QString::fromLatin1(nonce.toHex());
}

QString MessagesLoopBridge::requestedContainer(const QJsonObject &clientBody) {
    const QJsonValue container = clientBody.value(QStringLiteral("container"));
    if (container.isObject())
        return container.toObject().value(kId).toString();
    return container.toString();
}

QStringList MessagesLoopBridge::uploadedFileIds(const QJsonObject &clientBody) {
    const QJsonArray messages = clientBody.value(QStringLiteral("messages")).toArray();
    for (qsizetype i = messages.size() - 1; i >= 0; --i) {
        const QJsonObject message = messages.at(i).toObject();
        if (message.value(kRole).toString() != QLatin1String("user"))
            continue;
        QStringList ids;
        for (const QJsonValue &b : message.value(kContent).toArray()) {
            const QJsonObject block = b.toObject();
            const QString id = block.value(QStringLiteral("file_id")).toString();
            if (block.value(kType).toString() == QLatin1String("container_upload") &&
                !id.isEmpty() && !ids.contains(id))
                ids << id;
        }
        return ids;
    }
    return {};
}

QJsonObject MessagesLoopBridge::internalRequest(const QJsonObject &clientBody) {
    QJsonObject request = clientBody;
    QJsonArray tools;
    bool replaced = false;
    for (const QJsonValue &t : clientBody.value(QStringLiteral("tools")).toArray()) {
        if (ACE::isToolType(t.toObject().value(kType).toString())) {
            if (!replaced) // one hosted tool stands for every version declared
                tools.append(QJsonObject{{kType, QString(keys::kNativeCodeInterpreterType)}});
            replaced = true;
        } else {
            tools.append(t);
        }
    }
    request.insert(QStringLiteral("tools"), tools);
    request.remove(QStringLiteral("container"));
    return request;
}

QJsonArray MessagesLoopBridge::upstreamTools(const QJsonArray &tools) const {
    QJsonArray out;
    for (const QJsonValue &t : tools) {
        const QJsonObject tool = t.toObject();
        const bool internal =
            tool.value(kType).toString() == QLatin1String("function") &&
            tool.value(QStringLiteral("function")).toObject().value(kName).toString() ==
                keys::kCodeExecutionToolName;
        if (!internal) {
            out.append(tool);
            continue;
        }
        for (const QJsonValue &sub : ACE::clientTools(m_toolType))
            out.append(sub);
    }
    return out;
}

QJsonArray MessagesLoopBridge::upstreamMessages(const QJsonArray &messages) const {
    QJsonArray out;
    // Tool results go in one user message after the turn that called them.
    const auto addResult = [&out](const QJsonObject &result) {
        if (!out.isEmpty()) {
            QJsonObject last = out.last().toObject();
            QJsonArray blocks = last.value(kContent).toArray();
            if (last.value(kRole).toString() == QLatin1String("user") && !blocks.isEmpty() &&
                blocks.last().toObject().value(kType).toString() == QLatin1String("tool_result")) {
                blocks.append(result);
                last.insert(kContent, blocks);
                out[out.size() - 1] = last;
                return;
            }
        }
        out.append(QJsonObject{{kRole, QStringLiteral("user")}, {kContent, QJsonArray{result}}});
    };
    const auto toolResult = [](const QString &toolUseId, const QString &text) {
        return QJsonObject{{kType, QStringLiteral("tool_result")},
                           {QStringLiteral("tool_use_id"), toolUseId},
                           {kContent, text}};
    };
    for (const QJsonValue &v : messages) {
        const QJsonObject message = v.toObject();
        const QString role = message.value(kRole).toString();
        if (role == QLatin1String("tool")) { // a result of this loop's plan
            const QString id = message.value(QStringLiteral("tool_call_id")).toString();
            addResult(
                toolResult(id, m_resultsForModel.value(id, message.value(kContent).toString())));
            continue;
        }
        if (role == QLatin1String("assistant") && message.contains(QStringLiteral("tool_calls"))) {
            // This loop's own round: the model's turn exactly as it answered (thinking with its
            // signature, text, every tool_use with its id).
            const QString first = message.value(QStringLiteral("tool_calls"))
                                      .toArray()
                                      .first()
                                      .toObject()
                                      .value(kId)
                                      .toString();
            out.append(QJsonObject{{kRole, role}, {kContent, m_turns.value(first)}});
            continue;
        }
        const QJsonValue content = message.value(kContent);
        if (!content.isArray()) {
            out.append(message);
            continue;
        }
        // A client's replay of an earlier answer: its code execution blocks become the client
        // tool calls and results the upstream model knows; uploads are files, not content.
        QJsonArray part;
        const auto flushPart = [&] {
            if (part.isEmpty())
                return;
            QJsonObject m = message;
            m.insert(kContent, part);
            out.append(m);
            part = {};
        };
        for (const QJsonValue &b : content.toArray()) {
            const QJsonObject block = b.toObject();
            const QString type = block.value(kType).toString();
            if (type == QLatin1String("container_upload"))
                continue;
            if (type == QLatin1String("server_tool_use") &&
                m_subTools.contains(block.value(kName).toString())) {
                part.append(QJsonObject{{kType, kToolUse},
                                        {kId, ACE::toolUseIdOf(block.value(kId).toString())},
                                        {kName, block.value(kName)},
                                        {kInput, block.value(kInput)}});
            } else if (ACE::isResultBlockType(type)) {
                flushPart();
                addResult(toolResult(
                    ACE::toolUseIdOf(block.value(QStringLiteral("tool_use_id")).toString()),
                    ACE::modelText(block)));
            } else {
                part.append(block);
            }
        }
        flushPart();
    }
    return out;
}

QJsonObject MessagesLoopBridge::upstreamBody(const QJsonObject &loopBody) const {
    QJsonObject body = loopBody;
    body.remove(QStringLiteral("stream"));
    body.remove(QStringLiteral("stream_options"));
    body.insert(QStringLiteral("messages"),
                upstreamMessages(loopBody.value(QStringLiteral("messages")).toArray()));
    if (body.contains(QStringLiteral("tools")))
        body.insert(QStringLiteral("tools"),
                    upstreamTools(loopBody.value(QStringLiteral("tools")).toArray()));
    const QJsonObject choice = body.value(QStringLiteral("tool_choice")).toObject();
    if (CodeExecutionTool::targetsCodeInterpreter(choice) ||
        (choice.value(kType).toString() == QLatin1String("tool") &&
         choice.value(kName).toString() == ACE::kLegacy && !m_subTools.contains(ACE::kLegacy)))
        body.insert(QStringLiteral("tool_choice"), QJsonObject{{kType, QStringLiteral("any")}});
    return body;
}

QJsonObject MessagesLoopBridge::chatView(const QJsonObject &message) const {
    using Kind = ConversationItem::Kind;
    const ConversationResponse decoded = MessagesCodec::decodeResponse(message);
    // What the loop's hooks see of the answer: its text as one message, its client tool calls
    // (the sub-tools' as the code their program runs), the stop and usage; thinking stays in
    // the turn replayed to the upstream (m_turns), server-side calls with the upstream.
    ConversationResponse view;
    view.id = decoded.id;
    view.model = decoded.model;
    view.stop = decoded.stop;
    view.stopDetail = decoded.stopDetail;
    view.usage = decoded.usage;
    QStringList texts;
    QList<ConversationItem> calls;
    for (const ConversationItem &item : decoded.items) {
        if (item.kind == Kind::Message && !item.text().isEmpty())
            texts << item.text();
        if (item.kind != Kind::ToolCall || item.toolKind != ConversationItem::ToolKind::Function)
            continue;
        ConversationItem call;
        call.kind = Kind::ToolCall;
        call.callId = item.callId;
        call.name = item.name;
        call.arguments = item.arguments;
        if (m_subTools.contains(item.name)) {
            // The sub-tool's program as the code the plan runs; invalid input is arguments the
            // plan refuses to run (the client then gets invalid_tool_input).
            const ACE::Program program = ACE::programFor(item.name, item.arguments.toObject(),
                                                         ACE::keepsShellState(m_toolType));
            call.name = keys::kCodeExecutionToolName;
            call.arguments = program.valid ? compact({{QStringLiteral("code"), program.code}})
                                           : QStringLiteral("invalid input: ") + program.problem;
        }
        calls << call;
    }
    if (!texts.isEmpty()) {
        ConversationItem text;
        text.kind = Kind::Message;
        text.role = QStringLiteral("assistant");
        ConversationItem::Part part;
        part.text = texts.join(u'\n');
        part.wire = part.text; // one string: Chat's plain content
        text.parts << part;
        view.items << text;
    }
    view.items << calls;
    return ChatCompletionsCodec::encodeResponse(view);
}

QJsonObject MessagesLoopBridge::roundAnswered(const QJsonObject &message) {
    m_round = message;
    m_blocks = message.value(kContent).toArray();
    m_next = 0;
    const QJsonObject usage = message.value(QStringLiteral("usage")).toObject();
    for (const char *key : kUsageCounts) {
        const QLatin1String k(key);
        m_usage.insert(k, m_usage.value(k).toInteger() + usage.value(k).toInteger());
    }
    QString first;
    for (const QJsonValue &b : std::as_const(m_blocks)) {
        const QJsonObject block = b.toObject();
        const QString name = block.value(kName).toString();
        if (block.value(kType).toString() != kToolUse || !m_subTools.contains(name))
            continue;
        const QString id = block.value(kId).toString();
        Call call;
        call.name = name;
        call.input = block.value(kInput).toObject();
        call.valid = ACE::programFor(name, call.input).valid;
        m_calls.insert(id, call);
        if (first.isEmpty())
            first = id;
    }
    if (!first.isEmpty())
        m_turns.insert(first, m_blocks);
    return chatView(message);
}

void MessagesLoopBridge::append(const QJsonObject &block) {
    m_content.append(block);
}

bool MessagesLoopBridge::isCall(const QJsonObject &block) const {
    return block.value(kType).toString() == kToolUse &&
           m_calls.contains(block.value(kId).toString());
}

void MessagesLoopBridge::appendUntilCall() {
    for (; m_next < m_blocks.size() && !isCall(m_blocks.at(m_next).toObject()); ++m_next)
        append(m_blocks.at(m_next).toObject());
}

void MessagesLoopBridge::announce(const QString &callId) {
    auto it = m_calls.find(callId);
    if (it == m_calls.end() || it->announced)
        return;
    appendUntilCall();
    it->announced = true;
    append(ACE::serverToolUse(ACE::serverToolUseId(callId), it->name, it->input));
}

void MessagesLoopBridge::flush() {
    if (!m_stream || !m_started || !m_sink || m_sink->isClientGone())
        return;
    if (const QByteArray out = unstreamedBlocks(); !out.isEmpty())
        m_sink->writeChunk(out);
}

QByteArray MessagesLoopBridge::unstreamedBlocks() {
    QByteArray out;
    for (; m_streamed < m_content.size(); ++m_streamed)
        out += MessagesCodec::blockEvents(m_streamed, m_content.at(m_streamed).toObject());
    return out;
}

void MessagesLoopBridge::planStarted() {
    appendUntilCall();
    flush();
    if (m_stream)
        m_ping.start();
}

void MessagesLoopBridge::codeRunStarted(const QString &callId) {
    announce(callId);
    flush();
}

void MessagesLoopBridge::callExecuted(const QString &containerId, const QString &callId,
                                      const ToolCallRun &run) {
    auto it = m_calls.find(callId);
    if (it == m_calls.end() || it->result)
        return;
    if (!containerId.isEmpty())
        m_containerId = containerId;
    announce(callId);
    const QString serverId = ACE::serverToolUseId(callId);
    QJsonObject result;
    QString forModel;
    if (it->valid && !run.executed) { // denied at a breakpoint: the person's message
        result = ACE::errorBlock(serverId, it->name, QStringLiteral("unavailable"), run.fedBack);
        forModel = run.fedBack;
    } else {
        result =
            ACE::resultBlock(serverId, it->name, run.result, it->valid && run.executed, run.files);
        forModel = ACE::modelText(result);
        if (!it->valid)
            forModel += QStringLiteral(": ") + ACE::programFor(it->name, it->input).problem;
        // Notes for the model only (output cut at the cap, an image left out): the result
        // block the client sees keeps exactly what the program wrote.
        for (const QString &note : run.result.notes)
            forModel += u'\n' + note;
    }
    it->result = result;
    m_resultsForModel.insert(callId, forModel);
    append(result);
    for (; m_next < m_blocks.size(); ++m_next) // past this call
        if (m_blocks.at(m_next).toObject().value(kId).toString() == callId) {
            ++m_next;
            break;
        }
    appendUntilCall();
    flush();
}

void MessagesLoopBridge::planFinished() {
    m_ping.stop();
    // Calls the plan never reported (it stopped early) still get a block each.
    while (m_next < m_blocks.size()) {
        appendUntilCall();
        if (m_next >= m_blocks.size())
            break;
        const QString id = m_blocks.at(m_next).toObject().value(kId).toString();
        Call &call = m_calls[id];
        if (!call.result) {
            announce(id);
            call.result =
                ACE::errorBlock(ACE::serverToolUseId(id), call.name, QStringLiteral("unavailable"));
            append(*call.result);
        }
        ++m_next;
    }
    flush();
}

QJsonObject MessagesLoopBridge::finalMessage(bool pauseTurn) {
    // The last answer's blocks; at the loop's ceiling its unrun calls are left out and the turn
    // is paused, as Anthropic pauses a long server-tool turn.
    for (; m_next < m_blocks.size(); ++m_next)
        if (!isCall(m_blocks.at(m_next).toObject()))
            append(m_blocks.at(m_next).toObject());
    QJsonValue container = QJsonValue::Null;
    if (!m_containerId.isEmpty()) {
        const qint64 ttl = m_containerTtlMs > 0 ? m_containerTtlMs : SandboxRegistry::kIdleTtlMs;
        container =
            QJsonObject{{kId, m_containerId},
                        {QStringLiteral("expires_at"),
                         QDateTime::currentDateTimeUtc().addMSecs(ttl).toString(Qt::ISODateWithMs)},
                        {QStringLiteral("skills"), QJsonValue::Null}};
    }
    return {{kId, m_messageId},
            {kType, QStringLiteral("message")},
            {kRole, QStringLiteral("assistant")},
            {QStringLiteral("model"), m_model},
            {kContent, m_content},
            {QStringLiteral("container"), container},
            {QStringLiteral("stop_reason"), pauseTurn
                                                ? QJsonValue(QStringLiteral("pause_turn"))
                                                : m_round.value(QStringLiteral("stop_reason"))},
            {QStringLiteral("stop_sequence"),
             pauseTurn ? QJsonValue(QJsonValue::Null)
             : m_round.value(QStringLiteral("stop_sequence")).isString()
                 ? m_round.value(QStringLiteral("stop_sequence"))
                 : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("stop_details"), QJsonValue::Null},
            {QStringLiteral("usage"), m_usage}};
}

void MessagesLoopBridge::setContainer(const QString &containerId, qint64 ttlMs) {
    m_containerId = containerId;
    m_containerTtlMs = ttlMs;
}

QByteArray MessagesLoopBridge::streamStart() {
    m_started = true;
    const QJsonObject head{{kId, m_messageId},
                           {kType, QStringLiteral("message")},
                           {kRole, QStringLiteral("assistant")},
                           {QStringLiteral("model"), m_model},
                           {kContent, QJsonArray()},
                           {QStringLiteral("container"), QJsonValue::Null},
                           {QStringLiteral("stop_reason"), QJsonValue::Null},
                           {QStringLiteral("stop_sequence"), QJsonValue::Null},
                           {QStringLiteral("stop_details"), QJsonValue::Null},
                           {QStringLiteral("usage"), zeroUsage()}};
    return MessagesCodec::event("message_start", {{QStringLiteral("message"), head}});
}

QByteArray MessagesLoopBridge::streamEnd(const QJsonObject &message) {
    QByteArray out = unstreamedBlocks();
    // The usage counts are whole-message totals: the SDK overwrites its snapshot with them.
    out += MessagesCodec::event(
        "message_delta",
        {{QStringLiteral("delta"),
          QJsonObject{
              {QStringLiteral("stop_reason"), message.value(QStringLiteral("stop_reason"))},
              {QStringLiteral("stop_sequence"), message.value(QStringLiteral("stop_sequence"))},
              {QStringLiteral("stop_details"), QJsonValue::Null},
              {QStringLiteral("container"), message.value(QStringLiteral("container"))}}},
         {QStringLiteral("usage"), message.value(QStringLiteral("usage"))}});
    return out + MessagesCodec::event("message_stop", {});
}

QJsonObject MessagesLoopBridge::errorBody(const QJsonObject &openAiError, int status) {
    if (openAiError.value(kType).toString() == QLatin1String("error"))
        return openAiError; // already Anthropic's (an upstream's own error)
    const QString message = openAiError.value(QStringLiteral("error"))
                                .toObject()
                                .value(QStringLiteral("message"))
                                .toString(QStringLiteral("request failed"));
    return AnthropicError::object(status, message);
}

QByteArray MessagesLoopBridge::errorEvent(const QJsonObject &anthropicError) {
    return MessagesCodec::event("error", anthropicError);
}

} // namespace loopscope
