#include "proxy/containersapi.h"

#include "common/futurechain.h"
#include "common/openaierror.h"
#include "http/responsesink.h"
#include "loop/containerfileimporter.h"
#include "proxy/multipartformdata.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QUrl>
#include <QUrlQuery>

#include <algorithm>
#include <cmath>

namespace loopscope {

namespace {

constexpr int kDefaultPageLimit = 20;
constexpr int kMaxPageLimit = 100;

QString stripVersion(const QString &path) {
    return path.startsWith(QLatin1String("/v1/")) ? path.mid(3) : path;
}

void notFound(ResponseSink *sink, const QString &id) {
    sink->sendError(404, QStringLiteral("No container found with id '%1'.").arg(id),
                    QStringLiteral("invalid_request_error"), QStringLiteral("not_found"));
}

void fileNotFound(ResponseSink *sink, const QString &id) {
    sink->sendError(404, QStringLiteral("No container file found with id '%1'.").arg(id),
                    QStringLiteral("invalid_request_error"), QStringLiteral("not_found"));
}

void badRequest(ResponseSink *sink, const QString &message, const QString &code = {}) {
    sink->sendError(400, message, QStringLiteral("invalid_request_error"), code);
}

void methodNotAllowed(ResponseSink *sink) {
    sink->sendError(405, QStringLiteral("Method not allowed."),
                    QStringLiteral("invalid_request_error"), QStringLiteral("method_not_allowed"));
}

// A sandbox failure as the client sees it: a full /mnt/data is the client's 413; a file the
// code removed or replaced by something that is not a regular file (a FIFO, a symlink) is 404;
// the rest 502.
void sandboxFailure(ResponseSink *sink, const QString &error) {
    if (error.contains(QStringLiteral("No space left")) ||
        error.contains(QStringLiteral("File too large")))
        sink->sendError(
            413, QStringLiteral("The container's /mnt/data has no room for this file: ") + error,
            QStringLiteral("invalid_request_error"), QStringLiteral("file_too_large"));
    else if (error.contains(QStringLiteral("is not a regular file")) ||
             error.startsWith(QStringLiteral("FileNotFoundError")) ||
             error.startsWith(QStringLiteral("NotADirectoryError")) ||
             error.contains(QStringLiteral("[Errno 40]")))
        sink->sendError(404,
                        QStringLiteral("The file is no longer a regular file in the container's "
                                       "/mnt/data: ") +
                            error,
                        QStringLiteral("invalid_request_error"), QStringLiteral("not_found"));
    else
        sink->sendError(502, QStringLiteral("The sandbox could not serve the file: ") + error,
                        QStringLiteral("server_error"), QStringLiteral("sandbox_error"));
}

// One page of `all` (objects with an "id", in the order asked for) as OpenAI's cursor lists
// have it: `limit` (1 to 100, default 20) after the object `after`; has_more, first_id and
// last_id, so SDKs page on with after=last_id. False (and a 400 sent) for a bad query.
bool sendPage(ResponseSink *sink, const QJsonArray &all, const QUrlQuery &query) {
    int limit = kDefaultPageLimit;
    if (query.hasQueryItem(QStringLiteral("limit"))) {
        bool ok = false;
        limit = query.queryItemValue(QStringLiteral("limit")).toInt(&ok);
        if (!ok || limit < 1 || limit > kMaxPageLimit) {
            sink->sendError(
                400,
                QStringLiteral("'limit' must be a whole number from 1 to %1.").arg(kMaxPageLimit),
                QStringLiteral("invalid_request_error"), QStringLiteral("invalid_value"));
            return false;
        }
    }
    qsizetype start = 0;
    if (query.hasQueryItem(QStringLiteral("after"))) {
        const QString after = query.queryItemValue(QStringLiteral("after"));
        start = -1;
        for (qsizetype i = 0; i < all.size(); ++i) {
            if (all.at(i)[QStringLiteral("id")].toString() == after) {
                start = i + 1;
                break;
            }
        }
        if (start < 0) {
            sink->sendError(
                400, QStringLiteral("'after' names no object of this list: '%1'.").arg(after),
                QStringLiteral("invalid_request_error"), QStringLiteral("invalid_value"));
            return false;
        }
    }
    QJsonArray data;
    for (qsizetype i = start; i < all.size() && data.size() < limit; ++i)
        data.append(all.at(i));
    QJsonObject list{{QStringLiteral("object"), QStringLiteral("list")},
                     {QStringLiteral("data"), data},
                     {QStringLiteral("has_more"), start + data.size() < all.size()}};
    list.insert(QStringLiteral("first_id"),
                data.isEmpty() ? QJsonValue(QJsonValue::Null) : data.first()[QStringLiteral("id")]);
    list.insert(QStringLiteral("last_id"),
                data.isEmpty() ? QJsonValue(QJsonValue::Null) : data.last()[QStringLiteral("id")]);
    sink->sendJson(200, list);
    return true;
}

bool isDescending(const QUrlQuery &query) {
    return query.queryItemValue(QStringLiteral("order")) != QLatin1String("asc");
}

QString randomHex() {
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QString::fromLatin1(
        QByteArray(reinterpret_cast<const char *>(words), sizeof(words)).toHex());
}

} // namespace

ContainersApi::ContainersApi(SandboxRegistry *registry, QObject *parent)
    : QObject(parent)
    , m_registry(registry) {}

bool ContainersApi::matches(const QString &path) {
    const QString p = stripVersion(path);
    return p == QLatin1String("/containers") || p.startsWith(QLatin1String("/containers/")) ||
           isContainerFileContentPath(p);
}

bool ContainersApi::isContainerFileContentPath(const QString &path) {
    const QString p = stripVersion(path);
    return p.startsWith(QLatin1String("/files/cfile_")) && p.endsWith(QLatin1String("/content")) &&
           p.count(u'/') == 3;
}

QJsonObject ContainersApi::containerObject(const SandboxEntry &entry, const QString &name) {
    return {
        {QStringLiteral("id"), entry.handle.id},
        {QStringLiteral("object"), QStringLiteral("container")},
        {QStringLiteral("name"), name.isEmpty() ? entry.sessionId : name},
        {QStringLiteral("created_at"), entry.createdMs / 1000},
        {QStringLiteral("last_active_at"), entry.lastAccessedMs / 1000},
        {QStringLiteral("status"), QStringLiteral("running")},
        {QStringLiteral("expires_after"),
         QJsonObject{{QStringLiteral("anchor"), QStringLiteral("last_active_at")},
                     {QStringLiteral("minutes"), int(SandboxRegistry::idleTtlOf(entry) / 60000)}}}};
}

void ContainersApi::handle(const HttpRequest &request, const QString &callerIdentity,
                           ResponseSink *sink) {
    if (!m_registry) {
        sink->sendError(503, QStringLiteral("Sandbox registry unavailable."),
                        QStringLiteral("server_error"));
        return;
    }
    const QString path = stripVersion(request.path);
    if (isContainerFileContentPath(path)) {
        // Anthropic's GET /v1/files/{id}/content for a file a code execution call wrote (its
        // bash_code_execution_output file_id): the same bytes as the container file's content.
        const QString fileId = path.section(u'/', 2, 2);
        const auto file = m_store ? m_store->fileById(fileId) : std::nullopt;
        const auto entry = file ? m_registry->entryByContainerId(file->containerId) : std::nullopt;
        if (!entry || !entry->identity || *entry->identity != callerIdentity) {
            fileNotFound(sink, fileId);
            return;
        }
        handleFiles(request, *entry, QStringLiteral("/%1/content").arg(fileId), sink);
        return;
    }
    const QString tail = path.mid(QStringLiteral("/containers/").size());
    const QString id = tail.section(u'/', 0, 0);
    const QString rest = tail.section(u'/', 1);
    // Only session sandboxes of this caller are its containers.
    auto owned = [&callerIdentity](const SandboxEntry &entry) {
        return entry.identity && *entry.identity == callerIdentity;
    };

    if (path == QLatin1String("/containers")) {
        if (request.method == "POST") {
            createContainer(request, callerIdentity, sink);
            return;
        }
        if (request.method != "GET") {
            methodNotAllowed(sink);
            return;
        }
        const QUrlQuery query(QString::fromUtf8(request.query));
        QList<SandboxEntry> entries = m_registry->entries(); // oldest first
        entries.removeIf([&owned](const SandboxEntry &e) { return !owned(e); });
        if (isDescending(query))
            std::reverse(entries.begin(), entries.end()); // OpenAI's default: newest first
        QJsonArray data;
        for (const SandboxEntry &entry : std::as_const(entries))
            data.append(containerObject(entry, m_names.value(entry.handle.id)));
        sendPage(sink, data, query);
        return;
    }

    const auto entry = m_registry->entryByContainerId(id);
    if (id.isEmpty() || !entry || !owned(*entry)) {
        notFound(sink, id);
        return;
    }
    if (rest == QLatin1String("files") || rest.startsWith(QLatin1String("files/"))) {
        handleFiles(request, *entry, rest.mid(QStringLiteral("files").size()), sink);
        return;
    }
    if (!rest.isEmpty()) {
        notFound(sink, id + u'/' + rest);
        return;
    }
    if (request.method == "GET") {
        sink->sendJson(200, containerObject(*entry, m_names.value(id)));
    } else if (request.method == "DELETE") {
        QPointer<ResponseSink> guard(sink);
        m_names.remove(id);
        whenFinished(m_registry->remove(entry->key, SandboxRemovalReason::Deleted), this,
                     [guard, id](const QFuture<void> &) {
                         if (guard)
                             guard->sendJson(200, {{QStringLiteral("id"), id},
                                                   {QStringLiteral("object"),
                                                    QStringLiteral("container.deleted")},
                                                   {QStringLiteral("deleted"), true}});
                     });
    } else {
        methodNotAllowed(sink);
    }
}

void ContainersApi::createContainer(const HttpRequest &request, const QString &callerIdentity,
                                    ResponseSink *sink) {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject()) {
        badRequest(sink,
                   QStringLiteral("The body must be a JSON object: ") + parseError.errorString());
        return;
    }
    const QJsonObject body = doc.object();
    const QJsonValue name = body.value(QStringLiteral("name"));
    if (!name.isString()) {
        badRequest(sink, QStringLiteral("'name' is required and must be a string."),
                   QStringLiteral("missing_required_parameter"));
        return;
    }
    QStringList fileIds;
    const QJsonValue ids = body.value(QStringLiteral("file_ids"));
    if (!ids.isUndefined() && !ids.isNull()) {
        if (!ids.isArray()) {
            badRequest(sink, QStringLiteral("'file_ids' must be an array of strings."));
            return;
        }
        for (const QJsonValue &v : ids.toArray()) {
            if (!v.isString() || v.toString().isEmpty()) {
                badRequest(sink, QStringLiteral("'file_ids' must be an array of strings."));
                return;
            }
            fileIds << v.toString();
        }
    }
    if (!m_creator) {
        sink->sendError(503, QStringLiteral("Containers cannot be created here."),
                        QStringLiteral("server_error"));
        return;
    }
    std::optional<UpstreamRoute> route;
    if (!fileIds.isEmpty()) {
        route = m_filesRoute ? m_filesRoute(request) : std::nullopt;
        if (!m_importer || !route) {
            badRequest(sink, QStringLiteral("'file_ids' needs an upstream that serves OpenAI "
                                            "Files; none is configured."));
            return;
        }
    }
    // expires_after (OpenAI: {"anchor":"last_active_at","minutes":N}): the sandbox's own idle
    // TTL in the registry, which refreshes it on every use as OpenAI's anchor does.
    qint64 idleTtlMs = 0;
    const QJsonValue expires = body.value(QStringLiteral("expires_after"));
    if (!expires.isUndefined() && !expires.isNull()) {
        const QJsonObject e = expires.toObject();
        const QJsonValue minutes = e.value(QStringLiteral("minutes"));
        const double m = minutes.toDouble(-1);
        if (!expires.isObject() ||
            e.value(QStringLiteral("anchor")).toString() != QLatin1String("last_active_at") ||
            !minutes.isDouble() || m != std::floor(m) || m < 1 || m > kMaxExpiryMinutes) {
            badRequest(sink,
                       QStringLiteral("'expires_after' must be {\"anchor\": \"last_active_at\", "
                                      "\"minutes\": N} with N a whole number from 1 to %1.")
                           .arg(kMaxExpiryMinutes),
                       QStringLiteral("invalid_value"));
            return;
        }
        idleTtlMs = qint64(m) * 60 * 1000;
    }
    const QString sessionId = QStringLiteral("container-") + randomHex();
    QPointer<ResponseSink> guard(sink);
    const QString containerName = name.toString();
    whenFinished(
        m_creator(callerIdentity, sessionId), this,
        [this, guard, containerName, fileIds, route,
         idleTtlMs](const QFuture<Outcome<SandboxEntry>> &made) {
            const Outcome<SandboxEntry> created = resultOr(
                made, Outcome<SandboxEntry>::failure(QStringLiteral("creation was cancelled")));
            if (!guard)
                return;
            if (!created.ok() && SandboxRegistry::isCapReached(created.error)) {
                // No slot for it now: a retryable 429, as for code runs.
                guard->sendJson(429,
                                OpenAiError::object(created.error,
                                                    QStringLiteral("rate_limit_error"),
                                                    QStringLiteral("too_many_sandboxes")),
                                {{QByteArrayLiteral("Retry-After"),
                                  QByteArray::number(SandboxRegistry::kCapRetryAfterSeconds)}});
                return;
            }
            if (!created.ok()) {
                guard->sendError(502,
                                 QStringLiteral("Could not create a sandbox: ") + created.error,
                                 QStringLiteral("server_error"), QStringLiteral("sandbox_error"));
                return;
            }
            SandboxEntry entry = created.value;
            if (idleTtlMs > 0) // at most sandbox.max_expires_after_minutes
                entry.idleTtlMs = m_registry->setIdleTtl(entry.key, idleTtlMs);
            m_names.insert(entry.handle.id, containerName);
            if (fileIds.isEmpty()) {
                guard->sendJson(200, containerObject(entry, containerName));
                return;
            }
            whenFinished(
                m_importer->import(*route, entry, fileIds), this,
                [guard, entry,
                 containerName](const QFuture<Outcome<QList<ContainerFile>>> &imported) {
                    const auto copied = resultOr(imported, Outcome<QList<ContainerFile>>::failure(
                                                               QStringLiteral("cancelled")));
                    if (!guard)
                        return;
                    if (!copied.ok()) {
                        guard->sendError(400, copied.error, QStringLiteral("invalid_request_error"),
                                         QStringLiteral("file_not_copied"));
                        return;
                    }
                    guard->sendJson(200, containerObject(entry, containerName));
                });
        });
}

void ContainersApi::handleFiles(const HttpRequest &request, const SandboxEntry &entry,
                                const QString &rest, ResponseSink *sink) {
    const QString containerId = entry.handle.id;
    if (!m_store || !entry.backend) {
        sink->sendError(503, QStringLiteral("Container files are unavailable."),
                        QStringLiteral("server_error"));
        return;
    }
    if (rest.isEmpty() || rest == QLatin1String("/")) {
        if (request.method == "POST") {
            uploadFile(request, entry, sink);
        } else if (request.method == "GET") {
            const QUrlQuery query(QString::fromUtf8(request.query));
            QList<ContainerFile> files = m_store->files(containerId);
            if (isDescending(query))
                std::reverse(files.begin(), files.end()); // OpenAI's default: newest first
            QJsonArray data;
            for (const ContainerFile &f : std::as_const(files))
                data.append(ContainerFileStore::toJson(f));
            sendPage(sink, data, query);
        } else {
            methodNotAllowed(sink);
        }
        return;
    }
    const QString fileId = rest.mid(1).section(u'/', 0, 0);
    const QString sub = rest.mid(1).section(u'/', 1);
    const std::optional<ContainerFile> file = m_store->file(containerId, fileId);
    if (!file || (!sub.isEmpty() && sub != QLatin1String("content"))) {
        fileNotFound(sink, fileId);
        return;
    }
    QPointer<ResponseSink> guard(sink);
    const SandboxParams params = entry.params.value_or(SandboxParams{});
    if (sub == QLatin1String("content")) {
        if (request.method != "GET") {
            methodNotAllowed(sink);
            return;
        }
        whenFinished(entry.backend->readFile(entry.handle, file->path, params), this,
                     [guard](const QFuture<Outcome<QByteArray>> &read) {
                         const Outcome<QByteArray> bytes = resultOr(
                             read, Outcome<QByteArray>::failure(QStringLiteral("cancelled")));
                         if (!guard)
                             return;
                         if (!bytes.ok()) {
                             sandboxFailure(guard, bytes.error);
                             return;
                         }
                         guard->send(200,
                                     {{QByteArrayLiteral("content-type"),
                                       QByteArrayLiteral("application/octet-stream")}},
                                     bytes.value);
                     });
        return;
    }
    if (request.method == "GET") {
        sink->sendJson(200, ContainerFileStore::toJson(*file));
    } else if (request.method == "DELETE") {
        QPointer<ContainerFileStore> store = m_store;
        whenFinished(entry.backend->deleteFile(entry.handle, file->path, params), this,
                     [guard, store, containerId, fileId](const QFuture<Outcome<bool>> &) {
                         // Gone from the sandbox or not, it is gone from the container.
                         if (store)
                             store->remove(containerId, fileId);
                         if (guard)
                             guard->sendJson(200, {{QStringLiteral("id"), fileId},
                                                   {QStringLiteral("object"),
                                                    QStringLiteral("container.file.deleted")},
                                                   {QStringLiteral("deleted"), true}});
                     });
    } else {
        methodNotAllowed(sink);
    }
}

void ContainersApi::uploadFile(const HttpRequest &request, const SandboxEntry &entry,
                               ResponseSink *sink) {
    const QByteArray contentType = request.header("content-type");
    if (contentType.trimmed().toLower().startsWith("application/json")) {
        const QJsonObject body = QJsonDocument::fromJson(request.body).object();
        const QString fileId = body.value(QStringLiteral("file_id")).toString();
        if (fileId.isEmpty()) {
            badRequest(sink,
                       QStringLiteral("Send a multipart/form-data body with a 'file' part, "
                                      "or JSON with a 'file_id'."),
                       QStringLiteral("missing_required_parameter"));
            return;
        }
        const std::optional<UpstreamRoute> route =
            m_filesRoute ? m_filesRoute(request) : std::nullopt;
        if (!m_importer || !route) {
            badRequest(sink, QStringLiteral("'file_id' needs an upstream that serves OpenAI "
                                            "Files; none is configured."));
            return;
        }
        QPointer<ResponseSink> guard(sink);
        whenFinished(
            m_importer->import(*route, entry, {fileId}), this,
            [guard](const QFuture<Outcome<QList<ContainerFile>>> &imported) {
                const auto copied = resultOr(
                    imported, Outcome<QList<ContainerFile>>::failure(QStringLiteral("cancelled")));
                if (!guard)
                    return;
                if (!copied.ok() || copied.value.isEmpty()) {
                    guard->sendError(400, copied.error, QStringLiteral("invalid_request_error"),
                                     QStringLiteral("file_not_copied"));
                    return;
                }
                guard->sendJson(200, ContainerFileStore::toJson(copied.value.first()));
            });
        return;
    }
    const std::optional<QByteArray> boundary = MultipartFormData::boundaryOf(contentType);
    if (!boundary) {
        badRequest(sink,
                   QStringLiteral("Expected Content-Type multipart/form-data with a boundary, "
                                  "or application/json."),
                   QStringLiteral("invalid_content_type"));
        return;
    }
    QString error;
    const auto parts = MultipartFormData::parse(request.body, *boundary, &error);
    if (!parts) {
        qWarning().noquote() << "loopscope: container file upload refused:" << error;
        badRequest(sink, error, QStringLiteral("invalid_multipart"));
        return;
    }
    const auto file = std::find_if(parts->cbegin(), parts->cend(), [](const MultipartPart &p) {
        return p.name == QLatin1String("file") && p.isFile;
    });
    if (file == parts->cend()) {
        badRequest(sink, QStringLiteral("The multipart body has no 'file' part with a filename."),
                   QStringLiteral("missing_required_parameter"));
        return;
    }
    if (file->data.size() > kMaxFileBytes) {
        sink->sendError(413,
                        QStringLiteral("The file has %1 bytes; the limit for a container file is "
                                       "%2 bytes.")
                            .arg(file->data.size())
                            .arg(kMaxFileBytes),
                        QStringLiteral("invalid_request_error"), QStringLiteral("file_too_large"));
        return;
    }
    const QString name = ContainerFileImporter::safeFileName(
        file->fileName, QStringLiteral("upload-") + randomHex().left(8));
    // The sandbox's file system takes names of at most 255 bytes (NAME_MAX): say so, instead of
    // a sandbox error.
    if (const qsizetype bytes = name.toUtf8().size(); bytes > kMaxFileNameBytes) {
        badRequest(sink,
                   QStringLiteral("The file name has %1 bytes in UTF-8; a container file name "
                                  "may have at most %2.")
                       .arg(bytes)
                       .arg(kMaxFileNameBytes),
                   QStringLiteral("invalid_value"));
        return;
    }
    writeUpload(entry, name, file->data, sink);
}

void ContainersApi::writeUpload(const SandboxEntry &entry, const QString &fileName,
                                const QByteArray &data, ResponseSink *sink) {
    QPointer<ResponseSink> guard(sink);
    QPointer<ContainerFileStore> store = m_store;
    const QString containerId = entry.handle.id;
    whenFinished(
        entry.backend->writeFile(entry.handle, sandboxDataDir() + u'/' + fileName, data,
                                 entry.params.value_or(SandboxParams{})),
        this, [guard, store, containerId](const QFuture<Outcome<SandboxFileInfo>> &written) {
            const Outcome<SandboxFileInfo> info =
                resultOr(written, Outcome<SandboxFileInfo>::failure(QStringLiteral("cancelled")));
            if (!guard)
                return;
            if (!info.ok()) {
                sandboxFailure(guard, info.error);
                return;
            }
            if (!store) {
                guard->sendError(503, QStringLiteral("Container files are unavailable."),
                                 QStringLiteral("server_error"));
                return;
            }
            guard->sendJson(200, ContainerFileStore::toJson(store->noteWritten(
                                     containerId, info.value, QStringLiteral("user"))));
        });
}

} // namespace loopscope
