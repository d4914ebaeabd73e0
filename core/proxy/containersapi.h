#pragma once

#include "http/httprequest.h"
#include "sandbox/sandboxregistry.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>

namespace loopscope {

class ResponseSink;

// OpenAI's Containers API over the SandboxRegistry, scoped to the caller: the session
// sandboxes a bearer token created are its containers, and nobody else's are visible.
//   GET    /v1/containers        → {"object":"list","data":[container…],"has_more":false,…}
//   GET    /v1/containers/{id}   → container, or 404 when absent or someone else's
//   DELETE /v1/containers/{id}   → {"id","object":"container.deleted","deleted":true}, or 404
// Deleting here is the same registry call as the window's Delete button: the next request in
// that session gets a fresh sandbox. Lives on the proxy thread.
class ContainersApi : public QObject {
    Q_OBJECT
public:
    explicit ContainersApi(SandboxRegistry *registry, QObject *parent = nullptr);

    // "/v1/containers…" or "/containers…".
    static bool matches(const QString &path);
    void handle(const HttpRequest &request, const QString &callerIdentity, ResponseSink *sink);

    static QJsonObject containerObject(const SandboxEntry &entry);

private:
    QPointer<SandboxRegistry> m_registry;
};

} // namespace loopscope
