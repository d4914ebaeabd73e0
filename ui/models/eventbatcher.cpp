#include "models/eventbatcher.h"

#include "inspect/eventbus.h"

namespace loopscope {

EventBatcher::EventBatcher(QObject *parent)
    : QObject(parent) {
    m_timer.setSingleShot(true);
    m_timer.setInterval(kDefaultIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &EventBatcher::flush);
}

void EventBatcher::attach(EventBus *bus) {
    connect(bus, &EventBus::eventPublished, this, &EventBatcher::enqueue, Qt::QueuedConnection);
}

void EventBatcher::enqueue(const InspectorEvent &event) {
    m_pending.append(event);
    if (!m_timer.isActive())
        m_timer.start();
}

void EventBatcher::flush() {
    m_timer.stop();
    if (m_pending.isEmpty())
        return;
    const QList<InspectorEvent> batch = std::exchange(m_pending, {});
    emit batchReady(batch);
}

} // namespace loopscope
