#include "proxy/scriptedupstream.h"

#include "http/httprequest.h"

#include <QJsonDocument>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

namespace loopscope::test {

QByteArray ScriptedUpstream::Request::header(const QByteArray &lowerName) const {
    return headerValue(headers, lowerName);
}

QJsonObject ScriptedUpstream::Request::json() const {
    return QJsonDocument::fromJson(body).object();
}

ScriptedUpstream::Response ScriptedUpstream::Response::json(int status, const QByteArray &body) {
    Response r;
    r.status = status;
    r.body = body;
    return r;
}

ScriptedUpstream::Response ScriptedUpstream::Response::json(const QJsonObject &object, int status) {
    return json(status, QJsonDocument(object).toJson(QJsonDocument::Compact));
}

ScriptedUpstream::Response ScriptedUpstream::Response::events(const QList<QByteArray> &chunks,
                                                              int chunkDelayMs) {
    Response r;
    r.sse = true;
    r.contentType = "text/event-stream";
    r.chunks = chunks;
    r.chunkDelayMs = chunkDelayMs;
    return r;
}

ScriptedUpstream::ScriptedUpstream(QObject *parent)
    : QObject(parent)
    , m_server(new QTcpServer(this)) {
    connect(m_server, &QTcpServer::newConnection, this, &ScriptedUpstream::onNewConnection);
}

ScriptedUpstream::~ScriptedUpstream() {
    for (QTcpSocket *socket : m_connections.keys())
        socket->disconnect(this);
}

bool ScriptedUpstream::listen() {
    return m_server->listen(QHostAddress::LocalHost, 0);
}
quint16 ScriptedUpstream::port() const {
    return m_server->serverPort();
}
QString ScriptedUpstream::baseUrl() const {
    return QStringLiteral("http://127.0.0.1:%1/v1").arg(port());
}

void ScriptedUpstream::onNewConnection() {
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        socket->setParent(this);
        socket->setSocketOption(QAbstractSocket::LowDelayOption, 1); // SSE chunks go out at once
        m_connections.insert(socket, {});
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onReadyRead(socket); });
        connect(socket, &QTcpSocket::disconnected, this, [this, socket] {
            const bool wasStreaming = m_connections.value(socket).streaming;
            m_connections.remove(socket);
            m_held.removeAll(socket);
            if (wasStreaming) {
                ++m_abortedStreams;
                emit streamAborted();
            }
            socket->deleteLater();
        });
    }
}

void ScriptedUpstream::onReadyRead(QTcpSocket *socket) {
    Connection &c = m_connections[socket];
    c.buffer += socket->readAll();
    for (;;) {
        const qsizetype end = c.buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        Request request;
        const QList<QByteArray> lines = c.buffer.left(end).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        request.method = first.value(0);
        request.target = first.value(1);
        qsizetype length = 0;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines[i].indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArray name = lines[i].left(colon).trimmed().toLower();
            const QByteArray value = lines[i].mid(colon + 1).trimmed();
            request.headers.append({name, value});
            if (name == "content-length")
                length = value.toLongLong();
        }
        if (c.buffer.size() < end + 4 + length)
            return;
        request.body = c.buffer.mid(end + 4, length);
        c.buffer.remove(0, end + 4 + length);
        ++m_count;
        if (m_record)
            m_requests.append(request);
        emit requestReceived();
        respond(socket, request);
    }
}

void ScriptedUpstream::respond(QTcpSocket *socket, const Request &request) {
    Response response;
    if (!m_queue.isEmpty())
        response = m_queue.dequeue();
    else if (m_responder)
        response = m_responder(request);
    else
        response = Response::json(200, QByteArrayLiteral("{}"));

    QPointer<QTcpSocket> guard(socket);
    auto start = [this, guard, response] {
        if (!guard)
            return;
        if (response.dropConnection) {
            guard->abort();
            return;
        }
        QByteArray head = "HTTP/1.1 " + QByteArray::number(response.status) + " Scripted\r\n";
        head += "Content-Type: " + response.contentType + "\r\n";
        for (const auto &h : response.headers)
            head += h.first + ": " + h.second + "\r\n";
        if (response.sse) {
            head += "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n\r\n";
            guard->write(head);
            guard->flush();
            m_connections[guard.data()].streaming = true;
            writeChunks(guard.data(), response, 0);
        } else {
            head += "Content-Length: " + QByteArray::number(response.body.size()) + "\r\n\r\n";
            guard->write(head + response.body);
            guard->flush();
        }
    };
    if (response.headerDelayMs > 0)
        QTimer::singleShot(response.headerDelayMs, this, start);
    else
        start();
}

void ScriptedUpstream::writeChunks(QTcpSocket *socket, Response response, qsizetype index) {
    QPointer<QTcpSocket> guard(socket);
    if (!guard)
        return;
    if (index < response.chunks.size()) {
        const QByteArray &chunk = response.chunks.at(index);
        guard->write(QByteArray::number(chunk.size(), 16) + "\r\n" + chunk + "\r\n");
        guard->flush();
        if (response.chunkDelayMs > 0)
            QTimer::singleShot(response.chunkDelayMs, this, [this, guard, response, index] {
                writeChunks(guard.data(), response, index + 1);
            });
        else
            writeChunks(socket, response, index + 1);
        return;
    }
    if (response.hold) {
        m_held.append(socket);
        return;
    }
    guard->write("0\r\n\r\n");
    guard->flush();
    m_connections[socket].streaming = false;
}

void ScriptedUpstream::writeToHeld(const QByteArray &chunk) {
    for (QTcpSocket *socket : std::as_const(m_held)) {
        socket->write(QByteArray::number(chunk.size(), 16) + "\r\n" + chunk + "\r\n");
        socket->flush();
    }
}

void ScriptedUpstream::releaseHeld() {
    const auto held = m_held;
    m_held.clear();
    for (QTcpSocket *socket : held) {
        socket->write("0\r\n\r\n");
        socket->flush();
        m_connections[socket].streaming = false;
    }
}

} // namespace loopscope::test
