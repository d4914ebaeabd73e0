#include "http/httpconnection.h"

#include "http/responsesink.h"

#include <QTcpSocket>
#include <QTimer>
#include <QUrl>

namespace loopscope {

namespace {

HttpConnection *self(http_parser *parser) {
    return static_cast<HttpConnection *>(parser->data);
}

// After a rejection the client may still be sending its body; closing with unread input makes
// the kernel send RST, and some clients then never read the error. Drain it briefly instead.
constexpr int kRejectDrainMs = 1000;

} // namespace

HttpConnection::HttpConnection(QTcpSocket *socket, const HttpLimits &limits, Handler handler,
                               QObject *parent)
    : QObject(parent)
    , m_socket(socket)
    , m_limits(limits)
    , m_handler(std::move(handler)) {
    m_socket->setParent(this);
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    http_parser_init(&m_parser, HTTP_REQUEST);
    m_parser.data = this;
    http_parser_settings_init(&m_settings);
    m_settings.on_message_begin = &HttpConnection::onMessageBegin;
    m_settings.on_url = &HttpConnection::onUrl;
    m_settings.on_header_field = &HttpConnection::onHeaderField;
    m_settings.on_header_value = &HttpConnection::onHeaderValue;
    m_settings.on_headers_complete = &HttpConnection::onHeadersComplete;
    m_settings.on_body = &HttpConnection::onBody;
    m_settings.on_message_complete = &HttpConnection::onMessageComplete;
    connect(m_socket, &QTcpSocket::readyRead, this, &HttpConnection::onReadyRead);
    connect(m_socket, &QTcpSocket::disconnected, this, [this] {
        if (m_sink)
            m_sink->markClientGone();
        emit closed();
        deleteLater();
    });
}

HttpConnection::~HttpConnection() {
    if (m_sink)
        m_sink->markClientGone();
}

void HttpConnection::closeWhenIdle() {
    m_closing = true;
    if (!isBusy())
        m_socket->disconnectFromHost();
}

void HttpConnection::abort() {
    if (m_sink)
        m_sink->markClientGone();
    m_socket->abort();
}

void HttpConnection::onReadyRead() {
    if (m_rejected) {
        m_socket->readAll(); // draining after an error answer
        return;
    }
    m_pending += m_socket->readAll();
    parsePending();
}

void HttpConnection::parsePending() {
    while (!m_pending.isEmpty() && !isBusy() && !m_closing && !m_rejected) {
        const size_t parsed = http_parser_execute(&m_parser, &m_settings, m_pending.constData(),
                                                  size_t(m_pending.size()));
        const auto error = HTTP_PARSER_ERRNO(&m_parser);
        m_pending.remove(0, qsizetype(parsed));
        if (error == HPE_PAUSED) {
            http_parser_pause(&m_parser, 0);
            if (m_rejected)
                return; // failAndClose already answered
            if (m_messageReady) {
                m_messageReady = false;
                const bool keepAlive = http_should_keep_alive(&m_parser) != 0 && !m_closing;
                if (!keepAlive)
                    m_closing = true;
                HttpRequest request = std::move(m_request);
                m_request = HttpRequest();
                auto *sink = new ResponseSink(m_socket, request, keepAlive, this);
                m_sink = sink;
                connect(sink, &ResponseSink::finished, this, &HttpConnection::onSinkFinished);
                m_handler(request, sink);
            }
            continue;
        }
        if (error != HPE_OK) {
            failAndClose(400,
                         QStringLiteral("Malformed HTTP request: %1")
                             .arg(QString::fromLatin1(http_errno_description(error))),
                         QStringLiteral("bad_request"));
            return;
        }
    }
    if (m_closing && !isBusy() && m_socket->state() == QAbstractSocket::ConnectedState)
        m_socket->disconnectFromHost();
}

void HttpConnection::onSinkFinished() {
    ResponseSink *sink = m_sink;
    m_sink = nullptr;
    if (sink) {
        if (!sink->keepAlive())
            m_closing = true;
        sink->deleteLater();
    }
    emit requestFinished();
    if (m_closing) {
        if (m_socket->state() == QAbstractSocket::ConnectedState)
            m_socket->disconnectFromHost();
        return;
    }
    if (!m_pending.isEmpty()) // a pipelined request waited for this response
        QMetaObject::invokeMethod(this, &HttpConnection::parsePending, Qt::QueuedConnection);
}

void HttpConnection::failAndClose(int status, const QString &message, const QString &code) {
    m_rejected = true;
    m_closing = true;
    m_pending.clear();
    HttpRequest request = m_request;
    request.httpMinor = m_parser.http_minor;
    request.received.start();
    ResponseSink sink(m_socket, request, false);
    if (m_limits.onRejected)
        m_limits.onRejected(request, &sink);
    sink.sendError(status, message,
                   status == 403 ? QStringLiteral("permission_error")
                                 : QStringLiteral("invalid_request_error"),
                   code);
    QTimer::singleShot(kRejectDrainMs, this, [this] {
        if (m_socket->state() == QAbstractSocket::ConnectedState)
            m_socket->disconnectFromHost();
    });
}

int HttpConnection::onMessageBegin(http_parser *parser) {
    HttpConnection *c = self(parser);
    c->m_request = HttpRequest();
    c->m_field.clear();
    c->m_value.clear();
    c->m_inValue = false;
    return 0;
}

int HttpConnection::onUrl(http_parser *parser, const char *at, size_t length) {
    self(parser)->m_request.target.append(at, qsizetype(length));
    return 0;
}

void HttpConnection::finishHeader() {
    if (!m_field.isEmpty())
        m_request.headers.append({m_field.toLower(), m_value.trimmed()});
    m_field.clear();
    m_value.clear();
    m_inValue = false;
}

int HttpConnection::onHeaderField(http_parser *parser, const char *at, size_t length) {
    HttpConnection *c = self(parser);
    if (c->m_inValue)
        c->finishHeader();
    c->m_field.append(at, qsizetype(length));
    return 0;
}

int HttpConnection::onHeaderValue(http_parser *parser, const char *at, size_t length) {
    HttpConnection *c = self(parser);
    c->m_inValue = true;
    c->m_value.append(at, qsizetype(length));
    return 0;
}

int HttpConnection::onHeadersComplete(http_parser *parser) {
    HttpConnection *c = self(parser);
    c->finishHeader();
    HttpRequest &r = c->m_request;
    r.method = http_method_str(static_cast<http_method>(parser->method));
    r.httpMinor = parser->http_minor;
    const qsizetype q = r.target.indexOf('?');
    const QByteArray rawPath = q < 0 ? r.target : r.target.left(q);
    r.query = q < 0 ? QByteArray() : r.target.mid(q + 1);
    r.path = QUrl::fromPercentEncoding(rawPath);

    if (!c->m_limits.allowedHosts.isEmpty() && r.hasHeader("host") &&
        !c->m_limits.allowedHosts.contains(r.header("host").toLower())) {
        c->failAndClose(403,
                        QStringLiteral("Host header %1 is not allowed: Loopscope on a loopback "
                                       "address answers only localhost, 127.0.0.1 and [::1]")
                            .arg(QString::fromLatin1(r.header("host"))),
                        QStringLiteral("invalid_host"));
        http_parser_pause(parser, 1);
        return 0;
    }
    const bool hasLength = (parser->flags & F_CONTENTLENGTH) != 0;
    if (hasLength && qint64(parser->content_length) > c->m_limits.maxBodyBytes) {
        return c->rejectOversizedBody(parser);
    }
    // Answer Expect: 100-continue so clients such as curl send the body at once instead of
    // waiting a second for a 100 that never comes.
    if (parser->http_minor >= 1 && r.header("expect").toLower() == "100-continue")
        c->m_socket->write(QByteArrayLiteral("HTTP/1.1 100 Continue\r\n\r\n"));
    return 0;
}

int HttpConnection::rejectOversizedBody(http_parser *parser) {
    failAndClose(
        413,
        QStringLiteral("Request body too large: the limit is %1 bytes").arg(m_limits.maxBodyBytes),
        QStringLiteral("request_too_large"));
    http_parser_pause(parser, 1);
    return 0;
}

int HttpConnection::onBody(http_parser *parser, const char *at, size_t length) {
    HttpConnection *c = self(parser);
    if (c->m_request.body.size() + qint64(length) > c->m_limits.maxBodyBytes) {
        return c->rejectOversizedBody(parser);
    }
    c->m_request.body.append(at, qsizetype(length));
    return 0;
}

int HttpConnection::onMessageComplete(http_parser *parser) {
    HttpConnection *c = self(parser);
    c->m_request.received.start();
    c->m_messageReady = true;
    http_parser_pause(parser, 1); // one request at a time; resumed when its response is done
    return 0;
}

} // namespace loopscope
