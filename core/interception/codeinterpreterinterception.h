#pragma once

#include "common/outcome.h"
#include "interception/agenticloopplan.h"
#include "interception/coderungate.h"
#include "interception/interceptionsettings.h"
#include "interception/planobserver.h"
#include "sandbox/containerfilestore.h"
#include "sandbox/sandboxbackend.h"
#include "sandbox/sandboxregistry.h"

#include <QFuture>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>

#include <optional>

namespace loopscope {

class SandboxToolRegistry;

// LiteLLM's CallTypes, as far as interception cares. Only the four chat/responses types are
// intercepted; chat vs Responses shapes follow the call type.
enum class CallType {
    Completion,
    ACompletion,
    Responses,
    AResponses,
    Embedding,
    AEmbedding,
    AnthropicMessages,
    Other
};

// Result of the gate: whether to run a loop round, and the payload {"tool_calls":[...]} that
// the plan builder consumes and the fingerprint rail hashes. Payload is {} when `run` is false.
struct GateDecision {
    bool run = false;
    QJsonObject payload;
};

// Parsed `litellm_code_execution` arguments (§2.9). `ok` is false when the arguments are not a
// JSON object with a string (or absent) "code": then nothing may run.
struct ParsedCodeArguments {
    bool ok = false;
    QString code;
};

// One executed (or refused) tool call: what is fed back to the model and, when code ran, the
// sandbox's full result (stderr, error, duration) for the inspector.
struct ToolCallRun {
    // The tool result for the model, whole (LiteLLM's _run_tool_call result): stdout, on an
    // exception the error line and traceback, then notes on the images and files it produced.
    QString fedBack;
    // What the model is sent: fedBack, or its head and tail around a marker when it is longer
    // than max_output_chars (context and bill).
    QString toModel;
    // What the client's code_interpreter_call shows: only what the program wrote (clientLogsFor),
    // never a note meant for the model.
    QString logs;
    bool executed = false;
    ExecutionResult result;
    // Set when a breakpoint decided (continued|edited|denied|aborted|timed_out); editedFrom is
    // the model's code when other code ran.
    QString decision;
    QString editedFrom;
    QList<ContainerFile> files; // container files the run created or changed (/mnt/data)
};

// The code interpreter interception (LiteLLM's CodeInterpreterInterceptionLogger): hooks an
// agentic-loop driver calls around one client request. JSON in, JSON and decisions out; the
// only side effects are sandbox create/run/delete, all through the SandboxRegistry.
//
// Requests are LiteLLM-style flat maps ("kwargs"): provider params (model, input/messages,
// tools, tool_choice, stream, ...) next to litellm-level keys (markers, loop controls,
// litellm_metadata, user_api_key_hash, custom_llm_provider). keys::providerRequestBody()
// strips the latter before anything goes upstream.
//
// Lives on the proxy thread. Anything touching a sandbox returns QFuture<Outcome<T>> (or a
// future that never fails) whose continuations run on this object's thread; everything else
// is synchronous.
class CodeInterpreterInterception : public QObject {
    Q_OBJECT
public:
    using BackendsByProvider = QHash<QString, QPointer<SandboxBackend>>;

    // LiteLLM's `sandbox_config` path: every sandbox comes from `injectedBackend` (takes
    // priority over any tool registry); no provider params are captured.
    CodeInterpreterInterception(InterceptionSettings settings, SandboxRegistry *registry,
                                SandboxBackend *injectedBackend, QObject *parent = nullptr);
    // The registry path: `settings.sandboxToolName` is resolved in `tools` when a sandbox is
    // created, and the backend registered for the resolved provider creates it. The resolved
    // params are captured with the sandbox and reused for every run and delete.
    CodeInterpreterInterception(InterceptionSettings settings, SandboxRegistry *registry,
                                const SandboxToolRegistry *tools, BackendsByProvider backends,
                                QObject *parent = nullptr);
    ~CodeInterpreterInterception() override;

    const InterceptionSettings &settings() const { return m_settings; }
    // Config hot reload: affects later requests only (live sandboxes keep their params).
    void setSettings(const InterceptionSettings &settings) { m_settings = settings; }
    SandboxRegistry *registry() const { return m_registry; }
    // Where container files are tracked: after each run the sandbox's /mnt/data is listed and
    // synced in (new files become "assistant" files), and final messages get citations.
    void setFileStore(ContainerFileStore *store) { m_fileStore = store; }
    ContainerFileStore *fileStore() const { return m_fileStore; }

    // --- pre-call deployment hook (§2.5) ---
    // Mutates `kwargs` in place. Returns true when the request was converted (LiteLLM returns
    // the kwargs), false for "no change" (LiteLLM returns None). The untrusted-state scrub of
    // initial requests (falsy _agentic_loop_depth) mutates `kwargs` in both cases.
    bool preCallDeploymentHook(QJsonObject &kwargs, CallType callType);
    // Step 1 of the pre-call hook on its own: on an initial request removes client-forged
    // code-interpreter markers at the root and every interception/loop-control key from
    // litellm_metadata (dropping it when it ends up empty).
    static void scrubUntrustedState(QJsonObject &kwargs);
    // §2.4: custom_llm_provider, else the provider derived from a string model.
    std::optional<QString> resolveProvider(const QJsonObject &kwargs) const;
    static bool isInterceptedCallType(CallType callType);
    static bool isChatCallType(CallType callType);
    // metadata.session_id, else litellm_metadata.session_id (first non-empty string).
    static std::optional<QString> sessionIdOf(const QJsonObject &kwargs);
    // 32 lowercase hex characters (128 bits) from the system CSPRNG.
    static QString mintSandboxKey();
    // "ci_" + 32 lowercase hex characters.
    static QString newCodeInterpreterCallId();

    // --- gate (§2.7) ---
    // `response` is the upstream JSON; `kwargs` the request's litellm-level params (markers,
    // _agentic_loop_api_surface). Refuses without the server marker and re-checks scope.
    GateDecision shouldRunAgenticLoop(const QJsonObject &response, const QString &customLlmProvider,
                                      const QJsonObject &kwargs) const;
    // Responses output items {type:function_call, name:litellm_code_execution} as
    // {"call_id","name","arguments"} (missing arguments → null).
    static QJsonArray extractCodeExecutionToolCalls(const QJsonObject &response);
    // choices[0].message.tool_calls of a chat completion as
    // {"id","call_id","type","name","arguments"} (arguments always a string).
    static QJsonArray extractChatCodeExecutionToolCalls(const QJsonObject &response);

    // --- plan (§2.8) ---
    // `gatePayload` is the gate's {"tool_calls":[...]}; `messages` the Responses input or chat
    // messages; `optionalParams` the request's provider params (tools, tool_choice, ...);
    // `kwargs` its litellm-level params (sandbox key, session flag, surface, ...).
    // Prunes expired sandboxes, gets or creates the sandbox of the request's key (mints one
    // when absent, so the post/cleanup hooks can always delete it), runs every call in order,
    // and returns the follow-up patch with `code_interpreter_call` records. On an
    // infrastructure failure the sandbox is deleted and the failure returned.
    // `gate` (breakpoints) is asked before each call's code runs; the sandbox stays pinned in
    // the registry while it decides. Edited code runs instead and is what the record and the
    // follow-up carry; a denied call is recorded "failed" with the message as its output; an
    // abort ends the plan with kAbortedByUser (the loop's cleanup then runs as on any failure).
    // `response` is the upstream answer that made the calls (LiteLLM passes it too). Given, the
    // follow-up replays the model's whole turn (dialects.md §2): reasoning with its
    // encrypted_content, commentary, the calls with their ids, then the results — or, when the
    // client keeps state upstream (keepsStateUpstream), chains from that answer and sends only
    // the results. Without it the follow-up is LiteLLM's: the calls and their results.
    // `observer` hears this plan's calls as they start, print and finish (no other plan's).
    // `cancel` (the client went away) stops it: a wait for a sandbox slot is left, the running
    // code interrupted (SandboxBackend::run; the call is still recorded, with its output so
    // far), no later call runs, and the plan fails with kPlanCancelled.
    QFuture<Outcome<AgenticLoopPlan>>
    buildAgenticLoopPlan(const QJsonObject &gatePayload, const QString &model,
                         const QJsonValue &messages, const QJsonObject &optionalParams,
                         const QJsonObject &kwargs, CodeRunGate gate = {},
                         const QJsonObject &response = {}, PlanObserver observer = {},
                         CancellationToken cancel = {});
    static inline const QString kAbortedByUser = QStringLiteral("aborted by user");
    static inline const QString kPlanCancelled = QStringLiteral("the plan was cancelled");

    // --- post and cleanup hooks (§2.12, §2.13) ---
    // Deletes a non-session sandbox, then puts what happened before the final answer ahead of
    // the answer's own items (injectCodeInterpreterCalls; Responses only).
    QFuture<QJsonObject> postAgenticLoopResponseHook(const QJsonObject &response,
                                                     const AgenticLoopPlan &plan,
                                                     const QJsonObject &kwargs);
    // Deletes a non-session sandbox; a no-op when the post hook already did.
    QFuture<void> agenticLoopCleanupHook(const AgenticLoopPlan &plan, const QJsonObject &kwargs);
    // The injection step of the post hook on its own (pure): the output becomes `earlier` (the
    // items of the rounds before the final answer, in the order they happened) followed by the
    // response's own items. The calls all ran before the final answer, so with nothing else
    // before it (LiteLLM's case) they simply come first. A response without an "output" list,
    // or an empty `earlier`, is unchanged.
    static QJsonObject injectCodeInterpreterCalls(const QJsonObject &response,
                                                  const QJsonValue &earlier);
    // The post hook's `earlier` from a plan's metadata: "earlier_output" when the driver
    // recorded it (every round's model items and calls), else "code_interpreter_calls".
    static QJsonValue earlierOutputOf(const QJsonObject &planMetadata);
    // A plan's metadata (LiteLLM's keys): the tool type, the sandbox key, whether the sandbox
    // is a session's, and the code_interpreter_call records so far. The post and cleanup hooks
    // read it; the loop builds it with this for a request that never ran code.
    static QJsonObject planMetadata(const QString &sandboxKey, bool sessionScoped,
                                    const QJsonArray &calls = {});

    // --- sandbox building blocks (LiteLLM's underscore helpers, §2.9–2.10) ---
    // The cached sandbox for `cacheKey` (TTL refreshed) or a new one; `identity` set for
    // session-scoped keys (per-identity LRU cap). An empty key creates an uncached sandbox.
    // `admission` hears and cancels a wait for a live slot (SandboxRegistry::getOrCreate).
    QFuture<Outcome<SandboxEntry>> getOrCreateContainer(const QString &cacheKey,
                                                        const std::optional<QString> &identity = {},
                                                        const QString &sessionId = {},
                                                        const SandboxAdmission &admission = {});
    // Runs code with the sandbox's captured params (never re-resolving the tool registry),
    // through the registry only (SandboxRegistry::run): a sandbox it no longer holds fails;
    // `onOutput` gets the run's live output and `cancel` stops it (SandboxBackend::run).
    QFuture<Outcome<ExecutionResult>> runCode(const SandboxEntry &container, const QString &code,
                                              const SandboxOutputSink &onOutput = {},
                                              const CancellationToken &cancel = {});
    // One tool call: what is fed back to the model (stdout, "[execution error] <message>" or
    // "[invalid tool arguments: could not parse code]") with the execution details; a failure
    // only for infrastructure errors, which abort the plan.
    QFuture<Outcome<ToolCallRun>> executeToolCall(const SandboxEntry &container,
                                                  const QString &arguments,
                                                  const SandboxOutputSink &onOutput = {},
                                                  const CancellationToken &cancel = {});
    // Pops and deletes the cached sandbox for `key`; missing key → no-op (idempotent).
    QFuture<void>
    deleteContainerForKey(const QString &key,
                          SandboxRemovalReason reason = SandboxRemovalReason::Completed);
    QFuture<void> pruneExpiredCache();

    // --- pure helpers (§2.9, §2.14) ---
    static ParsedCodeArguments parseCodeArguments(const QString &arguments);
    // The string fed back for one execution result: stdout, then on an exception
    // "[execution error] <value>" (the name when there is no value) and the traceback (ANSI
    // colours removed, at most kMaxTracebackChars, its end kept). With no stdout and no
    // traceback exactly LiteLLM's "[execution error] <value>".
    static QString toolOutputFor(const ExecutionResult &result);
    // What the client sees of a run: stdout exactly, and after an exception what Python itself
    // prints then (the traceback, or "<name>: <value>" when the backend gave none).
    static QString clientLogsFor(const ExecutionResult &result);
    static constexpr int kMaxTracebackChars = 8000;
    // The client's copy of one upstream turn: the model's items (reasoning, commentary
    // messages, ...) without tool calls — intercepted calls become code_interpreter_call items
    // of their own — each with an id (minted when the upstream gave none: the SDK needs one).
    static QJsonArray clientTurnItems(const QJsonObject &response);
    // Whether the client keeps the conversation upstream: it sent previous_response_id or
    // conversation, or store: true. Follow-ups then chain instead of re-sending the input.
    static bool keepsStateUpstream(const QJsonObject &optionalParams);
    // At most about maxChars of `text` for the model: the head and the tail, with a marker in
    // between saying how much was left out and why. Unchanged when it already fits.
    static QString capForModel(const QString &text, int maxChars);

    static constexpr int kDefaultMaxOutputChars = 20000;
    // sandbox.max_output_chars: the most of one run's output fed back to the model.
    void setMaxOutputChars(int chars) { m_maxOutputChars = qMax(200, chars); }
    int maxOutputChars() const { return m_maxOutputChars; }
    // {"id","type","status","code","container_id","outputs"} (outputs [] when `logs` is empty).
    static QJsonObject codeInterpreterCallRecord(const QString &code, const QJsonValue &containerId,
                                                 const QString &logs);
    // Appends {"type":"image","url":"data:image/png;base64,…"} outputs, in order.
    static void appendImageOutputs(QJsonObject &record, const QList<SandboxImage> &images);
    // What the model is told beyond stdout: the run's own notes (an image left out, a figure that
    // failed), each picture shown (by name) and each file written.
    static QString mediaNotes(const ExecutionResult &result, const QList<ContainerFile> &files);
    // Adds OpenAI's container_file_citation annotations to the output_text parts of a
    // Responses message that link `sandbox:/mnt/data/<name>` to a known file of `containerId`.
    static QJsonObject annotateFileCitations(const QJsonObject &response,
                                             const QString &containerId,
                                             const ContainerFileStore &store);
    // string → [{"role":"user","content":s}]; list → copy; anything else → [].
    static QJsonArray normalizeMessages(const QJsonValue &messages);

    static QString noSandboxAvailableError();
    static QString noSandboxToRunCodeError();

private:
    struct PlanJob;
    SandboxFactory sandboxFactory();
    void runNextCall(const std::shared_ptr<PlanJob> &job);
    void runGatedCall(const std::shared_ptr<PlanJob> &job, const CodeRunVerdict &verdict);
    void finishPlan(const std::shared_ptr<PlanJob> &job);

    InterceptionSettings m_settings;
    QPointer<SandboxRegistry> m_registry;
    QPointer<SandboxBackend> m_injectedBackend;
    const SandboxToolRegistry *m_tools = nullptr;
    BackendsByProvider m_backends;
    int m_maxOutputChars = kDefaultMaxOutputChars;
    QPointer<ContainerFileStore> m_fileStore;
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::ToolCallRun)
