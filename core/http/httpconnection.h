#pragma once

#include "http/headscanner.h"
#include "http/httprequest.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <functional>
#include <http_parser.h>

class QTcpSocket;

namespace loopscope {

class ResponseSink;

// Limits and checks one connection enforces before a request reaches the handler.
struct HttpLimits {
    qint64 maxBodyBytes = 32 * 1024 * 1024;
    // When non-empty, the Host header (if present) must be one of these (lower-case,
    // "host:port" and "host" forms): the DNS-rebinding defence for loopback binds.
    QSet<QByteArray> allowedHosts;
    // Bytes a client may send while its response is in flight (a pipelined next request);
    // beyond it the connection is closed: nothing is buffered without bound before any auth.
    qint64 maxPendingBytes = 4 * 1024 * 1024;
    // A request's head must be complete this long after its first byte (slowloris): else 408.
    int headerTimeoutMs = 30000;
    // No byte for this long while no response is in flight: a silent keep-alive connection is
    // closed, a half-sent request gets 408.
    int idleTimeoutMs = 120000;
    // A new connection that sends nothing at all for this long is closed: sockets opened and
    // left silent must not hold the connection cap for the idle timeout.
    int firstByteTimeoutMs = 10000;
    // Called with a rejection's request (headers, maybe no body) and its sink just before the
    // connection answers it itself (400/403/413), so the proxy can record it as a flow.
    std::function<void(const HttpRequest &, ResponseSink *)> onRejected;
};

// One client connection: parses HTTP/1.x with libhttp-parser (keep-alive, chunked bodies,
// Expect: 100-continue), answers protocol errors itself (400 for a malformed head, a missing or
// repeated Host on HTTP/1.1 or a refused RequestTarget, 403 bad Host, 408 too slow, 413 too
// large; limits in HttpLimits) and
// hands each complete request to the handler with a ResponseSink. Requests are served one at a
// time: parsing pauses until the current response is finished, so pipelined requests are
// answered in order and never interleave.
class HttpConnection : public QObject {
    Q_OBJECT
public:
    using Handler = std::function<void(const HttpRequest &, ResponseSink *)>;

    HttpConnection(QTcpSocket *socket, const HttpLimits &limits, Handler handler,
                   QObject *parent = nullptr);
    ~HttpConnection() override;

    bool isBusy() const { return !m_sink.isNull(); }
    // No response in flight and no request begun: closing it loses nothing.
    bool isIdle() const { return !isBusy() && !m_inMessage && m_pending.isEmpty(); }
    // Received bytes held unparsed while a response is in flight (capped by maxPendingBytes).
    qint64 pendingBytes() const { return m_pending.size(); }
    // Milliseconds since its last byte arrived (or since it was accepted).
    qint64 idleMs() const { return m_lastActivity.elapsed(); }
    // Closes the connection now if no response is in flight, else after it.
    void closeWhenIdle();
    void abort();

signals:
    void closed();
    void requestFinished();

private:
    static int onMessageBegin(http_parser *parser);
    static int onUrl(http_parser *parser, const char *at, size_t length);
    static int onHeaderField(http_parser *parser, const char *at, size_t length);
    static int onHeaderValue(http_parser *parser, const char *at, size_t length);
    static int onHeadersComplete(http_parser *parser);
    static int onBody(http_parser *parser, const char *at, size_t length);
    static int onMessageComplete(http_parser *parser);

    void onReadyRead();
    // Appends at most `most` of the bytes the socket holds to `buffer` (resized, not reallocated
    // while it has the capacity) and notes the activity; returns what read() returned.
    qint64 appendFromSocket(QByteArray &buffer, qint64 most);
    // Reads what the socket holds of the current body, up to its declared end, straight into
    // the request; false when the connection is not inside such a body.
    bool readBodyInPlace();
    void parsePending();
    // What follows a parser run: hands a complete request to the handler, or answers a
    // malformed one. False when parsing must stop.
    bool afterParse();
    void onSinkFinished();
    void failAndClose(int status, const QString &message, const QString &code);
    // failAndClose for a request refused for its form, with a log line naming it.
    void refuse(int status, const QString &message, const QString &code);
    // 413 for a body over the cap (declared or received); stops the parser. Returns 0.
    int rejectOversizedBody(http_parser *parser);
    void finishHeader();
    void onHeaderTimeout();
    void onIdleTimeout();
    // Restarts the idle clock while waiting for a client; stops it while a response is out.
    void armIdleTimer();

    QTcpSocket *m_socket;
    HttpLimits m_limits;
    Handler m_handler;
    http_parser m_parser;
    http_parser_settings m_settings;
    QByteArray m_pending;    // received bytes not yet parsed (while a response is in flight)
    HeadScanner m_head;      // the current request's head, checked before the parser sees it
    qsizetype m_scanned = 0; // bytes of m_pending m_head has already checked
    HttpRequest m_request;
    QByteArray m_field;
    QByteArray m_value;
    bool m_inValue = false;
    bool m_messageReady = false;
    bool m_closing = false;
    bool m_rejected = false;
    bool m_inMessage = false; // a request has begun and is not yet complete
    // Between the head and the end of a body of declared length (read in place, see
    // readBodyInPlace), and while the parser runs over bytes already in the body.
    bool m_inDeclaredBody = false;
    bool m_bodyInPlace = false;
    bool m_heardFrom = false; // a first byte arrived
    QElapsedTimer m_lastActivity;
    QTimer m_headerTimer;
    QTimer m_idleTimer;
    QPointer<ResponseSink> m_sink;
};

} // namespace loopscope
