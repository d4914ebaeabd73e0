#pragma once

#include "interception/agenticloopplan.h"

#include <QFuture>
#include <QJsonObject>

namespace loopscope {

// The two hooks an agentic-loop driver runs around a follow-up call (LiteLLM's
// async_post_agentic_loop_response_hook and async_agentic_loop_cleanup_hook). The follow-up
// executor only needs these, so tests can substitute a recording implementation.
class AgenticLoopHooks {
public:
    virtual ~AgenticLoopHooks() = default;

    // Runs on the follow-up's response; resolves to the (possibly rewritten) response.
    // Never fails: side-effect errors (e.g. a sandbox delete) are reported, not propagated.
    virtual QFuture<QJsonObject> postAgenticLoopResponseHook(const QJsonObject &response,
                                                             const AgenticLoopPlan &plan,
                                                             const QJsonObject &kwargs) = 0;
    // Runs once after every follow-up attempt, success or failure; must be idempotent with
    // the post hook.
    virtual QFuture<void> agenticLoopCleanupHook(const AgenticLoopPlan &plan,
                                                 const QJsonObject &kwargs) = 0;

protected:
    AgenticLoopHooks() = default;
    AgenticLoopHooks(const AgenticLoopHooks &) = default;
    AgenticLoopHooks &operator=(const AgenticLoopHooks &) = default;
};

} // namespace loopscope
