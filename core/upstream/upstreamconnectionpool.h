#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSslConfiguration>
#include <QTcpSocket>
#include <QTimer>
#include <QUrl>

namespace loopscope {

// Keep-alive connections to upstreams, per scheme, host and port. Every socket has Nagle's
// algorithm off: a request head and its body are separate writes, and with Nagle on the body's
// last segment waited for the upstream's delayed ACK of the head (~40 ms for every body of
// 16 KB or more, through QNetworkAccessManager, whose HTTP channel leaves TCP_NODELAY off).
// An idle connection is handed out again only while it is open with nothing unread; it is
// closed after kIdleMs unused, or when the upstream closes it. Proxy thread only.
class UpstreamConnectionPool : public QObject {
    Q_OBJECT
public:
    explicit UpstreamConnectionPool(QObject *parent = nullptr);
    ~UpstreamConnectionPool() override;

    struct Lease {
        QTcpSocket *socket = nullptr; // owned by the caller until give() or deleteLater()
        bool reused = false;          // an idle connection: it may have been closed meanwhile
    };
    // An idle connection to url's origin, or a new one already connecting (TLS for https,
    // with `tls` as its configuration). Never null.
    Lease take(const QUrl &url, const QSslConfiguration &tls);
    // Always a new connection (a retry after a stale idle one).
    Lease open(const QUrl &url, const QSslConfiguration &tls);
    // A connection whose last exchange ended cleanly and may be used again.
    void give(const QUrl &url, QTcpSocket *socket);

    static constexpr int kIdleMs = 30000;
    static constexpr int kMaxIdlePerOrigin = 64;

private:
    struct Idle {
        QPointer<QTcpSocket> socket;
        QElapsedTimer since;
    };
    static QString originKey(const QUrl &url);
    void sweep();

    QHash<QString, QList<Idle>> m_idle;
    QTimer m_sweep;
};

} // namespace loopscope
