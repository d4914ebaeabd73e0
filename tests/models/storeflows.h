#pragma once

// Flows in a REAL in-memory FlowStore, made from the InspectorEvents core publishes (see
// sampleevents.h), for the window's store-backed models and widgets. A flow is done (written
// to SQLite) once its loop finished and its exchange ended, as with the real proxy.

#include "inspect/eventbus.h"
#include "models/sampleevents.h"
#include "record/flowstore.h"

#include <QJsonArray>
#include <QJsonObject>

#include <memory>

namespace loopscope::storeflows {

namespace s = loopscope::sample;
using Kind = InspectorEvent::Kind;

inline std::unique_ptr<FlowStore> openInMemoryStore(EventBus *bus) {
    FlowStoreOptions options;
    options.inMemory = true;
    options.batchIntervalMs = 20;
    auto store = std::make_unique<FlowStore>(options);
    if (!store->open())
        return {};
    store->attach(bus);
    return store;
}

// The front's end of an exchange (ResponseSink::finish).
inline InspectorEvent exchangeFinished(const QString &id, int status = 200,
                                       double durationMs = 600) {
    return InspectorEvent::make(Kind::ExchangeFinished, id, -1,
                                {{QStringLiteral("status"), status},
                                 {QStringLiteral("durationMs"), durationMs},
                                 {QStringLiteral("ttfbMs"), 10.0},
                                 {QStringLiteral("overheadMs"), 2.0}});
}

inline void publish(EventBus &bus, const QList<InspectorEvent> &events) {
    for (const InspectorEvent &e : events)
        bus.publish(e);
}

// A finished two-iteration loop (model call, code run, model call): 2 iterations, 1 code run,
// 120 + 180 = 300 tokens.
inline void completedFlow(EventBus &bus, const QString &id,
                          const QString &model = QStringLiteral("gpt-4.1-mini"),
                          const QString &code = QStringLiteral("print(6*7)")) {
    publish(bus, {s::started(id, 0, QStringLiteral("responses"), model),
                  s::upstream(id, 0, 0, 100, 100, 20),
                  s::code(id, 0, 0, code, QStringLiteral("42\n"), QStringLiteral("sbx_1")),
                  s::upstream(id, 1, 0, 100, 150, 30), s::finished(id, 0, 600, 2, 1),
                  exchangeFinished(id)});
}

// A finished loop in the agent run of `session` (metadata.session_id groups flows into runs).
inline void sessionFlow(EventBus &bus, const QString &id, const QString &session,
                        bool codeRaises = false) {
    InspectorEvent start = s::started(id, 0);
    QJsonObject request = start.data.value(QStringLiteral("request")).toObject();
    request.insert(QStringLiteral("metadata"),
                   QJsonObject{{QStringLiteral("session_id"), session}});
    start.data.insert(QStringLiteral("request"), request);
    publish(bus, {start, s::upstream(id, 0, 0, 100, 100, 20),
                  codeRaises ? s::codeError(id, 0, 0, QStringLiteral("1/0"), QStringLiteral("sbx"))
                             : s::code(id, 0, 0, QStringLiteral("print(2)"), QStringLiteral("2\n"),
                                       QStringLiteral("sbx")),
                  s::upstream(id, 1, 0, 100, 150, 30), s::finished(id, 0, 500, 2, 1),
                  exchangeFinished(id, 200, 500)});
}

// A finished loop whose code raised: code_errors = 1.
inline void codeErrorFlow(EventBus &bus, const QString &id) {
    publish(bus, {s::started(id, 0), s::upstream(id, 0, 0, 100),
                  s::codeError(id, 0, 0, QStringLiteral("1/0"), QStringLiteral("sbx_1")),
                  s::upstream(id, 1, 0, 100), s::finished(id, 0, 300, 2, 1), exchangeFinished(id)});
}

// A loop that stopped at its iteration limit: incomplete, with the reason.
inline void incompleteFlow(EventBus &bus, const QString &id, const QString &reason) {
    InspectorEvent done = s::finished(id, 0, 300, 1, 0);
    done.data.insert(QStringLiteral("incompleteReason"), reason);
    publish(bus, {s::started(id, 0), s::upstream(id, 0, 0, 100), done, exchangeFinished(id)});
}

// An upstream failure: state failed, HTTP status `status`.
inline void failedFlow(EventBus &bus, const QString &id, int status = 502) {
    InspectorEvent failed = s::failed(id, 0, status, QStringLiteral("upstream down"));
    failed.data.insert(QStringLiteral("flowStatus"), status);
    publish(bus, {s::started(id, 0), failed, exchangeFinished(id, status)});
}

// Started and still running (no end events).
inline void runningFlow(EventBus &bus, const QString &id) {
    publish(bus, {s::started(id, 0), s::upstream(id, 0, 0, 100)});
}

// Running and paused before its code runs (breakpoints).
inline void pausedFlow(EventBus &bus, const QString &id) {
    runningFlow(bus, id);
    bus.publish(
        InspectorEvent::make(Kind::Paused, id, 0,
                             {{QStringLiteral("id"), QString(QStringLiteral("pause_") + id)},
                              {QStringLiteral("kind"), QStringLiteral("code")}}));
}

// `count` full flows written at once through importFlows (fast; ids f00000…, started_at
// ascending from `t0` one second apart, so "newest first" is f<count-1> … f00000). Imported
// flows are marked "imported":true.
inline int importNumbered(FlowStore &store, int count, qint64 t0 = 1'700'000'000'000,
                          const QString &prefix = QStringLiteral("f")) {
    QList<QJsonObject> flows;
    flows.reserve(count);
    for (int i = 0; i < count; ++i) {
        const QString id = prefix + QStringLiteral("%1").arg(i, 5, 10, QLatin1Char('0'));
        const QJsonObject body{{QStringLiteral("model"), QStringLiteral("gpt-4.1-mini")},
                               {QStringLiteral("input"), QStringLiteral("question %1").arg(i)}};
        flows.append(QJsonObject{
            {QStringLiteral("id"), id},
            {QStringLiteral("object"), QStringLiteral("loopscope.flow")},
            {QStringLiteral("started_at"), double(t0 + qint64(i) * 1000)},
            {QStringLiteral("method"), QStringLiteral("POST")},
            {QStringLiteral("path"), QStringLiteral("/v1/responses")},
            {QStringLiteral("api"), QStringLiteral("responses")},
            {QStringLiteral("model"), QStringLiteral("gpt-4.1-mini")},
            {QStringLiteral("state"), QStringLiteral("completed")},
            {QStringLiteral("status"), 200},
            {QStringLiteral("iterations"), 1},
            {QStringLiteral("duration_ms"), 12.0},
            {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 10},
                                                  {QStringLiteral("output_tokens"), 5},
                                                  {QStringLiteral("total_tokens"), 15}}},
            {QStringLiteral("hops"),
             QJsonArray{QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_request")},
                                    {QStringLiteral("at"), double(t0 + qint64(i) * 1000)},
                                    {QStringLiteral("method"), QStringLiteral("POST")},
                                    {QStringLiteral("path"), QStringLiteral("/v1/responses")},
                                    {QStringLiteral("headers"), QJsonObject()},
                                    {QStringLiteral("body"), body}}}}});
    }
    return store.importFlows(flows);
}

} // namespace loopscope::storeflows
