#include "proxy/rawhttpclient.h"

#include "http/httprequest.h"

#include <QJsonDocument>
#include <QTcpSocket>

#include <utility>

namespace loopscope::test {

QByteArray RawHttpClient::Response::header(const QByteArray &lowerName) const {
    return headerValue(headers, lowerName);
}

QJsonObject RawHttpClient::Response::json() const {
    return QJsonDocument::fromJson(body).object();
}

RawHttpClient::RawHttpClient(quint16 port, QObject *parent)
    : QObject(parent)
    , m_socket(new QTcpSocket(this))
    , m_port(port) {
    connect(m_socket, &QTcpSocket::readyRead, this, [this] {
        m_data += m_socket->readAll();
        emit bytesArrived();
    });
    connect(m_socket, &QTcpSocket::disconnected, this, [this] { m_disconnected = true; });
    connect(m_socket, &QTcpSocket::connected, this, [this] {
        if (!m_outbox.isEmpty())
            send(std::exchange(m_outbox, {}));
    });
    m_socket->connectToHost(QHostAddress::LocalHost, port);
}

bool RawHttpClient::isConnected() const {
    return m_socket->state() == QAbstractSocket::ConnectedState;
}

void RawHttpClient::send(const QByteArray &bytes) {
    if (!isConnected()) { // writing while connecting would lose bytes: queue them
        m_outbox += bytes;
        return;
    }
    m_socket->write(bytes);
    m_socket->flush();
}

void RawHttpClient::request(const QByteArray &method, const QByteArray &target,
                            const QByteArray &body,
                            const QList<QPair<QByteArray, QByteArray>> &headers) {
    QByteArray head = method + ' ' + target +
                      " HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(m_port) + "\r\n";
    bool hasType = false;
    for (const auto &h : headers) {
        hasType = hasType || h.first.toLower() == "content-type";
        head += h.first + ": " + h.second + "\r\n";
    }
    if (!body.isEmpty() && !hasType)
        head += "Content-Type: application/json\r\n";
    if (!body.isEmpty() || method == "POST")
        head += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    send(head + "\r\n" + body);
}

void RawHttpClient::close() {
    m_socket->abort();
}

RawHttpClient::Response RawHttpClient::parse(const QByteArray &input, qsizetype *consumed) {
    Response r;
    QByteArray data = input;
    qsizetype skipped = 0;
    // Skip interim 1xx responses.
    while (data.startsWith("HTTP/1.1 1") || data.startsWith("HTTP/1.0 1")) {
        const qsizetype end = data.indexOf("\r\n\r\n");
        if (end < 0)
            return r;
        data.remove(0, end + 4);
        skipped += end + 4;
    }
    const qsizetype end = data.indexOf("\r\n\r\n");
    if (end < 0)
        return r;
    const QList<QByteArray> lines = data.left(end).split('\n');
    r.status = lines.value(0).split(' ').value(1).toInt();
    qint64 length = -1;
    bool chunked = false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = lines[i].left(colon).trimmed().toLower();
        const QByteArray value = lines[i].mid(colon + 1).trimmed();
        r.headers.append({name, value});
        if (name == "content-length")
            length = value.toLongLong();
        if (name == "transfer-encoding" && value.toLower() == "chunked")
            chunked = true;
    }
    qsizetype pos = end + 4;
    if (chunked) {
        for (;;) {
            const qsizetype lineEnd = data.indexOf("\r\n", pos);
            if (lineEnd < 0)
                break;
            bool ok = false;
            const qint64 size = data.mid(pos, lineEnd - pos).trimmed().toLongLong(&ok, 16);
            if (!ok)
                break;
            if (size == 0) {
                if (data.size() >= lineEnd + 4) {
                    r.complete = true;
                    pos = lineEnd + 4;
                }
                break;
            }
            if (data.size() < lineEnd + 2 + size + 2) {
                r.body += data.mid(lineEnd + 2, qMin<qint64>(size, data.size() - lineEnd - 2));
                break;
            }
            r.body += data.mid(lineEnd + 2, size);
            pos = lineEnd + 2 + size + 2;
        }
    } else if (length >= 0) {
        r.body = data.mid(pos, length);
        r.complete = r.body.size() == length;
        pos += r.body.size();
    } else {
        r.body = data.mid(pos); // close-delimited
        pos = data.size();
    }
    if (consumed)
        *consumed = skipped + pos;
    return r;
}

RawHttpClient::Response RawHttpClient::current() const {
    Response r = parse(m_data, nullptr);
    if (!r.complete && m_disconnected && r.status != 0 && r.header("content-length").isEmpty() &&
        r.header("transfer-encoding").isEmpty())
        r.complete = true;
    return r;
}

RawHttpClient::Response RawHttpClient::take() {
    qsizetype consumed = 0;
    Response r = parse(m_data, &consumed);
    if (r.complete)
        m_data.remove(0, consumed);
    return r;
}

} // namespace loopscope::test
