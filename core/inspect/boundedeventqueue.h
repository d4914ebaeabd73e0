#pragma once

#include "inspect/inspectorevent.h"

#include <QList>
#include <QMutex>

#include <atomic>
#include <functional>
#include <memory>

namespace loopscope {

// The hand-over of InspectorEvents from their publishers (any thread, through a direct
// connection to EventBus::eventPublished) to one consumer on another thread: push() appends
// under a mutex and wakes the consumer once per batch, the consumer takes the batch whole.
// Unlike a queued connection (one posted event per InspectorEvent, no limit) it is bounded,
// and what it sheds first is what its consumer can do without:
//
//  Ignore    never queued (the consumer does not read it; not a drop)
//  Shed      reconstructible or live-only (a live output chunk, a running step): queued while
//            fewer than `shedAt` events wait
//  Content   part of a flow's record (a body chunk): queued while fewer than `contentAt` wait
//            and their bodies (`raw`) stay under `rawBytes`
//  Defining  what a flow is (its start, end, status, code runs, a pause): queued while fewer
//            than `max` wait — past it the consumer is stuck, and memory wins
//
// Every event refused is counted (dropped(); the counter may be shared, e.g. the bus's named
// counters the stats route reads).
class BoundedEventQueue {
public:
    enum class Weight { Ignore, Shed, Content, Defining };
    struct Limits {
        qsizetype shedAt = 0;
        qsizetype contentAt = 0;
        qint64 rawBytes = 0;
        qsizetype max = 0;
    };
    using Classifier = std::function<Weight(const InspectorEvent &)>;

    BoundedEventQueue(Limits limits, Classifier classify, bool keepRaw = true);

    // Called under the queue's lock when a push finds it empty: post one call to the consumer
    // (so a call another thread posts after a push runs after the batch that holds it).
    void setWakeUp(std::function<void()> wakeUp) { m_wakeUp = std::move(wakeUp); }
    void setDropCounter(std::shared_ptr<std::atomic<quint64>> counter);

    // Any thread: false when the event was refused (Ignore, closed, or dropped and counted).
    bool push(const InspectorEvent &event);
    // The consumer is going: no wake-up runs after this returns (one in progress is waited
    // for, it runs under the same lock), and later pushes are refused uncounted.
    void close();
    // The consumer's thread: everything queued, in publishing order.
    QList<InspectorEvent> takeAll();

    qsizetype pending() const;
    quint64 dropped() const { return m_dropped->load(std::memory_order_relaxed); }
    quint64 droppedDefining() const { return m_droppedDefining.load(std::memory_order_relaxed); }
    const Limits &limits() const { return m_limits; }

    // The kinds every consumer must keep for a flow to be whole: start, end, status, code
    // runs, pauses, sandboxes' lives.
    static bool definesFlow(const InspectorEvent &event);

private:
    Limits m_limits;
    Classifier m_classify;
    bool m_keepRaw;
    std::function<void()> m_wakeUp;
    mutable QMutex m_mutex;
    QList<InspectorEvent> m_events;
    qint64 m_rawBytes = 0;
    bool m_closed = false;
    std::shared_ptr<std::atomic<quint64>> m_dropped = std::make_shared<std::atomic<quint64>>(0);
    std::atomic<quint64> m_droppedDefining{0};
};

} // namespace loopscope
