#include "http/httpserver.h"

#include <QTcpServer>
#include <QTcpSocket>

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

void HttpServer::onNewConnection() {
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        if (m_shuttingDown) {
            socket->abort();
            socket->deleteLater();
            continue;
        }
        auto *connection = new HttpConnection(socket, m_limits, m_handler, this);
        m_connections.insert(connection);
        connect(connection, &QObject::destroyed, this, [this, connection] {
            m_connections.remove(connection);
            if (m_shuttingDown && m_connections.isEmpty())
                emit allConnectionsClosed();
        });
    }
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
