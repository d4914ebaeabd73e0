#include "inspect/eventbus.h"

#include <QDateTime>

namespace loopscope {

EventBus::EventBus(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<loopscope::InspectorEvent>();
}

InspectorEvent EventBus::publish(InspectorEvent event) {
    event.sequence = m_nextSequence.fetch_add(1, std::memory_order_relaxed);
    event.timestampMs = QDateTime::currentMSecsSinceEpoch();
    emit eventPublished(event);
    return event;
}

InspectorEvent EventBus::publish(InspectorEvent::Kind kind, const QString &requestId, int iteration,
                                 const QJsonObject &data) {
    return publish(InspectorEvent::make(kind, requestId, iteration, data));
}

} // namespace loopscope
