#include "models/eventbatcher.h"

#include "inspect/eventbus.h"

namespace loopscope {

BoundedEventQueue::Weight EventBatcher::weightOf(const InspectorEvent &event) {
    using Kind = InspectorEvent::Kind;
    using Weight = BoundedEventQueue::Weight;
    switch (event.kind) {
    case Kind::ClientResponseChunk: // every SSE chunk: the store has them, no panel reads them
    case Kind::UpstreamRequest:
    case Kind::UpstreamResponse:
        return Weight::Ignore;
    default:
        return BoundedEventQueue::definesFlow(event) ? Weight::Defining : Weight::Shed;
    }
}

EventBatcher::EventBatcher(QObject *parent)
    : QObject(parent)
    , m_queue(std::make_shared<BoundedEventQueue>(
          BoundedEventQueue::Limits{kShedAt, kShedAt, 0, kMaxPending}, &EventBatcher::weightOf,
          /*keepRaw=*/false)) {
    m_timer.setSingleShot(true);
    m_timer.setInterval(kDefaultIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &EventBatcher::flush);
    // One posted call per batch, on this object's thread.
    m_queue->setWakeUp([this] {
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (!m_timer.isActive())
                    m_timer.start();
            },
            Qt::QueuedConnection);
    });
}

EventBatcher::~EventBatcher() {
    disconnect(m_connection);
    m_queue->close(); // no wake-up is posted to this object once it returns
}

void EventBatcher::attach(EventBus *bus) {
    m_queue->setDropCounter(bus->dropCounter(QStringLiteral("window")));
    // Direct, on the publisher's thread: push() is thread-safe and wakes this thread itself.
    // The functor holds the queue, not this object.
    disconnect(m_connection);
    m_connection = connect(bus, &EventBus::eventPublished,
                           [queue = m_queue](const InspectorEvent &event) { queue->push(event); });
}

void EventBatcher::enqueue(const InspectorEvent &event) {
    m_queue->push(event);
}

void EventBatcher::flush() {
    m_timer.stop();
    const QList<InspectorEvent> batch = m_queue->takeAll();
    if (batch.isEmpty())
        return;
    emit batchReady(batch);
}

} // namespace loopscope
