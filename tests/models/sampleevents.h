#pragma once

// Realistic InspectorEvents, shaped like the ones core publishes (see inspectorevent.h), for
// model and widget tests. Timestamps are explicit so tests can reason about timelines.

#include "inspect/inspectorevent.h"

#include <QJsonArray>
#include <QJsonObject>

namespace loopscope::sample {

using Kind = InspectorEvent::Kind;

inline InspectorEvent stamped(InspectorEvent e, qint64 ts) {
    static quint64 sequence = 0;
    e.sequence = ++sequence;
    e.timestampMs = ts;
    return e;
}

inline InspectorEvent started(const QString &id, qint64 ts,
                              const QString &api = QStringLiteral("responses"),
                              const QString &model = QStringLiteral("gpt-4.1-mini"),
                              const QString &session = {}) {
    QJsonObject request{
        {QStringLiteral("model"), model},
        {QStringLiteral("input"), QStringLiteral("What is 6*7? Use python.")},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")}}}}};
    return stamped(InspectorEvent::make(
                       Kind::RequestStarted, id, -1,
                       {{QStringLiteral("method"), QStringLiteral("POST")},
                        {QStringLiteral("path"), api == QLatin1String("responses")
                                                     ? QStringLiteral("/v1/responses")
                                                     : QStringLiteral("/v1/chat/completions")},
                        {QStringLiteral("api"), api},
                        {QStringLiteral("model"), model},
                        {QStringLiteral("stream"), false},
                        {QStringLiteral("intercepted"), true},
                        {QStringLiteral("identity"), QStringLiteral("…a1b2")},
                        {QStringLiteral("sessionId"), session},
                        {QStringLiteral("request"), request}}),
                   ts);
}

inline InspectorEvent upstream(const QString &id, int iteration, qint64 ts, qint64 latencyMs,
                               int inputTokens = 100, int outputTokens = 20, int status = 200) {
    return stamped(
        InspectorEvent::make(
            Kind::UpstreamCall, id, iteration,
            {{QStringLiteral("request"),
              QJsonObject{{QStringLiteral("model"), QStringLiteral("gpt-4.1-mini")},
                          {QStringLiteral("api_key"), QStringLiteral("sk-test-1234567890abcd")}}},
             {QStringLiteral("response"),
              QJsonObject{
                  {QStringLiteral("id"), QStringLiteral("resp_%1_%2").arg(id).arg(iteration)},
                  {QStringLiteral("status"), QStringLiteral("completed")}}},
             {QStringLiteral("status"), status},
             {QStringLiteral("latencyMs"), latencyMs},
             {QStringLiteral("usage"),
              QJsonObject{{QStringLiteral("input_tokens"), inputTokens},
                          {QStringLiteral("output_tokens"), outputTokens},
                          {QStringLiteral("total_tokens"), inputTokens + outputTokens}}}}),
        ts);
}

inline InspectorEvent code(const QString &id, int iteration, qint64 ts, const QString &source,
                           const QString &stdoutText, const QString &containerId,
                           double durationMs = 12.5, const QString &session = {}) {
    return stamped(
        InspectorEvent::make(Kind::CodeExecuted, id, iteration,
                             {{QStringLiteral("callId"), QStringLiteral("call_%1").arg(iteration)},
                              {QStringLiteral("code"), source},
                              {QStringLiteral("stdout"), stdoutText},
                              {QStringLiteral("stderr"), QString()},
                              {QStringLiteral("output"), stdoutText},
                              {QStringLiteral("durationMs"), durationMs},
                              {QStringLiteral("containerId"), containerId},
                              {QStringLiteral("sessionId"), session},
                              {QStringLiteral("truncated"), false},
                              {QStringLiteral("timedOut"), false}}),
        ts);
}

inline InspectorEvent codeError(const QString &id, int iteration, qint64 ts, const QString &source,
                                const QString &containerId, bool timedOut = false) {
    return stamped(
        InspectorEvent::make(
            Kind::CodeExecuted, id, iteration,
            {{QStringLiteral("callId"), QStringLiteral("call_err")},
             {QStringLiteral("code"), source},
             {QStringLiteral("stdout"), QString()},
             {QStringLiteral("stderr"), QStringLiteral("warning: something\n")},
             {QStringLiteral("error"),
              QJsonObject{
                  {QStringLiteral("name"),
                   timedOut ? QStringLiteral("TimeoutError") : QStringLiteral("ZeroDivisionError")},
                  {QStringLiteral("value"), QStringLiteral("division by zero")},
                  {QStringLiteral("traceback"),
                   QStringLiteral("Traceback (most recent call last):\n  File \"<cell>\", "
                                  "line 1, in <module>\nZeroDivisionError: division by zero")}}},
             {QStringLiteral("output"), QStringLiteral("[execution error] division by zero")},
             {QStringLiteral("durationMs"), 3.0},
             {QStringLiteral("containerId"), containerId},
             {QStringLiteral("truncated"), true},
             {QStringLiteral("timedOut"), timedOut}}),
        ts);
}

inline QJsonObject ciItem(const QString &codeText, const QString &logs,
                          const QString &containerId) {
    return {{QStringLiteral("id"), QStringLiteral("ci_0123456789abcdef0123456789abcdef")},
            {QStringLiteral("type"), QStringLiteral("code_interpreter_call")},
            {QStringLiteral("status"), QStringLiteral("completed")},
            {QStringLiteral("code"), codeText},
            {QStringLiteral("container_id"), containerId},
            {QStringLiteral("outputs"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("logs")},
                                    {QStringLiteral("logs"), logs}}}}};
}

inline InspectorEvent injected(const QString &id, qint64 ts, const QJsonArray &items) {
    return stamped(
        InspectorEvent::make(Kind::OutputsInjected, id, -1, {{QStringLiteral("items"), items}}),
        ts);
}

inline InspectorEvent finished(const QString &id, qint64 ts, qint64 durationMs, int iterations,
                               int codeRuns, int totalTokens = -1) {
    QJsonObject data{
        {QStringLiteral("status"), 200},
        {QStringLiteral("durationMs"), durationMs},
        {QStringLiteral("iterations"), iterations},
        {QStringLiteral("codeRuns"), codeRuns},
        {QStringLiteral("response"),
         QJsonObject{{QStringLiteral("id"), QString(QStringLiteral("resp_final_") + id)},
                     {QStringLiteral("output"), QJsonArray()}}}};
    if (totalTokens >= 0)
        data.insert(QStringLiteral("usage"),
                    QJsonObject{{QStringLiteral("input_tokens"), totalTokens - 10},
                                {QStringLiteral("output_tokens"), 10},
                                {QStringLiteral("total_tokens"), totalTokens}});
    return stamped(InspectorEvent::make(Kind::RequestFinished, id, -1, data), ts);
}

inline InspectorEvent failed(const QString &id, qint64 ts, int status, const QString &message) {
    return stamped(InspectorEvent::make(Kind::RequestFailed, id, -1,
                                        {{QStringLiteral("status"), status},
                                         {QStringLiteral("message"), message},
                                         {QStringLiteral("durationMs"), 40},
                                         {QStringLiteral("iterations"), 1}}),
                   ts);
}

inline InspectorEvent sandbox(Kind kind, const QString &containerId, qint64 ts,
                              const QString &session = {}, const QString &identity = {},
                              int runs = 0) {
    QJsonObject data{{QStringLiteral("containerId"), containerId},
                     {QStringLiteral("provider"), QStringLiteral("local")},
                     {QStringLiteral("ephemeral"), session.isEmpty()},
                     {QStringLiteral("createdMs"), ts},
                     {QStringLiteral("lastUsedMs"), ts},
                     {QStringLiteral("runs"), runs}};
    if (!session.isEmpty())
        data.insert(QStringLiteral("sessionId"), session);
    if (!identity.isEmpty())
        data.insert(QStringLiteral("identity"), identity);
    return stamped(InspectorEvent::make(kind, {}, -1, data), ts);
}

// One complete two-iteration request: model call, code run, model call, injected item, finish.
inline QList<InspectorEvent> fullRequest(const QString &id, qint64 t0,
                                         const QString &containerId = QStringLiteral("sbx_1"),
                                         const QString &session = {}) {
    const QString src = QStringLiteral("print(6*7)");
    return {started(id, t0, QStringLiteral("responses"), QStringLiteral("gpt-4.1-mini"), session),
            upstream(id, 0, t0 + 300, 290),
            code(id, 0, t0 + 330, src, QStringLiteral("42\n"), containerId, 25.0, session),
            upstream(id, 1, t0 + 600, 260, 150, 30),
            injected(id, t0 + 601, QJsonArray{ciItem(src, QStringLiteral("42\n"), containerId)}),
            finished(id, t0 + 602, 602, 2, 1)};
}

} // namespace loopscope::sample
