#pragma once

#include "sandbox/sandboxregistry.h"

#include <QObject>
#include <QPointer>

namespace loopscope {

class EventBus;

// Publishes sandbox lifecycle as InspectorEvents: every create, reuse, delete, eviction, expiry
// and failed delete the SandboxRegistry reports, with identities masked. The window's
// Sandboxes panel is built from these alone.
class LoopInspector : public QObject {
    Q_OBJECT
public:
    LoopInspector(SandboxRegistry *registry, EventBus *events, QObject *parent = nullptr);

    // The payload of a Sandbox* event for `entry` (also used by tests).
    static QJsonObject sandboxPayload(const SandboxEntry &entry);

private:
    QPointer<EventBus> m_events;
};

} // namespace loopscope
