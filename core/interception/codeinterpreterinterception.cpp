#include "interception/codeinterpreterinterception.h"

#include "common/futurechain.h"
#include "common/randomid.h"
#include "interception/codeexecutiontool.h"
#include "interception/interceptionkeys.h"
#include "interception/providerresolver.h"
#include "sandbox/sandboxfilecode.h"
#include "sandbox/sandboxtoolregistry.h"

#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>
#include <QUrl>

namespace loopscope {

namespace {

const QString kToolCalls = QStringLiteral("tool_calls");
const QString kType = QStringLiteral("type");
const QString kName = QStringLiteral("name");
const QString kArguments = QStringLiteral("arguments");
const QString kCallId = QStringLiteral("call_id");
const QString kId = QStringLiteral("id");
const QString kFunction = QStringLiteral("function");
const QString kOutput = QStringLiteral("output");
const QString kTools = QStringLiteral("tools");
const QString kToolChoice = QStringLiteral("tool_choice");
const QString kMetadata = QStringLiteral("metadata");
const QString kSessionId = QStringLiteral("session_id");

// Python's str() of a JSON value, as far as tool-call arguments need it.
QString stringForm(const QJsonValue &value) {
    switch (value.type()) {
    case QJsonValue::String:
        return value.toString();
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: {
        const double d = value.toDouble();
        return QString::number(d, 'g', 17);
    }
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        break;
    }
    return QString();
}

QJsonValue stringOrNull(const QJsonValue &value) {
    return value.isString() ? value : QJsonValue(QJsonValue::Null);
}

// Gate payload tool calls → {id, call_id, type, name, arguments(string)} (§2.8 step 2).
QJsonArray normalizeToolCalls(const QJsonObject &gatePayload) {
    QJsonArray out;
    const QJsonValue calls = gatePayload.value(kToolCalls);
    if (!calls.isArray())
        return out;
    for (const QJsonValue &item : calls.toArray()) {
        if (!item.isObject())
            continue;
        const QJsonObject call = item.toObject();
        out.append(QJsonObject{
            {kId, stringOrNull(call.value(kId))},
            {kCallId, stringOrNull(call.value(kCallId))},
            {kType, kFunction},
            {kName, QString(keys::kCodeExecutionToolName)},
            {kArguments, stringForm(call.value(kArguments))},
        });
    }
    return out;
}

// Terminal colour and cursor sequences (IPython colours its tracebacks): noise to a model.
QString withoutAnsi(QString text) {
    static const QRegularExpression ansi(QStringLiteral("\x1b\\[[0-9;?]*[ -/]*[@-~]"));
    return text.remove(ansi);
}

// A traceback for the model: its end matters most (the failing line and the exception), so a
// long one keeps the end.
QString tracebackForModel(const QString &traceback, int maxChars) {
    QString text = withoutAnsi(traceback);
    if (text.size() <= maxChars)
        return text;
    qsizetype keep = maxChars;
    if (text.at(text.size() - keep).isLowSurrogate())
        --keep;
    return QStringLiteral("[... %1 characters of the traceback omitted ...]\n")
               .arg(text.size() - keep) +
           text.right(keep);
}

QString onNewLine(const QString &text) {
    return text.isEmpty() || text.endsWith(u'\n') ? text : text + u'\n';
}

// Notes for the model start on a line of their own.
QString withNotes(const QString &output, const QString &notes) {
    return notes.isEmpty() ? output : onNewLine(output) + notes;
}

bool isToolCallItem(const QString &type) {
    // Calls the loop answers become code_interpreter_call items; any other call would be left
    // unanswered (an input error upstream); a hosted code_interpreter_call never ran here.
    return type == QLatin1String("function_call") || type == QLatin1String("custom_tool_call") ||
           type == QLatin1String("code_interpreter_call");
}

// The model's turn for the next request, as received: its reasoning (encrypted_content, id,
// summary), its messages and each intercepted call with the arguments that ran (edited at a
// breakpoint or not); calls the loop does not answer are left out. A call missing from the
// response (an edited answer) is added LiteLLM's way so every result has its call.
QJsonArray replayedTurn(const QJsonObject &response, const QJsonArray &toolCalls) {
    QHash<QString, QJsonValue> ranArguments;
    for (const QJsonValue &value : toolCalls) {
        const QJsonObject call = value.toObject();
        ranArguments.insert(call.value(kCallId).toString(), call.value(kArguments));
    }
    QJsonArray turn;
    QSet<QString> replayed;
    for (const QJsonValue &value : response.value(kOutput).toArray()) {
        QJsonObject item = value.toObject();
        const QString type = item.value(kType).toString();
        if (type == QLatin1String("function_call") &&
            item.value(kName).toString() == keys::kCodeExecutionToolName) {
            const QString callId = item.value(kCallId).toString();
            if (!ranArguments.contains(callId))
                continue;
            item.insert(kArguments, ranArguments.value(callId));
            replayed.insert(callId);
        } else if (isToolCallItem(type)) {
            continue;
        }
        turn.append(item);
    }
    for (const QJsonValue &value : toolCalls) {
        const QJsonObject call = value.toObject();
        if (replayed.contains(call.value(kCallId).toString()))
            continue;
        turn.append(QJsonObject{{kType, QStringLiteral("function_call")},
                                {kCallId, call.value(kCallId)},
                                {kName, QString(keys::kCodeExecutionToolName)},
                                {kArguments, call.value(kArguments)}});
    }
    return turn;
}

// Plan kwargs: the request's litellm params minus what must not travel into a follow-up.
QJsonObject followUpPlanKwargs(const QJsonObject &kwargs) {
    QJsonObject out;
    const QList<QLatin1String> foreign = keys::nonCodeInterpreterInternalPrefixes();
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
        const QString &key = it.key();
        if (key == QLatin1String("litellm_logging_obj") || key == QLatin1String("acompletion"))
            continue;
        if (keys::isInterceptionInternalKey(key, foreign))
            continue;
        out.insert(key, it.value());
    }
    return out;
}

} // namespace

// ------------------------------------------------------------------------------------------
// construction

CodeInterpreterInterception::CodeInterpreterInterception(InterceptionSettings settings,
                                                         SandboxRegistry *registry,
                                                         SandboxBackend *injectedBackend,
                                                         QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_registry(registry)
    , m_injectedBackend(injectedBackend) {}

CodeInterpreterInterception::CodeInterpreterInterception(InterceptionSettings settings,
                                                         SandboxRegistry *registry,
                                                         const SandboxToolRegistry *tools,
                                                         BackendsByProvider backends,
                                                         QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_registry(registry)
    , m_tools(tools)
    , m_backends(std::move(backends)) {}

CodeInterpreterInterception::~CodeInterpreterInterception() = default;

QString CodeInterpreterInterception::noSandboxAvailableError() {
    return QStringLiteral("CodeInterpreterInterception: no sandbox available. Provide a "
                          "sandbox_config or configure a sandbox tool resolvable via "
                          "sandbox_tool_name.");
}

QString CodeInterpreterInterception::noSandboxToRunCodeError() {
    return QStringLiteral("CodeInterpreterInterception: no sandbox available to run code.");
}

// ------------------------------------------------------------------------------------------
// pre-call

bool CodeInterpreterInterception::isInterceptedCallType(CallType callType) {
    switch (callType) {
    case CallType::Completion:
    case CallType::ACompletion:
    case CallType::Responses:
    case CallType::AResponses:
        return true;
    default:
        return false;
    }
}

bool CodeInterpreterInterception::isChatCallType(CallType callType) {
    return callType == CallType::Completion || callType == CallType::ACompletion;
}

QString CodeInterpreterInterception::mintSandboxKey() {
    return randomHex128();
}

QString CodeInterpreterInterception::newCodeInterpreterCallId() {
    return QStringLiteral("ci_") + randomHex128();
}

std::optional<QString> CodeInterpreterInterception::sessionIdOf(const QJsonObject &kwargs) {
    for (const QLatin1String container : {QLatin1String("metadata"), keys::kLitellmMetadata}) {
        const QJsonValue session = kwargs.value(container).toObject().value(kSessionId);
        if (session.isString() && !session.toString().isEmpty())
            return session.toString();
    }
    return std::nullopt;
}

std::optional<QString>
CodeInterpreterInterception::resolveProvider(const QJsonObject &kwargs) const {
    return ProviderResolver::resolve(kwargs);
}

void CodeInterpreterInterception::scrubUntrustedState(QJsonObject &kwargs) {
    // Root: LiteLLM pops only the active marker and the sandbox key; we drop every
    // code-interpreter key so a forged session flag or stream stash cannot survive either
    // (none of them can legitimately exist before this hook has run).
    const QStringList rootKeys = kwargs.keys();
    for (const QString &key : rootKeys) {
        if (key.startsWith(keys::kCodeInterpreterPrefix))
            kwargs.remove(key);
    }
    const QJsonValue metadata = kwargs.value(keys::kLitellmMetadata);
    if (!metadata.isObject())
        return;
    QJsonObject kept;
    const QJsonObject original = metadata.toObject();
    for (auto it = original.begin(); it != original.end(); ++it) {
        const QString &key = it.key();
        if (keys::isInterceptionInternalKey(key) || keys::isAgenticLoopControlKey(key) ||
            key == keys::kSessionScoped)
            continue;
        kept.insert(key, it.value());
    }
    if (kept.isEmpty())
        kwargs.remove(keys::kLitellmMetadata);
    else
        kwargs.insert(keys::kLitellmMetadata, kept);
}

bool CodeInterpreterInterception::preCallDeploymentHook(QJsonObject &kwargs, CallType callType) {
    // 1. Initial requests are client-originated: nothing interception-related is trusted.
    if (!keys::isTruthy(kwargs.value(keys::kAgenticLoopDepth)))
        scrubUntrustedState(kwargs);
    // 2-4. enabled, call type, provider scope.
    if (!m_settings.enabled || !isInterceptedCallType(callType))
        return false;
    if (m_settings.enabledProviders) {
        const std::optional<QString> provider = resolveProvider(kwargs);
        if (!provider || !m_settings.enabledProviders->contains(*provider))
            return false;
    }
    // 5. Only requests declaring the hosted tool are converted.
    if (!CodeExecutionTool::hasNativeCodeInterpreterTool(kwargs.value(kTools)))
        return false;
    // 6. Server marker.
    kwargs.insert(keys::kActive, true);
    // 7. Sandbox key: sticky session key, else a server-minted nonce. Never the client's.
    if (const std::optional<QString> session = sessionIdOf(kwargs)) {
        const QJsonValue hash = kwargs.value(QLatin1String("user_api_key_hash"));
        const QString identity = hash.isString() ? hash.toString() : QString();
        kwargs.insert(keys::kSandboxKey,
                      identity.isEmpty() ? *session : identity + QLatin1Char(':') + *session);
        kwargs.insert(keys::kSessionScoped, true);
    } else {
        kwargs.insert(keys::kSandboxKey, mintSandboxKey());
        kwargs.remove(keys::kSessionScoped);
    }
    // 8. The loop needs a non-streaming upstream call; stream_options would be rejected there.
    if (keys::isTruthy(kwargs.value(QLatin1String("stream"))))
        kwargs = keys::asConvertedStream(kwargs, keys::kCodeInterpreterPrefix);
    // 9. Mirror the markers into litellm_metadata.
    QJsonObject metadata = kwargs.value(keys::kLitellmMetadata).toObject();
    for (const QLatin1String key :
         {keys::kActive, keys::kSandboxKey, keys::kSessionScoped, keys::kConvertedStream}) {
        if (kwargs.contains(key))
            metadata.insert(key, kwargs.value(key));
    }
    kwargs.insert(keys::kLitellmMetadata, metadata);
    // 10-11. Tool swap and forced tool_choice rewrite, in the call type's shape.
    const ToolShape shape = isChatCallType(callType) ? ToolShape::Chat : ToolShape::Responses;
    kwargs.insert(kTools,
                  CodeExecutionTool::replaceNativeTools(kwargs.value(kTools).toArray(), shape));
    if (kwargs.contains(kToolChoice))
        kwargs.insert(kToolChoice,
                      CodeExecutionTool::rewriteToolChoice(kwargs.value(kToolChoice), shape));
    return true;
}

// ------------------------------------------------------------------------------------------
// gate

QJsonArray CodeInterpreterInterception::extractCodeExecutionToolCalls(const QJsonObject &response) {
    QJsonArray out;
    const QJsonValue output = response.value(kOutput);
    if (!output.isArray())
        return out;
    for (const QJsonValue &value : output.toArray()) {
        const QJsonObject item = value.toObject();
        if (item.value(kType).toString() != QLatin1String("function_call") ||
            item.value(kName).toString() != keys::kCodeExecutionToolName)
            continue;
        const QJsonValue arguments = item.value(kArguments);
        out.append(QJsonObject{
            {kCallId, item.value(kCallId).isUndefined() ? QJsonValue() : item.value(kCallId)},
            {kName, QString(keys::kCodeExecutionToolName)},
            {kArguments, arguments.isUndefined() ? QJsonValue() : arguments},
        });
    }
    return out;
}

QJsonArray
CodeInterpreterInterception::extractChatCodeExecutionToolCalls(const QJsonObject &response) {
    QJsonArray out;
    const QJsonArray choices = response.value(QLatin1String("choices")).toArray();
    if (choices.isEmpty())
        return out;
    const QJsonObject message =
        choices.first().toObject().value(QLatin1String("message")).toObject();
    for (const QJsonValue &value : message.value(kToolCalls).toArray()) {
        const QJsonObject call = value.toObject();
        const QJsonObject function = call.value(kFunction).toObject();
        if (call.value(kType).toString() != kFunction ||
            function.value(kName).toString() != keys::kCodeExecutionToolName)
            continue;
        const QJsonValue id = call.value(kId).isUndefined() ? QJsonValue() : call.value(kId);
        out.append(QJsonObject{
            {kId, id},
            {kCallId, id},
            {kType, kFunction},
            {kName, QString(keys::kCodeExecutionToolName)},
            {kArguments, stringForm(function.value(kArguments))},
        });
    }
    return out;
}

GateDecision CodeInterpreterInterception::shouldRunAgenticLoop(const QJsonObject &response,
                                                               const QString &customLlmProvider,
                                                               const QJsonObject &kwargs) const {
    if (!m_settings.enabled)
        return {};
    // A forged litellm_code_execution call without the server marker never runs code.
    if (!keys::isTruthy(kwargs.value(keys::kActive)))
        return {};
    if (m_settings.enabledProviders && !m_settings.enabledProviders->contains(customLlmProvider))
        return {};
    const bool chat =
        kwargs.value(keys::kAgenticLoopApiSurface).toString() == keys::kChatCompletionsSurface;
    const QJsonArray calls = chat ? extractChatCodeExecutionToolCalls(response)
                                  : extractCodeExecutionToolCalls(response);
    if (calls.isEmpty())
        return {};
    return GateDecision{true, QJsonObject{{kToolCalls, calls}}};
}

// ------------------------------------------------------------------------------------------
// pure helpers

ParsedCodeArguments CodeInterpreterInterception::parseCodeArguments(const QString &arguments) {
    if (arguments.isEmpty())
        return {true, QString()};
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(arguments.toUtf8(), &error);
    // LiteLLM aborts the whole plan on JSON that is not an object (null, [1], "x"); we refuse
    // it like unparsable text so the model sees the error and nothing runs.
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return {};
    const QJsonValue code = doc.object().value(QLatin1String("code"));
    if (code.isUndefined())
        return {true, QString()};
    if (!code.isString())
        return {};
    return {true, code.toString()};
}

QString CodeInterpreterInterception::toolOutputFor(const ExecutionResult &result) {
    if (!result.error)
        return result.stdoutText;
    // What the program printed before it failed is often what explains the failure.
    QString message = result.error->value;
    if (message.isEmpty())
        message = result.error->name;
    QString out = onNewLine(result.stdoutText) + keys::kExecutionErrorPrefix + message;
    const QString traceback = tracebackForModel(result.error->traceback, kMaxTracebackChars);
    if (!traceback.isEmpty())
        out += u'\n' + traceback;
    return out;
}

QString CodeInterpreterInterception::clientLogsFor(const ExecutionResult &result) {
    if (!result.error)
        return result.stdoutText;
    QString traceback = withoutAnsi(result.error->traceback);
    if (traceback.isEmpty()) {
        traceback = result.error->value.isEmpty()
                        ? result.error->name
                        : result.error->name + QStringLiteral(": ") + result.error->value;
        traceback += u'\n';
    }
    return onNewLine(result.stdoutText) + traceback;
}

QJsonArray CodeInterpreterInterception::clientTurnItems(const QJsonObject &response) {
    QJsonArray items;
    for (const QJsonValue &value : response.value(kOutput).toArray()) {
        QJsonObject item = value.toObject();
        const QString type = item.value(kType).toString();
        if (isToolCallItem(type))
            continue;
        if (item.value(kId).toString().isEmpty()) {
            const QString prefix = type == QLatin1String("message")     ? QStringLiteral("msg_")
                                   : type == QLatin1String("reasoning") ? QStringLiteral("rs_")
                                                                        : QStringLiteral("item_");
            item.insert(kId, QString(prefix + randomHex128()));
        }
        items.append(item);
    }
    return items;
}

bool CodeInterpreterInterception::keepsStateUpstream(const QJsonObject &optionalParams) {
    const QJsonValue previous = optionalParams.value(QLatin1String("previous_response_id"));
    const QJsonValue conversation = optionalParams.value(QLatin1String("conversation"));
    return (previous.isString() && !previous.toString().isEmpty()) ||
           (!conversation.isNull() && !conversation.isUndefined()) ||
           keys::isTruthy(optionalParams.value(QLatin1String("store")));
}

QString CodeInterpreterInterception::capForModel(const QString &text, int maxChars) {
    if (maxChars <= 0 || text.size() <= maxChars)
        return text;
    // Head and tail both matter: what the code printed first, and how it ended (the last
    // lines, a final result). Cut on whole code points.
    qsizetype head = maxChars / 2;
    qsizetype tail = maxChars - head;
    if (head > 0 && text.at(head - 1).isHighSurrogate())
        --head;
    if (tail > 0 && text.at(text.size() - tail).isLowSurrogate())
        --tail;
    const qsizetype omitted = text.size() - head - tail;
    return text.left(head) +
           QStringLiteral("\n[... %1 characters omitted: this output is %2 characters, more than "
                          "the %3 fed back to the model (sandbox.max_output_chars); the start and "
                          "the end are kept ...]\n")
               .arg(omitted)
               .arg(text.size())
               .arg(maxChars) +
           text.right(tail);
}

QJsonObject CodeInterpreterInterception::codeInterpreterCallRecord(const QString &code,
                                                                   const QJsonValue &containerId,
                                                                   const QString &logs) {
    QJsonArray outputs;
    if (!logs.isEmpty())
        outputs.append(
            QJsonObject{{kType, QStringLiteral("logs")}, {QStringLiteral("logs"), logs}});
    return QJsonObject{
        {kId, newCodeInterpreterCallId()},
        {kType, QStringLiteral("code_interpreter_call")},
        {QStringLiteral("status"), QStringLiteral("completed")},
        {QStringLiteral("code"), code},
        {QStringLiteral("container_id"), containerId},
        {QStringLiteral("outputs"), outputs},
    };
}

void CodeInterpreterInterception::appendImageOutputs(QJsonObject &record,
                                                     const QList<SandboxImage> &images) {
    if (images.isEmpty())
        return;
    QJsonArray outputs = record.value(QStringLiteral("outputs")).toArray();
    for (const SandboxImage &image : images) {
        const QString url = QStringLiteral("data:%1;base64,").arg(image.mimeType) +
                            QString::fromLatin1(image.data.toBase64());
        outputs.append(QJsonObject{{kType, QStringLiteral("image")}, {QStringLiteral("url"), url}});
    }
    record.insert(QStringLiteral("outputs"), outputs);
}

QString CodeInterpreterInterception::mediaNotes(const ExecutionResult &result,
                                                const QList<ContainerFile> &files) {
    QString notes;
    for (const QString &note : result.notes)
        notes += note + u'\n';
    for (const SandboxImage &image : result.images)
        notes += QStringLiteral("[image %1 (%2, %3 bytes) was produced and shown to the user]\n")
                     .arg(image.name, image.mimeType)
                     .arg(image.data.size());
    for (const ContainerFile &file : files)
        notes += QStringLiteral("[file %1 (%2 bytes) saved; link it as sandbox:%1]\n")
                     .arg(file.path)
                     .arg(file.bytes);
    return notes;
}

QJsonObject CodeInterpreterInterception::annotateFileCitations(const QJsonObject &response,
                                                               const QString &containerId,
                                                               const ContainerFileStore &store) {
    static const QRegularExpression link(QStringLiteral("sandbox:(/mnt/data/[^\\s)\\]\"'<>]+)"));
    QJsonArray output = response.value(kOutput).toArray();
    bool changed = false;
    for (qsizetype i = 0; i < output.size(); ++i) {
        QJsonObject item = output.at(i).toObject();
        if (item.value(kType).toString() != QLatin1String("message"))
            continue;
        QJsonArray content = item.value(QStringLiteral("content")).toArray();
        bool itemChanged = false;
        for (qsizetype j = 0; j < content.size(); ++j) {
            QJsonObject part = content.at(j).toObject();
            if (part.value(kType).toString() != QLatin1String("output_text"))
                continue;
            const QString text = part.value(QStringLiteral("text")).toString();
            QJsonArray annotations = part.value(QStringLiteral("annotations")).toArray();
            const qsizetype before = annotations.size();
            for (auto it = link.globalMatch(text); it.hasNext();) {
                const QRegularExpressionMatch m = it.next();
                QString raw = m.captured(1);
                qsizetype end = m.capturedEnd(0);
                // Sentence punctuation after a link is not part of the name.
                while (!raw.isEmpty() && QStringLiteral(".,;:!?").contains(raw.back())) {
                    raw.chop(1);
                    --end;
                }
                const QString path = QUrl::fromPercentEncoding(raw.toUtf8());
                const std::optional<ContainerFile> file = store.fileByPath(containerId, path);
                if (!file)
                    continue;
                annotations.append(QJsonObject{{kType, QStringLiteral("container_file_citation")},
                                               {QStringLiteral("container_id"), containerId},
                                               {QStringLiteral("file_id"), file->id},
                                               {QStringLiteral("filename"), file->fileName()},
                                               {QStringLiteral("start_index"), m.capturedStart(0)},
                                               {QStringLiteral("end_index"), end}});
            }
            if (annotations.size() == before)
                continue;
            part.insert(QStringLiteral("annotations"), annotations);
            content.replace(j, part);
            itemChanged = true;
        }
        if (!itemChanged)
            continue;
        item.insert(QStringLiteral("content"), content);
        output.replace(i, item);
        changed = true;
    }
    if (!changed)
        return response;
    QJsonObject out = response;
    out.insert(kOutput, output);
    return out;
}

QJsonArray CodeInterpreterInterception::normalizeMessages(const QJsonValue &messages) {
    if (messages.isString())
        return QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                      {QStringLiteral("content"), messages.toString()}}};
    if (messages.isArray())
        return messages.toArray();
    return {};
}

QJsonObject CodeInterpreterInterception::injectCodeInterpreterCalls(const QJsonObject &response,
                                                                    const QJsonValue &earlier) {
    if (!earlier.isArray() || earlier.toArray().isEmpty())
        return response;
    const QJsonValue output = response.value(kOutput);
    if (!output.isArray())
        return response;
    // LiteLLM inserts before the first message, which puts the calls after the final answer's
    // reasoning although that reasoning came later; chronological order keeps both rules'
    // result for a message-only answer.
    QJsonArray merged = earlier.toArray();
    for (const QJsonValue &item : output.toArray())
        merged.append(item);
    QJsonObject out = response;
    out.insert(kOutput, merged);
    return out;
}

QJsonValue CodeInterpreterInterception::earlierOutputOf(const QJsonObject &planMetadata) {
    const QJsonValue recorded = planMetadata.value(QLatin1String("earlier_output"));
    return recorded.isArray() ? recorded
                              : planMetadata.value(QLatin1String("code_interpreter_calls"));
}

// ------------------------------------------------------------------------------------------
// sandboxes

SandboxFactory CodeInterpreterInterception::sandboxFactory() {
    const auto mapHandle = [](QPointer<SandboxBackend> backend,
                              std::optional<SandboxParams> params) {
        return [backend, params](const Outcome<SandboxHandle> &created) {
            if (!created.ok())
                return Outcome<SandboxEntry>::failure(created.error);
            SandboxEntry entry;
            entry.handle = created.value;
            entry.params = params;
            entry.backend = backend;
            return Outcome<SandboxEntry>::success(entry);
        };
    };
    if (m_injectedBackend) {
        const QPointer<SandboxBackend> backend = m_injectedBackend;
        return [backend, mapHandle]() -> QFuture<Outcome<SandboxEntry>> {
            if (!backend)
                return QtFuture::makeReadyFuture(
                    Outcome<SandboxEntry>::failure(noSandboxAvailableError()));
            // Pure mapping: safe on whichever thread finishes the create.
            return backend->create(SandboxParams{}).then(mapHandle(backend, std::nullopt));
        };
    }
    // Resolved when the sandbox is created, so a config reload affects only new sandboxes.
    const SandboxToolRegistry *tools = m_tools;
    const QString toolName = m_settings.sandboxToolName;
    const BackendsByProvider backends = m_backends;
    return [tools, toolName, backends, mapHandle]() -> QFuture<Outcome<SandboxEntry>> {
        const std::optional<SandboxParams> params =
            (tools && !toolName.isEmpty()) ? tools->resolve(toolName) : std::nullopt;
        if (!params)
            return QtFuture::makeReadyFuture(
                Outcome<SandboxEntry>::failure(noSandboxAvailableError()));
        const QPointer<SandboxBackend> backend = backends.value(params->provider);
        if (!backend)
            return QtFuture::makeReadyFuture(Outcome<SandboxEntry>::failure(
                QStringLiteral("Code execution is not supported for provider: ") +
                params->provider));
        QFuture<Outcome<SandboxEntry>> created =
            backend->create(*params).then(mapHandle(backend, params));
        if (params->provider != QLatin1String("jupyter") &&
            params->provider != QLatin1String("e2b"))
            return created; // local sandboxes start in /mnt/data (bubblewrap)
        // Remote kernels: create /mnt/data and make it the current directory before first use.
        auto promise = startedPromise<Outcome<SandboxEntry>>();
        // On the backend's own thread, whichever thread finished the create (a context-free
        // .then() would call run() there); dropped, and the future cancelled, if it goes.
        whenFinished(created, backend.data(),
                     [promise, backend](const QFuture<Outcome<SandboxEntry>> &done) {
                         const Outcome<SandboxEntry> entry =
                             resultOr(done, Outcome<SandboxEntry>::failure(QStringLiteral(
                                                "the sandbox creation was cancelled")));
                         if (!entry.ok() || !backend) {
                             finishPromise(promise, entry);
                             return;
                         }
                         // A kernel without /mnt/data still runs code: the entry either way.
                         whenFinished(backend->run(entry.value.handle, SandboxFileCode::setupCode(),
                                                   entry.value.params.value_or(SandboxParams{})),
                                      backend.data(),
                                      [promise, entry](const QFuture<Outcome<ExecutionResult>> &) {
                                          finishPromise(promise, entry);
                                      });
                     });
        return promise->future();
    };
}

QFuture<Outcome<SandboxEntry>> CodeInterpreterInterception::getOrCreateContainer(
    const QString &cacheKey, const std::optional<QString> &identity, const QString &sessionId,
    const SandboxAdmission &admission) {
    if (!m_registry)
        return QtFuture::makeReadyFuture(
            Outcome<SandboxEntry>::failure(QStringLiteral("sandbox registry is gone")));
    return m_registry->getOrCreate(cacheKey, identity, sandboxFactory(), sessionId, admission);
}

QFuture<Outcome<ExecutionResult>>
CodeInterpreterInterception::runCode(const SandboxEntry &container, const QString &code,
                                     const SandboxOutputSink &onOutput,
                                     const CancellationToken &cancel) {
    const auto fail = [](const QString &message) {
        return QtFuture::makeReadyFuture(Outcome<ExecutionResult>::failure(message));
    };
    // Without an injected backend only captured params can run code: never re-resolve.
    if (!m_injectedBackend && !container.params)
        return fail(noSandboxToRunCodeError());
    // Only through the registry: it keeps the access time and run count current and holds a
    // running sandbox against expiry and eviction. A sandbox it no longer holds (deleted,
    // evicted or replaced since the plan got it) runs nothing.
    if (!m_registry)
        return fail(QStringLiteral("sandbox registry is gone"));
    const std::optional<SandboxEntry> cached = m_registry->entry(container.key);
    if (container.key.isEmpty() || !cached || !(cached->handle == container.handle))
        return fail(QStringLiteral("the sandbox %1 was deleted before its code ran")
                        .arg(container.handle.id));
    return m_registry->run(container.key, code, onOutput, cancel);
}

QFuture<Outcome<ToolCallRun>> CodeInterpreterInterception::executeToolCall(
    const SandboxEntry &container, const QString &arguments, const SandboxOutputSink &onOutput,
    const CancellationToken &cancel) {
    const ParsedCodeArguments parsed = parseCodeArguments(arguments);
    if (!parsed.ok) {
        ToolCallRun refused;
        refused.fedBack = keys::kInvalidArgumentsText;
        refused.toModel = refused.fedBack;
        refused.logs = refused.fedBack; // nothing ran: the client sees why
        return QtFuture::makeReadyFuture(Outcome<ToolCallRun>::success(refused));
    }
    const int maxChars = m_maxOutputChars;
    auto promise = startedPromise<Outcome<ToolCallRun>>();
    const QFuture<Outcome<ToolCallRun>> result = promise->future();
    const QPointer<ContainerFileStore> store = m_fileStore;
    const QPointer<SandboxBackend> backend =
        container.backend ? container.backend : m_injectedBackend;
    whenFinished(
        runCode(container, parsed.code, onOutput, cancel), this,
        [this, promise, store, backend, container,
         maxChars](const QFuture<Outcome<ExecutionResult>> &done) {
            const Outcome<ExecutionResult> ran = resultOr(
                done, Outcome<ExecutionResult>::failure(QStringLiteral("the run was cancelled")));
            if (!ran.ok()) {
                finishPromise(promise, Outcome<ToolCallRun>::failure(ran.error));
                return;
            }
            ToolCallRun run;
            run.executed = true;
            run.result = ran.value;
            run.logs = clientLogsFor(ran.value);
            if (!store || !backend) {
                run.fedBack = withNotes(toolOutputFor(ran.value), mediaNotes(ran.value, {}));
                run.toModel = capForModel(run.fedBack, maxChars);
                finishPromise(promise, Outcome<ToolCallRun>::success(run));
                return;
            }
            // What the code wrote under /mnt/data becomes container files ("assistant").
            whenFinished(
                backend->listFiles(container.handle, container.params.value_or(SandboxParams{})),
                this,
                [promise, store, container, maxChars,
                 run](const QFuture<Outcome<QList<SandboxFileInfo>>> &listed) mutable {
                    const auto files =
                        resultOr(listed, Outcome<QList<SandboxFileInfo>>::failure(QString()));
                    if (files.ok() && store)
                        run.files = store->sync(container.handle.id, files.value);
                    run.fedBack =
                        withNotes(toolOutputFor(run.result), mediaNotes(run.result, run.files));
                    run.toModel = capForModel(run.fedBack, maxChars);
                    finishPromise(promise, Outcome<ToolCallRun>::success(run));
                });
        });
    return result;
}

QFuture<void> CodeInterpreterInterception::deleteContainerForKey(const QString &key,
                                                                 SandboxRemovalReason reason) {
    if (!m_registry || key.isEmpty())
        return QtFuture::makeReadyFuture();
    return m_registry->remove(key, reason);
}

QFuture<void> CodeInterpreterInterception::pruneExpiredCache() {
    if (!m_registry)
        return QtFuture::makeReadyFuture();
    return m_registry->pruneExpired();
}

// ------------------------------------------------------------------------------------------
// plan

struct CodeInterpreterInterception::PlanJob {
    std::shared_ptr<QPromise<Outcome<AgenticLoopPlan>>> promise;
    bool chat = false;
    QString model;
    QJsonValue messages;
    QJsonObject optionalParams;
    QJsonObject kwargs;
    QJsonObject response; // the upstream answer that made the calls ({} when not given)
    QJsonArray toolCalls;
    QString sandboxKey;
    bool keyMinted = false;
    bool isSession = false;
    SandboxEntry container;
    qsizetype next = 0;
    QStringList outputs;
    QJsonArray records;
    CodeRunGate gate;
    PlanObserver observer;
    CancellationToken cancel; // never null (a fresh one when the driver gave none)
    QString itemId; // the current call's code_interpreter_call id (announced before it runs)

    void executed(const QString &callId, const QString &code, const ToolCallRun &run) const {
        if (observer.toolCallExecuted)
            observer.toolCallExecuted(container.handle.id, callId, code, run);
    }
    void fail(const QString &error) {
        finishPromise(promise, Outcome<AgenticLoopPlan>::failure(error));
    }
};

QFuture<Outcome<AgenticLoopPlan>> CodeInterpreterInterception::buildAgenticLoopPlan(
    const QJsonObject &gatePayload, const QString &model, const QJsonValue &messages,
    const QJsonObject &optionalParams, const QJsonObject &kwargs, CodeRunGate gate,
    const QJsonObject &response, PlanObserver observer, CancellationToken cancel) {
    auto job = std::make_shared<PlanJob>();
    job->response = response;
    job->observer = std::move(observer);
    job->cancel = cancel ? std::move(cancel) : Cancellation::create();
    job->gate = std::move(gate);
    job->promise = startedPromise<Outcome<AgenticLoopPlan>>();
    const QFuture<Outcome<AgenticLoopPlan>> result = job->promise->future();
    job->chat =
        kwargs.value(keys::kAgenticLoopApiSurface).toString() == keys::kChatCompletionsSurface;
    job->model = model;
    job->messages = messages;
    job->optionalParams = optionalParams;
    job->kwargs = kwargs;
    job->toolCalls = normalizeToolCalls(gatePayload);

    const QJsonValue key = kwargs.value(keys::kSandboxKey);
    job->sandboxKey = key.isString() ? key.toString() : QString();
    job->isSession =
        keys::isTruthy(kwargs.value(keys::kSessionScoped)) && !job->sandboxKey.isEmpty();
    if (job->sandboxKey.isEmpty()) {
        // LiteLLM creates an uncached sandbox here that nothing ever deletes. A minted key
        // caches it, keeps it for the next round, and lets the post/cleanup hooks delete it.
        job->sandboxKey = mintSandboxKey();
        job->keyMinted = true;
    }
    std::optional<QString> identity;
    if (job->isSession) {
        const QJsonValue hash = kwargs.value(QLatin1String("user_api_key_hash"));
        identity = hash.isString() ? hash.toString() : QString();
    }
    QString sessionId;
    if (job->isSession) {
        // metadata.session_id is a provider param, not a kwarg: the key "<identity>:<session>"
        // (or the bare session id without an identity) is where the plan can read it back.
        sessionId = sessionIdOf(kwargs).value_or(QString());
        const QString prefix = identity && !identity->isEmpty() ? *identity + u':' : QString();
        if (sessionId.isEmpty())
            sessionId = job->sandboxKey.startsWith(prefix) ? job->sandboxKey.mid(prefix.size())
                                                           : job->sandboxKey;
    }

    whenFinished(
        pruneExpiredCache(), this, [this, job, identity, sessionId](const QFuture<void> &) {
            if (job->cancel->isCancelled()) {
                job->fail(kPlanCancelled);
                return;
            }
            auto waiting = std::make_shared<bool>(false);
            SandboxAdmission admission;
            admission.cancel = job->cancel;
            admission.queued = [job, waiting] {
                *waiting = true;
                if (job->observer.sandboxWaiting)
                    job->observer.sandboxWaiting(true);
            };
            whenFinished(getOrCreateContainer(job->sandboxKey, identity, sessionId, admission),
                         this, [this, job, waiting](const QFuture<Outcome<SandboxEntry>> &created) {
                             if (*waiting && job->observer.sandboxWaiting)
                                 job->observer.sandboxWaiting(false);
                             const Outcome<SandboxEntry> outcome =
                                 resultOr(created, Outcome<SandboxEntry>::failure(QStringLiteral(
                                                       "sandbox creation was cancelled")));
                             if (!outcome.ok()) {
                                 job->fail(outcome.error); // nothing was cached
                                 return;
                             }
                             job->container = outcome.value;
                             runNextCall(job);
                         });
        });
    return result;
}

void CodeInterpreterInterception::runNextCall(const std::shared_ptr<PlanJob> &job) {
    if (job->cancel->isCancelled()) { // nobody is left to read the rest
        job->fail(kPlanCancelled);
        return;
    }
    if (job->next >= job->toolCalls.size()) {
        finishPlan(job);
        return;
    }
    const QJsonObject call = job->toolCalls.at(job->next).toObject();
    const QString arguments = call.value(kArguments).toString();
    const QString litellmCallId = job->kwargs.value(QLatin1String("litellm_call_id")).toString();
    const QJsonValue containerId =
        job->container.handle.id.isEmpty() ? QJsonValue() : QJsonValue(job->container.handle.id);
    const ParsedCodeArguments parsed = parseCodeArguments(arguments);
    QJsonObject pending = codeInterpreterCallRecord(parsed.code, containerId, QString());
    pending.insert(QStringLiteral("status"), QStringLiteral("in_progress"));
    job->itemId = pending.value(kId).toString();
    if (job->observer.toolCallStarting)
        job->observer.toolCallStarting(pending);

    CodeRunVerdict asIs;
    asIs.code = parsed.code;
    if (!job->gate || !parsed.ok) { // nothing would run: nothing to ask about
        runGatedCall(job, asIs);
        return;
    }
    CodeRunRequest ask;
    ask.litellmCallId = litellmCallId;
    ask.callId = call.value(kCallId).isString() ? call.value(kCallId).toString()
                                                : call.value(kId).toString();
    ask.code = parsed.code;
    ask.containerId = job->container.handle.id;
    ask.sandboxKey = job->sandboxKey;
    // A paused session sandbox must survive the pause: no idle expiry, no LRU eviction.
    if (m_registry)
        m_registry->pin(job->sandboxKey);
    whenFinished(job->gate(ask), this, [this, job](const QFuture<CodeRunVerdict> &decided) {
        if (m_registry)
            m_registry->unpin(job->sandboxKey);
        CodeRunVerdict aborted;
        aborted.action = CodeRunVerdict::Action::Abort;
        aborted.decision = QStringLiteral("aborted");
        runGatedCall(job, resultOr(decided, aborted));
    });
}

void CodeInterpreterInterception::runGatedCall(const std::shared_ptr<PlanJob> &job,
                                               const CodeRunVerdict &verdict) {
    const QJsonObject call = job->toolCalls.at(job->next).toObject();
    const QString arguments = call.value(kArguments).toString();
    const QJsonValue containerId =
        job->container.handle.id.isEmpty() ? QJsonValue() : QJsonValue(job->container.handle.id);
    const QString itemId = job->itemId;
    const QString callId = call.value(kCallId).isString() ? call.value(kCallId).toString()
                                                          : call.value(kId).toString();
    const ParsedCodeArguments parsed = parseCodeArguments(arguments);

    if (verdict.action == CodeRunVerdict::Action::Abort) {
        ToolCallRun aborted;
        aborted.decision = verdict.decision;
        job->executed(callId, parsed.code, aborted);
        job->fail(kAbortedByUser);
        return;
    }
    if (verdict.action == CodeRunVerdict::Action::Deny) {
        // The model's code is what the record shows; it never ran.
        ToolCallRun denied;
        denied.fedBack = verdict.message;
        denied.logs = verdict.message;
        denied.decision = verdict.decision;
        job->outputs.append(denied.fedBack);
        QJsonObject record = codeInterpreterCallRecord(parsed.code, containerId, denied.fedBack);
        record.insert(kId, itemId);
        record.insert(QStringLiteral("status"), QStringLiteral("failed"));
        job->records.append(record);
        job->executed(callId, parsed.code, denied);
        ++job->next;
        runNextCall(job);
        return;
    }
    QString runArguments = arguments;
    const bool edited = parsed.ok && verdict.code != parsed.code;
    if (edited) {
        // The follow-up shows the model the code that really ran.
        runArguments =
            QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("code"), verdict.code}})
                                  .toJson(QJsonDocument::Compact));
        QJsonObject updated = call;
        updated.insert(kArguments, runArguments);
        job->toolCalls[job->next] = updated;
    }
    const QString modelCode = parsed.code;
    // Live output: announced with the code that really runs, then its chunks as printed.
    SandboxOutputSink onOutput;
    if (parsed.ok) {
        if (job->observer.codeRunStarted)
            job->observer.codeRunStarted(job->container.handle.id, callId, verdict.code);
        if (job->observer.codeRunOutput)
            onOutput = [output = job->observer.codeRunOutput, callId](const QString &stream,
                                                                      const QString &text) {
                output(callId, stream, text);
            };
    }
    whenFinished(
        executeToolCall(job->container, runArguments, onOutput, job->cancel), this,
        [this, job, runArguments, containerId, itemId, callId, verdict, edited,
         modelCode](const QFuture<Outcome<ToolCallRun>> &done) {
            Outcome<ToolCallRun> run = resultOr(done, Outcome<ToolCallRun>::failure(QStringLiteral(
                                                          "sandbox execution was cancelled")));
            if (!run.ok() && job->cancel->isCancelled()) {
                // Cancelled before it ran: the sandbox is fine; the driver's cleanup decides.
                job->fail(kPlanCancelled);
                return;
            }
            if (!run.ok()) {
                // Infrastructure failure: never leave the sandbox running.
                const QString error = run.error;
                whenFinished(deleteContainerForKey(job->sandboxKey, SandboxRemovalReason::Failed),
                             this, [job, error](const QFuture<void> &) { job->fail(error); });
                return;
            }
            const QString code = parseCodeArguments(runArguments).code;
            run.value.decision = verdict.decision;
            if (edited)
                run.value.editedFrom = modelCode;
            job->outputs.append(run.value.toModel); // the model's copy is capped
            // ...the client's code_interpreter_call logs are what the program wrote.
            QJsonObject record = codeInterpreterCallRecord(code, containerId, run.value.logs);
            appendImageOutputs(record, run.value.result.images);
            record.insert(kId, itemId); // the id announced by toolCallStarting
            job->records.append(record);
            job->executed(callId, code, run.value);
            ++job->next;
            runNextCall(job);
        });
}

void CodeInterpreterInterception::finishPlan(const std::shared_ptr<PlanJob> &job) {
    const ToolShape shape = job->chat ? ToolShape::Chat : ToolShape::Responses;
    AgenticLoopRequestPatch patch;
    patch.model = job->model;

    QJsonArray conversation = normalizeMessages(job->messages);
    if (job->chat) {
        QJsonArray assistantCalls;
        QJsonArray toolMessages;
        for (qsizetype i = 0; i < job->toolCalls.size(); ++i) {
            const QJsonObject call = job->toolCalls.at(i).toObject();
            // LiteLLM may pair a null id in the assistant message with a fresh id in the tool
            // message; one effective id keeps the pair matched.
            QString id = call.value(kId).toString();
            if (id.isEmpty())
                id = call.value(kCallId).toString();
            if (id.isEmpty())
                id = mintSandboxKey();
            assistantCalls.append(QJsonObject{
                {kId, id},
                {kType, kFunction},
                {kFunction, QJsonObject{{kName, QString(keys::kCodeExecutionToolName)},
                                        {kArguments, call.value(kArguments)}}},
            });
            toolMessages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("tool")},
                                            {QStringLiteral("tool_call_id"), id},
                                            {QStringLiteral("content"), job->outputs.at(i)}});
        }
        QJsonObject assistant{{QStringLiteral("role"), QStringLiteral("assistant")},
                              {kToolCalls, assistantCalls}};
        // What the model said along with its calls goes back too; Chat Completions takes
        // nothing else of the turn as input (no reasoning fields).
        const QJsonValue content = job->response.value(QLatin1String("choices"))
                                       .toArray()
                                       .at(0) // Undefined without choices
                                       .toObject()
                                       .value(QLatin1String("message"))
                                       .toObject()
                                       .value(QLatin1String("content"));
        if ((content.isString() && !content.toString().isEmpty()) ||
            (content.isArray() && !content.toArray().isEmpty()))
            assistant.insert(QStringLiteral("content"), content);
        conversation.append(assistant);
        for (const QJsonValue &message : std::as_const(toolMessages))
            conversation.append(message);
    } else {
        QJsonArray results;
        for (qsizetype i = 0; i < job->toolCalls.size(); ++i) {
            const QJsonObject call = job->toolCalls.at(i).toObject();
            results.append(QJsonObject{{kType, QStringLiteral("function_call_output")},
                                       {kCallId, call.value(kCallId)},
                                       {kOutput, job->outputs.at(i)}});
        }
        const bool conversationParam = job->optionalParams.contains(QLatin1String("conversation"));
        const QString answeredId = job->response.value(kId).toString();
        if (keepsStateUpstream(job->optionalParams) &&
            (conversationParam || !answeredId.isEmpty())) {
            // The upstream holds the conversation and this turn (reasoning included): chain
            // from the answer being answered and send only the results. A `conversation`
            // already ends with that answer and may not be combined with previous_response_id.
            conversation = results;
            if (!conversationParam)
                job->optionalParams.insert(QLatin1String("previous_response_id"), answeredId);
        } else if (job->response.isEmpty()) {
            // LiteLLM's follow-up: each call (without its id) and its result.
            for (qsizetype i = 0; i < job->toolCalls.size(); ++i) {
                const QJsonObject call = job->toolCalls.at(i).toObject();
                conversation.append(QJsonObject{{kType, QStringLiteral("function_call")},
                                                {kCallId, call.value(kCallId)},
                                                {kName, QString(keys::kCodeExecutionToolName)},
                                                {kArguments, call.value(kArguments)}});
                conversation.append(results.at(i));
            }
        } else {
            for (const QJsonValue &item : replayedTurn(job->response, job->toolCalls))
                conversation.append(item);
            for (const QJsonValue &result : std::as_const(results))
                conversation.append(result);
        }
    }
    patch.messages = conversation;

    const QJsonValue tools = job->optionalParams.value(kTools);
    if (tools.isArray())
        patch.tools = CodeExecutionTool::replaceNativeTools(tools.toArray(), shape);
    patch.optionalParams = job->optionalParams;
    patch.optionalParams.remove(kTools);
    if (CodeExecutionTool::targetsCodeInterpreter(patch.optionalParams.value(kToolChoice)))
        patch.optionalParams.remove(kToolChoice);
    patch.kwargs = followUpPlanKwargs(job->kwargs);
    if (job->keyMinted)
        patch.kwargs.insert(keys::kSandboxKey, job->sandboxKey);

    AgenticLoopPlan plan;
    plan.runAgenticLoop = true;
    plan.requestPatch = patch;
    plan.metadata = planMetadata(job->sandboxKey, job->isSession, job->records);
    if (job->chat)
        plan.metadata.insert(QStringLiteral("response_format"), QStringLiteral("openai"));
    finishPromise(job->promise, Outcome<AgenticLoopPlan>::success(plan));
}

QJsonObject CodeInterpreterInterception::planMetadata(const QString &sandboxKey, bool sessionScoped,
                                                      const QJsonArray &calls) {
    return QJsonObject{
        {QStringLiteral("tool_type"), QStringLiteral("code_interpreter")},
        {QStringLiteral("sandbox_key"), sandboxKey},
        {QStringLiteral("is_session_scoped"), sessionScoped},
        {QStringLiteral("code_interpreter_calls"), calls},
    };
}

// ------------------------------------------------------------------------------------------
// post and cleanup hooks

QFuture<QJsonObject> CodeInterpreterInterception::postAgenticLoopResponseHook(
    const QJsonObject &response, const AgenticLoopPlan &plan, const QJsonObject &kwargs) {
    Q_UNUSED(kwargs);
    const QJsonObject metadata = plan.metadata;
    QFuture<void> deletion = QtFuture::makeReadyFuture();
    if (!keys::isTruthy(metadata.value(QLatin1String("is_session_scoped"))))
        deletion = deleteContainerForKey(metadata.value(QLatin1String("sandbox_key")).toString(),
                                         SandboxRemovalReason::Completed);
    QJsonObject injected = injectCodeInterpreterCalls(response, earlierOutputOf(metadata));
    // Before the sandbox (and with it its files) may be deleted below.
    const QJsonArray calls = metadata.value(QLatin1String("code_interpreter_calls")).toArray();
    if (m_fileStore && !calls.isEmpty()) {
        const QString containerId =
            calls.last().toObject().value(QLatin1String("container_id")).toString();
        if (!containerId.isEmpty())
            injected = annotateFileCitations(injected, containerId, *m_fileStore);
    }
    auto promise = startedPromise<QJsonObject>();
    const QFuture<QJsonObject> result = promise->future();
    whenFinished(deletion, this,
                 [promise, injected](const QFuture<void> &) { finishPromise(promise, injected); });
    return result;
}

QFuture<void> CodeInterpreterInterception::agenticLoopCleanupHook(const AgenticLoopPlan &plan,
                                                                  const QJsonObject &kwargs) {
    Q_UNUSED(kwargs);
    if (keys::isTruthy(plan.metadata.value(QLatin1String("is_session_scoped"))))
        return QtFuture::makeReadyFuture();
    return deleteContainerForKey(plan.metadata.value(QLatin1String("sandbox_key")).toString(),
                                 SandboxRemovalReason::Completed);
}

} // namespace loopscope
