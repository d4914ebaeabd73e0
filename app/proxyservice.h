#pragma once

#include "proxy/proxyconfig.h"
#include "proxy/requestlogentry.h"

#include <QObject>
#include <QThread>

namespace loopscope {
class ProxyServer;
}

// Runs the proxy on its own QThread (the GUI keeps the main thread): every proxy object, socket
// and the QNetworkAccessManager is created inside that thread. Cross-thread traffic is queued
// signals out (requestLogged) and queued invocations in (stop).
class ProxyService : public QObject {
    Q_OBJECT
public:
    explicit ProxyService(QObject *parent = nullptr);
    ~ProxyService() override;

    // Creates the server in the proxy thread and listens; blocks until that is done.
    bool start(const loopscope::ProxyConfig &config, QString *error);
    QString listenUrl() const { return m_url; }
    // Graceful stop (in-flight responses finish, bounded); stopped() follows.
    void stop();

signals:
    void requestLogged(const loopscope::RequestLogEntry &entry);
    void stopped();

private:
    QThread m_thread;
    QObject *m_anchor = nullptr;                // lives in m_thread: the context for invocations
    loopscope::ProxyServer *m_server = nullptr; // lives in m_thread
    QString m_url;
    bool m_stopping = false;
};
