#pragma once

#include "common/outcome.h"
#include "interception/agenticloophooks.h"
#include "interception/agenticloopplan.h"
#include "interception/agenticrequest.h"

#include <QFuture>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace loopscope {

// Everything the executor needs to know about the round that produced the plan.
struct FollowUpContext {
    AgenticRequest request;   // the request whose response triggered the plan
    int depth = 0;            // that request's depth
    int maxLoops = 3;         // effective max_agentic_loops
    QStringList fingerprints; // that request's fingerprints
    QString fingerprint;      // of this round's gate payload
};

// The I/O-free follow-up step of the agentic loop (spec §3.5–3.8), shared by the Responses and
// Chat Completions surfaces. The driver (core/proxy) owns the loop:
//
//   1. pre-call hook on the flat request (CodeInterpreterInterception::preCallDeploymentHook)
//   2. upstream call with keys::providerRequestBody(request)
//   3. gate (shouldRunAgenticLoop); if false → done
//   4. safetyRailError(fingerprint(payload), ...) → error: per LiteLLM this aborts this level
//   5. buildAgenticLoopPlan(...) → plan (a failure means: keep the response, log the error)
//   6. AgenticFollowUp::execute(plan, context, caller, hooks, owner) → the final response; the
//      caller re-enters step 1 with the flat follow-up request (depth+1).
//
// execute() builds the follow-up (buildFollowUpRequest), calls `caller`, runs the post hook on
// success, and ALWAYS runs the cleanup hook exactly once before finishing, passing a failure
// of the follow-up (or of the plan) through unchanged.
class AgenticFollowUp {
public:
    using UpstreamCaller =
        std::function<QFuture<Outcome<QJsonObject>>(const QJsonObject &followUpRequest)>;

    // Sorted-keys compact JSON of the gate payload.
    static QString fingerprint(const QJsonObject &gatePayload);
    // "Agentic loop detected repeated tool-call fingerprint; aborting rerun" when
    // `fingerprint` was seen, else "Exceeded max_agentic_loops=<n> for model=<model>" when
    // depth >= maxLoops, else nullopt.
    static std::optional<QString> safetyRailError(const QString &fingerprint,
                                                  const QStringList &fingerprints, int depth,
                                                  int maxLoops, const QString &model);
    // LiteLLM's validated_max_agentic_loops: null/absent → `fallback`; ints, whole doubles and
    // trimmed integer strings accepted; bools and other types → "<field> must be an integer,
    // got <repr>"; values < 1 → "<field> must be at least 1, got <n>".
    static Outcome<int> validatedMaxAgenticLoops(const QJsonValue &value, const QString &field,
                                                 int fallback = 3);

    // The flat follow-up request (§3.6 steps 1–3, §3.7 step 2):
    // model = patch.model or request model; input/messages = patch.messages (missing → error
    // "Agentic loop plan missing patched responses input" / "... missing patched messages");
    // params = request params overlaid by patch.optionalParams, tools replaced by patch.tools,
    // tool_choice dropped when it targets the code interpreter (both surfaces; on chat also
    // when the plan left it out), stream / stream_options dropped; kwargs = request kwargs then
    // plan kwargs, neither overriding a key sent as a param, minus litellm_logging_obj,
    // foreign interception keys and converted-stream flags, plus _agentic_loop_depth = depth+1,
    // max_agentic_loops, _agentic_loop_fingerprints = fingerprints + [fingerprint]. On chat the
    // loop keys are mirrored into litellm_metadata as LiteLLM's chat driver does.
    static Outcome<QJsonObject> buildFollowUpRequest(const AgenticLoopPlan &plan,
                                                     const FollowUpContext &context);

    // Builds, calls, post-hooks and (always, exactly once) cleans up. `owner` is the QObject
    // whose thread runs the continuations; if it dies first the returned future is cancelled.
    // `hooks` may be null (no post/cleanup).
    static QFuture<Outcome<QJsonObject>> execute(const AgenticLoopPlan &plan,
                                                 const FollowUpContext &context,
                                                 const UpstreamCaller &caller,
                                                 AgenticLoopHooks *hooks, QObject *owner);
};

} // namespace loopscope
