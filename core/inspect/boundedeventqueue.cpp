#include "inspect/boundedeventqueue.h"

#include <QMutexLocker>

namespace loopscope {

BoundedEventQueue::BoundedEventQueue(Limits limits, Classifier classify, bool keepRaw)
    : m_limits(limits)
    , m_classify(std::move(classify))
    , m_keepRaw(keepRaw) {}

void BoundedEventQueue::setDropCounter(std::shared_ptr<std::atomic<quint64>> counter) {
    if (counter)
        m_dropped = std::move(counter);
}

bool BoundedEventQueue::definesFlow(const InspectorEvent &event) {
    using Kind = InspectorEvent::Kind;
    switch (event.kind) {
    case Kind::ClientRequest:
    case Kind::ClientResponse:
    case Kind::ExchangeFinished:
    case Kind::RequestStarted:
    case Kind::RequestFinished:
    case Kind::RequestFailed:
    case Kind::CodeRunStarted:
    case Kind::CodeExecuted:
    case Kind::Paused:
    case Kind::Resumed:
    case Kind::SandboxWaiting: // the flow's "waiting" state begins and ends with these
    case Kind::SandboxWaitEnded:
        return true;
    default:
        return event.isSandboxEvent();
    }
}

bool BoundedEventQueue::push(const InspectorEvent &event) {
    const Weight weight = m_classify ? m_classify(event) : Weight::Defining;
    if (weight == Weight::Ignore)
        return false;
    const qint64 raw = m_keepRaw ? event.raw.size() : 0;
    QMutexLocker lock(&m_mutex);
    if (m_closed)
        return false;
    const qsizetype n = m_events.size();
    bool fits = false;
    switch (weight) {
    case Weight::Ignore:
        break;
    case Weight::Shed:
        fits = n < m_limits.shedAt;
        break;
    case Weight::Content:
        fits = n < m_limits.contentAt && m_rawBytes + raw <= m_limits.rawBytes;
        break;
    case Weight::Defining:
        fits = n < m_limits.max;
        break;
    }
    if (!fits) {
        m_dropped->fetch_add(1, std::memory_order_relaxed);
        if (weight == Weight::Defining)
            m_droppedDefining.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    if (m_keepRaw || event.raw.isEmpty()) {
        m_events.append(event);
    } else {
        InspectorEvent light = event;
        light.raw = {};
        m_events.append(std::move(light));
    }
    m_rawBytes += raw;
    if (n == 0 && m_wakeUp)
        m_wakeUp();
    return true;
}

void BoundedEventQueue::close() {
    QMutexLocker lock(&m_mutex);
    m_closed = true;
    m_wakeUp = nullptr;
    m_events.clear();
    m_rawBytes = 0;
}

QList<InspectorEvent> BoundedEventQueue::takeAll() {
    QMutexLocker lock(&m_mutex);
    m_rawBytes = 0;
    return std::exchange(m_events, {});
}

qsizetype BoundedEventQueue::pending() const {
    QMutexLocker lock(&m_mutex);
    return m_events.size();
}

} // namespace loopscope
