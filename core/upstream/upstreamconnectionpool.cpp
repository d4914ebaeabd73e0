#include "upstream/upstreamconnectionpool.h"

#include <QSslSocket>

namespace loopscope {

UpstreamConnectionPool::UpstreamConnectionPool(QObject *parent)
    : QObject(parent) {
    m_sweep.setInterval(kIdleMs / 3);
    connect(&m_sweep, &QTimer::timeout, this, &UpstreamConnectionPool::sweep);
}

UpstreamConnectionPool::~UpstreamConnectionPool() = default; // idle sockets are children

QString UpstreamConnectionPool::originKey(const QUrl &url) {
    const bool tls = url.scheme() == QLatin1String("https");
    return url.scheme() + u'|' + url.host() + u'|' + QString::number(url.port(tls ? 443 : 80));
}

UpstreamConnectionPool::Lease UpstreamConnectionPool::take(const QUrl &url,
                                                           const QSslConfiguration &tls) {
    const auto it = m_idle.find(originKey(url));
    if (it != m_idle.end()) {
        // Newest first: the one least likely to have been closed by the upstream's own
        // keep-alive timeout.
        while (!it->isEmpty()) {
            const Idle entry = it->takeLast();
            QTcpSocket *socket = entry.socket.data();
            if (!socket)
                continue;
            if (socket->state() == QAbstractSocket::ConnectedState &&
                socket->bytesAvailable() == 0 && entry.since.elapsed() < kIdleMs) {
                socket->disconnect(); // the idle watch above ends with the lease
                socket->setParent(nullptr);
                if (it->isEmpty())
                    m_idle.erase(it);
                return {socket, true};
            }
            socket->deleteLater();
        }
        m_idle.erase(it);
    }
    return open(url, tls);
}

UpstreamConnectionPool::Lease UpstreamConnectionPool::open(const QUrl &url,
                                                           const QSslConfiguration &tls) {
    const bool secure = url.scheme() == QLatin1String("https");
    QTcpSocket *socket = nullptr;
    if (secure) {
        auto *ssl = new QSslSocket;
        QSslConfiguration config = tls;
        config.setAllowedNextProtocols({QByteArray(QSslConfiguration::NextProtocolHttp1_1)});
        ssl->setSslConfiguration(config);
        ssl->connectToHostEncrypted(url.host(), quint16(url.port(443)));
        socket = ssl;
    } else {
        socket = new QTcpSocket;
        socket->connectToHost(url.host(), quint16(url.port(80)));
    }
    // Options set before the socket engine exists are dropped, so they are set once the
    // connection is up (before a TLS handshake, before anything is written).
    connect(socket, &QTcpSocket::connected, socket, [socket] {
        socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        socket->setSocketOption(QAbstractSocket::KeepAliveOption, 1);
    });
    return {socket, false};
}

void UpstreamConnectionPool::give(const QUrl &url, QTcpSocket *socket) {
    if (!socket || socket->state() != QAbstractSocket::ConnectedState ||
        socket->bytesAvailable() > 0) {
        if (socket)
            socket->deleteLater();
        return;
    }
    QList<Idle> &idle = m_idle[originKey(url)];
    if (idle.size() >= kMaxIdlePerOrigin) {
        socket->deleteLater();
        return;
    }
    socket->disconnect(); // the reply's connections end with it
    socket->setParent(this);
    // The upstream may close an idle connection at any time; anything it sends while idle is
    // not an answer to anything, so such a connection is not used again either.
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    connect(socket, &QTcpSocket::readyRead, socket, [socket] { socket->abort(); });
    Idle entry{socket, {}};
    entry.since.start();
    idle.append(entry);
    if (!m_sweep.isActive())
        m_sweep.start();
}

void UpstreamConnectionPool::sweep() {
    for (auto it = m_idle.begin(); it != m_idle.end();) {
        QList<Idle> &idle = *it;
        for (qsizetype i = idle.size() - 1; i >= 0; --i) {
            const Idle &entry = idle.at(i);
            if (!entry.socket || entry.since.elapsed() >= kIdleMs) {
                if (entry.socket)
                    entry.socket->deleteLater();
                idle.removeAt(i);
            }
        }
        it = idle.isEmpty() ? m_idle.erase(it) : std::next(it);
    }
    if (m_idle.isEmpty())
        m_sweep.stop();
}

} // namespace loopscope
