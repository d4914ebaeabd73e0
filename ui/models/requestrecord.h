#pragma once

#include "inspect/inspectorevent.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace loopscope {

// Token counts as reported in an upstream `usage` object (Responses or Chat Completions naming).
struct TokenUsage {
    qint64 input = 0;
    qint64 output = 0;
    qint64 total = 0;

    static TokenUsage fromJson(const QJsonObject &usage);
    TokenUsage &operator+=(const TokenUsage &other);
    bool isEmpty() const { return input == 0 && output == 0 && total == 0; }
};

// One model call of the loop, as reported by an UpstreamCall event.
struct UpstreamCallRecord {
    int iteration = -1;
    qint64 timestampMs = 0; // when the answer arrived
    QJsonObject request;
    QJsonObject response;
    int status = 0;
    qint64 latencyMs = 0;
    TokenUsage usage;
    QString error;
};

// One sandbox execution, as reported by a CodeExecuted event.
// A picture a run produced (CodeExecuted "images"), decoded from its data: URL.
struct CodeRunImage {
    QString name;
    QString mimeType;
    QByteArray data;
};

// A container file a run created or changed (CodeExecuted "files", OpenAI's container.file).
struct CodeRunFile {
    QString id;
    QString path;
    qint64 bytes = 0;
    QString source;
};

struct CodeRunRecord {
    int iteration = -1;
    qint64 timestampMs = 0; // when the run finished
    QString callId;
    QString code;
    QString stdoutText;
    QString stderrText;
    QString errorName;
    QString errorValue;
    QString traceback;
    QString output; // what was fed back to the model
    double durationMs = 0.0;
    QString containerId;
    QString sessionId;
    bool truncated = false;
    bool timedOut = false;
    bool executed = true; // false when the call never ran (e.g. unparsable tool arguments)
    QList<CodeRunImage> images;
    QList<CodeRunFile> files;

    bool hasError() const { return !errorName.isEmpty() || !errorValue.isEmpty(); }
};

enum class RequestState { Running, Completed, Failed };

// Everything the panels know about one client request, folded from its events in order.
struct RequestRecord {
    QString id;
    qint64 startedMs = 0;
    qint64 lastEventMs = 0;
    QString method;
    QString path;
    QString api; // "responses" | "chat_completions" | "other"
    QString model;
    bool stream = false;
    bool intercepted = false;
    QString identity; // already masked by the publisher
    QString sessionId;
    QJsonObject clientRequest;

    RequestState state = RequestState::Running;
    int openPauses = 0; // breakpoints holding it: the row reads "paused"
    int httpStatus = 0;
    qint64 durationMs = -1; // -1 while running
    int iterations = 0;
    int codeRunCount = 0;
    TokenUsage usage;
    QString failureMessage;
    QString incompleteReason;

    QList<UpstreamCallRecord> upstreamCalls;
    QList<CodeRunRecord> codeRuns;
    QJsonArray injectedItems;
    QJsonObject finalResponse;
    bool payloadsDropped = false; // see dropPayloads()

    static RequestRecord fromStarted(const InspectorEvent &event);
    // Folds a later event of this request in (UpstreamCall, CodeExecuted, OutputsInjected,
    // RequestFinished, RequestFailed); other kinds are ignored. Returns whether anything changed.
    bool apply(const InspectorEvent &event);

    // Frees the bulky parts (JSON documents, long outputs) of a request that is no longer among
    // the newest: what the table shows stays. Keeps memory bounded however large payloads are.
    void dropPayloads();
    static constexpr qsizetype kKeptTextChars = 16 * 1024;

    bool hasCode() const { return codeRunCount > 0 || !codeRuns.isEmpty(); }
    QString statusText() const;
    // Milliseconds from start to finish, or to the last event while running.
    qint64 elapsedMs() const;
};

} // namespace loopscope
