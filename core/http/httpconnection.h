#pragma once

#include "http/httprequest.h"

#include <QObject>
#include <QPointer>
#include <QSet>

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
    // Called with a rejection's request (headers, maybe no body) and its sink just before the
    // connection answers it itself (400/403/413), so the proxy can record it as a flow.
    std::function<void(const HttpRequest &, ResponseSink *)> onRejected;
};

// One client connection: parses HTTP/1.x with libhttp-parser (keep-alive, chunked bodies,
// Expect: 100-continue), answers protocol errors itself (400, 403 bad Host, 413 too large) and
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
    void parsePending();
    void onSinkFinished();
    void failAndClose(int status, const QString &message, const QString &code);
    // 413 for a body over the cap (declared or received); stops the parser. Returns 0.
    int rejectOversizedBody(http_parser *parser);
    void finishHeader();

    QTcpSocket *m_socket;
    HttpLimits m_limits;
    Handler m_handler;
    http_parser m_parser;
    http_parser_settings m_settings;
    QByteArray m_pending; // received bytes not yet parsed (while a response is in flight)
    HttpRequest m_request;
    QByteArray m_field;
    QByteArray m_value;
    bool m_inValue = false;
    bool m_messageReady = false;
    bool m_closing = false;
    bool m_rejected = false;
    QPointer<ResponseSink> m_sink;
};

} // namespace loopscope
