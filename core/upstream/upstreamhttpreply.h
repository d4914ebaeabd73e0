#pragma once

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPointer>

#include <http_parser.h>

class QTcpSocket;

namespace loopscope {

class UpstreamConnectionPool;

// One HTTP/1.1 exchange with an upstream over a pooled keep-alive connection, as a
// QNetworkReply so every caller reads it as before. Written instead of going through
// QNetworkAccessManager's HTTP stack for two measured reasons: QNAM's channel never sets
// TCP_NODELAY, so every request body of 16 KB or more stalled ~40 ms on Nagle + delayed ACK,
// and it runs each exchange on its own thread, a hop each way per call. Here the request head
// and body go to a socket with Nagle off, the response is parsed as it arrives (Debian's
// libhttp-parser, as the server side uses: chunked, Content-Length and close-delimited bodies)
// on the caller's thread, and what waits unread is bounded by setReadBufferSize (the socket is
// then left unread, so the upstream waits instead of this process's memory). No compression
// is asked for, so bodies are relayed byte for byte. A reused connection that the upstream
// closed before answering is retried once on a new one, as browsers and QNAM do.
class UpstreamHttpReply : public QNetworkReply {
    Q_OBJECT
public:
    UpstreamHttpReply(UpstreamConnectionPool *pool, const QNetworkRequest &request,
                      QNetworkAccessManager::Operation op, const QByteArray &verb, QByteArray body,
                      QObject *parent = nullptr);
    ~UpstreamHttpReply() override;

    void abort() override;
    qint64 bytesAvailable() const override;
    bool isSequential() const override { return true; }
    void setReadBufferSize(qint64 size) override;
    // Up to maxSize of the body bytes that wait, handed over without a copy when they are all
    // taken (QIODevice::read allocates maxSize and copies into it: a relay reading 1 MB at a
    // time mapped and faulted in a fresh megabyte per read). Same bookkeeping as read().
    QByteArray take(qint64 maxSize);

protected:
    qint64 readData(char *data, qint64 maxSize) override;

private:
    void start(bool fresh);
    void writeRequest();
    void consume();
    void onDisconnected();
    void onSocketError(QAbstractSocket::SocketError error);
    void parse(const char *data, qsizetype size);
    void publishProgress();
    void finishWith(NetworkError error, const QString &message);
    void dropSocket();
    // A reused connection that ended before any answer byte: once, on a new connection.
    bool retryIfStale();
    qsizetype buffered() const { return m_buffer.size() - m_readOffset; }
    // After a read: drops what was read, and resumes reading when it had paused at the bound.
    void afterRead();
    bool wantsMore() const { return m_readLimit <= 0 || buffered() < m_readLimit; }

    static int onHeaderField(http_parser *parser, const char *at, size_t length);
    static int onHeaderValue(http_parser *parser, const char *at, size_t length);
    static int onStatus(http_parser *parser, const char *at, size_t length);
    static int onHeadersComplete(http_parser *parser);
    static int onBody(http_parser *parser, const char *at, size_t length);
    static int onMessageComplete(http_parser *parser);

    QPointer<UpstreamConnectionPool> m_pool;
    QTcpSocket *m_socket = nullptr; // a child while this reply uses it
    QByteArray m_verb;
    QByteArray m_body;
    bool m_reused = false;
    bool m_retried = false;
    bool m_gotResponseBytes = false;
    bool m_socketClosed = false;
    bool m_done = false;
    bool m_resumeQueued = false;

    http_parser m_parser{};
    http_parser_settings m_settings{};
    QByteArray m_reason;
    QByteArray m_field;
    QByteArray m_value;
    bool m_inValue = false;
    QList<QPair<QByteArray, QByteArray>> m_headers;
    bool m_headersComplete = false;
    bool m_headersPublished = false;
    bool m_messageComplete = false;
    qsizetype m_unparsedAfterMessage = 0;

    QByteArray m_scratch; // one socket read, reused: parsed, then the body part copied out
    QByteArray m_buffer;  // body bytes not read yet start at m_readOffset
    qsizetype m_readOffset = 0;
    qsizetype m_publishedBytes = 0;
    qint64 m_readLimit = 0;
};

} // namespace loopscope
