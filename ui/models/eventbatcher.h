#pragma once

#include "inspect/inspectorevent.h"

#include <QList>
#include <QObject>
#include <QTimer>

namespace loopscope {

class EventBus;

// Collects InspectorEvents arriving (queued) from the proxy thread and hands them on in batches,
// at most one per interval, so a burst of events means one model update and one repaint.
class EventBatcher : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultIntervalMs = 50;

    explicit EventBatcher(QObject *parent = nullptr);

    // Listens to `bus` with a queued connection: safe whichever thread publishes.
    void attach(EventBus *bus);
    void setInterval(int ms) { m_timer.setInterval(ms); }
    int interval() const { return m_timer.interval(); }
    int pendingCount() const { return int(m_pending.size()); }

public slots:
    void enqueue(const loopscope::InspectorEvent &event);
    // Emits what is pending now (tests, shutdown).
    void flush();

signals:
    void batchReady(const QList<loopscope::InspectorEvent> &events);

private:
    QList<InspectorEvent> m_pending;
    QTimer m_timer;
};

} // namespace loopscope
