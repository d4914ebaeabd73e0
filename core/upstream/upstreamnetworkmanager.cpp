#include "upstream/upstreamnetworkmanager.h"

#include "demo/demoreply.h"
#include "upstream/upstreamconnectionpool.h"
#include "upstream/upstreamhttpreply.h"

#include <QBuffer>

namespace loopscope {

namespace {

QByteArray verbOf(QNetworkAccessManager::Operation op, const QNetworkRequest &request) {
    switch (op) {
    case QNetworkAccessManager::GetOperation:
        return "GET";
    case QNetworkAccessManager::PostOperation:
        return "POST";
    case QNetworkAccessManager::PutOperation:
        return "PUT";
    case QNetworkAccessManager::DeleteOperation:
        return "DELETE";
    case QNetworkAccessManager::HeadOperation:
        return "HEAD";
    default:
        return request.attribute(QNetworkRequest::CustomVerbAttribute).toByteArray();
    }
}

// The body without a copy when QNAM wrapped a QByteArray in a QBuffer (post(request, bytes)).
QByteArray bodyOf(QIODevice *outgoingData) {
    if (!outgoingData)
        return {};
    if (auto *buffer = qobject_cast<QBuffer *>(outgoingData); buffer && buffer->pos() == 0)
        return buffer->data();
    return outgoingData->readAll();
}

} // namespace

UpstreamNetworkManager::UpstreamNetworkManager(QObject *parent)
    : QNetworkAccessManager(parent)
    , m_pool(new UpstreamConnectionPool(this)) {}

QNetworkReply *UpstreamNetworkManager::createRequest(Operation op, const QNetworkRequest &request,
                                                     QIODevice *outgoingData) {
    const QString scheme = request.url().scheme();
    if (scheme == QLatin1String("demo"))
        return new DemoReply(request, op, verbOf(op, request), bodyOf(outgoingData), this);
    if (scheme == QLatin1String("http") || scheme == QLatin1String("https"))
        return new UpstreamHttpReply(m_pool, request, op, verbOf(op, request), bodyOf(outgoingData),
                                     this);
    return QNetworkAccessManager::createRequest(op, request, outgoingData);
}

} // namespace loopscope
