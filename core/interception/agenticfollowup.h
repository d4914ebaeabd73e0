#pragma once

#include "common/outcome.h"
#include "interception/agenticloopplan.h"
#include "interception/agenticrequest.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

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

// The I/O-free follow-up steps of the agentic loop (spec §3.5–3.8), shared by the Responses and
// Chat Completions surfaces. The driver is loop/AgenticLoop (the only one):
//
//   1. pre-call hook on the flat request (CodeInterpreterInterception::preCallDeploymentHook)
//   2. upstream call with keys::providerRequestBody(request)
//   3. gate (shouldRunAgenticLoop); if false → post hook, cleanup hook, answer
//   4. safetyRailError(fingerprint(payload), ...) → the ceiling: post hook, cleanup hook, answer
//   5. buildAgenticLoopPlan(...) → plan (a failure ends the request; cleanup hook)
//   6. buildFollowUpRequest(plan, context) → the flat follow-up; back to step 1 at depth+1.
class AgenticFollowUp {
public:
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
};

} // namespace loopscope
