#include "http/responsesink.h"

#include "common/anthropicerror.h"
#include "common/openaierror.h"
#include "conversation/ssewriter.h"
#include "inspect/credentialpolicy.h"
#include "inspect/eventbus.h"

#include <QJsonDocument>
#include <QTcpSocket>

namespace loopscope {

namespace {

// Chunks up to this size are framed in one buffer (a copy); larger ones are written in three.
constexpr qsizetype kCopiedChunkBytes = 64 * 1024;

QByteArray reasonPhrase(int status) {
    switch (status) {
    case 100:
        return QByteArrayLiteral("Continue");
    case 200:
        return QByteArrayLiteral("OK");
    case 201:
        return QByteArrayLiteral("Created");
    case 204:
        return QByteArrayLiteral("No Content");
    case 400:
        return QByteArrayLiteral("Bad Request");
    case 401:
        return QByteArrayLiteral("Unauthorized");
    case 403:
        return QByteArrayLiteral("Forbidden");
    case 404:
        return QByteArrayLiteral("Not Found");
    case 405:
        return QByteArrayLiteral("Method Not Allowed");
    case 408:
        return QByteArrayLiteral("Request Timeout");
    case 409:
        return QByteArrayLiteral("Conflict");
    case 413:
        return QByteArrayLiteral("Payload Too Large");
    case 415:
        return QByteArrayLiteral("Unsupported Media Type");
    case 422:
        return QByteArrayLiteral("Unprocessable Entity");
    case 429:
        return QByteArrayLiteral("Too Many Requests");
    case 500:
        return QByteArrayLiteral("Internal Server Error");
    case 502:
        return QByteArrayLiteral("Bad Gateway");
    case 503:
        return QByteArrayLiteral("Service Unavailable");
    case 504:
        return QByteArrayLiteral("Gateway Timeout");
    default:
        return QByteArrayLiteral("Status");
    }
}

bool isFramingHeader(const QByteArray &name) {
    const QByteArray lower = name.toLower();
    return lower == "content-length" || lower == "transfer-encoding" || lower == "connection" ||
           lower == "keep-alive" || lower == "x-loopscope-overhead-ms";
}

} // namespace

ResponseSink::ResponseSink(QTcpSocket *socket, const HttpRequest &request, bool keepAlive,
                           QObject *parent)
    : QObject(parent)
    , m_socket(socket)
    , m_received(request.received)
    , m_keepAlive(keepAlive)
    , m_head(request.method == "HEAD")
    , m_httpMinor(request.httpMinor)
    , m_anthropicErrors(AnthropicError::isMessagesPath(request.path)) {}

double ResponseSink::overheadMs() const {
    const qint64 ns = m_received.nsecsElapsed() - m_externalNs;
    return ns > 0 ? double(ns) / 1e6 : 0.0;
}

qint64 ResponseSink::bytesPending() const {
    return m_socket ? m_socket->bytesToWrite() : 0;
}

void ResponseSink::setEventBus(EventBus *bus) {
    m_events = bus;
}

void ResponseSink::holdEvent(std::function<InspectorEvent()> build) {
    if (!m_events)
        return;
    m_held.push_back(std::move(build));
    if (m_finished)
        publishHeld();
}

void ResponseSink::publishHeld() {
    if (m_held.empty() || !m_events)
        return;
    // Taken first: building an event must not find itself still held.
    std::vector<std::function<InspectorEvent()>> held = std::exchange(m_held, {});
    if (m_deferEvents) {
        m_events->publishDeferred(std::move(held));
        return;
    }
    for (const auto &build : held)
        m_events->publish(build());
}

void ResponseSink::publishBuilt(std::function<InspectorEvent()> build) {
    if (m_deferEvents)
        m_events->publishDeferred({std::move(build)});
    else
        m_events->publish(build());
}

void ResponseSink::writeHead(int status, const HttpHeaders &headers, qint64 contentLength,
                             bool stream) {
    m_started = true;
    m_status = status;
    m_ttfbNs = m_received.nsecsElapsed();
    QByteArray head;
    head.reserve(256);
    head += "HTTP/1." + QByteArray::number(m_httpMinor >= 1 ? 1 : 0) + ' ' +
            QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    for (const auto &h : headers) {
        if (isFramingHeader(h.first) || h.first.toLower().startsWith("access-control-"))
            continue;
        head += h.first + ": " + h.second + "\r\n";
    }
    for (const auto &h : std::as_const(m_accessHeaders))
        head += h.first + ": " + h.second + "\r\n";
    head += "x-loopscope-overhead-ms: " + QByteArray::number(overheadMs(), 'f', 3) + "\r\n";
    if (stream) {
        if (m_httpMinor >= 1) {
            m_chunked = true;
            head += "Transfer-Encoding: chunked\r\n";
        } else {
            m_keepAlive = false; // an HTTP/1.0 stream ends when the connection closes
        }
    } else {
        head += "Content-Length: " + QByteArray::number(contentLength) + "\r\n";
    }
    if (!m_keepAlive)
        head += "Connection: close\r\n";
    else if (m_httpMinor == 0)
        head += "Connection: keep-alive\r\n";
    head += "\r\n";
    write(head);
}

void ResponseSink::write(const QByteArray &bytes) {
    if (m_clientGone || !m_socket || bytes.isEmpty())
        return;
    m_socket->write(bytes);
    m_bytesSent += bytes.size();
}

void ResponseSink::send(int status, const HttpHeaders &headers, const QByteArray &body) {
    if (m_started || m_finished)
        return;
    writeHead(status, headers, body.size(), false);
    if (!m_head)
        write(body);
    if (m_socket)
        m_socket->flush();
    // Recorded once the client has its answer: masking and publishing are not its wait.
    if (m_events) {
        publishHeld();
        publishBuilt(
            [id = m_requestId, status, headers, body, credentials = m_events->credentials()] {
                InspectorEvent event = InspectorEvent::make(
                    InspectorEvent::Kind::ClientResponse, id, -1,
                    {{QStringLiteral("status"), status},
                     {QStringLiteral("headers"), credentials->maskHeaders(headers)},
                     {QStringLiteral("stream"), false}});
                event.raw = body;
                return event;
            });
    }
    finish();
}

void ResponseSink::sendJson(int status, const QJsonObject &body, const HttpHeaders &extraHeaders) {
    HttpHeaders headers = extraHeaders;
    headers.append({QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")});
    send(status, headers, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

void ResponseSink::sendError(int status, const QString &message, const QString &type,
                             const QString &code, const QString &param) {
    // An error in the client's dialect: Anthropic's envelope on the Messages surface.
    send(status, {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")}},
         m_anthropicErrors ? AnthropicError::json(status, message, m_requestId)
                           : OpenAiError::json(message, type, code, param));
}

void ResponseSink::beginStream(int status, const HttpHeaders &headers) {
    if (m_started || m_finished)
        return;
    writeHead(status, headers, -1, true);
    if (m_socket)
        m_socket->flush();
    // Recorded once the head is on its way (as send() does), still before any chunk's event.
    publishHeld();
    if (m_events)
        publishBuilt([id = m_requestId, status, headers, credentials = m_events->credentials()] {
            return InspectorEvent::make(
                InspectorEvent::Kind::ClientResponse, id, -1,
                {{QStringLiteral("status"), status},
                 {QStringLiteral("headers"), credentials->maskHeaders(headers)},
                 {QStringLiteral("stream"), true}});
        });
}

void ResponseSink::beginSse(int status, const HttpHeaders &extraHeaders) {
    HttpHeaders headers = extraHeaders;
    headers.append({QByteArrayLiteral("Content-Type"), QByteArrayLiteral("text/event-stream")});
    headers.append({QByteArrayLiteral("Cache-Control"), QByteArrayLiteral("no-cache")});
    beginStream(status, headers);
}

void ResponseSink::writeChunk(const QByteArray &bytes) {
    if (!m_started || m_finished || bytes.isEmpty() || m_head)
        return;
    const bool record = m_events && !m_clientGone; // as it was when these bytes were sent
    if (m_chunked && bytes.size() <= kCopiedChunkBytes) {
        // One buffer: the socket sends each piece it holds with a write() of its own, and the
        // client took three packets (size line, data, CRLF) per relayed read.
        QByteArray framed;
        framed.reserve(bytes.size() + 12);
        framed += QByteArray::number(bytes.size(), 16);
        framed += "\r\n";
        framed += bytes;
        framed += "\r\n";
        write(framed);
    } else if (m_chunked) {
        // Three writes, not one concatenation: the socket's buffer keeps a large chunk as the
        // shared QByteArray it is, so a large relayed read is not copied once more.
        write(QByteArray::number(bytes.size(), 16) + "\r\n");
        write(bytes);
        write(QByteArrayLiteral("\r\n"));
    } else {
        write(bytes);
    }
    if (m_socket)
        m_socket->flush();
    // Recorded after the bytes are on their way: the client reads them meanwhile. (Not if the
    // write found the client gone and ended the exchange: its end is published already.)
    if (record && !m_finished) {
        publishHeld();
        InspectorEvent event;
        event.kind = InspectorEvent::Kind::ClientResponseChunk;
        event.requestId = m_requestId;
        event.raw = bytes;
        m_events->publish(std::move(event));
    }
}

void ResponseSink::writeSseEvent(const QByteArray &eventName, const QJsonObject &data) {
    writeChunk(SseWriter::frame(eventName, data));
}

void ResponseSink::writeSseData(const QByteArray &payload) {
    writeChunk(SseWriter::frame({}, payload));
}

void ResponseSink::endStream() {
    if (!m_started || m_finished)
        return;
    if (m_chunked && !m_head)
        write(QByteArrayLiteral("0\r\n\r\n"));
    if (m_socket)
        m_socket->flush();
    finish();
}

void ResponseSink::abortConnection() {
    m_aborted = true;
    if (m_socket)
        m_socket->abort();
    markClientGone();
}

void ResponseSink::finish() {
    if (m_finished)
        return;
    m_finished = true;
    if (m_events) {
        publishHeld();
        publishBuilt([id = m_requestId, status = m_clientGone && !m_aborted ? 499 : m_status,
                      durationMs = double(m_received.nsecsElapsed()) / 1e6,
                      ttfbMs = double(m_ttfbNs) / 1e6, overheadMs = overheadMs(),
                      bytesSent = m_bytesSent, clientGone = m_clientGone && !m_aborted,
                      aborted = m_aborted] {
            return InspectorEvent::make(InspectorEvent::Kind::ExchangeFinished, id, -1,
                                        {{QStringLiteral("status"), status},
                                         {QStringLiteral("durationMs"), durationMs},
                                         {QStringLiteral("ttfbMs"), ttfbMs},
                                         {QStringLiteral("overheadMs"), overheadMs},
                                         {QStringLiteral("bytesSent"), bytesSent},
                                         {QStringLiteral("clientGone"), clientGone},
                                         {QStringLiteral("aborted"), aborted}});
        });
    }
    emit finished();
}

void ResponseSink::markClientGone() {
    if (m_clientGone)
        return;
    m_clientGone = true;
    if (!m_finished) {
        emit clientGone();
        finish();
    }
}

} // namespace loopscope
