#pragma once

#include "inspect/inspectorevent.h"

#include <QJsonObject>

namespace loopscope {

// The `code_run` hop of a flow (../shared/spec/control-api.md) folded from the loop's code-run
// events. One fold for both readers that build it: FlowRecorder (what the store keeps) and the
// window's Code and output panel (its live copy until the next snapshot of the stored flow).
class CodeRunHop {
public:
    // A hop for a run that has just started (CodeRunStarted, or the first event seen of it):
    // empty streams, no output or error yet.
    static QJsonObject started(const InspectorEvent &event);
    // Appends a CodeRunOutput chunk to its stream and notes its sequence in `output_seq`, so a
    // reader holding a snapshot can skip the chunks it already has.
    static void appendOutput(QJsonObject &hop, const InspectorEvent &event);
    // The final state from a CodeExecuted event's data; `output_seq` goes (the streams are final).
    static void applyExecuted(QJsonObject &hop, const QJsonObject &data);
};

} // namespace loopscope
