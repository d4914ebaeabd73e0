#include "upstream/upstreamnetworkmanager.h"

#include "demo/demoreply.h"

namespace loopscope {

QNetworkReply *UpstreamNetworkManager::createRequest(Operation op, const QNetworkRequest &request,
                                                     QIODevice *outgoingData) {
    if (request.url().scheme() == QLatin1String("demo")) {
        const QByteArray body = outgoingData ? outgoingData->readAll() : QByteArray();
        QByteArray verb;
        switch (op) {
        case GetOperation:
            verb = "GET";
            break;
        case PostOperation:
            verb = "POST";
            break;
        case PutOperation:
            verb = "PUT";
            break;
        case DeleteOperation:
            verb = "DELETE";
            break;
        case HeadOperation:
            verb = "HEAD";
            break;
        default:
            verb = request.attribute(QNetworkRequest::CustomVerbAttribute).toByteArray();
        }
        return new DemoReply(request, op, verb, body, this);
    }
    return QNetworkAccessManager::createRequest(op, request, outgoingData);
}

} // namespace loopscope
