#pragma once

#include "record/flowexchange.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace loopscope {

class FlowRecorder;
class StoreDatabase;

// GET /loopscope/v1/flows parameters (docs: ../shared/spec/control-api.md, "Flows").
struct FlowFilter {
    int limit = 50; // clamped to 1..1000
    QString before; // flow id: only flows started before it (paging, newest first)
    QString q;      // full-text search over path, model, ids, bodies, code, stdout, stderr
    QString runId;  // only this run
    QString state;  // running|paused|completed|failed
};

// The one read interface over "running flows + store": the window, the control API and MCP all
// read through it, so they cannot disagree. Thread-safe: every calling thread gets its own read
// connection (Qt SQL connections are per thread, opened lazily, closed with the store); running
// flows come from the recorder's in-memory snapshot, finished ones from SQLite. Never call it on
// the proxy thread (a read may take milliseconds); a worker or the GUI's async helper is fine.
class FlowQuery {
public:
    FlowQuery(StoreDatabase *database, FlowRecorder *recorder);

    // {"object":"list","data":[<summary>…],"has_more":bool}, newest first.
    QJsonObject list(const FlowFilter &filter) const;
    // The summary plus "hops" (spec shapes); nullopt for an unknown id.
    std::optional<QJsonObject> flow(const QString &id) const;
    // Stored plus running flows (the window's "Clear N flows from history?").
    int count() const;
    // Spec run objects, most recently active first.
    QJsonArray runs(int limit = 50) const;
    std::optional<QJsonObject> run(const QString &id) const;
    // Full flows (summary + hops), oldest first, for HAR export: the given ids, or the flows
    // of runId, or every flow when both are empty.
    QList<QJsonObject> flows(const QStringList &ids, const QString &runId) const;

    // The run view's read (issue 36): the flows of `runId` in start order, from the `from`-th
    // on, at most `limit` (-1: all), each as its FlowExchange — the client's request and the
    // answer, never the other hops. Stored flows come from one query for the run, running ones
    // from the recorder; large JSON repeated across the flows (an agent's system prompt, tool
    // list, resent history) is parsed once per read and shared. `take` gets them one at a time
    // (false stops the read); returns how many it got.
    qsizetype readRun(const QString &runId, qsizetype from, qsizetype limit,
                      const std::function<bool(FlowExchange &&)> &take) const;
    QList<FlowExchange> runExchanges(const QString &runId, qsizetype from = 0,
                                     qsizetype limit = -1) const;
    // A read of at least this many flows trims the heap when done (glibc's malloc_trim).
    static constexpr qsizetype kTrimAfterFlows = 50;

    // Responses chains rebuilt from the stored flows, for routes where Loopscope keeps the
    // state (ResponsesBridge falls back here when its in-memory store misses, e.g. after a
    // restart). The items a request continuing `responseId` starts with: each earlier turn's
    // input, then its output, oldest first (a streamed answer rebuilt from its events). Nullopt
    // when that response, or one it continued, is not stored as a completed answer of a request
    // that did not say store:false. Bodies are the stored (masked) ones.
    std::optional<QJsonArray> responseChain(const QString &responseId) const;
    // The latest stored response of a Responses conversation ("" when none).
    QString conversationHead(const QString &conversationId) const;
    // Turns a chain is followed back at most (a longer one is answered as not found).
    static constexpr int kMaxChainTurns = 1000;

private:
    StoreDatabase *m_db;
    FlowRecorder *m_recorder;
};

} // namespace loopscope
