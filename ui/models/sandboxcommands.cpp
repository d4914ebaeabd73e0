#include "models/sandboxcommands.h"

#include "sandbox/sandboxregistry.h"

namespace loopscope {

SandboxCommands::SandboxCommands(SandboxRegistry *registry, QObject *parent)
    : QObject(parent)
    , m_registry(registry) {}

void SandboxCommands::setRegistry(SandboxRegistry *registry) {
    if (registry == m_registry.data())
        return;
    m_registry = registry;
    emit availabilityChanged(registry != nullptr);
}

bool SandboxCommands::deleteSandbox(const QString &containerId) {
    SandboxRegistry *registry = m_registry.data();
    if (!registry || containerId.isEmpty())
        return false;
    QMetaObject::invokeMethod(
        registry,
        [registry, containerId] {
            if (const auto entry = registry->entryByContainerId(containerId))
                registry->remove(entry->key, SandboxRemovalReason::Deleted);
        },
        Qt::QueuedConnection);
    return true;
}

bool SandboxCommands::deleteAll() {
    SandboxRegistry *registry = m_registry.data();
    if (!registry)
        return false;
    // Entry by entry rather than removeAll(): that one also cancels creations in flight, which
    // is for shutdown, not for a user tidying up.
    QMetaObject::invokeMethod(
        registry,
        [registry] {
            const QList<SandboxEntry> entries = registry->entries();
            for (const SandboxEntry &entry : entries)
                registry->remove(entry.key, SandboxRemovalReason::Deleted);
        },
        Qt::QueuedConnection);
    return true;
}

} // namespace loopscope
