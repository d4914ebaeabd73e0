// UpstreamHttpReply over real loopback sockets against a byte-scripted server: every way an
// HTTP/1.1 response can be framed, keep-alive reuse, a stale idle connection, a malformed
// answer, Nagle off, and TLS with a trusted and an untrusted certificate.
#include "upstream/upstreamclient.h"

#include <QNetworkReply>
#include <QProcess>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QSslSocket>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <functional>
#include <memory>

using namespace loopscope;

namespace {

// Answers each complete request (head plus Content-Length body) with what `answer` returns for
// it, on whatever connection it came; counts connections and keeps the requests as received.
class ByteServer : public QObject {
public:
    std::function<QByteArray(const QByteArray &request)> answer;
    bool closeAfterAnswer = false;
    int abortAtRequest = -1; // this request (0-based) is taken and its connection cut unanswered
    QList<QByteArray> requests;
    int connections = 0;
    QList<QTcpSocket *> sockets;

    explicit ByteServer(QTcpServer *server)
        : m_server(server) {
        m_server->setParent(this);
        connect(m_server, &QTcpServer::pendingConnectionAvailable, this, [this] {
            while (QTcpSocket *socket = m_server->nextPendingConnection()) {
                ++connections;
                sockets << socket;
                auto buffer = std::make_shared<QByteArray>();
                connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
                    *buffer += socket->readAll();
                    serve(socket, *buffer);
                });
            }
        });
    }
    bool listen() { return m_server->listen(QHostAddress::LocalHost); }
    quint16 port() const { return m_server->serverPort(); }

private:
    void serve(QTcpSocket *socket, QByteArray &buffer) {
        for (;;) {
            const qsizetype end = buffer.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            qsizetype length = 0;
            for (const QByteArray &line : buffer.left(end).split('\n'))
                if (line.toLower().startsWith("content-length:"))
                    length = line.mid(15).trimmed().toLongLong();
            if (buffer.size() < end + 4 + length)
                return;
            const QByteArray request = buffer.left(end + 4 + length);
            buffer.remove(0, request.size());
            requests << request;
            if (requests.size() - 1 == abortAtRequest) {
                socket->abort();
                return;
            }
            socket->write(answer(request));
            if (closeAfterAnswer)
                socket->disconnectFromHost();
        }
    }
    QTcpServer *m_server;
};

UpstreamRoute routeTo(const QString &base) {
    UpstreamRoute route;
    route.baseUrl = QUrl(base);
    route.timeoutMs = 20000;
    return route;
}

struct Result {
    int status = 0;
    QNetworkReply::NetworkError error = QNetworkReply::NoError;
    QString errorString;
    QByteArray body;
    QByteArray contentType;
    bool finished = false;
};

Result exchange(UpstreamClient &client, const UpstreamRoute &route, const QByteArray &method,
                const QByteArray &body = {}) {
    QNetworkReply *reply = client.send(route, method, QStringLiteral("/things?x=1"), body);
    Result result;
    QByteArray collected;
    QObject::connect(reply, &QNetworkReply::readyRead, reply,
                     [&collected, reply] { collected += reply->readAll(); });
    QObject::connect(reply, &QNetworkReply::finished, reply, [&] {
        collected += reply->readAll();
        result.finished = true;
        result.status = UpstreamClient::httpStatus(reply);
        result.error = reply->error();
        result.errorString = reply->errorString();
        result.contentType = reply->rawHeader("Content-Type");
        reply->deleteLater();
    });
    if (!QTest::qWaitFor([&] { return result.finished; }, 20000))
        return {};
    result.body = collected;
    return result;
}

QByteArray okWith(const QByteArray &body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
           QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

} // namespace

class TstUpstreamHttpReply : public QObject {
    Q_OBJECT
private slots:
    void framings_data() {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<bool>("close");
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::newRow("content-length")
            << okWith("{\"a\":1}") << false << 200 << QByteArray("{\"a\":1}");
        QTest::newRow("chunked") << QByteArray(
                                        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                        "4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n")
                                 << false << 200 << QByteArray("{\"a\":1}");
        QTest::newRow("close-delimited")
            << QByteArray("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"until\":\"eof\"}") << true
            << 200 << QByteArray("{\"until\":\"eof\"}");
        QTest::newRow("interim 100 first")
            << QByteArray("HTTP/1.1 100 Continue\r\n\r\n") + okWith("{}") << false << 200
            << QByteArray("{}");
        QTest::newRow("error status keeps its body")
            << QByteArray("HTTP/1.1 429 Too Many\r\nContent-Length: 2\r\n\r\n{}") << false << 429
            << QByteArray("{}");
        QTest::newRow("no content")
            << QByteArray("HTTP/1.1 204 No Content\r\n\r\n") << false << 204 << QByteArray();
    }
    void framings() {
        QFETCH(QByteArray, answer);
        QFETCH(bool, close);
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        ByteServer server(new QTcpServer);
        server.answer = [answer](const QByteArray &) { return answer; };
        server.closeAfterAnswer = close;
        QVERIFY(server.listen());
        UpstreamClient client;
        const Result r =
            exchange(client, routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port())),
                     "POST", "{\"q\":1}");
        QVERIFY(r.finished);
        QCOMPARE(r.status, status);
        QCOMPARE(r.body, body);
        // What reached the server: one request, framed by this hop.
        QCOMPARE(server.requests.size(), 1);
        const QByteArray sent = server.requests.first();
        QVERIFY(sent.startsWith("POST /v1/things?x=1 HTTP/1.1\r\n"));
        QVERIFY(sent.contains(
            QByteArray("\r\nHost: 127.0.0.1:" + QByteArray::number(server.port()) + "\r\n")));
        QVERIFY(sent.contains("\r\nContent-Length: 7\r\n"));
        QVERIFY(sent.endsWith("\r\n\r\n{\"q\":1}"));
        QVERIFY(!sent.toLower().contains("accept-encoding")); // bodies come back as sent
    }

    // UpstreamClient::take hands the body over as it waits (without a copy when all of it is
    // taken), in order with QIODevice::read, and reading goes on after a take made room below
    // the reply's read bound: a relay that takes would otherwise stall there.
    void takeHandsOverWhatWaitsInOrder_data() {
        QTest::addColumn<qint64>("takeSize");  // per take; 1: what waits; -1: takeAll
        QTest::addColumn<qint64>("readFirst"); // bytes read() first (into QIODevice's buffer)
        QTest::newRow("all that waits") << qint64(1) << qint64(0);
        QTest::newRow("in pieces") << qint64(1000) << qint64(0);
        QTest::newRow("after a read") << qint64(1) << qint64(7);
        QTest::newRow("takeAll after a read") << qint64(-1) << qint64(7);
    }
    void takeHandsOverWhatWaitsInOrder() {
        QFETCH(qint64, takeSize);
        QFETCH(qint64, readFirst);
        QByteArray body;
        for (int i = 0; body.size() < 600 * 1024; ++i)
            body += "data: {\"n\":" + QByteArray::number(i) + "}\n\n";
        QByteArray answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        for (qsizetype at = 0; at < body.size(); at += 16384) {
            const QByteArray piece = body.mid(at, 16384);
            answer += QByteArray::number(piece.size(), 16) + "\r\n" + piece + "\r\n";
        }
        answer += "0\r\n\r\n";
        ByteServer server(new QTcpServer);
        server.answer = [answer](const QByteArray &) { return answer; };
        QVERIFY(server.listen());
        UpstreamClient client;
        QNetworkReply *reply =
            client.send(routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port())), "GET",
                        QStringLiteral("/stream"), {});
        reply->setReadBufferSize(64 * 1024); // the bound a relay sets for a stream
        QByteArray collected;
        bool finished = false;
        const auto drain = [&] {
            if (readFirst > 0 && collected.isEmpty() && reply->bytesAvailable() > readFirst)
                collected += reply->read(readFirst);
            if (takeSize == -1) {
                collected += UpstreamClient::takeAll(reply);
                return;
            }
            while (reply->bytesAvailable() > 0) {
                const qint64 size = takeSize == 1 ? reply->bytesAvailable() : takeSize;
                const QByteArray piece = UpstreamClient::take(reply, size);
                QVERIFY(!piece.isEmpty());
                QVERIFY(piece.size() <= size);
                collected += piece;
            }
        };
        // A slow reader, as a relay to a slow client is: it takes on its own time, not inside
        // readyRead, so the reply stops at its bound until a take makes room.
        QTimer slowReader;
        connect(&slowReader, &QTimer::timeout, reply, drain);
        slowReader.start(5);
        connect(reply, &QNetworkReply::finished, reply, [&] {
            collected += UpstreamClient::takeAll(reply);
            finished = true;
        });
        QVERIFY(QTest::qWaitFor([&] { return finished; }, 20000));
        QCOMPARE(reply->error(), QNetworkReply::NoError);
        QCOMPARE(collected.size(), body.size());
        QVERIFY(collected == body);
        delete reply;
    }

    void headHasNoBody() {
        ByteServer server(new QTcpServer);
        server.answer = [](const QByteArray &request) -> QByteArray {
            if (request.startsWith("HEAD"))
                return "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
            return okWith("{\"after\":true}");
        };
        QVERIFY(server.listen());
        UpstreamClient client;
        const UpstreamRoute route =
            routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port()));
        const Result head = exchange(client, route, "HEAD");
        QCOMPARE(head.status, 200);
        QCOMPARE(head.body, QByteArray());
        // The connection is still in step: the next answer is read as its own.
        const Result next = exchange(client, route, "GET");
        QCOMPARE(next.body, QByteArray("{\"after\":true}"));
        QCOMPARE(server.connections, 1);
    }

    void keepAliveReusesOneConnection() {
        ByteServer server(new QTcpServer);
        server.answer = [](const QByteArray &) { return okWith("{}"); };
        QVERIFY(server.listen());
        UpstreamClient client;
        const UpstreamRoute route =
            routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port()));
        for (int i = 0; i < 5; ++i)
            QCOMPARE(exchange(client, route, "POST", "{}").status, 200);
        QCOMPARE(server.requests.size(), 5);
        QCOMPARE(server.connections, 1);
        // Nagle's algorithm is off on it: a body's last segment never waits for a delayed ACK.
        QVERIFY(!server.sockets.isEmpty());
        // The server side of the pair cannot tell; the client's socket is the one to ask, and it
        // is the only other TCP socket to this port in the process.
        bool found = false;
        for (int fd = 3; fd < 1024 && !found; ++fd) {
            sockaddr_in peer{};
            socklen_t len = sizeof peer;
            if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &len) != 0 ||
                peer.sin_family != AF_INET || ntohs(peer.sin_port) != server.port())
                continue;
            int nodelay = 0;
            socklen_t size = sizeof nodelay;
            QCOMPARE(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &size), 0);
            QCOMPARE(nodelay, 1);
            found = true;
        }
        QVERIFY(found);
    }

    void staleIdleConnectionIsRetriedOnce() {
        ByteServer server(new QTcpServer);
        server.answer = [](const QByteArray &) { return okWith("{\"n\":1}"); };
        QVERIFY(server.listen());
        UpstreamClient client;
        const UpstreamRoute route =
            routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port()));
        // The upstream closes the idle connection just as the next request reaches it (its
        // keep-alive timeout racing the reuse): that request must not fail for it.
        server.abortAtRequest = 1;
        QCOMPARE(exchange(client, route, "POST", "{}").status, 200);
        const Result r = exchange(client, route, "POST", "{}");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.body, QByteArray("{\"n\":1}"));
        QCOMPARE(server.connections, 2);
        QCOMPARE(server.requests.size(), 3); // the cut one, then its retry
    }

    void answerBeforeTheBodyLeavesTheConnectionOutOfThePool() {
        // An upstream may answer as soon as it has read a request's head (a 413, a 401) and
        // then stop reading. The rest of the body still waits in this side's write buffer, so
        // the connection must not carry another request: that request would follow the body's
        // remainder, which the upstream takes for the start of the next request or never reads.
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        int connections = 0;
        connect(&server, &QTcpServer::pendingConnectionAvailable, &server, [&] {
            while (QTcpSocket *socket = server.nextPendingConnection()) {
                ++connections;
                // Qt stops reading the descriptor at this bound: the kernel's buffers fill and
                // the sender's bytes wait on its side, as with an upstream that stopped reading.
                socket->setReadBufferSize(64 * 1024);
                auto head = std::make_shared<QByteArray>();
                connect(socket, &QTcpSocket::readyRead, socket, [socket, head] {
                    if (head->contains("\r\n\r\n"))
                        return; // answered: what follows is left unread
                    *head += socket->read(64 * 1024);
                    if (head->contains("\r\n\r\n"))
                        socket->write(okWith("{\"early\":true}"));
                });
            }
        });
        UpstreamClient client;
        const UpstreamRoute route =
            routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.serverPort()));
        // Far more than the kernel's socket buffers on both sides hold.
        const Result early = exchange(client, route, "POST", QByteArray(48 * 1024 * 1024, 'x'));
        QCOMPARE(early.status, 200);
        QCOMPARE(early.body, QByteArray("{\"early\":true}"));
        const Result next = exchange(client, route, "POST", "{}");
        QCOMPARE(next.status, 200);
        QCOMPARE(connections, 2);
    }

    void cutMidBodyIsAnError() {
        ByteServer server(new QTcpServer);
        server.answer = [](const QByteArray &) -> QByteArray {
            return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"partial";
        };
        server.closeAfterAnswer = true;
        QVERIFY(server.listen());
        UpstreamClient client;
        const Result r = exchange(
            client, routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port())), "GET");
        QVERIFY(r.finished);
        QCOMPARE(r.status, 200);
        QCOMPARE(r.error, QNetworkReply::RemoteHostClosedError);
    }

    void malformedAnswerIsAProtocolFailure() {
        ByteServer server(new QTcpServer);
        server.answer = [](const QByteArray &) -> QByteArray { return "SMTP READY\r\n\r\n"; };
        QVERIFY(server.listen());
        UpstreamClient client;
        const Result r = exchange(
            client, routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(server.port())), "GET");
        QVERIFY(r.finished);
        QCOMPARE(r.status, 0);
        QCOMPARE(r.error, QNetworkReply::ProtocolFailure);
    }

    void refusedConnectionIsReported() {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const quint16 port = probe.serverPort();
        probe.close(); // nobody listens there now
        UpstreamClient client;
        const Result r =
            exchange(client, routeTo(QStringLiteral("http://127.0.0.1:%1/v1").arg(port)), "GET");
        QVERIFY(r.finished);
        QCOMPARE(r.status, 0);
        QCOMPARE(r.error, QNetworkReply::ConnectionRefusedError);
    }

    void tls_data() {
        QTest::addColumn<bool>("trusted");
        QTest::newRow("trusted certificate") << true;
        QTest::newRow("unknown certificate") << false;
    }
    void tls() {
        QFETCH(bool, trusted);
        if (!QSslSocket::supportsSsl())
            QFAIL("Qt has no TLS backend here");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString key = dir.filePath(QStringLiteral("key.pem"));
        const QString cert = dir.filePath(QStringLiteral("cert.pem"));
        QProcess openssl;
        openssl.start(QStringLiteral("openssl"),
                      {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                       QStringLiteral("rsa:2048"), QStringLiteral("-nodes"),
                       QStringLiteral("-subj"), QStringLiteral("/CN=127.0.0.1"),
                       QStringLiteral("-addext"), QStringLiteral("subjectAltName=IP:127.0.0.1"),
                       QStringLiteral("-days"), QStringLiteral("1"), QStringLiteral("-keyout"), key,
                       QStringLiteral("-out"), cert});
        QVERIFY(openssl.waitForFinished(60000));
        QCOMPARE(openssl.exitCode(), 0);
        QFile keyFile(key), certFile(cert);
        QVERIFY(keyFile.open(QIODevice::ReadOnly) && certFile.open(QIODevice::ReadOnly));
        const QSslCertificate certificate(&certFile, QSsl::Pem);
        const QSslKey privateKey(&keyFile, QSsl::Rsa, QSsl::Pem);
        QVERIFY(!certificate.isNull() && !privateKey.isNull());

        auto *tlsServer = new QSslServer;
        QSslConfiguration serverConfig = QSslConfiguration::defaultConfiguration();
        serverConfig.setLocalCertificate(certificate);
        serverConfig.setPrivateKey(privateKey);
        serverConfig.setPeerVerifyMode(QSslSocket::VerifyNone);
        tlsServer->setSslConfiguration(serverConfig);
        ByteServer server(tlsServer);
        server.answer = [](const QByteArray &) { return okWith("{\"secure\":true}"); };
        QVERIFY(server.listen());

        const QSslConfiguration saved = QSslConfiguration::defaultConfiguration();
        if (trusted) {
            QSslConfiguration clientConfig = saved;
            clientConfig.addCaCertificate(certificate);
            QSslConfiguration::setDefaultConfiguration(clientConfig);
        }
        UpstreamClient client;
        const UpstreamRoute route =
            routeTo(QStringLiteral("https://127.0.0.1:%1/v1").arg(server.port()));
        const Result r = exchange(client, route, "POST", "{}");
        QSslConfiguration::setDefaultConfiguration(saved);
        QVERIFY(r.finished);
        if (trusted) {
            QVERIFY2(r.status == 200, qPrintable(r.errorString));
            QCOMPARE(r.body, QByteArray("{\"secure\":true}"));
            QCOMPARE(server.requests.size(), 1);
        } else {
            QCOMPARE(r.status, 0);
            QCOMPARE(r.error, QNetworkReply::SslHandshakeFailedError);
            QCOMPARE(server.requests.size(), 0); // nothing was sent over an unverified channel
        }
    }
};

QTEST_GUILESS_MAIN(TstUpstreamHttpReply)
#include "tst_upstreamhttpreply.moc"
