#pragma once

#include "common/cooperativeyield.h"
#include "conversation/ssedecoder.h"
#include "inspect/boundedeventqueue.h"
#include "inspect/credentialpolicy.h"
#include "inspect/inspectorevent.h"
#include "record/modelprice.h"
#include "record/recordedflow.h"
#include "record/rungrouper.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace loopscope {

class StoreWriter;

// Folds InspectorEvents into flows (lives on the store thread; events arrive queued, in the
// order they were published). A running flow lives in memory; when its exchange ends it is
// handed to the StoreWriter (on its own thread) and stays visible as "pending" until the
// writer's committed() signal comes back, so readers never see a gap (for a moment a flow is
// both pending and stored: readers prefer the live copy and skip the stored one). Readers on
// other threads take snapshots under the mutex.
class FlowRecorder : public QObject {
    Q_OBJECT
public:
    FlowRecorder(StoreWriter *writer, QHash<QString, ModelPrice> prices, QObject *parent = nullptr);
    ~FlowRecorder() override;

    // Store thread: one event.
    void record(const loopscope::InspectorEvent &event);
    // Any thread (the publisher's): queues an event for record() on the store thread, in
    // order. One posted call per batch and a queue swapped out whole: through Qt's posted-event
    // list (a queued connection, before) each event cost an allocation, and the list keeps the
    // capacity of its longest backlog for good (suspected of the soak's RSS steps; it was not).
    // Bounded (kIntakeLimits): a store thread that falls this far behind sheds live output
    // first (the run's CodeExecuted carries it whole), then body events, never a flow's start,
    // end or code runs until kIntakeLimits.max; a flow that lost events says so
    // ("events_dropped": true in its summary). Drops are counted (intakeDropped()).
    void take(const loopscope::InspectorEvent &event);
    // Any thread: counts the intake's drops in `counter` too (the bus's "recorder").
    void setDropCounter(std::shared_ptr<std::atomic<quint64>> counter);
    quint64 intakeDropped() const { return m_intake.dropped(); }
    // Any thread: SSE events decoded but not kept (flows past kMaxSseEvents).
    quint64 sseEventsDropped() const { return m_sseDropped.load(std::memory_order_relaxed); }
    // What waits for the store thread: ~3 s of 2,000 requests/s (8 events each) before live
    // output is shed, ~12 s before body events are (their bytes at most 256 MiB in all), and
    // a million before even a flow's start or end is.
    static constexpr BoundedEventQueue::Limits kIntakeLimits{50'000, 200'000, 256LL << 20,
                                                             1'000'000};
    // SSE events kept per flow: the first kMaxSseEvents - kSseTail (a 20,000-token answer
    // streamed a token per event, ~10 MB as JSON), then the last kSseTail (the end of a stream
    // holds its usage and status, in Responses the whole response). The rest are counted.
    static constexpr qsizetype kMaxSseEvents = 20'000;
    static constexpr qsizetype kSseTail = 1'000;
    static BoundedEventQueue::Weight intakeWeightOf(const InspectorEvent &event);
    // Whether anyone listens to flowStarted/flowUpdated (a summary per event is a good part of
    // recording; unobserved, it is skipped). Set before events arrive; default: always.
    void setObserved(std::function<bool()> observed) { m_observed = std::move(observed); }
    // Any thread: the policy bodies, streams and imports are masked with (the bus's; default:
    // key names and formats only). Events' `data` arrives masked by the bus already.
    void setCredentials(std::shared_ptr<const CredentialPolicy> credentials);
    // Store thread: the writer committed these; forget their pending copies.
    void onCommitted(const QStringList &ids);
    // Store thread: seeds run grouping from the stored keys (at open).
    void seedRunKeys(const QList<QPair<QString, QString>> &keys);
    // Store thread: imported flows, queued for the writer; returns how many. `stored` says
    // whether the store already holds an id (the flow then gets a fresh one).
    int importFlows(const QList<QJsonObject> &flows,
                    const std::function<bool(const QString &)> &stored);
    // Store thread: forgets pending flows and run keys (after the writer cleared the store).
    void clearFinished();
    // Store thread, at shutdown: running flows are written as failed ("loopscope stopped").
    void finishAll(const QString &reason);

    // Any thread: running and not-yet-committed flows.
    QList<QJsonObject> liveSummaries() const;
    QList<QJsonObject> liveFlows() const; // summary + hops
    std::optional<QJsonObject> liveFlow(const QString &id) const;
    // Any thread: the ids of running and not-yet-committed flows (no JSON copied).
    QStringList liveIds() const;
    // Any thread: events received, and those with a request id that matched no flow (a late
    // event of a finished flow). Counted so a benchmark can prove no event was lost on the way.
    quint64 eventsReceived() const { return m_eventsReceived.load(std::memory_order_relaxed); }
    quint64 eventsUnmatched() const { return m_eventsUnmatched.load(std::memory_order_relaxed); }

    // Store thread: records every event taken so far. FlowStore calls it before anything that
    // must see every event published until then (its barriers), as a drain may be waiting.
    void drainIntake();

signals:
    void flowStarted(const QJsonObject &summary);
    void flowUpdated(const QJsonObject &summary);
    void flowFinished(const QJsonObject &summary);

private:
    // Store thread: a drain soon, not at once, so the events of an exchange (five or more,
    // from the proxy thread) are recorded in one wake-up instead of one each.
    void scheduleDrain();
    RecordedFlow *flowFor(const InspectorEvent &event);
    RecordedFlow &start(const QString &id, qint64 at);
    void assignRun(RecordedFlow &flow);
    void onClientChunk(RecordedFlow &flow, const QByteArray &bytes);
    // `dataMayNeedMasking`: per event, what firstLook found in its data as it came (SseDecoder),
    // to skip masking what cannot need it.
    void keepSseEvents(RecordedFlow &flow, const QJsonArray &events,
                       const QList<bool> &dataMayNeedMasking);
    // Notes for each decoded event whether its data as it came may hold a secret.
    SseDecoder::DataSeen firstLook(QList<bool> &mayNeedMasking) const;
    void finalize(const QString &id);
    void resolveFinalResponse(RecordedFlow &flow);
    // `verbatim` (may be null) tells whether the result is exactly what `raw` parses to: a
    // JSON object or array, nothing masked (RecordedFlow::requestBodyText).
    QJsonValue parseBody(const QByteArray &raw, bool *verbatim = nullptr) const;
    QJsonObject runningJson(const RecordedFlow &flow) const; // under m_mutex

    StoreWriter *m_writer;
    QHash<QString, ModelPrice> m_prices;
    RunGrouper m_runs;
    BoundedEventQueue m_intake;
    QMutex m_lossyMutex; // guards m_lossy: flows whose events the intake dropped
    QSet<QString> m_lossy;
    std::atomic<quint64> m_sseDropped{0};
    CooperativeYield m_yield{{}}; // between events, see the class
    QTimer m_drainTimer;          // a drain scheduled (scheduleDrain)
    mutable QMutex m_mutex;       // guards m_running, m_pending and m_credentials
    std::shared_ptr<const CredentialPolicy> m_credentials;
    QHash<QString, RecordedFlow> m_running;
    // Finished, not committed yet: the summary kept apart from the hops, so listing them
    // (every page, every count) copies no hops.
    struct PendingFlow {
        QJsonObject summary;
        QJsonArray hops;
        QJsonObject toJson() const; // summary + hops, as a stored flow reads
    };
    QHash<QString, PendingFlow> m_pending;
    std::function<bool()> m_observed = [] { return true; };
    std::atomic<quint64> m_eventsReceived{0};
    std::atomic<quint64> m_eventsUnmatched{0};
};

} // namespace loopscope
