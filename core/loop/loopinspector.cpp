#include "loop/loopinspector.h"

#include "inspect/credentialpolicy.h"
#include "inspect/eventbus.h"

namespace loopscope {

QJsonObject LoopInspector::sandboxPayload(const SandboxEntry &entry) {
    QJsonObject data{
        {QStringLiteral("containerId"), entry.handle.id},
        {QStringLiteral("provider"), entry.handle.provider},
        {QStringLiteral("sessionId"), entry.sessionId},
        {QStringLiteral("ephemeral"), !entry.isSessionScoped()},
        {QStringLiteral("createdMs"), entry.createdMs},
        {QStringLiteral("lastUsedMs"), entry.lastAccessedMs},
        {QStringLiteral("expiresAtMs"), entry.lastAccessedMs + SandboxRegistry::idleTtlOf(entry)},
        {QStringLiteral("runs"), entry.runs}};
    if (entry.identity)
        data.insert(QStringLiteral("identity"), CredentialPolicy::mask(*entry.identity));
    return data;
}

LoopInspector::LoopInspector(SandboxRegistry *registry, EventBus *events, QObject *parent)
    : QObject(parent)
    , m_events(events) {
    using Kind = InspectorEvent::Kind;
    connect(registry, &SandboxRegistry::sandboxCreated, this, [this](const SandboxEntry &entry) {
        if (m_events)
            m_events->publish(Kind::SandboxCreated, {}, -1, sandboxPayload(entry));
    });
    connect(registry, &SandboxRegistry::sandboxReused, this, [this](const SandboxEntry &entry) {
        if (m_events)
            m_events->publish(Kind::SandboxReused, {}, -1, sandboxPayload(entry));
    });
    connect(registry, &SandboxRegistry::sandboxRemoved, this,
            [this](const SandboxEntry &entry, SandboxRemovalReason reason) {
                if (!m_events)
                    return;
                Kind kind = Kind::SandboxDeleted;
                if (reason == SandboxRemovalReason::Evicted)
                    kind = Kind::SandboxEvicted;
                else if (reason == SandboxRemovalReason::Expired)
                    kind = Kind::SandboxExpired;
                m_events->publish(kind, {}, -1, sandboxPayload(entry));
            });
    connect(registry, &SandboxRegistry::sandboxRemoveFailed, this,
            [this](const SandboxEntry &entry, const QString &error) {
                if (!m_events)
                    return;
                QJsonObject data = sandboxPayload(entry);
                data.insert(QStringLiteral("error"), error);
                m_events->publish(Kind::SandboxDeleteFailed, {}, -1, data);
            });
}

} // namespace loopscope
