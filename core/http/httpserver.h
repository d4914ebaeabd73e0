#pragma once

#include "http/httpconnection.h"

#include <QHostAddress>
#include <QObject>
#include <QSet>

class QTcpServer;

namespace loopscope {

// The HTTP/1.1 front: an owned QTcpServer plus one HttpConnection per client (libhttp-parser).
// Chosen over QHttpServer 6.4 because that one buffers whole bodies without a cap, never answers
// Expect: 100-continue, and its writer API changes in 6.8. Lives in whichever thread creates it.
class HttpServer : public QObject {
    Q_OBJECT
public:
    explicit HttpServer(QObject *parent = nullptr);
    ~HttpServer() override;

    void setHandler(HttpConnection::Handler handler) { m_handler = std::move(handler); }
    void setMaxBodyBytes(qint64 bytes) { m_limits.maxBodyBytes = bytes; }
    qint64 maxBodyBytes() const { return m_limits.maxBodyBytes; }
    // Pending bytes, header and idle timeouts for every new connection.
    void setLimits(const HttpLimits &limits) {
        const QSet<QByteArray> hosts = m_limits.allowedHosts;
        auto observer = m_limits.onRejected;
        m_limits = limits;
        m_limits.allowedHosts = hosts;
        m_limits.onRejected = std::move(observer);
    }
    HttpLimits limits() const { return m_limits; }
    // Open connections beyond this are answered 503 and closed; the server keeps serving the
    // others (1,000 idle sockets would otherwise exhaust descriptors sandboxes need).
    // At the cap a connection silent (no request in flight) for this long is closed to admit a
    // new one; see evictIdleConnection.
    static constexpr qint64 kMinIdleForEvictionMs = 1000;
    void setMaxConnections(int count) { m_maxConnections = qMax(1, count); }
    int maxConnections() const { return m_maxConnections; }
    // See HttpLimits::onRejected; applies to connections accepted afterwards.
    void setRejectionObserver(HttpConnection::Handler observer) {
        m_limits.onRejected = std::move(observer);
    }

    // Binds and starts accepting. On a loopback address the Host check is switched on.
    bool listen(const QHostAddress &address, quint16 port);
    QString errorString() const { return m_error; }
    QHostAddress serverAddress() const;
    quint16 serverPort() const;
    bool isListening() const;

    // Graceful shutdown: stop accepting, close idle keep-alive connections now and busy ones
    // after their current response. allConnectionsClosed() fires when none is left.
    void shutdown();
    void abortAll();
    int connectionCount() const { return int(m_connections.size()); }
    int busyConnectionCount() const;
    // Bytes read but held unparsed behind responses in flight, over all connections (tests).
    qint64 pendingBytes() const;

signals:
    void allConnectionsClosed();

private:
    void onNewConnection();
    void refuseOverCap(QTcpSocket *socket);
    // Closes the longest-idle connection without a request in flight, silent for at least
    // kMinIdleForEvictionMs; false when there is none.
    bool evictIdleConnection();

    QTcpServer *m_server;
    HttpLimits m_limits;
    HttpConnection::Handler m_handler;
    QSet<HttpConnection *> m_connections;
    QString m_error;
    int m_maxConnections = 256;
    int m_refusing = 0; // 503 answers still being flushed
    bool m_warnedCap = false;
    bool m_shuttingDown = false;
};

} // namespace loopscope
