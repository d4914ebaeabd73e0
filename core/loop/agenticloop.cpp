#include "loop/agenticloop.h"

#include "loop/containerfileimporter.h"
#include "loop/messagesloopbridge.h"

#include "common/futurechain.h"
#include "common/openaierror.h"
#include "conversation/chatstreamwriter.h"
#include "http/responsesink.h"
#include "inspect/credentialpolicy.h"
#include "inspect/eventbus.h"
#include "interception/agenticfollowup.h"
#include "interception/agenticrequest.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionkeys.h"
#include "sandbox/sandboxregistry.h"
#include "upstream/upstreamclient.h"
#include "upstream/upstreamreply.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonDocument>

namespace loopscope {

namespace {

using Kind = InspectorEvent::Kind;

const QString kOutput = QStringLiteral("output");
const QString kType = QStringLiteral("type");
const QString kIncompleteDetails = QStringLiteral("incomplete_details");

// Client-sent keys that only the server may set: identity, provider and anything private.
bool isServerOnlyKey(const QString &key) {
    return key.startsWith(u'_') || key == QLatin1String("user_api_key_hash") ||
           key == QLatin1String("custom_llm_provider") || key == QLatin1String("litellm_call_id") ||
           key == QLatin1String("litellm_logging_obj");
}

QJsonObject upstreamBodyOf(const QJsonObject &request, const QString &upstreamModel) {
    QJsonObject body = keys::providerRequestBody(request);
    for (auto it = body.begin(); it != body.end();) {
        if (it.key().startsWith(u'_'))
            it = body.erase(it);
        else
            ++it;
    }
    if (!upstreamModel.isEmpty())
        body.insert(QStringLiteral("model"), upstreamModel);
    return body;
}

// Upstream code_interpreter_call items are dropped: the client sees only the calls that ran
// here (the post hook puts them in).
QJsonObject withoutCodeInterpreterCalls(QJsonObject response) {
    QJsonArray output;
    for (const QJsonValue &item : response.value(kOutput).toArray())
        if (item.toObject().value(kType).toString() != QLatin1String("code_interpreter_call"))
            output.append(item);
    response.insert(kOutput, output);
    return response;
}

bool isInternalCall(const QJsonObject &item) {
    return item.value(kType).toString() == QLatin1String("function_call") &&
           item.value(QStringLiteral("name")).toString() == keys::kCodeExecutionToolName;
}

} // namespace

AgenticLoop::AgenticLoop(ProxyRequest request, ResponseSink *sink,
                         CodeInterpreterInterception *interception, UpstreamClient *upstream,
                         EventBus *events, QObject *parent)
    : QObject(parent)
    , m_request(std::move(request))
    , m_sink(sink)
    , m_interception(interception)
    , m_upstream(upstream)
    , m_events(events)
    , m_provider(providerFor(m_request)) {}

AgenticLoop::~AgenticLoop() {
    if (m_broker && m_pausesOpen > 0) // nobody is left to act on them
        m_broker->abortFlow(m_request.requestId);
}

QString AgenticLoop::providerFor(const ProxyRequest &request) {
    // The config's LiteLLM provider name, so enabled_providers: ["hosted_vllm"] scopes as in
    // LiteLLM.
    if (request.route.provider == UpstreamRoute::Provider::Azure)
        return QStringLiteral("azure");
    return request.route.providerName.isEmpty() ? QStringLiteral("openai")
                                                : request.route.providerName;
}

QString AgenticLoop::upstreamPath() const {
    if (m_bridge)
        return QStringLiteral("/messages");
    return isChat() ? QStringLiteral("/chat/completions") : QStringLiteral("/responses");
}

const QString &AgenticLoop::upstreamUrl() {
    if (m_upstreamUrl.isEmpty())
        m_upstreamUrl = m_request.route.urlFor(upstreamPath()).toString();
    return m_upstreamUrl;
}

bool AgenticLoop::clientGone() const {
    return !m_sink || m_sink->isClientGone();
}

QJsonObject AgenticLoop::hookKwargs(const QJsonObject &request) const {
    const QString surface =
        isChat() ? QString(keys::kChatCompletionsSurface) : QString(keys::kResponsesSurface);
    return AgenticRequest::fromFlat(request, surface).hookKwargs(m_provider);
}

void AgenticLoop::start() {
    QJsonObject request = m_request.body;
    if (m_request.surface == ApiSurface::Messages) {
        m_bridge = new MessagesLoopBridge(
            m_request.body, m_sink, keys::isTruthy(m_request.body.value(QStringLiteral("stream"))),
            this);
        request = MessagesLoopBridge::internalRequest(request);
    }
    for (auto it = request.begin(); it != request.end();) {
        if (isServerOnlyKey(it.key()))
            it = request.erase(it);
        else
            ++it;
    }
    request.insert(QStringLiteral("user_api_key_hash"), m_request.callerIdentity);
    request.insert(QStringLiteral("custom_llm_provider"), m_provider);
    // Tags this request's tool-call signals (requests of one session share a sandbox key).
    request.insert(QStringLiteral("litellm_call_id"), m_request.requestId);
    m_stream = keys::isTruthy(request.value(QStringLiteral("stream")));

    const QString sessionId = CodeInterpreterInterception::sessionIdOf(request).value_or(QString());
    m_sessionId = sessionId;
    if (m_events) {
        m_events->publish(
            Kind::RequestStarted, m_request.requestId, -1,
            {{QStringLiteral("method"), QStringLiteral("POST")},
             {QStringLiteral("path"), m_request.path},
             {QStringLiteral("api"), m_bridge   ? QStringLiteral("messages")
                                     : isChat() ? QStringLiteral("chat_completions")
                                                : QStringLiteral("responses")},
             {QStringLiteral("model"), request.value(QStringLiteral("model"))},
             {QStringLiteral("stream"), m_stream},
             {QStringLiteral("intercepted"), true},
             {QStringLiteral("identity"), CredentialPolicy::mask(m_request.callerIdentity)},
             {QStringLiteral("sessionId"), sessionId},
             {QStringLiteral("request"), m_request.body}});
    }

    // OpenAI's own session form: {"type":"code_interpreter","container":"cntr_…"} reuses that
    // container when the caller owns it (it is a session sandbox of the same identity).
    const QJsonArray tools = request.value(QStringLiteral("tools")).toArray();
    for (const QJsonValue &tool : tools) {
        const QJsonObject t = tool.toObject();
        if (t.value(kType).toString() != keys::kNativeCodeInterpreterType ||
            !t.value(QStringLiteral("container")).isString())
            continue;
        if (!adoptContainer(request, t.value(QStringLiteral("container")).toString()))
            return;
        break;
    }
    if (m_bridge && !startMessagesContainer(request))
        return;

    const CallType callType = isChat() ? CallType::ACompletion : CallType::AResponses;
    if (!m_interception || !m_interception->preCallDeploymentHook(request, callType)) {
        failWithMessage(500, QStringLiteral("Code interpreter interception is not available."),
                        QStringLiteral("server_error"), QStringLiteral("interception_unavailable"));
        return;
    }
    m_sandboxKey = request.value(keys::kSandboxKey).toString();
    m_sessionScoped = keys::isTruthy(request.value(keys::kSessionScoped));
    m_initialKwargs = hookKwargs(request);
    if (const auto stash = keys::stashedStreamOptions(request))
        m_streamOptions = *stash;

    if (m_sink)
        connect(m_sink, &ResponseSink::clientGone, this, &AgenticLoop::onClientGone);
    m_heartbeat.setInterval(m_broker ? m_broker->heartbeatIntervalMs()
                                     : PauseBroker::kDefaultHeartbeatMs);
    connect(&m_heartbeat, &QTimer::timeout, this, [this] {
        // An SSE comment: SDKs skip it, proxies and clients see a live connection.
        if (m_sink && !m_sink->isClientGone() && m_sink->isStarted() && !m_sink->isFinished())
            m_sink->writeChunk(QByteArrayLiteral(": paused\n\n"));
    });
    m_waitHeartbeat.setInterval(m_heartbeat.interval());
    connect(&m_waitHeartbeat, &QTimer::timeout, this, [this] {
        if (m_stream && m_sink && !m_sink->isClientGone() && m_sink->isStarted() &&
            !m_sink->isFinished())
            m_sink->writeChunk(QByteArrayLiteral(": waiting for a sandbox\n\n"));
    });

    const QStringList fileIds = m_bridge ? MessagesLoopBridge::uploadedFileIds(m_request.body)
                                         : autoContainerFileIds(m_request.body);
    if (!fileIds.isEmpty()) {
        importFilesThenIterate(request, fileIds);
        return;
    }
    beginAndIterate(request);
}

std::optional<SandboxEntry> AgenticLoop::adoptContainer(QJsonObject &request,
                                                        const QString &containerId) {
    const auto entry = m_interception && m_interception->registry()
                           ? m_interception->registry()->entryByContainerId(containerId)
                           : std::nullopt;
    if (!entry || entry->identity != m_request.callerIdentity || entry->sessionId.isEmpty()) {
        failWithMessage(404, QStringLiteral("No container found with id '%1'.").arg(containerId),
                        QStringLiteral("invalid_request_error"),
                        QStringLiteral("container_not_found"));
        return std::nullopt;
    }
    QJsonObject meta = request.value(keys::kLitellmMetadata).toObject();
    meta.insert(QStringLiteral("session_id"), entry->sessionId);
    request.insert(keys::kLitellmMetadata, meta);
    QJsonObject clientMeta = request.value(QStringLiteral("metadata")).toObject();
    if (clientMeta.contains(QStringLiteral("session_id")) &&
        clientMeta.value(QStringLiteral("session_id")).toString() != entry->sessionId) {
        failWithMessage(400,
                        QStringLiteral("metadata.session_id does not match the container's "
                                       "session."),
                        QStringLiteral("invalid_request_error"),
                        QStringLiteral("container_session_mismatch"));
        return std::nullopt;
    }
    return entry;
}

bool AgenticLoop::startMessagesContainer(QJsonObject &request) {
    // Anthropic's containers outlive a request: the sandbox is a session's, the one `container`
    // names or a new one, so a later request can name it.
    const QString containerId = MessagesLoopBridge::requestedContainer(m_request.body);
    if (!containerId.isEmpty()) {
        const auto entry = adoptContainer(request, containerId);
        if (entry)
            m_bridge->setContainer(containerId, entry->idleTtlMs);
        return entry.has_value();
    }
    if (!CodeInterpreterInterception::sessionIdOf(request)) {
        QJsonObject meta = request.value(keys::kLitellmMetadata).toObject();
        meta.insert(QStringLiteral("session_id"), MessagesLoopBridge::mintId("container_"));
        request.insert(keys::kLitellmMetadata, meta);
    }
    return true;
}

PlanObserver AgenticLoop::planObserver() {
    // Held by the plan, which may outlive this loop (a hang-up while the code runs): once the
    // loop is done or gone nothing more is published or written.
    const QPointer<AgenticLoop> self(this);
    const auto live = [self] { return self && !self->m_finished; };
    PlanObserver observer;
    observer.sandboxWaiting = [self, live](bool waiting) {
        if (live())
            self->onSandboxWaiting(waiting);
    };
    observer.toolCallStarting = [self, live](const QJsonObject &item) {
        if (live())
            self->onToolCallStarting(item);
    };
    observer.codeRunStarted = [self, live](const QString &containerId, const QString &callId,
                                           const QString &code) {
        if (live())
            self->onCodeRunStarted(containerId, callId, code);
    };
    observer.codeRunOutput = [self, live](const QString &callId, const QString &stream,
                                          const QString &text) {
        if (live())
            self->onCodeRunOutput(callId, stream, text);
    };
    observer.toolCallExecuted = [self, live](const QString &containerId, const QString &callId,
                                             const QString &code, const ToolCallRun &run) {
        if (live())
            self->onToolCallExecuted(containerId, callId, code, run);
    };
    return observer;
}

void AgenticLoop::onClientGone() {
    // Whatever the loop waits for ends now and reports (the code run with its output so far);
    // the step that was waiting then sees the client gone and fails the flow.
    if (m_broker && m_pausesOpen > 0) // a hang-up while paused ends the pauses as aborted
        m_broker->abortFlow(m_request.requestId);
    m_waitHeartbeat.stop();
    m_cancel->cancel();
}

void AgenticLoop::onSandboxWaiting(bool waiting) {
    m_waitingForSandbox = waiting;
    if (m_events)
        m_events->publish(waiting ? Kind::SandboxWaiting : Kind::SandboxWaitEnded,
                          m_request.requestId, m_iterations - 1, {});
    if (!waiting) {
        m_waitHeartbeat.stop();
        return;
    }
    if (m_stream && m_sink && !m_sink->isClientGone() && m_sink->isStarted()) {
        m_sink->writeChunk(QByteArrayLiteral(": waiting for a sandbox\n\n"));
        m_waitHeartbeat.start();
    }
}

void AgenticLoop::onToolCallStarting(const QJsonObject &item) {
    // Streaming Responses clients see each code_interpreter_call start before its code runs.
    if (m_stream && !isChat() && m_sink)
        m_sink->writeChunk(m_writer.codeCallStarted(item));
}

// Live code output for the inspector: the run's start, then its chunks as the code prints (the
// backend coalesces and bounds them), all before its CodeExecuted.
void AgenticLoop::onCodeRunStarted(const QString &containerId, const QString &callId,
                                   const QString &code) {
    if (m_bridge)
        m_bridge->codeRunStarted(callId);
    if (m_events)
        m_events->publish(Kind::CodeRunStarted, m_request.requestId, m_iterations - 1,
                          {{QStringLiteral("callId"), callId},
                           {QStringLiteral("code"), code},
                           {QStringLiteral("containerId"), containerId}});
}

void AgenticLoop::onCodeRunOutput(const QString &callId, const QString &stream,
                                  const QString &text) {
    if (m_events)
        m_events->publish(Kind::CodeRunOutput, m_request.requestId, m_iterations - 1,
                          {{QStringLiteral("callId"), callId},
                           {QStringLiteral("stream"), stream},
                           {QStringLiteral("text"), text}});
}

void AgenticLoop::onToolCallExecuted(const QString &containerId, const QString &callId,
                                     const QString &code, const ToolCallRun &run) {
    if (m_bridge)
        m_bridge->callExecuted(containerId, callId, run);
    if (!m_events)
        return;
    QJsonObject data{
        {QStringLiteral("callId"), callId},
        {QStringLiteral("code"), code},
        {QStringLiteral("stdout"), run.result.stdoutText},
        {QStringLiteral("stderr"), run.result.stderrText},
        {QStringLiteral("output"), run.fedBack},
        {QStringLiteral("executed"), run.executed},
        {QStringLiteral("durationMs"), run.result.durationMs},
        {QStringLiteral("containerId"), containerId},
        {QStringLiteral("truncated"), run.result.stdoutTruncated || run.result.stderrTruncated},
        {QStringLiteral("timedOut"), run.result.timedOut}};
    if (!run.decision.isEmpty())
        data.insert(QStringLiteral("decision"), run.decision);
    if (!run.editedFrom.isEmpty())
        data.insert(QStringLiteral("edited_from"), run.editedFrom);
    // Pictures and files for the window and the flow record (control-api.md code_run).
    QJsonArray images;
    for (const SandboxImage &image : run.result.images)
        images.append(QJsonObject{
            {QStringLiteral("name"), image.name},
            {QStringLiteral("mime"), image.mimeType},
            {QStringLiteral("url"),
             QString(QStringLiteral("data:") + image.mimeType + QStringLiteral(";base64,") +
                     QString::fromLatin1(image.data.toBase64()))}});
    data.insert(QStringLiteral("images"), images);
    QJsonArray files;
    for (const ContainerFile &file : run.files)
        files.append(ContainerFileStore::toJson(file));
    data.insert(QStringLiteral("files"), files);
    if (run.result.error) {
        data.insert(QStringLiteral("error"),
                    QJsonObject{{QStringLiteral("name"), run.result.error->name},
                                {QStringLiteral("value"), run.result.error->value},
                                {QStringLiteral("traceback"), run.result.error->traceback}});
    }
    m_events->publish(Kind::CodeExecuted, m_request.requestId, m_iterations - 1, data);
}

QStringList AgenticLoop::autoContainerFileIds(const QJsonObject &body) {
    QStringList ids;
    for (const QJsonValue &tool : body.value(QStringLiteral("tools")).toArray()) {
        const QJsonObject t = tool.toObject();
        if (t.value(kType).toString() != keys::kNativeCodeInterpreterType)
            continue;
        const QJsonObject container = t.value(QStringLiteral("container")).toObject();
        for (const QJsonValue &id : container.value(QStringLiteral("file_ids")).toArray())
            if (id.isString() && !id.toString().isEmpty() && !ids.contains(id.toString()))
                ids << id.toString();
    }
    return ids;
}

void AgenticLoop::importFilesThenIterate(const QJsonObject &request, const QStringList &fileIds) {
    std::optional<QString> identity;
    QString sessionId;
    if (m_sessionScoped) {
        identity = m_request.callerIdentity;
        sessionId = CodeInterpreterInterception::sessionIdOf(request).value_or(QString());
    }
    // The same key the plan uses, so its first run finds this sandbox with the files in place.
    SandboxAdmission admission;
    admission.cancel = m_cancel; // a hang-up leaves the queue
    admission.queued = [self = QPointer<AgenticLoop>(this)] {
        if (self)
            self->onSandboxWaiting(true);
    };
    whenFinished(
        m_interception->getOrCreateContainer(m_sandboxKey, identity, sessionId, admission), this,
        [this, request, fileIds](const QFuture<Outcome<SandboxEntry>> &made) {
            if (m_waitingForSandbox)
                onSandboxWaiting(false);
            if (clientGone()) {
                failClientGone();
                return;
            }
            const Outcome<SandboxEntry> created = resultOr(
                made, Outcome<SandboxEntry>::failure(QStringLiteral("creation was cancelled")));
            if (!created.ok()) {
                failWithMessage(502, QStringLiteral("Could not create a sandbox: ") + created.error,
                                QStringLiteral("server_error"), QStringLiteral("sandbox_error"));
                return;
            }
            auto *importer =
                new ContainerFileImporter(m_upstream, m_interception->fileStore(), this);
            // A container file of this caller (a cfile_ id another answer gave) is copied from
            // its own sandbox.
            importer->setLocalFiles(
                [registry = QPointer<SandboxRegistry>(m_interception->registry()),
                 store = QPointer<ContainerFileStore>(m_interception->fileStore()),
                 identity = m_request.callerIdentity](
                    const QString &id) -> std::optional<QPair<SandboxEntry, ContainerFile>> {
                    const auto file = store ? store->fileById(id) : std::nullopt;
                    const auto entry = file && registry
                                           ? registry->entryByContainerId(file->containerId)
                                           : std::nullopt;
                    if (!entry || !entry->identity || *entry->identity != identity)
                        return std::nullopt;
                    return qMakePair(*entry, *file);
                });
            whenFinished(
                importer->import(m_request.route, created.value, fileIds), this,
                [this, request, importer](const QFuture<Outcome<QList<ContainerFile>>> &imported) {
                    importer->deleteLater();
                    const auto copied = resultOr(imported, Outcome<QList<ContainerFile>>::failure(
                                                               QStringLiteral("cancelled")));
                    if (!copied.ok()) {
                        failWithMessage(400, copied.error, QStringLiteral("invalid_request_error"),
                                        QStringLiteral("file_not_copied"));
                        return;
                    }
                    beginAndIterate(request);
                });
        });
}

void AgenticLoop::beginAndIterate(const QJsonObject &request) {
    if (m_stream && m_sink) {
        m_sink->beginSse();
        if (m_bridge) {
            m_sink->writeChunk(m_bridge->streamStart());
        } else if (!isChat()) {
            m_sink->writeChunk(m_writer.begin(
                {{QStringLiteral("object"), QStringLiteral("response")},
                 {QStringLiteral("created_at"), QDateTime::currentSecsSinceEpoch()},
                 {QStringLiteral("model"), m_request.body.value(QStringLiteral("model"))},
                 {QStringLiteral("tools"), m_request.body.value(QStringLiteral("tools"))}}));
        }
    }
    iterate(request, 0);
}

void AgenticLoop::iterate(QJsonObject request, int depth) {
    if (clientGone()) { // an earlier round may have created the sandbox
        failClientGone();
        return;
    }
    ++m_iterations;
    if (m_sink)
        m_sink->setIterations(m_iterations);
    QJsonObject body = upstreamBodyOf(request, m_request.route.upstreamModel);
    if (m_bridge)
        body = m_bridge->upstreamBody(body);
    if (m_broker) {
        PauseContext context = pauseContext(PauseKind::UpstreamRequest);
        context.body = body;
        if (m_broker->wants(context)) {
            pauseThen(context, body, [this, request, depth](const QJsonObject &decidedBody) {
                sendUpstream(request, depth, decidedBody);
            });
            return;
        }
    }
    sendUpstream(request, depth, body);
}

void AgenticLoop::sendUpstream(const QJsonObject &request, int depth, const QJsonObject &body) {
    // Announced before the answer so a running flow shows the call while the model thinks.
    // The body is masked once for both events that carry it.
    EventBus::Masked maskedBody;
    if (m_events) {
        maskedBody = m_events->maskOnce({{QStringLiteral("request"), body}});
        m_events->publish(Kind::UpstreamCallStarted, m_request.requestId, m_iterations - 1,
                          {{QStringLiteral("url"), upstreamUrl()}}, maskedBody);
    }
    whenFinished(
        m_upstream->postJson(m_request.route, upstreamPath(), body, m_cancel), this,
        [this, request, depth, maskedBody](const QFuture<UpstreamReply> &finished) {
            UpstreamReply cancelled;
            cancelled.errorString = QStringLiteral("the upstream call was cancelled");
            const UpstreamReply reply = resultOr(finished, cancelled);
            if (m_events) {
                QJsonObject data{{QStringLiteral("status"), reply.status},
                                 {QStringLiteral("latencyMs"), reply.latencyMs},
                                 {QStringLiteral("url"), upstreamUrl()}};
                if (reply.isJson) {
                    data.insert(QStringLiteral("response"), reply.json);
                    data.insert(QStringLiteral("usage"), reply.json.value(QStringLiteral("usage")));
                } else if (reply.status == 0) {
                    data.insert(QStringLiteral("error"), reply.errorString);
                } else {
                    data.insert(QStringLiteral("error"), QString::fromUtf8(reply.body.left(4096)));
                }
                reply.addWireTo(data); // a bridged call: what really went upstream
                m_events->publish(Kind::UpstreamCall, m_request.requestId, m_iterations - 1, data,
                                  maskedBody);
            }
            onUpstreamReply(request, depth, reply);
        });
}

void AgenticLoop::onUpstreamReply(QJsonObject request, int depth, const UpstreamReply &reply) {
    if (m_sink)
        m_sink->addExternalTime(qint64(reply.latencyMs * 1e6));
    if (clientGone()) {
        failClientGone();
        return;
    }
    if (!reply.ok()) {
        if (reply.status == 0) {
            failWith(reply.clientStatus(),
                     QJsonDocument::fromJson(reply.transportErrorBody()).object());
        } else if (reply.isJson && reply.json.value(QStringLiteral("error")).isObject()) {
            failWith(reply.status, reply.json);
        } else {
            failWithMessage(reply.status,
                            QStringLiteral("Upstream error %1: %2")
                                .arg(reply.status)
                                .arg(QString::fromUtf8(reply.body.left(2048))),
                            QStringLiteral("upstream_error"), QString());
        }
        return;
    }
    if (!reply.isJson) {
        failWithMessage(
            502, QStringLiteral("Upstream answered with a body that is not a JSON object."),
            QStringLiteral("upstream_error"), QStringLiteral("invalid_upstream_response"));
        return;
    }
    if (reply.json.value(QStringLiteral("usage")).isObject())
        m_usage = reply.json.value(QStringLiteral("usage")).toObject();
    if (m_broker) {
        PauseContext context = pauseContext(PauseKind::UpstreamResponse);
        context.body = reply.json;
        // The code the model wrote, for match.code_regex and for the person reading it.
        const QJsonArray calls =
            isChat() ? CodeInterpreterInterception::extractChatCodeExecutionToolCalls(
                           m_bridge ? m_bridge->chatView(reply.json) : reply.json)
                     : CodeInterpreterInterception::extractCodeExecutionToolCalls(reply.json);
        QStringList codes;
        for (const QJsonValue &call : calls) {
            const QJsonValue args = call.toObject().value(QStringLiteral("arguments"));
            const ParsedCodeArguments parsed = CodeInterpreterInterception::parseCodeArguments(
                args.isString()
                    ? args.toString()
                    : QString::fromUtf8(
                          QJsonDocument(args.toObject()).toJson(QJsonDocument::Compact)));
            if (parsed.ok)
                codes << parsed.code;
        }
        context.code = codes.join(u'\n');
        if (!calls.isEmpty())
            context.callId = calls.first().toObject().value(QStringLiteral("call_id")).toString();
        if (m_broker->wants(context)) {
            pauseThen(context, reply.json, [this, request, depth](const QJsonObject &decidedBody) {
                actOnResponse(request, depth, decidedBody);
            });
            return;
        }
    }
    actOnResponse(request, depth, reply.json);
}

void AgenticLoop::actOnResponse(const QJsonObject &request, int depth, const QJsonObject &answer) {
    // A Messages answer is read as the chat completion the hooks understand.
    const QJsonObject response = m_bridge ? m_bridge->roundAnswered(answer) : answer;

    // The request split once per round: the gate's kwargs and the follow-up both read it.
    const AgenticRequest agentic =
        AgenticRequest::fromFlat(request, isChat() ? QString(keys::kChatCompletionsSurface)
                                                   : QString(keys::kResponsesSurface));
    const QJsonObject kwargs = agentic.hookKwargs(m_provider);
    const GateDecision gate = m_interception->shouldRunAgenticLoop(response, m_provider, kwargs);
    if (!gate.run) {
        finishWith(response);
        return;
    }
    const QString fingerprint = AgenticFollowUp::fingerprint(gate.payload);
    if (const auto rail = AgenticFollowUp::safetyRailError(
            fingerprint, agentic.fingerprints(), depth, m_request.maxLoops, agentic.model)) {
        const bool repeated = rail->startsWith(QLatin1String("Agentic loop detected"));
        if (m_events)
            m_events->publish(Kind::Log, m_request.requestId, m_iterations - 1,
                              {{QStringLiteral("level"), QStringLiteral("warning")},
                               {QStringLiteral("message"), *rail}});
        finishWith(response, repeated ? QStringLiteral("repeated_tool_call")
                                      : QStringLiteral("max_agentic_loops"));
        return;
    }

    if (!isChat()) {
        // This round's reasoning and commentary keep their place: before its calls, streamed
        // now, as the model produced them before the code ran.
        for (const QJsonValue &item : CodeInterpreterInterception::clientTurnItems(response)) {
            m_earlierOutput.append(item);
            if (m_stream && m_sink)
                m_sink->writeChunk(m_writer.modelItem(item.toObject()));
        }
    }

    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    if (m_bridge)
        m_bridge->planStarted();
    whenFinished(
        m_interception->buildAgenticLoopPlan(
            gate.payload, agentic.model, agentic.messages, agentic.optionalParams, kwargs,
            m_broker ? CodeRunGate([self = QPointer<AgenticLoop>(this)](const CodeRunRequest &ask) {
                if (!self) {
                    CodeRunVerdict aborted;
                    aborted.action = CodeRunVerdict::Action::Abort;
                    aborted.decision = QStringLiteral("aborted");
                    return QtFuture::makeReadyFuture(aborted);
                }
                return self->gateCodeRun(ask);
            })
                     : CodeRunGate(),
            response, planObserver(), m_cancel),
        this,
        [this, agentic, depth, fingerprint, clock](const QFuture<Outcome<AgenticLoopPlan>> &built) {
            const Outcome<AgenticLoopPlan> plan = resultOr(
                built, Outcome<AgenticLoopPlan>::failure(QStringLiteral("the plan was cancelled")));
            if (m_sink)
                m_sink->addExternalTime(clock->nsecsElapsed());
            if (clientGone()) { // the hang-up stopped the plan; its code run is recorded
                failClientGone();
                return;
            }
            if (!plan.ok() && m_abortedByUser) {
                failAborted();
                return;
            }
            if (!plan.ok() && SandboxRegistry::isCapReached(plan.error) && m_sink &&
                !m_sink->isStarted() && !m_sink->isClientGone()) {
                // The global sandbox cap: a retryable 429, not a broken sandbox (issue 18).
                runCleanup();
                const QJsonObject busy =
                    OpenAiError::object(plan.error, QStringLiteral("rate_limit_error"),
                                        QStringLiteral("too_many_sandboxes"));
                m_sink->sendJson(429, m_bridge ? MessagesLoopBridge::errorBody(busy, 429) : busy,
                                 {{QByteArrayLiteral("Retry-After"),
                                   QByteArray::number(SandboxRegistry::kCapRetryAfterSeconds)}});
                complete(429, {}, plan.error);
                return;
            }
            if (!plan.ok()) {
                failWithMessage(502, QStringLiteral("Sandbox failure: %1").arg(plan.error),
                                QStringLiteral("server_error"), QStringLiteral("sandbox_error"));
                return;
            }
            m_lastPlan = plan.value;
            if (m_bridge)
                m_bridge->planFinished();
            const QJsonArray calls =
                plan.value.metadata.value(QStringLiteral("code_interpreter_calls")).toArray();
            for (const QJsonValue &call : calls) {
                m_codeCalls.append(call);
                m_earlierOutput.append(call);
                if (m_stream && !isChat() && m_sink)
                    m_sink->writeChunk(m_writer.codeCallFinished(call.toObject()));
            }
            if (clientGone()) {
                failClientGone();
                return;
            }
            FollowUpContext context;
            context.request = agentic;
            context.depth = depth;
            context.maxLoops = m_request.maxLoops;
            context.fingerprints = agentic.fingerprints();
            context.fingerprint = fingerprint;
            const Outcome<QJsonObject> followUp =
                AgenticFollowUp::buildFollowUpRequest(plan.value, context);
            if (!followUp.ok()) {
                failWithMessage(500, followUp.error, QStringLiteral("server_error"),
                                QStringLiteral("agentic_loop_error"));
                return;
            }
            iterate(followUp.value, depth + 1);
        });
}

QJsonObject AgenticLoop::withoutInternalCalls(QJsonObject response, bool chat) {
    if (!chat) {
        QJsonArray kept;
        for (const QJsonValue &item : response.value(kOutput).toArray())
            if (!isInternalCall(item.toObject()))
                kept.append(item);
        response.insert(kOutput, kept);
        return response;
    }
    QJsonArray choices = response.value(QStringLiteral("choices")).toArray();
    for (int i = 0; i < choices.size(); ++i) {
        QJsonObject choice = choices.at(i).toObject();
        QJsonObject message = choice.value(QStringLiteral("message")).toObject();
        QJsonArray kept;
        for (const QJsonValue &call : message.value(QStringLiteral("tool_calls")).toArray()) {
            if (call.toObject()
                    .value(QStringLiteral("function"))
                    .toObject()
                    .value(QStringLiteral("name"))
                    .toString() != keys::kCodeExecutionToolName)
                kept.append(call);
        }
        if (kept.isEmpty())
            message.remove(QStringLiteral("tool_calls"));
        else
            message.insert(QStringLiteral("tool_calls"), kept);
        if (!message.value(QStringLiteral("content")).isString())
            message.insert(QStringLiteral("content"), QString());
        choice.insert(QStringLiteral("message"), message);
        choices[i] = choice;
    }
    response.insert(QStringLiteral("choices"), choices);
    return response;
}

void AgenticLoop::finishWith(QJsonObject response, const QString &incompleteReason) {
    if (!incompleteReason.isEmpty())
        response = withoutInternalCalls(response, isChat());
    if (isChat()) {
        if (!incompleteReason.isEmpty()) {
            QJsonArray choices = response.value(QStringLiteral("choices")).toArray();
            for (int i = 0; i < choices.size(); ++i) {
                QJsonObject choice = choices.at(i).toObject();
                choice.insert(QStringLiteral("finish_reason"), QStringLiteral("length"));
                choices[i] = choice;
            }
            response.insert(QStringLiteral("choices"), choices);
            response.insert(kIncompleteDetails,
                            QJsonObject{{QStringLiteral("reason"), incompleteReason}});
        }
    } else {
        response = withoutCodeInterpreterCalls(response);
        // The client declared the hosted tool: echo what it sent, never the internal function.
        if (m_request.body.contains(QStringLiteral("tools")))
            response.insert(QStringLiteral("tools"), m_request.body.value(QStringLiteral("tools")));
        if (m_request.body.contains(QStringLiteral("tool_choice")))
            response.insert(QStringLiteral("tool_choice"),
                            m_request.body.value(QStringLiteral("tool_choice")));
        // A chained follow-up answers the round before it; the client asked after its own.
        if (response.contains(QStringLiteral("previous_response_id")))
            response.insert(QStringLiteral("previous_response_id"),
                            m_request.body.value(QStringLiteral("previous_response_id")).isString()
                                ? m_request.body.value(QStringLiteral("previous_response_id"))
                                : QJsonValue(QJsonValue::Null));
        if (!incompleteReason.isEmpty()) {
            response.insert(QStringLiteral("status"), QStringLiteral("incomplete"));
            response.insert(kIncompleteDetails,
                            QJsonObject{{QStringLiteral("reason"), incompleteReason}});
        }
    }
    if (!m_interception) { // shutting down: nothing left to delete or inject
        deliver(response, incompleteReason);
        return;
    }
    // LiteLLM's post hook: deletes a non-session sandbox, then puts the code_interpreter_call
    // items before the first message (Responses). Sandbox time, not Loopscope's overhead.
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    whenFinished(m_interception->postAgenticLoopResponseHook(response, hookPlan(), m_initialKwargs),
                 this,
                 [this, response, incompleteReason, clock](const QFuture<QJsonObject> &posted) {
                     if (m_sink)
                         m_sink->addExternalTime(clock->nsecsElapsed());
                     deliver(resultOr(posted, response), incompleteReason);
                 });
}

void AgenticLoop::deliver(const QJsonObject &response, const QString &incompleteReason) {
    if (clientGone()) { // left while the post hook deleted the sandbox
        failClientGone();
        return;
    }
    runCleanup();
    const QJsonObject answer =
        m_bridge ? m_bridge->finalMessage(!incompleteReason.isEmpty()) : response;
    if (!m_stream) {
        m_sink->sendJson(200, answer);
    } else if (m_bridge) {
        m_sink->writeChunk(m_bridge->streamEnd(answer));
        m_sink->endStream();
    } else if (isChat()) {
        m_sink->writeChunk(ChatStreamWriter::replay(response, m_streamOptions));
        m_sink->endStream();
    } else {
        m_sink->writeChunk(m_writer.finish(response));
        m_sink->endStream();
    }
    // After the answer is written: masking the items is not part of the client's wait.
    if (m_events && !m_codeCalls.isEmpty() && !isChat())
        m_events->publish(Kind::OutputsInjected, m_request.requestId, -1,
                          {{QStringLiteral("items"), m_codeCalls}});
    complete(200, answer, incompleteReason);
}

void AgenticLoop::failWithMessage(int status, const QString &message, const QString &type,
                                  const QString &code) {
    failWith(status, OpenAiError::object(message, type, code));
}

void AgenticLoop::failWith(int status, const QJsonObject &errorBody) {
    runCleanup();
    const QJsonObject error = errorBody.value(QStringLiteral("error")).toObject();
    const QString message = error.value(QStringLiteral("message")).toString();
    if (m_sink && !m_sink->isClientGone()) {
        if (!m_stream || !m_sink->isStarted()) {
            m_sink->sendJson(status, m_bridge ? MessagesLoopBridge::errorBody(errorBody, status)
                                              : errorBody);
        } else if (m_bridge) {
            m_sink->writeChunk(
                MessagesLoopBridge::errorEvent(MessagesLoopBridge::errorBody(errorBody, status)));
            m_sink->endStream();
        } else if (isChat()) {
            m_sink->writeChunk(ChatStreamWriter::error(
                error.value(QStringLiteral("type")).toString(QStringLiteral("upstream_error")),
                message, error.value(QStringLiteral("code")).toString()));
            m_sink->endStream();
        } else {
            QString code = error.value(QStringLiteral("code")).toString();
            if (code.isEmpty())
                code =
                    error.value(QStringLiteral("type")).toString(QStringLiteral("upstream_error"));
            m_sink->writeChunk(m_writer.error(code, message));
            m_sink->endStream();
        }
    }
    complete(status, {}, message.isEmpty() ? QStringLiteral("request failed") : message);
}

AgenticLoopPlan AgenticLoop::hookPlan() const {
    // The last round's plan carries the sandbox key and session flag; a request that never ran
    // code gets the same metadata from its pre-call hook. Calls: every round's, in order.
    AgenticLoopPlan plan = m_lastPlan.value_or(AgenticLoopPlan{});
    if (!m_lastPlan)
        plan.metadata = CodeInterpreterInterception::planMetadata(m_sandboxKey, m_sessionScoped);
    plan.metadata.insert(QStringLiteral("code_interpreter_calls"), m_codeCalls);
    plan.metadata.insert(QStringLiteral("earlier_output"), m_earlierOutput);
    return plan;
}

void AgenticLoop::runCleanup() {
    // Exactly once per request that got a sandbox key. The hook keeps a session sandbox and
    // deletes an ephemeral one; after the post hook (or a failed plan) that is a no-op, because
    // the registry pops the key before it deletes.
    if (m_cleanedUp || !m_interception || m_sandboxKey.isEmpty())
        return;
    m_cleanedUp = true;
    m_interception->agenticLoopCleanupHook(hookPlan(), m_initialKwargs);
}

PauseContext AgenticLoop::pauseContext(PauseKind kind) const {
    PauseContext context;
    context.kind = kind;
    context.flowId = m_request.requestId;
    context.iteration = m_iterations - 1;
    context.model = m_request.body.value(QStringLiteral("model")).toString();
    context.sessionId = m_sessionId;
    return context;
}

void AgenticLoop::pauseThen(const PauseContext &context, const QJsonObject &body,
                            std::function<void(const QJsonObject &)> proceed) {
    // An upstream pause: abort ends the flow, a hang-up cleans up, anything else goes on with
    // the edited body (or the original one).
    whenFinished(awaitPause(context), this,
                 [this, body, proceed = std::move(proceed)](const QFuture<PauseDecision> &decided) {
                     const PauseDecision d = resultOr(decided, PauseDecision{});
                     if (d.action == PauseDecision::Action::Abort || m_abortedByUser) {
                         failAborted();
                         return;
                     }
                     if (clientGone()) {
                         failClientGone();
                         return;
                     }
                     proceed(d.body.value_or(body));
                 });
}

QFuture<PauseDecision> AgenticLoop::awaitPause(const PauseContext &context) {
    if (++m_pausesOpen == 1 && m_stream) {
        m_heartbeat.setInterval(m_broker->heartbeatIntervalMs());
        m_heartbeat.start();
    }
    // If this loop dies first, the promise goes with it and the waiter sees a cancellation.
    auto promise = startedPromise<PauseDecision>();
    whenFinished(m_broker->pause(context), this,
                 [this, promise](const QFuture<PauseDecision> &decided) {
                     if (--m_pausesOpen == 0)
                         m_heartbeat.stop();
                     PauseDecision aborted;
                     aborted.action = PauseDecision::Action::Abort;
                     aborted.decision = QStringLiteral("aborted");
                     const PauseDecision d = resultOr(decided, aborted);
                     if (d.action == PauseDecision::Action::Abort) {
                         m_abortedByUser = true;
                         m_abortReason = d.message;
                     }
                     finishPromise(promise, d);
                 });
    return promise->future();
}

QFuture<CodeRunVerdict> AgenticLoop::gateCodeRun(const CodeRunRequest &ask) {
    PauseContext context = pauseContext(PauseKind::Code);
    context.callId = ask.callId;
    context.code = ask.code;
    if (!m_broker || !m_broker->wants(context)) {
        CodeRunVerdict asIs;
        asIs.code = ask.code;
        return QtFuture::makeReadyFuture(asIs);
    }
    // A pure mapping, no context object: safe whatever thread finishes the pause.
    return awaitPause(context).then([](const PauseDecision &d) {
        CodeRunVerdict verdict;
        verdict.code = d.code;
        verdict.message = d.message;
        verdict.decision = d.decision;
        verdict.editedFrom = d.editedFrom;
        verdict.action = d.action == PauseDecision::Action::Deny    ? CodeRunVerdict::Action::Deny
                         : d.action == PauseDecision::Action::Abort ? CodeRunVerdict::Action::Abort
                                                                    : CodeRunVerdict::Action::Run;
        return verdict;
    });
}

void AgenticLoop::failAborted() {
    if (clientGone()) { // the hang-up resolved the pause: a plain client-gone failure
        failClientGone();
        return;
    }
    if (!m_abortReason.isEmpty()) { // the proxy is stopping: a server-side failure, said so
        m_flowStatus = 503;         // also when the stream had started with 200
        failWithMessage(503, m_abortReason, QStringLiteral("server_error"),
                        QStringLiteral("proxy_stopping"));
        return;
    }
    // The client gets 409; the flow records 499 (the user, not the client or the model, ended it).
    m_flowStatus = 499;
    failWithMessage(409, QStringLiteral("The request was aborted by the user at a breakpoint."),
                    QStringLiteral("invalid_request_error"), QStringLiteral("aborted_by_user"));
}

void AgenticLoop::failClientGone() {
    runCleanup();
    m_clientClosed = true;
    complete(499, {}, QStringLiteral("client disconnected"));
}

void AgenticLoop::complete(int status, const QJsonObject &response, const QString &failure) {
    if (m_finished)
        return;
    m_finished = true;
    m_heartbeat.stop();
    m_waitHeartbeat.stop();
    if (m_events) {
        const double durationMs = m_sink ? double(m_sink->elapsedNanoseconds()) / 1e6
                                         : double(m_request.elapsed.nsecsElapsed()) / 1e6;
        QJsonObject data{{QStringLiteral("status"), status},
                         {QStringLiteral("durationMs"), durationMs},
                         {QStringLiteral("iterations"), m_iterations},
                         {QStringLiteral("codeRuns"), m_codeCalls.size()},
                         {QStringLiteral("usage"), m_bridge ? m_bridge->usage() : m_usage}};
        if (status >= 200 && status < 300) {
            data.insert(QStringLiteral("response"), response);
            if (!failure.isEmpty())
                data.insert(QStringLiteral("incompleteReason"), failure);
            m_events->publish(Kind::RequestFinished, m_request.requestId, -1, data);
        } else {
            data.insert(QStringLiteral("message"), failure);
            if (m_clientClosed) // control-api.md's reason for a client that hung up
                data.insert(QStringLiteral("incompleteReason"), QStringLiteral("client_closed"));
            if (m_flowStatus > 0)
                data.insert(QStringLiteral("flowStatus"), m_flowStatus);
            m_events->publish(Kind::RequestFailed, m_request.requestId, -1, data);
        }
    }
    emit done();
    deleteLater();
}

} // namespace loopscope
