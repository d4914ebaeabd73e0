#pragma once

#include "common/cancellation.h"
#include "conversation/responsesstreamwriter.h"
#include "interception/agenticloopplan.h"
#include "interception/coderungate.h"
#include "interception/planobserver.h"
#include "loop/pausebroker.h"
#include "loop/proxyrequest.h"
#include "sandbox/sandboxregistry.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <functional>

namespace loopscope {

class CodeInterpreterInterception;
class EventBus;
class MessagesLoopBridge;
class ResponseSink;
class UpstreamClient;
struct UpstreamReply;

// Drives one client request that declared the hosted code_interpreter tool through its
// iterations: pre-call hook → upstream call (always non-streaming, plain OpenAI body) → gate →
// safety rails → plan (code runs in the sandbox) → follow-up → … → post hook on the final
// response → cleanup hook. This is LiteLLM's recursive driver unrolled into a loop, and every
// step is the CodeInterpreterInterception / AgenticFollowUp function the conformance suite
// tests (tests/conformance/README.md maps each case to it):
//   preCallDeploymentHook, shouldRunAgenticLoop, AgenticFollowUp::safetyRailError,
//   buildAgenticLoopPlan, AgenticFollowUp::buildFollowUpRequest,
//   postAgenticLoopResponseHook (every answer with a 2xx status, the ceiling included),
//   agenticLoopCleanupHook (exactly once per request that got a sandbox key: success, failure,
//   client hang-up and ceiling alike).
// The hooks see one plan for the whole request (hookPlan()): its code_interpreter_calls are all
// rounds' calls in the order the code ran, and its earlier_output every round's reasoning and
// messages with those calls, so the post hook puts them once, chronologically, before the final
// answer's items: OpenAI's [reasoning, message, code_interpreter_call, reasoning, message]
// (LiteLLM's nested post hooks would put the latest round first and drop the rest).
//
// Streaming clients get OpenAI's SSE shapes: on /v1/responses `response.created` at once and
// each code_interpreter_call live (in_progress and its code before it runs, completed after); on
// /v1/chat/completions a replay of the final completion (usage chunk only when
// stream_options.include_usage).
//
// At the loop ceiling (max loops, or a repeated tool-call fingerprint) the client gets the last
// response without the internal call: Responses `status: "incomplete"`,
// `incomplete_details.reason: "max_agentic_loops"` (or "repeated_tool_call"); Chat
// `finish_reason: "length"` plus the same top-level `incomplete_details`.
// A failed upstream call ends the request with the upstream's status and an OpenAI-shaped body
// (or an SSE error event when streaming); a sandbox failure with 502 and a readable message.
//
// Breakpoints (setPauseBroker): the loop awaits the broker before each upstream request
// (`upstream_request`, edited body sent), after each upstream answer (`upstream_response`, the
// edited body is what the loop acts on) and before each code run (`code`, through the plan's
// CodeRunGate). While paused a streaming client gets ": paused" every heartbeat interval; when
// it hangs up, its pauses end as aborted. An abort answers 409 `aborted_by_user` (the flow
// records 499) and cleans up as any failure does.
//
// Hang-up (ResponseSink::clientGone): the loop cancels what it waits for — the upstream call is
// aborted, the running code interrupted (SandboxBackend::run), a wait for a sandbox slot left —
// and, once that work has reported (the code run with its output so far is recorded), ends the
// flow with RequestFailed {incompleteReason: "client_closed"}; cleanup deletes a one-shot
// sandbox, a session's keeps its state. While the plan waits for a sandbox slot
// (sandbox.max_live), the flow gets SandboxWaiting / SandboxWaitEnded and a streaming client
// ": waiting for a sandbox" at once and every heartbeat interval.
//
// Anthropic Messages (/v1/messages with a code_execution_* tool) runs as a Chat Completions loop
// whose two edges a MessagesLoopBridge translates: the upstream body and answers, and what the
// client gets (server_tool_use and result blocks, Anthropic's stream and errors).
//
// Deletes itself when done. Lives on the proxy thread.
class AgenticLoop : public QObject {
    Q_OBJECT
public:
    AgenticLoop(ProxyRequest request, ResponseSink *sink, CodeInterpreterInterception *interception,
                UpstreamClient *upstream, EventBus *events, QObject *parent = nullptr);
    ~AgenticLoop() override;

    // Optional; set before start(). Without a broker nothing ever pauses.
    void setPauseBroker(PauseBroker *broker) { m_broker = broker; }
    void start();

    // The provider slug the interception layer sees for a route ("openai", "azure").
    static QString providerFor(const ProxyRequest &request);
    // Removes every litellm_code_execution call from a final response (for the ceiling case).
    static QJsonObject withoutInternalCalls(QJsonObject response, bool chat);

signals:
    void done();

private:
    void iterate(QJsonObject request, int depth);
    void sendUpstream(const QJsonObject &request, int depth, const QJsonObject &body);
    void beginAndIterate(const QJsonObject &request);
    // container.auto.file_ids: the sandbox is created now and the files copied in first.
    void importFilesThenIterate(const QJsonObject &request, const QStringList &fileIds);
    static QStringList autoContainerFileIds(const QJsonObject &body);
    void onUpstreamReply(QJsonObject request, int depth, const UpstreamReply &reply);
    void actOnResponse(const QJsonObject &request, int depth, const QJsonObject &response);
    QFuture<PauseDecision> awaitPause(const PauseContext &context);
    // Awaits an upstream pause, then calls `proceed` with the body to use (edited or `body`).
    void pauseThen(const PauseContext &context, const QJsonObject &body,
                   std::function<void(const QJsonObject &)> proceed);
    PauseContext pauseContext(PauseKind kind) const;
    QFuture<CodeRunVerdict> gateCodeRun(const CodeRunRequest &ask);
    // This request's plans report to this loop alone (never a broadcast to every loop).
    PlanObserver planObserver();
    void onToolCallStarting(const QJsonObject &item);
    void onCodeRunStarted(const QString &containerId, const QString &callId, const QString &code);
    void onCodeRunOutput(const QString &callId, const QString &stream, const QString &text);
    void onToolCallExecuted(const QString &containerId, const QString &callId, const QString &code,
                            const ToolCallRun &run);
    void failAborted();
    void finishWith(QJsonObject response, const QString &incompleteReason = {});
    void deliver(const QJsonObject &response, const QString &incompleteReason);
    void failWith(int status, const QJsonObject &errorBody);
    void failWithMessage(int status, const QString &message, const QString &type,
                         const QString &code);
    void runCleanup();
    void failClientGone();
    void onClientGone();
    void onSandboxWaiting(bool waiting);
    AgenticLoopPlan hookPlan() const;
    void complete(int status, const QJsonObject &response, const QString &failure);
    // Messages runs in the chat shape inside the loop (its bridge translates the edges).
    bool isChat() const { return m_request.surface != ApiSurface::Responses; }
    // A container the client names: its session sandbox when the caller owns it, else 404.
    std::optional<SandboxEntry> adoptContainer(QJsonObject &request, const QString &containerId);
    bool startMessagesContainer(QJsonObject &request);
    bool clientGone() const;
    QString upstreamPath() const;
    // The upstream URL the events name, written once per loop (every round names it twice).
    const QString &upstreamUrl();
    QJsonObject hookKwargs(const QJsonObject &request) const;

    ProxyRequest m_request;
    QPointer<ResponseSink> m_sink;
    QPointer<CodeInterpreterInterception> m_interception;
    QPointer<UpstreamClient> m_upstream;
    QPointer<EventBus> m_events;

    QString m_provider;
    QString m_upstreamUrl;
    bool m_stream = false;
    QJsonValue m_streamOptions = QJsonValue::Undefined;
    QString m_sandboxKey;
    bool m_sessionScoped = false;
    QJsonObject m_initialKwargs;
    std::optional<AgenticLoopPlan> m_lastPlan;
    QJsonArray m_codeCalls; // every code_interpreter_call, in the order the code ran
    // What the client gets before the final answer's own items: each round's reasoning and
    // messages, then the calls it ran (the post hook's "earlier_output").
    QJsonArray m_earlierOutput;
    ResponsesStreamWriter m_writer;
    QJsonObject m_usage;
    int m_iterations = 0;
    bool m_finished = false;
    bool m_cleanedUp = false;
    QPointer<PauseBroker> m_broker;
    QTimer m_heartbeat;     // ": paused" to a streaming client while a pause is open
    QTimer m_waitHeartbeat; // ": waiting for a sandbox" while the plan waits for a slot
    bool m_waitingForSandbox = false;
    // Cancelled when the client goes away: the upstream call, the plan's wait and code run.
    CancellationToken m_cancel = Cancellation::create();
    int m_pausesOpen = 0;
    bool m_abortedByUser = false;
    QString m_abortReason;       // set when the proxy, not the user, ended a pause (abortAll)
    int m_flowStatus = 0;        // what the flow records when it differs from the client's status
    bool m_clientClosed = false; // ended because the client hung up
    QString m_sessionId;
    MessagesLoopBridge *m_bridge = nullptr; // child; only for ApiSurface::Messages
};

} // namespace loopscope
