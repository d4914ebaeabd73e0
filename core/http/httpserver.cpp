#include "http/httpserver.h"

#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

namespace loopscope {

HttpServer::HttpServer(QObject *parent)
    : QObject(parent)
    , m_server(new QTcpServer(this)) {
    connect(m_server, &QTcpServer::newConnection, this, &HttpServer::onNewConnection);
}

HttpServer::~HttpServer() {
    // Connections are children; tell in-flight handlers their clients are gone first.
    abortAll();
}

bool HttpServer::listen(const QHostAddress &address, quint16 port) {
    // Qt's default backlog of 50 overflows when hundreds of clients connect at once (the soak's
    // 500 streams): the kernel then drops or resets connections before they are accepted.
    m_server->setListenBacklogSize(1024);
    if (!m_server->listen(address, port)) {
        m_error = m_server->errorString();
        return false;
    }
    m_limits.allowedHosts.clear();
    if (address.isLoopback()) {
        const QByteArray portText = QByteArray::number(m_server->serverPort());
        for (const QByteArray &host :
             {QByteArrayLiteral("localhost"), QByteArrayLiteral("127.0.0.1"),
              QByteArrayLiteral("[::1]")}) {
            m_limits.allowedHosts.insert(host);
            m_limits.allowedHosts.insert(host + ':' + portText);
        }
    }
    return true;
}

QHostAddress HttpServer::serverAddress() const {
    return m_server->serverAddress();
}
quint16 HttpServer::serverPort() const {
    return m_server->serverPort();
}
bool HttpServer::isListening() const {
    return m_server->isListening();
}

int HttpServer::busyConnectionCount() const {
    int busy = 0;
    for (const HttpConnection *c : m_connections)
        busy += c->isBusy() ? 1 : 0;
    return busy;
}

qint64 HttpServer::pendingBytes() const {
    qint64 bytes = 0;
    for (const HttpConnection *c : m_connections)
        bytes += c->pendingBytes();
    return bytes;
}

void HttpServer::onNewConnection() {
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        if (m_shuttingDown) {
            socket->abort();
            socket->deleteLater();
            continue;
        }
        if (m_connections.size() >= m_maxConnections && !evictIdleConnection()) {
            refuseOverCap(socket);
            continue;
        }
        m_warnedCap = false;
        auto *connection = new HttpConnection(socket, m_limits, m_handler, this);
        m_connections.insert(connection);
        connect(connection, &QObject::destroyed, this, [this, connection] {
            m_connections.remove(connection);
            if (m_shuttingDown && m_connections.isEmpty())
                emit allConnectionsClosed();
        });
    }
}

bool HttpServer::evictIdleConnection() {
    // The longest-idle connection with nothing in flight makes room: a keep-alive socket left
    // open (or never used) loses nothing, and a client that reconnects is served again.
    // One just accepted whose request is still on its way is not idle yet: only a connection
    // silent for kMinIdleForEvictionMs may go, so a burst of real clients is not cut.
    HttpConnection *oldest = nullptr;
    for (HttpConnection *c : std::as_const(m_connections))
        if (c->isIdle() && c->idleMs() >= kMinIdleForEvictionMs &&
            (!oldest || c->idleMs() > oldest->idleMs()))
            oldest = c;
    if (!oldest)
        return false;
    m_connections.remove(oldest); // its slot is free now, not when the socket's close is done
    oldest->abort();
    oldest->deleteLater();
    return true;
}

void HttpServer::refuseOverCap(QTcpSocket *socket) {
    if (!m_warnedCap) {
        m_warnedCap = true; // once per burst, not once per refused socket
        qWarning("loopscope: %d connections open (general_settings.max_connections): answering "
                 "new ones 503 until some close",
                 m_maxConnections);
    }
    // A flood of refusals must not become the new descriptor leak: beyond a small allowance
    // they are cut without an answer.
    if (m_refusing >= 64) {
        socket->abort();
        socket->deleteLater();
        return;
    }
    ++m_refusing;
    socket->setParent(this);
    const QByteArray body =
        QByteArrayLiteral("{\"error\":{\"message\":\"Loopscope is at its connection limit (") +
        QByteArray::number(m_maxConnections) +
        QByteArrayLiteral(" open, general_settings.max_connections); retry shortly\",\"type\":"
                          "\"server_error\",\"param\":null,\"code\":\"too_many_connections\"}}");
    socket->write(QByteArrayLiteral("HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                                    "application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
                                    "Content-Length: ") +
                  QByteArray::number(body.size()) + QByteArrayLiteral("\r\n\r\n") + body);
    // Unread input at close makes the kernel send RST, and the client may never see the 503.
    connect(socket, &QTcpSocket::readyRead, socket, [socket] { socket->readAll(); });
    socket->disconnectFromHost();
    auto done = [this, socket] {
        if (socket->property("loopscopeRefused").toBool())
            return;
        socket->setProperty("loopscopeRefused", true);
        --m_refusing;
        socket->abort();
        socket->deleteLater();
    };
    if (socket->state() == QAbstractSocket::UnconnectedState) {
        done();
        return;
    }
    connect(socket, &QTcpSocket::disconnected, this, done);
    QTimer::singleShot(2000, socket, done); // a client that never reads
}

void HttpServer::shutdown() {
    m_shuttingDown = true;
    m_server->close();
    if (m_connections.isEmpty()) {
        emit allConnectionsClosed();
        return;
    }
    const auto connections = m_connections;
    for (HttpConnection *c : connections)
        c->closeWhenIdle();
}

void HttpServer::abortAll() {
    const auto connections = m_connections;
    for (HttpConnection *c : connections)
        c->abort();
}

} // namespace loopscope
