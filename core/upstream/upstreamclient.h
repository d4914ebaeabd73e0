#pragma once

#include "common/cancellation.h"
#include "http/httprequest.h"
#include "upstream/upstreamreply.h"
#include "upstream/upstreamroute.h"

#include <QFuture>
#include <QJsonObject>
#include <QObject>
#include <QPromise>

#include <functional>
#include <memory>

class QNetworkAccessManager;
class QNetworkReply;

namespace loopscope {

class ResponsesBridge;

// All upstream HTTP goes through here: ONE UpstreamNetworkManager (keep-alive HTTP/1.1 with
// Nagle off, and the in-process demo model under the demo:// scheme), the route's auth, header
// hygiene (platform.md), and an inactivity timeout (no byte for route.timeoutMs → aborted and
// reported as timed out → 504). No limit of connections per host: a 7th concurrent
// (minutes-long) model call never queues behind six others, as it did under QNAM's six.
// Lives in the proxy thread; call it only from there.
class UpstreamClient : public QObject {
    Q_OBJECT
public:
    explicit UpstreamClient(QObject *parent = nullptr);

    // Non-streaming JSON POST to route.urlFor(path) (path like "/responses"). The future
    // resolves on this thread; continue with whenFinished(future, owner, ...) from
    // sandbox/futurechain.h (not QFuture::then(context), which asserts in Qt 6.4 when the context
    // dies first). Never fails: transport problems come back as UpstreamReply{status 0,
    // networkError, timedOut}. `cancel` (may be null) aborts the call (the client went away):
    // the reply is then a transport failure (status 0, OperationCanceledError).
    // A Responses call ("/responses") on a chat-only route goes through the ResponsesBridge
    // (dialects.md §5): over /chat/completions, answered as Responses JSON; on a route not yet
    // known, a 404/405/501 that is not about the model is retried that way and remembered.
    // Chat Completions and Responses calls on an Anthropic route go over /messages
    // (AnthropicBridge).
    QFuture<UpstreamReply> postJson(const UpstreamRoute &route, const QString &path,
                                    const QJsonObject &body, const CancellationToken &cancel = {});
    // The same without any bridge: exactly this path, this body.
    QFuture<UpstreamReply> postJsonDirect(const UpstreamRoute &route, const QString &path,
                                          const QJsonObject &body,
                                          const CancellationToken &cancel = {});
    ResponsesBridge *bridge() const { return m_bridge; }

    // Raw call for pass-through. The caller owns the reply (deleteLater when done) and reads it
    // as it arrives; abort() it when the client goes away. timedOut(reply) tells a timeout
    // abort from others.
    QNetworkReply *send(const UpstreamRoute &route, const QByteArray &method,
                        const QString &pathAndQuery, const QByteArray &body);

    static bool timedOut(const QNetworkReply *reply);
    // The reply was aborted because more than maxBodyBytes() of it waited unread.
    static bool tooLarge(const QNetworkReply *reply);
    // The most of one upstream reply held in memory (general_settings.max_upstream_body_bytes):
    // a whole non-streaming body, or the unread part of a stream. Beyond it the reply is
    // aborted and the client gets 502 (see UpstreamReply::transportErrorBody).
    void setMaxBodyBytes(qint64 bytes) { m_maxBodyBytes = qMax<qint64>(1024, bytes); }
    qint64 maxBodyBytes() const { return m_maxBodyBytes; }
    static constexpr qint64 kDefaultMaxBodyBytes = 64 * 1024 * 1024;
    static int httpStatus(const QNetworkReply *reply);
    // Up to maxSize of what the reply holds; from Loopscope's own HTTP client without a copy
    // (UpstreamHttpReply::take). takeAll: everything it holds (readAll).
    static QByteArray take(QNetworkReply *reply, qint64 maxSize);
    static QByteArray takeAll(QNetworkReply *reply);
    // The reply's headers minus framing ones (content-length, transfer-encoding, connection,
    // keep-alive; a content-encoding stays, as the body is relayed as it came) and the
    // upstream's CORS headers
    // (Access-Control-*): which browser origins may read an answer is Loopscope's decision,
    // never a provider's.
    static HttpHeaders relayableHeaders(const QNetworkReply *reply);
    // Client request headers that may be forwarded upstream: every header a provider may need
    // (anthropic-version, anthropic-beta, openai-*, user-agent, …) minus host, framing,
    // hop-by-hop headers (also those the client's Connection header names), cookies,
    // Loopscope's own x-loopscope-* and the credentials, which clientCredentialHeaders() keeps.
    static HttpHeaders forwardableRequestHeaders(const HttpHeaders &clientHeaders);
    // The client's credential headers (Authorization, x-api-key, api-key) exactly as sent.
    static HttpHeaders clientCredentialHeaders(const HttpHeaders &clientHeaders);
    static bool isCredentialHeader(const QByteArray &lowerName);

    QNetworkAccessManager *manager() const { return m_manager; }

private:
    // Takes over a finished call's promise (true) instead of resolving it with `native`.
    using Divert = std::function<bool(const UpstreamReply &native,
                                      const std::shared_ptr<QPromise<UpstreamReply>> &promise)>;
    QFuture<UpstreamReply> postJsonDirect(const UpstreamRoute &route, const QString &path,
                                          const QJsonObject &body, const CancellationToken &cancel,
                                          const Divert &divert);
    QNetworkAccessManager *m_manager;
    ResponsesBridge *m_bridge;
    qint64 m_maxBodyBytes = kDefaultMaxBodyBytes;
};

} // namespace loopscope
