#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPair>

class QTcpSocket;

namespace loopscope::test {

// A byte-level HTTP/1.1 client on a real socket, for tests that must see the wire: interim
// 100 responses, chunked framing, partial streams, keep-alive reuse, connection close. It never
// blocks: wait on its state with QTRY_VERIFY so servers in the same thread keep running.
class RawHttpClient : public QObject {
    Q_OBJECT
public:
    struct Response {
        int status = 0;
        QList<QPair<QByteArray, QByteArray>> headers; // names lower-case
        QByteArray body;                              // de-chunked
        bool complete = false;
        QByteArray header(const QByteArray &lowerName) const;
        QJsonObject json() const;
    };

    explicit RawHttpClient(quint16 port, QObject *parent = nullptr);
    bool isConnected() const;
    bool isDisconnected() const { return m_disconnected; }
    void send(const QByteArray &bytes);
    // Convenience: a full request with Host and Content-Length.
    void request(const QByteArray &method, const QByteArray &target, const QByteArray &body = {},
                 const QList<QPair<QByteArray, QByteArray>> &headers = {});
    void close();

    QByteArray received() const { return m_data; }
    // Whether an interim "100 Continue" arrived.
    bool sawContinue() const { return m_data.startsWith("HTTP/1.1 100"); }
    // The first final response in the bytes so far (complete or not; status 0 when none yet).
    Response current() const;
    bool hasCompleteResponse() const { return current().complete; }
    // Removes the first complete final response from the buffer and returns it.
    Response take();

    static Response parse(const QByteArray &data, qsizetype *consumed);

signals:
    // Bytes arrived: lets a timing test wake on them instead of QTest::qWaitFor's 10 ms polls.
    void bytesArrived();

private:
    QTcpSocket *m_socket;
    QByteArray m_data;
    QByteArray m_outbox;
    quint16 m_port;
    bool m_disconnected = false;
};

} // namespace loopscope::test
