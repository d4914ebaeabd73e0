#pragma once

#include <QNetworkAccessManager>

namespace loopscope {

class UpstreamConnectionPool;

// The one QNetworkAccessManager, as the interface every upstream caller reads replies through.
// Requests to the demo:// scheme are answered in-process by DemoModel (through DemoReply), so
// the demo works offline and uses the same code paths (streaming, timeouts, logging) as a real
// upstream; http:// and https:// go through UpstreamHttpReply over this manager's keep-alive
// pool (why not QNAM's own HTTP stack: see upstreamhttpreply.h).
class UpstreamNetworkManager : public QNetworkAccessManager {
    Q_OBJECT
public:
    explicit UpstreamNetworkManager(QObject *parent = nullptr);

protected:
    QNetworkReply *createRequest(Operation op, const QNetworkRequest &request,
                                 QIODevice *outgoingData) override;

private:
    UpstreamConnectionPool *m_pool;
};

} // namespace loopscope
