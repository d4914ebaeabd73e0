// The HTTP front: arbitrary bytes from a client over a real loopback connection into HttpServer
// and HttpConnection (libhttp-parser; keep-alive, pipelining, chunked bodies, Expect, Host check,
// the 413 cap), answered by a handler that replies at once, later, or as an SSE stream. The
// first input byte picks where the bytes are cut into two writes. Invariants: what the client
// gets back is a sequence of well-formed HTTP/1.x responses (parsed with the same library), no
// more responses than requests the handler saw plus one protocol error, answered in order, and
// every connection is gone once the client has left.
#include "fuzzsupport.h"
#include "http/httpserver.h"
#include "http/responsesink.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QJsonObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <http_parser.h>

using namespace loopscope;
using loopscope::fuzz::FuzzInput;

namespace {

int g_handled = 0;
QList<QByteArray> g_methods; // of the requests the handler saw, in order

void handle(const HttpRequest &request, ResponseSink *sink) {
    const int number = ++g_handled;
    g_methods.append(request.method);
    const QJsonObject body{{QStringLiteral("n"), number},
                           {QStringLiteral("path"), request.path},
                           {QStringLiteral("bytes"), request.body.size()}};
    if (request.path.startsWith(QLatin1String("/stream"))) {
        sink->beginSse();
        sink->writeSseEvent("n", body);
        sink->writeSseData("[DONE]");
        sink->endStream();
    } else if (request.path.startsWith(QLatin1String("/later"))) {
        QPointer<ResponseSink> guard(sink);
        QTimer::singleShot(0, sink, [guard, body] {
            if (guard && !guard->isClientGone())
                guard->sendJson(200, body);
        });
    } else {
        sink->sendJson(request.method == "POST" ? 201 : 200, body);
    }
}

HttpServer &server() {
    static HttpServer *s = [] {
        loopscope::fuzz::ensureApp();
        auto *created = new HttpServer;
        created->setMaxBodyBytes(4096);
        created->setHandler(handle);
        if (!created->listen(QHostAddress::LocalHost, 0))
            std::abort();
        return created;
    }();
    return *s;
}

// Counts the responses in what the client received; false when it is not HTTP. A response
// parser cannot know a response answers HEAD (Content-Length, no body), so the final responses
// are matched in order with the methods the handler saw.
struct ResponseCounter {
    int complete = 0;
    int finals = 0;
    static int onComplete(http_parser *parser) {
        ++static_cast<ResponseCounter *>(parser->data)->complete;
        return 0;
    }
    static int onHeadersComplete(http_parser *parser) {
        auto *self = static_cast<ResponseCounter *>(parser->data);
        if (parser->status_code < 200)
            return 0; // 100 Continue answers no request of its own
        const int index = self->finals++;
        return index < g_methods.size() && g_methods.at(index) == "HEAD" ? 1 : 0; // 1: no body
    }
    bool parse(const QByteArray &bytes) {
        http_parser parser;
        http_parser_init(&parser, HTTP_RESPONSE);
        parser.data = this;
        http_parser_settings settings;
        http_parser_settings_init(&settings);
        settings.on_message_complete = &ResponseCounter::onComplete;
        settings.on_headers_complete = &ResponseCounter::onHeadersComplete;
        http_parser_execute(&parser, &settings, bytes.constData(), size_t(bytes.size()));
        return HTTP_PARSER_ERRNO(&parser) == HPE_OK;
    }
};

void spin(const std::function<bool()> &done, int maxMs) {
    QElapsedTimer clock;
    clock.start();
    while (!done() && clock.elapsed() < maxMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    HttpServer &s = server();
    FuzzInput input(data, size);
    const quint8 cutSeed = input.byte();
    const QByteArray bytes = input.rest();
    const qsizetype cut = bytes.isEmpty() ? 0 : cutSeed % (bytes.size() + 1);

    g_handled = 0;
    g_methods.clear();
    QTcpSocket client;
    QByteArray received;
    QObject::connect(&client, &QTcpSocket::readyRead, &client,
                     [&] { received += client.readAll(); });
    client.connectToHost(QHostAddress::LocalHost, s.serverPort());
    if (!client.waitForConnected(5000))
        std::abort();
    spin([&] { return s.connectionCount() > 0; }, 2000);
    client.write(bytes.left(cut));
    client.flush();
    QCoreApplication::processEvents();
    client.write(bytes.mid(cut));
    client.flush();
    // Let the server answer what it can (in order, one at a time) until nothing moves for a few
    // event-loop turns (loopback delivers at once), then leave.
    QElapsedTimer clock;
    clock.start();
    int idleTurns = 0;
    qsizetype seen = -1;
    int handledBefore = -1;
    while (idleTurns < 4 && clock.elapsed() < 10000 &&
           client.state() == QAbstractSocket::ConnectedState) {
        QCoreApplication::processEvents(QEventLoop::AllEvents);
        received += client.readAll();
        if (received.size() != seen || g_handled != handledBefore) {
            seen = received.size();
            handledBefore = g_handled;
            idleTurns = 0;
        } else {
            ++idleTurns;
        }
    }
    received += client.readAll();
    client.abort();
    spin([&] { return s.connectionCount() == 0; }, 10000);
    FUZZ_CHECK(s.connectionCount() == 0);

    ResponseCounter counter;
    if (!received.isEmpty()) {
        FUZZ_CHECK(received.startsWith("HTTP/1.1 ") || received.startsWith("HTTP/1.0 "));
        // A response cut short by the client leaving still parses up to the cut.
        FUZZ_CHECK(counter.parse(received));
        FUZZ_CHECK(counter.complete <= 2 * g_handled + 1); // 100 Continue, then the answer
    }
    return 0;
}
