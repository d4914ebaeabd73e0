#include "e2bstandin.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QTimer>

namespace loopscope::test {

namespace {
QByteArray reasonFor(int status) {
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 204:
        return "No Content";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 502:
        return "Bad Gateway";
    default:
        return "Status";
    }
}

QByteArray errorBody(int code, const QString &message) {
    return QJsonDocument(
               QJsonObject{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}})
        .toJson(QJsonDocument::Compact);
}
} // namespace

E2bStandIn::E2bStandIn(QObject *parent)
    : QObject(parent) {
    m_handler = [](const Request &request, const QString &, Sandbox &sandbox) {
        ++sandbox.executions;
        const QString code =
            QJsonDocument::fromJson(request.body).object().value(QLatin1String("code")).toString();
        QByteArray body;
        body += QJsonDocument(
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("stdout")},
                                {QStringLiteral("text"), QStringLiteral("ran: %1\n").arg(code)}})
                    .toJson(QJsonDocument::Compact) +
                "\n";
        body += QJsonDocument(
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("number_of_executions")},
                                {QStringLiteral("execution_count"), sandbox.executions}})
                    .toJson(QJsonDocument::Compact) +
                "\n";
        ExecuteReply reply;
        reply.body = body;
        reply.fragmentBytes = 5;
        return reply;
    };
    connect(&m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            socket->setParent(this);
            connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onReadyRead(socket); });
            connect(socket, &QTcpSocket::disconnected, this, [this, socket] {
                m_buffers.remove(socket);
                if (socket == m_streamSocket && !m_streamFinished)
                    m_clientAborted = true;
                socket->deleteLater();
            });
        }
    });
}

bool E2bStandIn::listen() {
    return m_server.listen(QHostAddress::LocalHost, 0);
}

QString E2bStandIn::baseUrl() const {
    return QStringLiteral("http://127.0.0.1:%1").arg(port());
}

QString E2bStandIn::executeUrlTemplate() const {
    return baseUrl() + QStringLiteral("/sandbox/{id}/{domain}/execute");
}

QList<E2bStandIn::Request> E2bStandIn::requestsTo(const QByteArray &method,
                                                  const QByteArray &pathPrefix) const {
    QList<Request> out;
    for (const Request &r : m_requests)
        if (r.method == method && r.path.startsWith(pathPrefix))
            out.append(r);
    return out;
}

QList<QByteArray> E2bStandIn::split(const QByteArray &bytes, int every) {
    QList<QByteArray> out;
    if (every <= 0) {
        out.append(bytes);
        return out;
    }
    for (qsizetype i = 0; i < bytes.size(); i += every)
        out.append(bytes.mid(i, every));
    return out;
}

void E2bStandIn::onReadyRead(QTcpSocket *socket) {
    QByteArray &buffer = m_buffers[socket];
    buffer += socket->readAll();
    const qsizetype headerEnd = buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0)
        return;
    const QList<QByteArray> lines = buffer.left(headerEnd).split('\n');
    Request request;
    const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
    request.method = first.value(0);
    request.path = first.value(1);
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0)
            request.headers.insert(lines[i].left(colon).trimmed().toLower(),
                                   lines[i].mid(colon + 1).trimmed());
    }
    const qsizetype length = request.headers.value("content-length", "0").toLongLong();
    if (buffer.size() < headerEnd + 4 + length)
        return;
    request.body = buffer.mid(headerEnd + 4, length);
    buffer.clear();
    m_requests.append(request);
    handle(socket, request);
}

void E2bStandIn::respond(QTcpSocket *socket, int status, const QByteArray &body,
                         const QByteArray &contentType) {
    QByteArray head = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonFor(status) + "\r\n";
    if (status != 204)
        head += "Content-Type: " + contentType +
                "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    head += "Connection: close\r\n\r\n";
    socket->write(head + (status == 204 ? QByteArray() : body));
    socket->disconnectFromHost();
}

void E2bStandIn::handle(QTcpSocket *socket, const Request &request) {
    const QString path = QString::fromUtf8(request.path);
    const QStringList parts = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    const bool keyOk = request.headers.value("x-api-key") == kApiKey;

    if (parts.value(0) == QLatin1String("sandboxes")) {
        if (!keyOk) {
            respond(socket, 401, errorBody(401, QStringLiteral("Invalid API key")));
            return;
        }
        if (parts.size() == 1 && request.method == "POST") {
            const QString id = QStringLiteral("sbx%1standin").arg(m_nextId++);
            Sandbox sandbox;
            sandbox.envdToken = QStringLiteral("envd-") + id;
            sandbox.trafficToken = QStringLiteral("traffic-") + id;
            m_sandboxes.insert(id, sandbox);
            const QJsonObject body{
                {QStringLiteral("sandboxID"), id},
                {QStringLiteral("templateID"), QStringLiteral("code-interpreter-v1")},
                {QStringLiteral("clientID"), QStringLiteral("standin")},
                {QStringLiteral("envdVersion"), QStringLiteral("0.2.0")},
                {QStringLiteral("domain"), QString::fromLatin1(kDomain)},
                {QStringLiteral("envdAccessToken"), sandbox.envdToken},
                {QStringLiteral("trafficAccessToken"), sandbox.trafficToken}};
            respond(socket, 201, QJsonDocument(body).toJson(QJsonDocument::Compact));
            return;
        }
        if (parts.size() == 1 && request.method == "GET") {
            QJsonArray list;
            for (auto it = m_sandboxes.cbegin(); it != m_sandboxes.cend(); ++it)
                list.append(QJsonObject{{QStringLiteral("sandboxID"), it.key()}});
            respond(socket, 200, QJsonDocument(list).toJson(QJsonDocument::Compact));
            return;
        }
        const QString id = parts.value(1);
        const bool alive = m_sandboxes.contains(id);
        const QByteArray notFound =
            errorBody(404, QStringLiteral("sandbox \"%1\" not found").arg(id));
        if (parts.size() == 2 && request.method == "GET") {
            respond(socket, alive ? 200 : 404,
                    alive ? QJsonDocument(QJsonObject{{QStringLiteral("sandboxID"), id}})
                                .toJson(QJsonDocument::Compact)
                          : notFound);
            return;
        }
        if (parts.size() == 2 && request.method == "DELETE") {
            m_sandboxes.remove(id);
            respond(socket, alive ? 204 : 404, alive ? QByteArray() : notFound);
            return;
        }
        if (parts.size() == 3 && parts[2] == QLatin1String("timeout") && request.method == "POST") {
            respond(socket, alive ? 204 : 404, alive ? QByteArray() : notFound);
            return;
        }
        respond(socket, 404, errorBody(404, QStringLiteral("no such route")));
        return;
    }

    if (parts.value(0) == QLatin1String("sandbox") && parts.size() == 4 &&
        parts[3] == QLatin1String("execute") && request.method == "POST") {
        const QString id = parts[1];
        if (!m_sandboxes.contains(id) || m_badGateway) {
            respond(socket, 502,
                    errorBody(502, QStringLiteral("The sandbox was not found: %1").arg(id)));
            return;
        }
        Sandbox &sandbox = m_sandboxes[id];
        if (request.headers.value("x-access-token") != sandbox.envdToken.toUtf8()) {
            respond(socket, 401, errorBody(401, QStringLiteral("invalid access token")));
            return;
        }
        const ExecuteReply reply = m_handler(request, id, sandbox);
        if (reply.status != 200) {
            respond(socket, reply.status, reply.body);
            return;
        }
        socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                      "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
        m_pending = split(reply.body, reply.fragmentBytes);
        m_pauseMs = reply.pauseMs;
        m_holdAfter = reply.holdAfter;
        m_sent = 0;
        m_held = false;
        m_fragmentsWritten = 0;
        m_clientAborted = false;
        m_streamFinished = false;
        m_streamSocket = socket;
        streamNext(socket);
        return;
    }
    respond(socket, 404, errorBody(404, QStringLiteral("no such route")));
}

void E2bStandIn::streamNext(QPointer<QTcpSocket> socket) {
    if (!socket || socket->state() != QAbstractSocket::ConnectedState) {
        m_clientAborted = !m_streamFinished;
        return;
    }
    if (m_pending.isEmpty()) {
        socket->write("0\r\n\r\n");
        m_streamFinished = true;
        socket->disconnectFromHost();
        return;
    }
    if (m_holdAfter >= 0 && m_sent == m_holdAfter && !m_held) {
        m_held = true;
        return; // release() resumes
    }
    const QByteArray fragment = m_pending.takeFirst();
    socket->write(QByteArray::number(fragment.size(), 16) + "\r\n" + fragment + "\r\n");
    socket->flush();
    ++m_sent;
    ++m_fragmentsWritten;
    QTimer::singleShot(m_pauseMs, this, [this, socket] { streamNext(socket); });
}

void E2bStandIn::release() {
    // The hold may not have begun yet: the client can read the fragment before the hold point
    // (and a test release) while the stand-in's next streamNext is still queued. Cancelling the
    // hold covers that case; resuming covers the held one. (Before, an early release was lost
    // and the stream hung: tst_e2bbackend under load.)
    m_holdAfter = -1;
    if (!m_held)
        return;
    m_held = false;
    streamNext(m_streamSocket);
}

} // namespace loopscope::test
