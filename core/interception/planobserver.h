#pragma once

#include <QJsonObject>
#include <QString>

#include <functional>

namespace loopscope {

struct ToolCallRun;

// What one plan reports to its driver while it runs the calls (live events, the client's
// stream). Given per plan, so a driver hears only its own request's calls — no filtering of
// everyone's broadcast, even when requests share a session sandbox. Every callback may be
// empty; all are called on the interception's thread, per call in this order: toolCallStarting,
// then (when code runs) codeRunStarted and codeRunOutput for each chunk, then toolCallExecuted.
struct PlanObserver {
    // The plan's sandbox waits for a live slot (sandbox.max_live reached): true when it starts
    // waiting, false when the wait is over (admitted, refused or left).
    std::function<void(bool waiting)> sandboxWaiting;
    // A call is about to run: its code_interpreter_call with status "in_progress" (the recorded
    // item later has the same id).
    std::function<void(const QJsonObject &item)> toolCallStarting;
    // Its code starts running: the code that really runs (edited at a breakpoint or not).
    std::function<void(const QString &containerId, const QString &callId, const QString &code)>
        codeRunStarted;
    // The code printed `text` on `stream` ("stdout"|"stderr").
    std::function<void(const QString &callId, const QString &stream, const QString &text)>
        codeRunOutput;
    // The call ran, or was refused, denied or aborted.
    std::function<void(const QString &containerId, const QString &callId, const QString &code,
                       const ToolCallRun &run)>
        toolCallExecuted;
};

} // namespace loopscope
