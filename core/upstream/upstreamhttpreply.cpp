#include "upstream/upstreamhttpreply.h"

#include "upstream/upstreamconnectionpool.h"

#include <QMetaObject>
#include <QSslSocket>
#include <QTcpSocket>

#include <cstring>
#include <utility>

namespace loopscope {

namespace {

// The socket's own buffer: beyond it Qt stops reading the descriptor, so TCP flow control
// holds the upstream back while this reply's reader is behind.
constexpr qint64 kSocketReadBuffer = 256 * 1024;
constexpr qint64 kReadChunk = 64 * 1024;

UpstreamHttpReply *self(http_parser *parser) {
    return static_cast<UpstreamHttpReply *>(parser->data);
}

// QNetworkAccessManager's mapping, so callers that look at error() see what they saw before.
QNetworkReply::NetworkError errorForStatus(int status) {
    switch (status) {
    case 401:
        return QNetworkReply::AuthenticationRequiredError;
    case 403:
        return QNetworkReply::ContentAccessDenied;
    case 404:
        return QNetworkReply::ContentNotFoundError;
    case 405:
        return QNetworkReply::ContentOperationNotPermittedError;
    case 407:
        return QNetworkReply::ProxyAuthenticationRequiredError;
    case 409:
        return QNetworkReply::ContentConflictError;
    case 410:
        return QNetworkReply::ContentGoneError;
    case 418:
        return QNetworkReply::ProtocolInvalidOperationError;
    case 500:
        return QNetworkReply::InternalServerError;
    case 501:
        return QNetworkReply::OperationNotImplementedError;
    case 503:
        return QNetworkReply::ServiceUnavailableError;
    default:
        if (status >= 500)
            return QNetworkReply::UnknownServerError;
        if (status >= 400)
            return QNetworkReply::UnknownContentError;
        return QNetworkReply::NoError;
    }
}

QNetworkReply::NetworkError errorForSocket(QAbstractSocket::SocketError error) {
    switch (error) {
    case QAbstractSocket::ConnectionRefusedError:
        return QNetworkReply::ConnectionRefusedError;
    case QAbstractSocket::RemoteHostClosedError:
        return QNetworkReply::RemoteHostClosedError;
    case QAbstractSocket::HostNotFoundError:
        return QNetworkReply::HostNotFoundError;
    case QAbstractSocket::SocketTimeoutError:
        return QNetworkReply::TimeoutError;
    case QAbstractSocket::SslHandshakeFailedError:
        return QNetworkReply::SslHandshakeFailedError;
    case QAbstractSocket::NetworkError:
        return QNetworkReply::TemporaryNetworkFailureError;
    default:
        return QNetworkReply::UnknownNetworkError;
    }
}

} // namespace

UpstreamHttpReply::UpstreamHttpReply(UpstreamConnectionPool *pool, const QNetworkRequest &request,
                                     QNetworkAccessManager::Operation op, const QByteArray &verb,
                                     QByteArray body, QObject *parent)
    : QNetworkReply(parent)
    , m_pool(pool)
    , m_verb(verb)
    , m_body(std::move(body)) {
    setRequest(request);
    setUrl(request.url());
    setOperation(op);
    open(QIODevice::ReadOnly);
    http_parser_settings_init(&m_settings);
    m_settings.on_status = &UpstreamHttpReply::onStatus;
    m_settings.on_header_field = &UpstreamHttpReply::onHeaderField;
    m_settings.on_header_value = &UpstreamHttpReply::onHeaderValue;
    m_settings.on_headers_complete = &UpstreamHttpReply::onHeadersComplete;
    m_settings.on_body = &UpstreamHttpReply::onBody;
    m_settings.on_message_complete = &UpstreamHttpReply::onMessageComplete;
    start(false);
}

UpstreamHttpReply::~UpstreamHttpReply() = default; // the socket, if still ours, is a child

void UpstreamHttpReply::start(bool fresh) {
    http_parser_init(&m_parser, HTTP_RESPONSE);
    m_parser.data = this;
    if (!m_pool) {
        QMetaObject::invokeMethod(
            this,
            [this] { finishWith(UnknownNetworkError, QStringLiteral("The client is shut down")); },
            Qt::QueuedConnection);
        return;
    }
    // A retry opens a new connection: another idle one may be just as stale.
    const UpstreamConnectionPool::Lease use =
        fresh ? m_pool->open(url(), request().sslConfiguration())
              : m_pool->take(url(), request().sslConfiguration());
    m_socket = use.socket;
    m_reused = use.reused;
    m_socket->setParent(this);
    m_socket->setReadBufferSize(kSocketReadBuffer);
    connect(m_socket, &QTcpSocket::readyRead, this, &UpstreamHttpReply::consume);
    connect(m_socket, &QTcpSocket::disconnected, this, &UpstreamHttpReply::onDisconnected);
    connect(m_socket, &QTcpSocket::errorOccurred, this, &UpstreamHttpReply::onSocketError);
    if (m_socket->state() == QAbstractSocket::ConnectedState) {
        writeRequest(); // a reused connection (TLS already up)
        return;
    }
    // Written once the connection is up (for https, once encrypted): bytes written while a
    // socket is still looking up or connecting are not reliably sent.
    if (auto *ssl = qobject_cast<QSslSocket *>(m_socket))
        connect(ssl, &QSslSocket::encrypted, this, &UpstreamHttpReply::writeRequest);
    else
        connect(m_socket, &QTcpSocket::connected, this, &UpstreamHttpReply::writeRequest);
}

void UpstreamHttpReply::writeRequest() {
    const QUrl target = url();
    QByteArray path = target.path(QUrl::FullyEncoded).toLatin1();
    if (path.isEmpty())
        path = "/";
    if (target.hasQuery())
        path += '?' + target.query(QUrl::FullyEncoded).toLatin1();
    const bool secure = target.scheme() == QLatin1String("https");
    QByteArray host = target.host(QUrl::FullyEncoded).toLatin1();
    if (host.contains(':'))
        host = '[' + host + ']';
    if (target.port() != -1 && target.port() != (secure ? 443 : 80))
        host += ':' + QByteArray::number(target.port());

    QByteArray head;
    head.reserve(512);
    head += m_verb + ' ' + path + " HTTP/1.1\r\nHost: " + host + "\r\n";
    const QNetworkRequest &req = request();
    for (const QByteArray &name : req.rawHeaderList()) {
        const QByteArray lower = name.toLower();
        if (lower == "host" || lower == "content-length" || lower == "transfer-encoding")
            continue; // framing is this hop's own
        head += name + ": " + req.rawHeader(name) + "\r\n";
    }
    if (!m_body.isEmpty() || m_verb == "POST" || m_verb == "PUT" || m_verb == "PATCH")
        head += "Content-Length: " + QByteArray::number(m_body.size()) + "\r\n";
    head += "\r\n";
    // Two writes, no copy of the body: with Nagle off neither waits for the other's ACK.
    m_socket->write(head);
    if (!m_body.isEmpty())
        m_socket->write(m_body);
    // Sent now, not on the event loop's next turn (QAbstractSocket writes from its write
    // notifier): one turn of the proxy thread fewer per call.
    m_socket->flush();
}

void UpstreamHttpReply::consume() {
    m_resumeQueued = false;
    if (m_done || !m_socket)
        return;
    while (m_socket && !m_done && wantsMore() && m_socket->bytesAvailable() > 0) {
        if (m_scratch.size() != kReadChunk)
            m_scratch.resize(kReadChunk);
        const qint64 got = m_socket->read(m_scratch.data(), kReadChunk);
        if (got <= 0)
            break;
        m_gotResponseBytes = true;
        parse(m_scratch.constData(), qsizetype(got));
    }
    if (m_done || !m_socket)
        return;
    if (m_socketClosed && m_socket->bytesAvailable() == 0) {
        // End of a close-delimited body, or a connection cut before the message ended.
        parse(nullptr, 0);
        if (!m_done) {
            if (retryIfStale())
                return;
            finishWith(RemoteHostClosedError,
                       QStringLiteral("Connection closed by the upstream before the response "
                                      "ended"));
        }
    }
}

void UpstreamHttpReply::parse(const char *data, qsizetype size) {
    const size_t parsed = http_parser_execute(&m_parser, &m_settings, data, size_t(size));
    const http_errno error = HTTP_PARSER_ERRNO(&m_parser);
    if (m_messageComplete && error == HPE_PAUSED) {
        m_unparsedAfterMessage = size - qsizetype(parsed);
    } else if (error != HPE_OK && size == 0) {
        publishProgress(); // what arrived stays readable
        finishWith(RemoteHostClosedError,
                   QStringLiteral("Connection closed by the upstream before the response ended"));
        return;
    } else if (error != HPE_OK) {
        publishProgress();
        finishWith(ProtocolFailure, QStringLiteral("Malformed HTTP response from the upstream: %1")
                                        .arg(QString::fromLatin1(http_errno_description(error))));
        return;
    }
    publishProgress();
    if (!m_messageComplete || m_done)
        return;
    const int status = int(m_parser.status_code);
    // The connection is good for another exchange only if the message ended cleanly, nothing
    // follows it, and all of the request went out: an upstream may answer before it has read
    // the whole body, and the rest of that body must not precede the next request.
    if (m_socket && http_should_keep_alive(&m_parser) && m_unparsedAfterMessage == 0 &&
        m_socket->bytesAvailable() == 0 && !m_socketClosed && m_pool &&
        m_socket->bytesToWrite() == 0) {
        QTcpSocket *socket = m_socket;
        m_socket = nullptr;
        socket->disconnect(this);
        m_pool->give(url(), socket);
    } else {
        dropSocket();
    }
    m_done = true;
    const NetworkError statusError = errorForStatus(status);
    if (statusError != NoError) {
        setError(statusError, QString::fromLatin1(m_reason));
        emit errorOccurred(statusError);
    }
    setFinished(true);
    emit finished();
}

void UpstreamHttpReply::publishProgress() {
    if (m_headersComplete && !m_headersPublished) {
        m_headersPublished = true;
        setAttribute(QNetworkRequest::HttpStatusCodeAttribute, int(m_parser.status_code));
        setAttribute(QNetworkRequest::HttpReasonPhraseAttribute, m_reason);
        for (const auto &header : std::as_const(m_headers)) {
            const QByteArray existing = rawHeader(header.first);
            setRawHeader(header.first,
                         existing.isEmpty() ? header.second : existing + ", " + header.second);
        }
        emit metaDataChanged();
    }
    if (buffered() > 0 && m_buffer.size() > m_publishedBytes) {
        m_publishedBytes = m_buffer.size();
        emit readyRead();
    }
}

void UpstreamHttpReply::onDisconnected() {
    m_socketClosed = true;
    consume();
}

void UpstreamHttpReply::onSocketError(QAbstractSocket::SocketError error) {
    if (m_done || !m_socket)
        return;
    if (error == QAbstractSocket::RemoteHostClosedError) {
        m_socketClosed = true;
        consume(); // what was sent before the close is still read, then the end decided
        return;
    }
    if (retryIfStale())
        return;
    finishWith(errorForSocket(error), m_socket->errorString());
}

bool UpstreamHttpReply::retryIfStale() {
    if (m_gotResponseBytes || !m_reused || m_retried)
        return false;
    m_retried = true;
    dropSocket();
    start(true);
    return true;
}

void UpstreamHttpReply::finishWith(NetworkError error, const QString &message) {
    if (m_done)
        return;
    m_done = true;
    dropSocket();
    setError(error, message);
    emit errorOccurred(error);
    setFinished(true);
    emit finished();
}

void UpstreamHttpReply::dropSocket() {
    if (!m_socket)
        return;
    QTcpSocket *socket = m_socket;
    m_socket = nullptr;
    socket->disconnect(this);
    socket->abort();
    socket->deleteLater();
}

void UpstreamHttpReply::abort() {
    if (m_done)
        return;
    finishWith(OperationCanceledError, QStringLiteral("Operation canceled"));
}

qint64 UpstreamHttpReply::bytesAvailable() const {
    return buffered() + QIODevice::bytesAvailable();
}

void UpstreamHttpReply::setReadBufferSize(qint64 size) {
    QNetworkReply::setReadBufferSize(size);
    m_readLimit = size;
}

qint64 UpstreamHttpReply::readData(char *data, qint64 maxSize) {
    const qint64 n = qMin<qint64>(maxSize, buffered());
    if (n <= 0)
        return m_done ? -1 : 0;
    std::memcpy(data, m_buffer.constData() + m_readOffset, size_t(n));
    m_readOffset += qsizetype(n);
    afterRead();
    return n;
}

QByteArray UpstreamHttpReply::take(qint64 maxSize) {
    if (QIODevice::bytesAvailable() > 0 || maxSize <= 0) // QIODevice's buffer holds the first
        return read(qMin(maxSize, bytesAvailable()));    // bytes: read() keeps their order
    QByteArray out;
    if (m_readOffset == 0 && buffered() <= maxSize) {
        out = std::exchange(m_buffer, {}); // afterRead() then finds it all read
    } else {
        const qsizetype n = qsizetype(qMin<qint64>(maxSize, buffered()));
        out = m_buffer.mid(m_readOffset, n);
        m_readOffset += n;
    }
    afterRead();
    return out;
}

void UpstreamHttpReply::afterRead() {
    if (m_readOffset == m_buffer.size()) {
        m_buffer.clear();
        m_readOffset = 0;
        m_publishedBytes = 0;
    } else if (m_readOffset > kReadChunk && m_readOffset > m_buffer.size() / 2) {
        m_buffer.remove(0, m_readOffset);
        m_publishedBytes -= m_readOffset;
        m_readOffset = 0;
    }
    // Reading was paused at the bound: go on once the reader has made room (queued, as the
    // reader is inside read() now).
    if (!m_done && m_socket && !m_resumeQueued && wantsMore() &&
        (m_socket->bytesAvailable() > 0 || m_socketClosed)) {
        m_resumeQueued = true;
        QMetaObject::invokeMethod(this, &UpstreamHttpReply::consume, Qt::QueuedConnection);
    }
}

int UpstreamHttpReply::onStatus(http_parser *parser, const char *at, size_t length) {
    self(parser)->m_reason.append(at, qsizetype(length));
    return 0;
}

int UpstreamHttpReply::onHeaderField(http_parser *parser, const char *at, size_t length) {
    UpstreamHttpReply *reply = self(parser);
    if (reply->m_inValue) {
        reply->m_headers.append({reply->m_field, reply->m_value});
        reply->m_field.clear();
        reply->m_value.clear();
        reply->m_inValue = false;
    }
    reply->m_field.append(at, qsizetype(length));
    return 0;
}

int UpstreamHttpReply::onHeaderValue(http_parser *parser, const char *at, size_t length) {
    UpstreamHttpReply *reply = self(parser);
    reply->m_inValue = true;
    reply->m_value.append(at, qsizetype(length));
    return 0;
}

int UpstreamHttpReply::onHeadersComplete(http_parser *parser) {
    UpstreamHttpReply *reply = self(parser);
    if (reply->m_inValue)
        reply->m_headers.append({reply->m_field, reply->m_value});
    reply->m_field.clear();
    reply->m_value.clear();
    reply->m_inValue = false;
    if (parser->status_code >= 100 && parser->status_code < 200 && parser->status_code != 101) {
        reply->m_headers.clear(); // an interim answer: the real one follows
        reply->m_reason.clear();
        return 0;
    }
    reply->m_headersComplete = true;
    return reply->m_verb == "HEAD" ? 1 : 0; // 1: no body follows, whatever the headers say
}

int UpstreamHttpReply::onBody(http_parser *parser, const char *at, size_t length) {
    self(parser)->m_buffer.append(at, qsizetype(length));
    return 0;
}

int UpstreamHttpReply::onMessageComplete(http_parser *parser) {
    UpstreamHttpReply *reply = self(parser);
    if (!reply->m_headersComplete)
        return 0; // the end of an interim 1xx answer
    reply->m_messageComplete = true;
    http_parser_pause(parser, 1); // anything after this message is not ours
    return 0;
}

} // namespace loopscope
