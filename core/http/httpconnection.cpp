#include "http/httpconnection.h"

#include "http/requesttarget.h"
#include "http/responsesink.h"

#include <QTcpSocket>
#include <QTimer>

#include <algorithm>

namespace loopscope {

namespace {

HttpConnection *self(http_parser *parser) {
    return static_cast<HttpConnection *>(parser->data);
}

// After a rejection the client may still be sending its body; closing with unread input makes
// the kernel send RST, and some clients then never read the error. Drain it briefly instead.
constexpr int kRejectDrainMs = 1000;
// The most read from the socket at once: what the pending buffer keeps allocated between reads.
constexpr qint64 kReadPieceBytes = 64 * 1024;

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
    m_headerTimer.setSingleShot(true);
    m_idleTimer.setSingleShot(true);
    connect(&m_headerTimer, &QTimer::timeout, this, &HttpConnection::onHeaderTimeout);
    connect(&m_idleTimer, &QTimer::timeout, this, &HttpConnection::onIdleTimeout);
    m_lastActivity.start();
    armIdleTimer();
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
    // Read in pieces into the pending buffer's own memory, which stays allocated between reads:
    // a fresh buffer per read (readAll) put every read of a large body into newly mapped pages,
    // a page fault per 4 KB (a fifth of the proxy thread's time on 1 MB requests).
    while (m_socket->bytesAvailable() > 0 && !m_rejected) {
        if (readBodyInPlace())
            continue;
        if (appendFromSocket(m_pending, kReadPieceBytes) <= 0)
            break;
        if (isBusy() && m_pending.size() > m_limits.maxPendingBytes) {
            // Only a pipelining client sends during a response, and none sends this much.
            qWarning("loopscope: closing connection from %s: %lld bytes sent while its response "
                     "was in flight (general_settings.max_pending_bytes is %lld)",
                     qPrintable(m_socket->peerAddress().toString()), qint64(m_pending.size()),
                     qint64(m_limits.maxPendingBytes));
            m_pending.clear();
            m_rejected = true;
            abort();
            return;
        }
        armIdleTimer();
        parsePending();
    }
    if (m_rejected && m_socket->bytesAvailable() > 0)
        m_socket->readAll(); // what comes after an error answer is drained, not parsed
}

void HttpConnection::armIdleTimer() {
    int timeout = m_limits.idleTimeoutMs;
    if (!m_heardFrom && m_limits.firstByteTimeoutMs > 0)
        timeout =
            timeout > 0 ? qMin(timeout, m_limits.firstByteTimeoutMs) : m_limits.firstByteTimeoutMs;
    if (isBusy() || m_rejected || timeout <= 0)
        m_idleTimer.stop();
    else
        m_idleTimer.start(timeout);
}

void HttpConnection::onIdleTimeout() {
    if (isBusy() || m_rejected)
        return;
    if (m_inMessage) {
        failAndClose(408,
                     QStringLiteral("Request timeout: no data for %1 s in the middle of a request "
                                    "(general_settings.idle_timeout)")
                         .arg(m_limits.idleTimeoutMs / 1000.0),
                     QStringLiteral("request_timeout"));
        return;
    }
    m_closing = true; // an idle keep-alive connection: close quietly, as every server does
    m_socket->disconnectFromHost();
}

void HttpConnection::onHeaderTimeout() {
    if (isBusy() || m_rejected || !m_inMessage)
        return;
    failAndClose(408,
                 QStringLiteral("Request timeout: the request head did not arrive within %1 s "
                                "(general_settings.header_timeout)")
                     .arg(m_limits.headerTimeoutMs / 1000.0),
                 QStringLiteral("request_timeout"));
}

qint64 HttpConnection::appendFromSocket(QByteArray &buffer, qint64 most) {
    const qsizetype old = buffer.size();
    const qint64 want = qMin(m_socket->bytesAvailable(), most);
    buffer.resize(old + qsizetype(want));
    const qint64 got = m_socket->read(buffer.data() + old, want);
    buffer.resize(old + qsizetype(qMax<qint64>(got, 0)));
    if (got > 0) {
        m_heardFrom = true;
        m_lastActivity.restart();
    }
    return got;
}

bool HttpConnection::readBodyInPlace() {
    // A body of declared length goes out of the socket's buffer straight into the request (the
    // parser is then run over it where it lies, and onBody appends nothing): through the
    // pending buffer it was copied twice, a 1 MB request's largest cost after the socket calls.
    if (!m_inDeclaredBody || !m_pending.isEmpty() || isBusy() || m_closing || m_rejected)
        return false;
    const quint64 remaining = m_parser.content_length;
    if (remaining == 0 || remaining > quint64(m_limits.maxBodyBytes))
        return false;
    QByteArray &body = m_request.body;
    const qsizetype old = body.size();
    const qint64 got = appendFromSocket(body, qint64(remaining)); // into what the head reserved
    if (got <= 0)
        return false;
    armIdleTimer();
    m_bodyInPlace = true;
    const size_t parsed =
        http_parser_execute(&m_parser, &m_settings, body.constData() + old, size_t(got));
    m_bodyInPlace = false;
    if (parsed < size_t(got)) { // (only at an error: the read ended at the body's end)
        m_pending.append(body.constData() + old + parsed, got - qint64(parsed));
        body.truncate(old + qsizetype(parsed));
    }
    if (afterParse())
        parsePending();
    return true;
}

void HttpConnection::parsePending() {
    while (!m_pending.isEmpty() && !isBusy() && !m_closing && !m_rejected) {
        if (m_head.state() == HeadScanner::State::Scanning) {
            m_scanned += m_head.feed(QByteArrayView(m_pending).sliced(m_scanned));
            if (m_head.state() == HeadScanner::State::Invalid) {
                // The well-formed part still names the method, target and headers in the flow.
                http_parser_execute(&m_parser, &m_settings, m_pending.constData(),
                                    size_t(m_scanned - 1));
                if (!m_rejected) // (a prefix without the head's end cannot complete it)
                    refuse(400, m_head.error(), m_head.code());
                return;
            }
        }
        const size_t parsed = http_parser_execute(&m_parser, &m_settings, m_pending.constData(),
                                                  size_t(m_pending.size()));
        if (qsizetype(parsed) == m_pending.size())
            m_pending.resize(0); // keeps its memory for the next read
        else
            m_pending.remove(0, qsizetype(parsed));
        m_scanned = std::max<qsizetype>(0, m_scanned - qsizetype(parsed));
        if (!afterParse())
            return;
    }
    if (m_closing && !isBusy() && m_socket->state() == QAbstractSocket::ConnectedState)
        m_socket->disconnectFromHost();
}

bool HttpConnection::afterParse() {
    const auto error = HTTP_PARSER_ERRNO(&m_parser);
    if (error == HPE_PAUSED) {
        http_parser_pause(&m_parser, 0);
        if (m_rejected)
            return false; // failAndClose already answered
        if (m_messageReady) {
            m_messageReady = false;
            m_head.reset(); // the parser stopped at the message's end: the next head begins
            m_scanned = 0;
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
        return true;
    }
    if (error != HPE_OK) {
        failAndClose(400,
                     QStringLiteral("Malformed HTTP request: %1")
                         .arg(QString::fromLatin1(http_errno_description(error))),
                     QStringLiteral("bad_request"));
        return false;
    }
    return true;
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
    armIdleTimer();
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
    m_headerTimer.stop();
    m_idleTimer.stop();
    HttpRequest request = m_request;
    request.httpMinor = m_parser.http_minor;
    if (!request.target.isEmpty() && request.method.isEmpty()) // refused before its headers ended
        request.method = http_method_str(static_cast<http_method>(m_parser.method));
    if (!request.target.isEmpty() && request.path.isEmpty()) {
        // The flow shows the target as sent, undecoded: it was never routed or forwarded.
        const qsizetype q = request.target.indexOf('?');
        request.path = QString::fromLatin1(q < 0 ? request.target : request.target.left(q));
        request.query = q < 0 ? QByteArray() : request.target.mid(q + 1);
    }
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

void HttpConnection::refuse(int status, const QString &message, const QString &code) {
    // The target as sent, control bytes escaped so it cannot forge a log line.
    QString shown;
    for (const char c : m_request.target.left(200)) {
        const auto u = static_cast<unsigned char>(c);
        shown += u > 0x20 && u < 0x7f && u != '\\'
                     ? QString(QLatin1Char(c))
                     : QStringLiteral("\\x%1").arg(uint(u), 2, 16, QLatin1Char('0'));
    }
    qWarning("loopscope: %d %s to %s: %s (target %s)", status, qPrintable(code),
             qPrintable(m_socket->peerAddress().toString()), qPrintable(message),
             shown.isEmpty() ? "-" : qPrintable(shown));
    failAndClose(status, message, code);
}

int HttpConnection::onMessageBegin(http_parser *parser) {
    HttpConnection *c = self(parser);
    c->m_request = HttpRequest();
    c->m_field.clear();
    c->m_value.clear();
    c->m_inValue = false;
    c->m_inMessage = true;
    c->m_inDeclaredBody = false;
    if (c->m_limits.headerTimeoutMs > 0)
        c->m_headerTimer.start(c->m_limits.headerTimeoutMs);
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
    c->m_headerTimer.stop();
    c->finishHeader();
    HttpRequest &r = c->m_request;
    r.method = http_method_str(static_cast<http_method>(parser->method));
    r.httpMinor = parser->http_minor;
    const RequestTarget target = RequestTarget::parse(r.target);
    if (!target.isValid()) {
        c->refuse(400, target.error(), QStringLiteral("invalid_request_target"));
        http_parser_pause(parser, 1);
        return 0;
    }
    r.path = target.path();
    r.query = target.query();

    // RFC 9112 3.2: exactly one Host on HTTP/1.1 (HTTP/1.0 may omit it).
    const auto hosts = std::count_if(r.headers.cbegin(), r.headers.cend(),
                                     [](const auto &h) { return h.first == "host"; });
    if (hosts > 1 || (hosts == 0 && parser->http_major == 1 && parser->http_minor >= 1)) {
        c->refuse(400,
                  hosts > 1 ? QStringLiteral("Malformed HTTP request: more than one Host header")
                            : QStringLiteral("Malformed HTTP request: HTTP/1.1 requires a Host "
                                             "header"),
                  hosts > 1 ? QStringLiteral("invalid_host") : QStringLiteral("missing_host"));
        http_parser_pause(parser, 1);
        return 0;
    }

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
    // One block of the announced size: growing by appends copies the body at each step, and the
    // last step held 1.5 times it (a 31 MiB upload). Untouched pages of it cost no memory.
    if (hasLength)
        r.body.reserve(qsizetype(parser->content_length));
    c->m_inDeclaredBody = hasLength && (parser->flags & F_CHUNKED) == 0;
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
    if (c->m_bodyInPlace)
        return 0; // the bytes are the body's already, within the length checked at the head
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
    c->m_inMessage = false;
    c->m_inDeclaredBody = false;
    http_parser_pause(parser, 1); // one request at a time; resumed when its response is done
    return 0;
}

} // namespace loopscope
