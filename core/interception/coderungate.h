#pragma once

#include <QFuture>
#include <QString>

#include <functional>

namespace loopscope {

// One tool call's code about to run in the sandbox (the breakpoint seam of the plan builder).
struct CodeRunRequest {
    QString litellmCallId; // the client request (flow) the call belongs to
    QString callId;        // the model's tool-call id
    QString code;          // the code the model wrote
    QString containerId;
    QString sandboxKey;
};

// What happens to that code: run it (maybe edited), deny it (the model gets `message` as the
// tool output and the loop goes on) or abort the whole plan. `decision` / `editedFrom` are
// recorded with the run (empty when nobody was asked).
struct CodeRunVerdict {
    enum class Action { Run, Deny, Abort };
    Action action = Action::Run;
    QString code;
    QString message;
    QString decision;
    QString editedFrom;
};

// Asked before each code run of a plan; the future finishes on the plan builder's thread or
// any other (only its value is read). A cancelled future counts as an abort.
using CodeRunGate = std::function<QFuture<CodeRunVerdict>(const CodeRunRequest &)>;

} // namespace loopscope
