#include "models/containerfilecommands.h"

#include "common/futurechain.h"
#include "models/sandboxcommands.h"
#include "sandbox/containerfilestore.h"
#include "sandbox/sandboxregistry.h"

namespace loopscope {

namespace {

// Posts `work` to the proxy thread; the promise fails at once when nobody can be asked, and
// is cancelled (read as a failure) when the registry goes away before the work runs.
template<class T, class Work> QFuture<Outcome<T>> post(SandboxCommands *sandboxes, Work work) {
    auto promise = startedPromise<Outcome<T>>();
    QFuture<Outcome<T>> future = promise->future();
    const bool posted =
        sandboxes && sandboxes->post([promise, work = std::move(work)](SandboxRegistry *registry) {
            work(registry, promise);
        });
    if (!posted)
        finishPromise(promise, Outcome<T>::failure(QStringLiteral("the proxy is not running")));
    return future;
}

} // namespace

ContainerFileCommands::ContainerFileCommands(SandboxCommands *sandboxes, QObject *parent)
    : QObject(parent)
    , m_sandboxes(sandboxes)
    , m_locate([](SandboxRegistry *registry) -> ContainerFileStore * {
        QObject *owner = registry->parent();
        return owner ? owner->findChild<ContainerFileStore *>(QString(), Qt::FindDirectChildrenOnly)
                     : nullptr;
    }) {}

QFuture<Outcome<QJsonArray>> ContainerFileCommands::list(const QString &containerId) {
    return post<QJsonArray>(
        m_sandboxes, [locate = m_locate, containerId](SandboxRegistry *registry, auto promise) {
            ContainerFileStore *store = locate(registry);
            if (!store) {
                finishPromise(promise, Outcome<QJsonArray>::failure(
                                           QStringLiteral("container files are unavailable")));
                return;
            }
            if (!registry->entryByContainerId(containerId)) {
                finishPromise(promise,
                              Outcome<QJsonArray>::failure(QStringLiteral("the sandbox is gone")));
                return;
            }
            QJsonArray files;
            for (const ContainerFile &f : store->files(containerId))
                files.append(ContainerFileStore::toJson(f));
            finishPromise(promise, Outcome<QJsonArray>::success(files));
        });
}

QFuture<Outcome<QByteArray>> ContainerFileCommands::read(const QString &containerId,
                                                         const QString &fileId) {
    return post<QByteArray>(m_sandboxes, [locate = m_locate, containerId,
                                          fileId](SandboxRegistry *registry, auto promise) {
        ContainerFileStore *store = locate(registry);
        const auto entry = registry->entryByContainerId(containerId);
        const auto file = store ? store->file(containerId, fileId) : std::nullopt;
        if (!entry || !entry->backend || !file) {
            finishPromise(promise,
                          Outcome<QByteArray>::failure(QStringLiteral("the file is gone")));
            return;
        }
        whenFinished(entry->backend->readFile(entry->handle, file->path,
                                              entry->params.value_or(SandboxParams{})),
                     store, [promise](const QFuture<Outcome<QByteArray>> &read) {
                         finishPromise(promise, resultOr(read, Outcome<QByteArray>::failure(
                                                                   QStringLiteral("cancelled"))));
                     });
    });
}

QFuture<Outcome<bool>> ContainerFileCommands::remove(const QString &containerId,
                                                     const QString &fileId) {
    return post<bool>(m_sandboxes, [locate = m_locate, containerId,
                                    fileId](SandboxRegistry *registry, auto promise) {
        ContainerFileStore *store = locate(registry);
        const auto entry = registry->entryByContainerId(containerId);
        const auto file = store ? store->file(containerId, fileId) : std::nullopt;
        if (!entry || !entry->backend || !file) {
            finishPromise(promise, Outcome<bool>::failure(QStringLiteral("the file is gone")));
            return;
        }
        QPointer<ContainerFileStore> guard(store);
        whenFinished(entry->backend->deleteFile(entry->handle, file->path,
                                                entry->params.value_or(SandboxParams{})),
                     store, [promise, guard, containerId, fileId](const QFuture<Outcome<bool>> &) {
                         // Gone from the sandbox or not, it is gone from the container (as
                         // the Containers API's DELETE does).
                         if (guard)
                             guard->remove(containerId, fileId);
                         finishPromise(promise, Outcome<bool>::success(true));
                     });
    });
}

} // namespace loopscope
