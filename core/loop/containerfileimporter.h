#pragma once

#include "common/outcome.h"
#include "sandbox/containerfilestore.h"
#include "sandbox/sandboxregistry.h"
#include "upstream/upstreamroute.h"

#include <QFuture>
#include <QObject>
#include <QPointer>
#include <QStringList>

namespace loopscope {

class UpstreamClient;

// Copies OpenAI Files (`file_ids` of a container or of the code_interpreter tool's
// `container.auto`) into a sandbox's /mnt/data: GET /files/{id} for the name and
// GET /files/{id}/content for the bytes, from the upstream with the client's credentials, then
// SandboxBackend::writeFile, noted as "user" container files. One at a time, in order; the first
// failure ends the import with a message naming the file. Lives on the proxy thread.
class ContainerFileImporter : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 kMaxFileBytes = 32 * 1024 * 1024;

    ContainerFileImporter(UpstreamClient *upstream, ContainerFileStore *store,
                          QObject *parent = nullptr);

    QFuture<Outcome<QList<ContainerFile>>>
    import(const UpstreamRoute &route, const SandboxEntry &container, const QStringList &fileIds);

    // Ids the importer finds among Loopscope's own container files (the sandbox that holds one,
    // and the file): those are read from that sandbox instead of the upstream's Files API.
    using LocalFiles =
        std::function<std::optional<QPair<SandboxEntry, ContainerFile>>(const QString &fileId)>;
    void setLocalFiles(LocalFiles localFiles) { m_localFiles = std::move(localFiles); }

    // A file name safe as one path component under /mnt/data.
    static QString safeFileName(const QString &name, const QString &fallback);

private:
    QFuture<Outcome<QByteArray>> get(const UpstreamRoute &route, const QString &path);

    QPointer<UpstreamClient> m_upstream;
    QPointer<ContainerFileStore> m_store;
    LocalFiles m_localFiles;
};

} // namespace loopscope
