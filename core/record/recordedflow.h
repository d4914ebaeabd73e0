#pragma once

#include "conversation/ssedecoder.h"
#include "record/rungrouper.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <vector>

namespace loopscope {

// One flow as the recorder builds it from events: the spec's summary fields plus its hops in
// time order (../shared/spec/control-api.md, "Flows"). Lives on the store thread only.
struct RecordedFlow {
    QString id;
    qint64 startedAt = 0;
    QString method;
    QString path;
    QString api = QStringLiteral("other");
    QString model;
    bool stream = false;
    bool intercepted = false;
    bool passThrough = false;
    bool imported = false;
    QString state = QStringLiteral("running");
    int status = 0;
    int iterations = 0;
    int codeRuns = 0;
    int codeErrors = 0;
    int toolCalls = 0;
    QJsonValue incompleteReason = QJsonValue::Null;
    double durationMs = 0;
    double ttfbMs = 0;
    double overheadMs = 0;
    qint64 inputTokens = 0;
    qint64 outputTokens = 0;
    qint64 totalTokens = 0;
    qint64 cacheReadTokens = 0;  // prompt tokens read from the provider's cache
    qint64 cacheWriteTokens = 0; // prompt tokens written to it (Anthropic's cache creation)
    bool cacheSeen = false;      // the upstream reported either (then both are in usageJson)
    bool usageSeen = false;
    QJsonValue costUsd = QJsonValue::Null;
    QString runId;
    QString sessionId;
    QString containerId;
    QJsonObject extra; // fields added freely (replay_of, …), copied into the summary

    std::vector<QJsonObject> hops;
    int clientResponseHop = -1;
    int upstreamResponseHop = -1;    // the pass-through upstream_response (mirrors the client's)
    QHash<QString, int> codeRunHops; // call id → hop index
    QHash<int, int> upstreamRequestHops; // iteration → its upstream_request hop (sent, unanswered)
    QJsonArray clientEvents;             // the first events of the stream (FlowRecorder's cap)
    QList<QJsonValue> clientEventsTail;  // past the cap: the latest ones
    qint64 clientEventsDropped = 0;      // between the two, not kept
    SseDecoder clientSse;
    bool clientSseStream = false;
    QByteArray clientStreamText; // a non-SSE streamed body
    QJsonObject requestBody;
    // The client's body as it arrived and as recorded (parsed, masked): a pass-through upstream
    // request that shares these bytes is recorded from it instead of being parsed again.
    QByteArray requestRaw;
    QJsonValue requestBodyRecorded;
    // The client's body and its JSON answer exactly as they came, each when its hop holds just
    // what it parses to (JSON, nothing masked): the stored hops are written with these bytes as
    // those bodies instead of serialising the parsed ones again (FlowRow::verbatimBodies), and
    // read back the same.
    QByteArray requestBodyText;
    QByteArray responseBodyText;
    QList<std::pair<qsizetype, QByteArray>> verbatimBodies() const;
    RunGrouper::ConversationChain conversationChain; // lookupKeys' hash, for responseKeys
    QJsonObject finalResponse; // the model's final answer (JSON or rebuilt from SSE)
    bool exchangeDone = false;
    bool loopDone = false;
    int openPauses = 0; // breakpoints holding the flow (state "paused")
    // Its plan waits for a live sandbox slot: the summary says "waiting_for_sandbox": true.
    bool waitingForSandbox = false;
    int flowStatus = 0; // the loop's own status when it differs from the client's (abort: 499)

    void addUsage(const QJsonObject &usage);
    QJsonObject usageJson() const;
    QJsonObject summary() const;
    QJsonArray hopsJson() const;
    // The client's SSE events as kept: the first ones, then the latest.
    QJsonArray clientEventsJson() const;
    // summary + "hops"
    QJsonObject toJson() const;
    // Every text of a flow, for full-text search: `head` (id, path, model…) then every string
    // in `hops` (bodies, events, code, stdout, stderr, output).
    static QString searchText(const QStringList &head, const QJsonArray &hops);
    // The text a stored flow is indexed by, from what is stored: its summary (id, path, model,
    // run, session, container) and its stored hops. The index keeps no copy of it, so the store
    // derives it again from the row, exactly, to take a deleted flow out of the index.
    static QString searchTextOfStored(const QJsonObject &summary, const QJsonArray &storedHops);

    // Restores a flow from its stored JSON (imports).
    static RecordedFlow fromJson(const QJsonObject &flow);

    // The hops as the store keeps them: a pass-through's upstream request body, upstream
    // answer body and upstream SSE events are the client's own (the same bytes, relayed), kept
    // once, on the client's hop; the upstream hop says where ("body_from" / "events_from": the
    // client hop's kind). Halves what a large pass-through flow costs to encode and store.
    static QJsonArray storedHops(const QJsonArray &hops);
    // The inverse, for every read of stored hops: the API and the window see both copies.
    static QJsonArray loadedHops(const QJsonArray &stored);
};

} // namespace loopscope
