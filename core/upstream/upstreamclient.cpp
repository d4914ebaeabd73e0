#include "upstream/upstreamclient.h"

#include "common/futurechain.h"
#include "upstream/anthropicbridge.h"
#include "upstream/responsesbridge.h"
#include "upstream/upstreamhttpreply.h"
#include "upstream/upstreamnetworkmanager.h"

#include <QBuffer>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QPromise>
#include <QTimer>

#include <limits>
#include <memory>

namespace loopscope {

namespace {

const char *const kTimedOutProperty = "loopscope_timed_out";
const char *const kTooLargeProperty = "loopscope_too_large";

// Hop-by-hop headers (RFC 9110 §7.6.1) and what describes this hop's framing or this
// machine: never forwarded. Credentials are not here: they travel separately
// (UpstreamRoute::credentialHeaders), so the route decides whose key goes.
bool isHopRequestHeader(const QByteArray &lower) {
    static const QList<QByteArray> dropped = {
        "host",   "content-length",    "connection", "accept-encoding",     "keep-alive",
        "te",     "upgrade",           "trailer",    "proxy-authorization", "proxy-connection",
        "expect", "transfer-encoding",
        "cookie", // a browser's cookies for 127.0.0.1 are nobody's upstream business
    };
    return dropped.contains(lower) || lower.startsWith("x-loopscope-"); // Loopscope's own
}

// The names a Connection header lists are hop-by-hop for this request too.
QList<QByteArray> connectionOptions(const HttpHeaders &headers) {
    QList<QByteArray> names;
    for (const auto &h : headers)
        if (h.first.toLower() == "connection")
            for (const QByteArray &name : h.second.split(','))
                if (const QByteArray n = name.trimmed().toLower(); !n.isEmpty())
                    names << n;
    return names;
}

} // namespace

UpstreamClient::UpstreamClient(QObject *parent)
    : QObject(parent)
    , m_manager(new UpstreamNetworkManager(this))
    , m_bridge(new ResponsesBridge(this)) {}

bool UpstreamClient::isCredentialHeader(const QByteArray &lowerName) {
    return lowerName == "authorization" || lowerName == "x-api-key" || lowerName == "api-key";
}

HttpHeaders UpstreamClient::forwardableRequestHeaders(const HttpHeaders &clientHeaders) {
    const QList<QByteArray> named = connectionOptions(clientHeaders);
    HttpHeaders out;
    for (const auto &h : clientHeaders) {
        const QByteArray lower = h.first.toLower();
        if (!isHopRequestHeader(lower) && !isCredentialHeader(lower) && !named.contains(lower))
            out.append(h);
    }
    return out;
}

HttpHeaders UpstreamClient::clientCredentialHeaders(const HttpHeaders &clientHeaders) {
    const QList<QByteArray> named = connectionOptions(clientHeaders);
    HttpHeaders out;
    for (const auto &h : clientHeaders) {
        const QByteArray lower = h.first.toLower();
        if (isCredentialHeader(lower) && !named.contains(lower))
            out.append(h);
    }
    return out;
}

HttpHeaders UpstreamClient::relayableHeaders(const QNetworkReply *reply) {
    HttpHeaders out;
    for (const auto &pair : reply->rawHeaderPairs()) {
        const QByteArray lower = pair.first.toLower();
        if (lower == "content-length" || lower == "transfer-encoding" || lower == "connection" ||
            lower == "keep-alive" || lower.startsWith("access-control-"))
            continue;
        out.append(pair);
    }
    return out;
}

bool UpstreamClient::timedOut(const QNetworkReply *reply) {
    return reply->property(kTimedOutProperty).toBool();
}

bool UpstreamClient::tooLarge(const QNetworkReply *reply) {
    return reply->property(kTooLargeProperty).toBool();
}

int UpstreamClient::httpStatus(const QNetworkReply *reply) {
    return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

QByteArray UpstreamClient::take(QNetworkReply *reply, qint64 maxSize) {
    if (auto *own = qobject_cast<UpstreamHttpReply *>(reply))
        return own->take(maxSize);
    return reply->read(qMin(maxSize, reply->bytesAvailable()));
}

QByteArray UpstreamClient::takeAll(QNetworkReply *reply) {
    if (auto *own = qobject_cast<UpstreamHttpReply *>(reply))
        return own->take(std::numeric_limits<qint64>::max());
    return reply->readAll();
}

QNetworkReply *UpstreamClient::send(const UpstreamRoute &route, const QByteArray &method,
                                    const QString &pathAndQuery, const QByteArray &body) {
    QNetworkRequest request(route.urlFor(pathAndQuery));
    bool hasContentType = false;
    for (const auto &h : route.forwardHeaders) {
        hasContentType = hasContentType || h.first.toLower() == "content-type";
        request.setRawHeader(h.first, h.second);
    }
    if (!hasContentType && !body.isEmpty())
        request.setRawHeader("Content-Type", "application/json");
    for (const auto &credential : route.credentialHeaders())
        request.setRawHeader(credential.first, credential.second);

    QNetworkReply *reply = nullptr;
    if (method == "GET")
        reply = m_manager->get(request);
    else if (method == "DELETE" && body.isEmpty())
        reply = m_manager->deleteResource(request);
    else if (method == "POST")
        reply = m_manager->post(request, body);
    else if (method == "PUT")
        reply = m_manager->put(request, body);
    else
        reply = m_manager->sendCustomRequest(request, method, body);

    // Inactivity timeout: restarted by every byte, so long streams are fine while they flow.
    auto *timer = new QTimer(reply);
    timer->setSingleShot(true);
    timer->setInterval(route.timeoutMs);
    connect(timer, &QTimer::timeout, reply, [reply] {
        reply->setProperty(kTimedOutProperty, true);
        reply->abort();
    });
    connect(reply, &QNetworkReply::readyRead, timer, qOverload<>(&QTimer::start));
    // A hostile or broken upstream must not fill this process's memory: what waits unread
    // (a whole buffered body, or a stream the client is slow to take) is capped.
    const qint64 maxBody = m_maxBodyBytes;
    connect(reply, &QNetworkReply::readyRead, reply, [reply, maxBody] {
        if (reply->bytesAvailable() > maxBody && !tooLarge(reply)) {
            qWarning("loopscope: upstream reply from %s aborted: more than %lld bytes "
                     "(general_settings.max_upstream_body_bytes)",
                     qPrintable(reply->url().host()), qint64(maxBody));
            reply->setProperty(kTooLargeProperty, true);
            reply->abort();
        }
    });
    connect(reply, &QNetworkReply::finished, timer, &QTimer::stop);
    timer->start();
    return reply;
}

QFuture<UpstreamReply> UpstreamClient::postJson(const UpstreamRoute &route, const QString &path,
                                                const QJsonObject &body,
                                                const CancellationToken &cancel) {
    if (route.isAnthropic() && path == QLatin1String("/chat/completions"))
        return m_bridge->anthropic()->postChat(route, body, cancel); // dialects.md §5
    if (path != QLatin1String("/responses"))
        return postJsonDirect(route, path, body, cancel);
    if (m_bridge->bridges(route))
        return m_bridge->postJson(route, body, {}, cancel);
    if (m_bridge->keepsState(route))
        return m_bridge->postStateless(route, body, cancel);
    if (!m_bridge->detects(route))
        return postJsonDirect(route, path, body, cancel);
    // Told when the native answer comes, not from a second future: a served answer reaches
    // the caller without another turn of the event loop (the agentic loop waited one more
    // per round for it).
    return postJsonDirect(
        route, path, body, cancel,
        [this, route, body, cancel](const UpstreamReply &native,
                                    const std::shared_ptr<QPromise<UpstreamReply>> &promise) {
            if (!ResponsesBridge::notServed(native.status, native.body))
                return false;
            m_bridge->rememberChatOnly(route, native.status);
            whenFinished(m_bridge->postJson(route, body, {}, cancel), this,
                         [promise, native](const QFuture<UpstreamReply> &bridged) {
                             UpstreamReply reply = resultOr(bridged, native);
                             reply.latencyMs += native.latencyMs;
                             finishPromise(promise, reply);
                         });
            return true;
        });
}

QFuture<UpstreamReply> UpstreamClient::postJsonDirect(const UpstreamRoute &route,
                                                      const QString &path, const QJsonObject &body,
                                                      const CancellationToken &cancel) {
    return postJsonDirect(route, path, body, cancel, Divert());
}

QFuture<UpstreamReply> UpstreamClient::postJsonDirect(const UpstreamRoute &route,
                                                      const QString &path, const QJsonObject &body,
                                                      const CancellationToken &cancel,
                                                      const Divert &divert) {
    auto promise = std::make_shared<QPromise<UpstreamReply>>();
    promise->start();
    QFuture<UpstreamReply> future = promise->future();
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    QNetworkReply *reply =
        send(route, "POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact));
    connect(reply, &QNetworkReply::finished, this, [reply, promise, clock, divert] {
        UpstreamReply result;
        result.latencyMs = double(clock->nsecsElapsed()) / 1e6;
        result.tooLarge = tooLarge(reply);
        result.status = result.tooLarge ? 0 : httpStatus(reply);
        result.body = result.tooLarge ? QByteArray() : takeAll(reply);
        result.headers = relayableHeaders(reply);
        result.timedOut = timedOut(reply);
        if (result.status == 0) {
            result.networkError = reply->error();
            result.errorString =
                result.timedOut ? QStringLiteral("timed out") : reply->errorString();
        }
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(result.body, &parseError);
        result.isJson = parseError.error == QJsonParseError::NoError && doc.isObject();
        if (result.isJson)
            result.json = doc.object();
        reply->deleteLater();
        if (divert && divert(result, promise))
            return;
        promise->addResult(result);
        promise->finish();
    });
    if (cancel)
        cancel->onCancel([guard = QPointer<QNetworkReply>(reply)] {
            if (guard && guard->isRunning())
                guard->abort();
        });
    return future;
}

} // namespace loopscope
