#pragma once

#include "common/outcome.h"
#include "http/httprequest.h"
#include "loop/containerfileimporter.h"
#include "sandbox/containerfilestore.h"
#include "sandbox/sandboxregistry.h"
#include "upstream/upstreamroute.h"

#include <QFuture>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>

namespace loopscope {

class ResponseSink;

// OpenAI's Containers API over the SandboxRegistry, scoped to the caller: the session
// sandboxes a bearer token created are its containers, and nobody else's are visible (404).
//   POST   /v1/containers        {name, file_ids?, expires_after?} → container (a new session
//                                 sandbox of the caller; file_ids copied into /mnt/data;
//                                 expires_after.minutes its own idle TTL in the registry)
//   GET    /v1/containers        → {"object":"list","data":[container…],"has_more":false,…}
//   GET    /v1/containers/{id}   → container, or 404 when absent or someone else's
//   DELETE /v1/containers/{id}   → {"id","object":"container.deleted","deleted":true}, or 404
//   POST   /v1/containers/{id}/files  multipart (field "file") or JSON {"file_id"} → container.file
//   GET    /v1/containers/{id}/files  → list of container.file
//   GET    /v1/containers/{id}/files/{file_id}  → container.file
//   GET    /v1/containers/{id}/files/{file_id}/content  → the bytes
//   DELETE /v1/containers/{id}/files/{file_id}  → {"id","object":"container.file.deleted",…}
// Files live in the sandbox's /mnt/data; ids and sources in the ContainerFileStore.
// Deleting a container is the same registry call as the window's Delete button. Lives on the
// proxy thread.
class ContainersApi : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 kMaxFileBytes = 32 * 1024 * 1024;
    // expires_after.minutes: 1 minute to a day (the idle time after the last use).
    static constexpr int kMaxExpiryMinutes = 24 * 60;
    static constexpr int kMaxFileNameBytes = 255; // NAME_MAX of the sandbox's /mnt/data

    // Creates a session sandbox for (identity, session id).
    using ContainerCreator = std::function<QFuture<Outcome<SandboxEntry>>(
        const QString &identity, const QString &sessionId)>;
    // The upstream (with the caller's credentials) that serves OpenAI Files for file_ids.
    using FilesRoute = std::function<std::optional<UpstreamRoute>(const HttpRequest &)>;

    explicit ContainersApi(SandboxRegistry *registry, QObject *parent = nullptr);

    void setFileStore(ContainerFileStore *store) { m_store = store; }
    void setContainerCreator(ContainerCreator creator) { m_creator = std::move(creator); }
    void setFileImporter(ContainerFileImporter *importer, FilesRoute route) {
        m_importer = importer;
        m_filesRoute = std::move(route);
    }

    // "/v1/containers…" or "/containers…", and "/v1/files/cfile_…/content".
    static bool matches(const QString &path);
    static bool isContainerFileContentPath(const QString &path);
    void handle(const HttpRequest &request, const QString &callerIdentity, ResponseSink *sink);

    static QJsonObject containerObject(const SandboxEntry &entry, const QString &name = {});

private:
    void createContainer(const HttpRequest &request, const QString &callerIdentity,
                         ResponseSink *sink);
    void handleFiles(const HttpRequest &request, const SandboxEntry &entry, const QString &rest,
                     ResponseSink *sink);
    void uploadFile(const HttpRequest &request, const SandboxEntry &entry, ResponseSink *sink);
    void writeUpload(const SandboxEntry &entry, const QString &fileName, const QByteArray &data,
                     ResponseSink *sink);

    QPointer<SandboxRegistry> m_registry;
    QPointer<ContainerFileStore> m_store;
    QPointer<ContainerFileImporter> m_importer;
    ContainerCreator m_creator;
    FilesRoute m_filesRoute;
    QHash<QString, QString> m_names; // container id → the name given at creation
};

} // namespace loopscope
