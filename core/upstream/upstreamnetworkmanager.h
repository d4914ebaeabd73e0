#pragma once

#include <QNetworkAccessManager>

namespace loopscope {

// The one QNetworkAccessManager. Requests to the demo:// scheme are answered in-process by
// DemoModel (through DemoReply), so the demo works offline and uses the same code paths
// (streaming, timeouts, logging) as a real upstream.
class UpstreamNetworkManager : public QNetworkAccessManager {
    Q_OBJECT
public:
    using QNetworkAccessManager::QNetworkAccessManager;

protected:
    QNetworkReply *createRequest(Operation op, const QNetworkRequest &request,
                                 QIODevice *outgoingData) override;
};

} // namespace loopscope
