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

void SandboxCommands::setAvailable(bool available) {
    if (available == m_available)
        return;
    m_available = available;
    emit availabilityChanged(available);
}

bool SandboxCommands::dispatch(std::function<void(SandboxRegistry *)> work) {
    if (m_dispatch)
        return m_available && m_dispatch(std::move(work));
    SandboxRegistry *registry = m_registry.data();
    if (!registry)
        return false;
    QMetaObject::invokeMethod(
        registry, [registry, work = std::move(work)] { work(registry); }, Qt::QueuedConnection);
    return true;
}

bool SandboxCommands::deleteSandbox(const QString &containerId) {
    if (containerId.isEmpty())
        return false;
    return dispatch([containerId](SandboxRegistry *registry) {
        if (const auto entry = registry->entryByContainerId(containerId))
            registry->remove(entry->key, SandboxRemovalReason::Deleted);
    });
}

bool SandboxCommands::deleteAll() {
    // Entry by entry rather than removeAll(): that one also cancels creations in flight, which
    // is for shutdown, not for a user tidying up.
    return dispatch([](SandboxRegistry *registry) {
        const QList<SandboxEntry> entries = registry->entries();
        for (const SandboxEntry &entry : entries)
            registry->remove(entry.key, SandboxRemovalReason::Deleted);
    });
}

} // namespace loopscope
