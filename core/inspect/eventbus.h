#pragma once

#include "inspect/credentialpolicy.h"
#include "inspect/inspectorevent.h"

#include <QHash>
#include <QMutex>
#include <QObject>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

class QThread;

namespace loopscope {

// Publishes InspectorEvents to whoever listens. Core never knows who that is: the window, the
// headless logger and tests all just connect to eventPublished (queued across threads).
// publish() is thread-safe: sequence numbers come from an atomic counter.
//
// Every event leaves masked: publish() masks `data` with the bus's CredentialPolicy, so the
// window, /events, the log and the recorder never see a secret there. `raw` (bodies and stream
// chunks, read by the recorder only) is masked by the recorder on its own thread, so the proxy
// thread never scans a body. A code run's live output is held back per stream while its end
// may be the start of a secret the next chunk completes (CredentialPolicy::holdback); the rest
// is published just before the run's CodeExecuted.
class EventBus : public QObject {
    Q_OBJECT
public:
    explicit EventBus(QObject *parent = nullptr);
    ~EventBus() override; // publishes what is still deferred, then stops its thread

    // Data masked once for several events of one publisher (a loop's request body goes out
    // with the model call's start and again with its answer; scanning it twice was a good part
    // of the loop's own time): publish() puts it in as it is while the secrets are the ones it
    // was masked with, and masks it again if they changed. Only maskOnce() makes one.
    class Masked {
    public:
        Masked() = default;

    private:
        friend class EventBus;
        QJsonObject m_data;
        quint64 m_generation = 0; // CredentialPolicy::generation() before masking; 0: empty
    };

    // Stamps sequence and time, masks, then emits. Returns the stamped event (a live output
    // chunk held back whole is returned unstamped and not emitted).
    InspectorEvent publish(InspectorEvent event);
    InspectorEvent publish(InspectorEvent::Kind kind, const QString &requestId = {},
                           int iteration = -1, const QJsonObject &data = {});
    // The same with `masked`'s keys added to `data` (a key in both takes `masked`'s value).
    InspectorEvent publish(InspectorEvent::Kind kind, const QString &requestId, int iteration,
                           const QJsonObject &data, const Masked &masked);
    Masked maskOnce(const QJsonObject &data) const;

    // Builds each event and publishes it on the bus's own thread ("loopscope-events"), so that
    // masking headers and building the data leave the caller's thread: a pass-through's client
    // waits on the proxy thread, and its next request arrived while that thread still built
    // the last one's events. One order is kept: an event published directly while deferred
    // ones wait is queued behind them (its publish() returns it unstamped). A build runs on
    // another thread: it captures values only. Past kMaxDeferred waiting events the caller
    // waits for room (a bound, not a drop).
    void publishDeferred(std::vector<std::function<InspectorEvent()>> builds);
    // Returns once every event deferred (or queued behind them) before the call is published:
    // the flow store's barriers wait here before they wait for the recorder. Any thread; at
    // once on the bus's own thread.
    void waitForDeferred();
    static constexpr qsizetype kMaxDeferred = 8192;
    // How long the bus's thread waits for more after publishing (deferred events are that
    // late at most while it waits; no publisher wakes it meanwhile).
    static constexpr int kLaneNapMs = 2;

    // The policy every publisher and consumer of this bus masks with; shared, so a consumer on
    // another thread keeps it alive without pointing into the bus.
    const std::shared_ptr<CredentialPolicy> &credentials() const { return m_credentials; }

    // Events a consumer on another thread had to drop (its BoundedEventQueue), by consumer
    // name ("window", "otlp", "recorder"): one counter per name for the life of the bus, so a
    // window or exporter made again counts on. Any thread.
    std::shared_ptr<std::atomic<quint64>> dropCounter(const QString &name);
    QHash<QString, quint64> droppedEvents() const;

signals:
    void eventPublished(const loopscope::InspectorEvent &event);

private:
    InspectorEvent publish(InspectorEvent event, const Masked &masked);
    InspectorEvent publishNow(InspectorEvent event, const Masked &masked);
    // Queues `task` on the bus's thread (started on first use); under m_laneMutex.
    void enqueueLocked(std::function<void()> task);
    void runLane();
    bool onLaneThread() const; // under m_laneMutex
    InspectorEvent emitStamped(InspectorEvent event);
    bool holdBackOutput(InspectorEvent &event);
    void flushHeldOutput(const QString &requestId, const QString &callId, int iteration);

    std::atomic<quint64> m_nextSequence{1};
    std::shared_ptr<CredentialPolicy> m_credentials = std::make_shared<CredentialPolicy>();
    QMutex m_heldMutex;
    // Unpublished ends of live output, by request, call and stream (raw: masked on release).
    QHash<QString, QString> m_held;
    mutable QMutex m_dropMutex;
    QHash<QString, std::shared_ptr<std::atomic<quint64>>> m_drops;

    // The deferred lane. m_lanePending counts tasks queued or running (read without the lock
    // by publish() to take the direct path when nothing waits). std's primitives, not Qt's:
    // ThreadSanitizer sees a std::condition_variable's wait release its mutex.
    std::mutex m_laneMutex;
    std::condition_variable m_laneWork;  // the lane's thread: there is a task, or stop
    std::condition_variable m_laneState; // callers: the lane drained or made room
    std::deque<std::function<void()>> m_laneTasks;
    std::atomic<qsizetype> m_lanePending{0};
    bool m_laneStopping = false;
    bool m_laneAsleep = false; // waiting until woken (not napping)
    std::unique_ptr<QThread> m_laneThread;
};

} // namespace loopscope
