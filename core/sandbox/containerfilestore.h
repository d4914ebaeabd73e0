#pragma once

#include "sandbox/sandboxtypes.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>

#include <optional>

namespace loopscope {

// One file of a container as OpenAI's Containers API shows it (`container.file`).
struct ContainerFile {
    QString id; // "cfile_" + 32 hex digits
    QString containerId;
    QString path; // "/mnt/data/<name>"
    qint64 bytes = 0;
    qint64 createdAt = 0;  // seconds since the epoch
    qint64 modifiedMs = 0; // the sandbox's mtime when last seen: tells a changed file apart
    QString source;        // "user" (uploaded) or "assistant" (written by the code)

    QString fileName() const { return path.section(u'/', -1); }
    friend bool operator==(const ContainerFile &, const ContainerFile &) = default;
};

// The ids, sources and creation times of container files; their bytes stay in the sandbox's
// /mnt/data (read through SandboxBackend::readFile). Uploads are noted as "user" files; after
// each run the sandbox's listing is synced in, and what the code created or changed becomes an
// "assistant" file. Keyed by container id; callers check ownership. Lives on the proxy thread.
class ContainerFileStore : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    QList<ContainerFile> files(const QString &containerId) const; // oldest first
    std::optional<ContainerFile> file(const QString &containerId, const QString &fileId) const;
    std::optional<ContainerFile> fileByPath(const QString &containerId, const QString &path) const;
    // A file by its id alone (ids are unique across containers): Anthropic's Files API names a
    // file without its container.
    std::optional<ContainerFile> fileById(const QString &fileId) const;

    // A file written into the sandbox on someone's behalf (an upload, a file_ids copy): a new id,
    // replacing any earlier file at that path.
    ContainerFile noteWritten(const QString &containerId, const SandboxFileInfo &info,
                              const QString &source);
    // Applies a listing of /mnt/data taken after a run. Returns the files the run created or
    // changed (now "assistant" files when new); files gone from the listing are forgotten.
    QList<ContainerFile> sync(const QString &containerId, const QList<SandboxFileInfo> &listing);
    bool remove(const QString &containerId, const QString &fileId);
    void forget(const QString &containerId);

    // OpenAI's object: {"id","object":"container.file","created_at","bytes","container_id",
    // "path","source"}.
    static QJsonObject toJson(const ContainerFile &file);
    static QString newFileId();

signals:
    void filesChanged(const QString &containerId);

private:
    QHash<QString, QList<ContainerFile>> m_files;
};

} // namespace loopscope
