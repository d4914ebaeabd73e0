// The floor under any Qt relay on this machine: bytes piped between a client's socket and an
// upstream socket on one Qt event loop, as Loopscope's proxy thread does, with nothing parsed,
// checked or recorded. It takes the arguments bench_passthrough gives Loopscope and prints the
// same "listening on" line, so it runs as one more --bin target beside the real one
// (docs/benchmarks.md, issue 34). Written by hand: it is the thing being measured.
#include <QCoreApplication>
#include <QHostAddress>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTextStream>
#include <QUrl>

namespace {

// One client connection and its upstream connection: HTTP/1.1 keep-alive exchanges follow one
// another on the same pair, so piping bytes both ways relays them without reading them.
void pipe(QTcpSocket *client, const QUrl &upstream) {
    client->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    auto *up = new QTcpSocket(client);
    const auto forward = [](QTcpSocket *from, QTcpSocket *to) {
        if (to->state() != QAbstractSocket::ConnectedState)
            return; // sent once connected
        to->write(from->readAll());
        to->flush(); // now, not on the loop's next turn (as Loopscope's sockets do)
    };
    QObject::connect(up, &QTcpSocket::connected, up, [client, up, forward] {
        up->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        forward(client, up);
    });
    QObject::connect(client, &QTcpSocket::readyRead, up,
                     [client, up, forward] { forward(client, up); });
    QObject::connect(up, &QTcpSocket::readyRead, client,
                     [client, up, forward] { forward(up, client); });
    QObject::connect(up, &QTcpSocket::disconnected, client, &QTcpSocket::disconnectFromHost);
    QObject::connect(client, &QTcpSocket::disconnected, client, &QObject::deleteLater);
    up->connectToHost(upstream.host(), quint16(upstream.port(80)));
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    QUrl upstream;
    quint16 port = 0;
    for (qsizetype i = 1; i + 1 < args.size(); ++i) {
        if (args.at(i) == QLatin1String("--upstream"))
            upstream = QUrl(args.at(i + 1));
        else if (args.at(i) == QLatin1String("--port"))
            port = args.at(i + 1).toUShort();
    }
    if (!upstream.isValid() || upstream.host().isEmpty()) {
        QTextStream(stderr) << "usage: relay_floor --upstream http://HOST:PORT [--port N]\n";
        return 2;
    }
    QTcpServer server;
    QObject::connect(&server, &QTcpServer::newConnection, &server, [&server, upstream] {
        while (QTcpSocket *client = server.nextPendingConnection())
            pipe(client, upstream);
    });
    if (!server.listen(QHostAddress::LocalHost, port)) {
        QTextStream(stderr) << "relay_floor: " << server.errorString() << '\n';
        return 1;
    }
    QTextStream(stdout) << "loopscope listening on http://127.0.0.1:" << server.serverPort()
                        << Qt::endl;
    return app.exec();
}
