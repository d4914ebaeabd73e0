#pragma once

#include "common/outcome.h"

#include <QByteArray>
#include <QFuture>
#include <QJsonArray>
#include <QObject>
#include <QPointer>

#include <functional>

namespace loopscope {

class ContainerFileStore;
class SandboxCommands;
class SandboxRegistry;

// The window's reach into a container's files, the same store and sandbox reads the Containers
// API uses (GET/DELETE /v1/containers/{id}/files…). Both live on the proxy thread, so every call
// is posted there through SandboxCommands (the registry's thread and lifetime rules) and answers
// as a future, finished on the proxy thread and read in the window with whenFinished.
class ContainerFileCommands : public QObject {
    Q_OBJECT
public:
    // Finds the file store next to a registry, on the proxy thread. The default: the
    // ContainerFileStore sibling of the registry (InterceptionStack owns both).
    using StoreLocator = std::function<ContainerFileStore *(SandboxRegistry *)>;

    explicit ContainerFileCommands(SandboxCommands *sandboxes, QObject *parent = nullptr);
    void setStoreLocator(StoreLocator locator) { m_locate = std::move(locator); }

    // `container.file` objects (ContainerFileStore::toJson), oldest first.
    QFuture<Outcome<QJsonArray>> list(const QString &containerId);
    QFuture<Outcome<QByteArray>> read(const QString &containerId, const QString &fileId);
    // Deletes it from the sandbox and the container, as DELETE …/files/{id} does.
    QFuture<Outcome<bool>> remove(const QString &containerId, const QString &fileId);

private:
    QPointer<SandboxCommands> m_sandboxes;
    StoreLocator m_locate;
};

} // namespace loopscope
