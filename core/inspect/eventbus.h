#pragma once

#include "inspect/inspectorevent.h"

#include <QObject>

#include <atomic>

namespace loopscope {

// Publishes InspectorEvents to whoever listens. Core never knows who that is: the window, the
// headless logger and tests all just connect to eventPublished (queued across threads).
// publish() is thread-safe: sequence numbers come from an atomic counter.
class EventBus : public QObject {
    Q_OBJECT
public:
    explicit EventBus(QObject *parent = nullptr);

    // Stamps sequence and time, then emits. Returns the stamped event.
    InspectorEvent publish(InspectorEvent event);
    InspectorEvent publish(InspectorEvent::Kind kind, const QString &requestId = {},
                           int iteration = -1, const QJsonObject &data = {});

signals:
    void eventPublished(const loopscope::InspectorEvent &event);

private:
    std::atomic<quint64> m_nextSequence{1};
};

} // namespace loopscope
