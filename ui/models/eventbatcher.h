#pragma once

#include "inspect/boundedeventqueue.h"
#include "inspect/inspectorevent.h"

#include <QList>
#include <QObject>
#include <QTimer>

#include <memory>

namespace loopscope {

class EventBus;

// Collects InspectorEvents published on any thread and hands them on in batches, at most one
// per interval, so a burst of events means one model update and one repaint. The events wait
// in a BoundedEventQueue, not in Qt's posted-event list: a GUI thread that stalls while the
// proxy floods it sheds live output and running steps first (counted, dropped()), never a
// flow's start, end, code runs, pauses or sandboxes; bodies (`raw`) and body events are not
// queued at all (no panel reads them: the window reads flows from the store).
class EventBatcher : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultIntervalMs = 50;
    // ~2.5 s of the window's share of 2,000 requests/s: a stall longer than that sheds live
    // output and running steps.
    static constexpr qsizetype kShedAt = 10'000;
    // Flow-defining events alone past kShedAt; a window stuck this long keeps memory instead.
    static constexpr qsizetype kMaxPending = 100'000;

    explicit EventBatcher(QObject *parent = nullptr);
    ~EventBatcher() override;

    // Listens to `bus` (safe whichever thread publishes) and counts drops as the bus's
    // "window" counter.
    void attach(EventBus *bus);
    void setInterval(int ms) { m_timer.setInterval(ms); }
    int interval() const { return m_timer.interval(); }
    int pendingCount() const { return int(m_queue->pending()); }
    quint64 dropped() const { return m_queue->dropped(); }
    // What the window's queue does with an event (see the class).
    static BoundedEventQueue::Weight weightOf(const InspectorEvent &event);

public slots:
    // Any thread.
    void enqueue(const loopscope::InspectorEvent &event);
    // Emits what is pending now (tests, shutdown).
    void flush();

signals:
    void batchReady(const QList<loopscope::InspectorEvent> &events);

private:
    // Shared with the bus connection, which pushes on the publisher's thread and may still be
    // inside push() while this object goes (it closes the queue first).
    std::shared_ptr<BoundedEventQueue> m_queue;
    QMetaObject::Connection m_connection;
    QTimer m_timer;
};

} // namespace loopscope
