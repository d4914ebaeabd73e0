#include "proxy/containersapi.h"

#include "common/futurechain.h"
#include "http/responsesink.h"

#include <QJsonArray>

#include <algorithm>

namespace loopscope {

namespace {

QString stripVersion(const QString &path) {
    return path.startsWith(QLatin1String("/v1/")) ? path.mid(3) : path;
}

void notFound(ResponseSink *sink, const QString &id) {
    sink->sendError(404, QStringLiteral("No container found with id '%1'.").arg(id),
                    QStringLiteral("invalid_request_error"), QStringLiteral("not_found"));
}

} // namespace

ContainersApi::ContainersApi(SandboxRegistry *registry, QObject *parent)
    : QObject(parent)
    , m_registry(registry) {}

bool ContainersApi::matches(const QString &path) {
    const QString p = stripVersion(path);
    return p == QLatin1String("/containers") || p.startsWith(QLatin1String("/containers/"));
}

QJsonObject ContainersApi::containerObject(const SandboxEntry &entry) {
    return {{QStringLiteral("id"), entry.handle.id},
            {QStringLiteral("object"), QStringLiteral("container")},
            {QStringLiteral("name"), entry.sessionId},
            {QStringLiteral("created_at"), entry.createdMs / 1000},
            {QStringLiteral("last_active_at"), entry.lastAccessedMs / 1000},
            {QStringLiteral("status"), QStringLiteral("running")},
            {QStringLiteral("expires_after"),
             QJsonObject{{QStringLiteral("anchor"), QStringLiteral("last_active_at")},
                         {QStringLiteral("minutes"), int(SandboxRegistry::kIdleTtlMs / 60000)}}}};
}

void ContainersApi::handle(const HttpRequest &request, const QString &callerIdentity,
                           ResponseSink *sink) {
    if (!m_registry) {
        sink->sendError(503, QStringLiteral("Sandbox registry unavailable."),
                        QStringLiteral("server_error"));
        return;
    }
    const QString path = stripVersion(request.path);
    const QString id = path.mid(QStringLiteral("/containers/").size());
    // Only session sandboxes of this caller are its containers.
    auto owned = [&callerIdentity](const SandboxEntry &entry) {
        return entry.identity && *entry.identity == callerIdentity;
    };

    if (path == QLatin1String("/containers")) {
        if (request.method != "GET") {
            sink->sendError(405,
                            QStringLiteral("Loopscope creates containers through sessions "
                                           "(metadata.session_id); only GET is supported here."),
                            QStringLiteral("invalid_request_error"),
                            QStringLiteral("method_not_allowed"));
            return;
        }
        QList<SandboxEntry> entries = m_registry->entries();
        entries.removeIf([&owned](const SandboxEntry &e) { return !owned(e); });
        std::sort(entries.begin(), entries.end(), [](const SandboxEntry &a, const SandboxEntry &b) {
            return a.createdMs > b.createdMs; // newest first, like OpenAI's default order
        });
        QJsonArray data;
        for (const SandboxEntry &entry : std::as_const(entries))
            data.append(containerObject(entry));
        QJsonObject list{{QStringLiteral("object"), QStringLiteral("list")},
                         {QStringLiteral("data"), data},
                         {QStringLiteral("has_more"), false}};
        list.insert(QStringLiteral("first_id"), data.isEmpty()
                                                    ? QJsonValue(QJsonValue::Null)
                                                    : data.first()[QStringLiteral("id")]);
        list.insert(QStringLiteral("last_id"), data.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                              : data.last()[QStringLiteral("id")]);
        sink->sendJson(200, list);
        return;
    }

    const auto entry = m_registry->entryByContainerId(id);
    if (id.isEmpty() || id.contains(u'/') || !entry || !owned(*entry)) {
        notFound(sink, id);
        return;
    }
    if (request.method == "GET") {
        sink->sendJson(200, containerObject(*entry));
    } else if (request.method == "DELETE") {
        QPointer<ResponseSink> guard(sink);
        whenFinished(m_registry->remove(entry->key, SandboxRemovalReason::Deleted), this,
                     [guard, id](const QFuture<void> &) {
                         if (guard)
                             guard->sendJson(200, {{QStringLiteral("id"), id},
                                                   {QStringLiteral("object"),
                                                    QStringLiteral("container.deleted")},
                                                   {QStringLiteral("deleted"), true}});
                     });
    } else {
        sink->sendError(405, QStringLiteral("Method not allowed."),
                        QStringLiteral("invalid_request_error"),
                        QStringLiteral("method_not_allowed"));
    }
}

} // namespace loopscope
