#include "sandbox/containerfilestore.h"

#include <QDateTime>
#include <QRandomGenerator>

namespace loopscope {

QString ContainerFileStore::newFileId() {
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QStringLiteral("cfile_") +
           QString::fromLatin1(
               QByteArray(reinterpret_cast<const char *>(words), sizeof(words)).toHex());
}

QList<ContainerFile> ContainerFileStore::files(const QString &containerId) const {
    return m_files.value(containerId);
}

std::optional<ContainerFile> ContainerFileStore::file(const QString &containerId,
                                                      const QString &fileId) const {
    for (const ContainerFile &f : m_files.value(containerId))
        if (f.id == fileId)
            return f;
    return std::nullopt;
}

std::optional<ContainerFile> ContainerFileStore::fileById(const QString &fileId) const {
    for (const QList<ContainerFile> &files : m_files)
        for (const ContainerFile &f : files)
            if (f.id == fileId)
                return f;
    return std::nullopt;
}

std::optional<ContainerFile> ContainerFileStore::fileByPath(const QString &containerId,
                                                            const QString &path) const {
    for (const ContainerFile &f : m_files.value(containerId))
        if (f.path == path)
            return f;
    return std::nullopt;
}

ContainerFile ContainerFileStore::noteWritten(const QString &containerId,
                                              const SandboxFileInfo &info, const QString &source) {
    QList<ContainerFile> &list = m_files[containerId];
    list.removeIf([&info](const ContainerFile &f) { return f.path == info.path; });
    ContainerFile file{
        newFileId(),     containerId, info.path, info.bytes, QDateTime::currentSecsSinceEpoch(),
        info.modifiedMs, source};
    list.append(file);
    emit filesChanged(containerId);
    return file;
}

QList<ContainerFile> ContainerFileStore::sync(const QString &containerId,
                                              const QList<SandboxFileInfo> &listing) {
    QList<ContainerFile> &list = m_files[containerId];
    QList<ContainerFile> touched;
    QList<ContainerFile> next;
    for (const SandboxFileInfo &info : listing) {
        const auto known =
            std::find_if(list.cbegin(), list.cend(),
                         [&info](const ContainerFile &f) { return f.path == info.path; });
        if (known == list.cend()) {
            ContainerFile file{newFileId(),
                               containerId,
                               info.path,
                               info.bytes,
                               QDateTime::currentSecsSinceEpoch(),
                               info.modifiedMs,
                               QStringLiteral("assistant")};
            next.append(file);
            touched.append(file);
            continue;
        }
        ContainerFile file = *known;
        if (file.bytes != info.bytes || file.modifiedMs != info.modifiedMs) {
            file.bytes = info.bytes;
            file.modifiedMs = info.modifiedMs;
            touched.append(file);
        }
        next.append(file);
    }
    std::stable_sort(next.begin(), next.end(), [](const ContainerFile &a, const ContainerFile &b) {
        return a.createdAt < b.createdAt;
    });
    const bool changed = next != list;
    list = next;
    if (changed)
        emit filesChanged(containerId);
    return touched;
}

bool ContainerFileStore::remove(const QString &containerId, const QString &fileId) {
    const auto it = m_files.find(containerId);
    if (it == m_files.end() ||
        it->removeIf([&fileId](const ContainerFile &f) { return f.id == fileId; }) == 0)
        return false;
    emit filesChanged(containerId);
    return true;
}

void ContainerFileStore::forget(const QString &containerId) {
    if (m_files.remove(containerId) > 0)
        emit filesChanged(containerId);
}

QJsonObject ContainerFileStore::toJson(const ContainerFile &file) {
    return {{QStringLiteral("id"), file.id},
            {QStringLiteral("object"), QStringLiteral("container.file")},
            {QStringLiteral("created_at"), file.createdAt},
            {QStringLiteral("bytes"), file.bytes},
            {QStringLiteral("container_id"), file.containerId},
            {QStringLiteral("path"), file.path},
            {QStringLiteral("source"), file.source}};
}

} // namespace loopscope
