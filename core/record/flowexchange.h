#pragma once

#include <QByteArrayView>
#include <QJsonObject>

namespace loopscope {

class SharedJsonParser;

// What the run view needs of one flow (issue 36): its summary (state, status, model, usage,
// cost, timing), the request the client sent and the answer it got — not the hops in between
// (a pass-through flow stores its request twice, as the client's and as the upstream's).
struct FlowExchange {
    QJsonObject summary;
    QJsonObject request; // the client_request hop (method, path, headers as stored: masked, body)
    // The client_response hop; else the last upstream_response (a flow that ended before it
    // answered its client); {} while there is neither.
    QJsonObject answer;

    QString id() const;
    // From a full flow (summary + "hops", FlowQuery::flow).
    static FlowExchange fromFlow(const QJsonObject &flow);
    // From a stored row: its summary JSON and its hops JSON (uncompressed). Only the two hops
    // wanted are parsed, through `parser` (large parts repeated across a run's flows parsed
    // once); the rest is skipped unparsed.
    static FlowExchange fromStored(QByteArrayView summary, QByteArrayView hops,
                                   SharedJsonParser &parser);
};

} // namespace loopscope
