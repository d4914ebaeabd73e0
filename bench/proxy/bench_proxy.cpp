// bench_proxy: pass-through overhead of Loopscope against calling the scripted upstream
// directly, at concurrency 1 and 64, non-streaming (full latency) and streaming (time to the
// first SSE event). Upstream, proxy and load generator each run on their own thread in one
// process. Usage: bench_proxy [requests-per-phase (default 4000)]
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/scriptedupstream.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTcpSocket>
#include <QTextStream>
#include <QThread>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

using namespace loopscope;
using loopscope::test::ScriptedUpstream;

namespace {

// One keep-alive connection sending the same request over and over.
class LoadConnection : public QObject {
public:
    LoadConnection(quint16 port, QByteArray request, bool streaming, std::vector<qint64> *samples,
                   int *remaining, std::function<void()> onConnected, std::function<void()> onIdle)
        : m_request(std::move(request))
        , m_streaming(streaming)
        , m_samples(samples)
        , m_remaining(remaining)
        , m_onIdle(std::move(onIdle)) {
        m_socket.setSocketOption(QAbstractSocket::LowDelayOption, 1);
        connect(&m_socket, &QTcpSocket::connected, this, std::move(onConnected));
        connect(&m_socket, &QTcpSocket::readyRead, this, [this] { onData(); });
        m_socket.connectToHost(QHostAddress::LocalHost, port);
    }
    // Called once every connection is up, so connection set-up is not measured.
    void start() { next(); }

private:
    void next() {
        if (*m_remaining <= 0) {
            m_onIdle();
            return;
        }
        --*m_remaining;
        m_buffer.clear();
        m_firstSeen = false;
        m_clock.start();
        m_socket.write(m_request);
    }
    void onData() {
        m_buffer += m_socket.readAll();
        const qsizetype headEnd = m_buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        if (m_streaming && !m_firstSeen && m_buffer.indexOf("data:", headEnd) > 0) {
            m_firstSeen = true;
            m_samples->push_back(m_clock.nsecsElapsed());
        }
        bool complete = false;
        const qsizetype lengthAt = m_buffer.toLower().indexOf("content-length:");
        if (lengthAt >= 0 && lengthAt < headEnd) {
            const qsizetype lineEnd = m_buffer.indexOf("\r\n", lengthAt);
            const qsizetype length =
                m_buffer.mid(lengthAt + 15, lineEnd - lengthAt - 15).trimmed().toLongLong();
            complete = m_buffer.size() >= headEnd + 4 + length;
        } else {
            complete = m_buffer.endsWith("0\r\n\r\n");
        }
        if (!complete)
            return;
        if (!m_streaming)
            m_samples->push_back(m_clock.nsecsElapsed());
        next();
    }

    QTcpSocket m_socket;
    QByteArray m_request;
    bool m_streaming;
    std::vector<qint64> *m_samples;
    int *m_remaining;
    std::function<void()> m_onIdle;
    QByteArray m_buffer;
    QElapsedTimer m_clock;
    bool m_firstSeen = false;
};

struct PhaseResult {
    std::vector<qint64> samples; // ns
    double seconds = 0;
    double percentile(double p) const {
        if (samples.empty())
            return 0;
        std::vector<qint64> sorted = samples;
        std::sort(sorted.begin(), sorted.end());
        const size_t index = std::min(sorted.size() - 1, size_t(p * double(sorted.size())));
        return double(sorted[index]) / 1e6;
    }
    double rps() const { return seconds > 0 ? double(samples.size()) / seconds : 0; }
};

PhaseResult runPhase(quint16 port, const QByteArray &request, bool streaming, int concurrency,
                     int requests) {
    PhaseResult result;
    result.samples.reserve(size_t(requests));
    int remaining = requests;
    int idle = 0;
    int connected = 0;
    QEventLoop loop;
    std::vector<std::unique_ptr<LoadConnection>> connections;
    for (int i = 0; i < concurrency; ++i)
        connections.push_back(std::make_unique<LoadConnection>(
            port, request, streaming, &result.samples, &remaining,
            [&] {
                if (++connected == concurrency)
                    loop.quit();
            },
            [&] {
                if (++idle == concurrency)
                    loop.quit();
            }));
    loop.exec(); // all connected
    QElapsedTimer wall;
    wall.start();
    for (auto &c : connections)
        c->start();
    loop.exec(); // all done
    result.seconds = double(wall.nsecsElapsed()) / 1e9;
    return result;
}

QByteArray httpRequest(quint16 port, const QByteArray &body) {
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) +
           "\r\nAuthorization: Bearer sk-bench-0000\r\nContent-Type: application/json\r\n"
           "Content-Length: " +
           QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

} // namespace

int main(int argc, char *argv[]) {
    QCoreApplication app(argc, argv);
    const int requests = argc > 1 ? std::max(100, atoi(argv[1])) : 4000;

    // Upstream on its own thread.
    QThread upstreamThread;
    upstreamThread.start();
    ScriptedUpstream *upstream = nullptr;
    QObject upstreamAnchor;
    upstreamAnchor.moveToThread(&upstreamThread);
    const QByteArray completion =
        R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"The result is 391."},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":6,"total_tokens":26}})";
    QList<QByteArray> events;
    for (const char *piece : {"The ", "result ", "is ", "391."})
        events
            << QByteArray(
                   R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":")") +
                   piece + "\"}}]}\n\n";
    events << "data: [DONE]\n\n";
    QMetaObject::invokeMethod(
        &upstreamAnchor,
        [&] {
            upstream = new ScriptedUpstream;
            upstream->setRecordRequests(false);
            upstream->listen();
            upstream->setResponder([&](const ScriptedUpstream::Request &request) {
                if (request.body.contains("\"stream\":true"))
                    return ScriptedUpstream::Response::events(events);
                return ScriptedUpstream::Response::json(200, completion);
            });
        },
        Qt::BlockingQueuedConnection);
    const quint16 upstreamPort = upstream->port();

    // Proxy on its own thread, as in the app.
    QThread proxyThread;
    proxyThread.start();
    ProxyServer *proxy = nullptr;
    QObject proxyAnchor;
    proxyAnchor.moveToThread(&proxyThread);
    QMetaObject::invokeMethod(
        &proxyAnchor,
        [&] {
            ProxyConfig config;
            config.port = 0;
            config.defaultRoute = ProxyConfig::routeForUpstream(
                QStringLiteral("http://127.0.0.1:%1/v1").arg(upstreamPort), nullptr);
            proxy = new ProxyServer(config);
            proxy->listen();
        },
        Qt::BlockingQueuedConnection);
    const quint16 proxyPort = proxy->port();

    QTextStream out(stdout);
    out << "bench_proxy: " << requests << " requests per phase, " << QThread::idealThreadCount()
        << " cores\n\n";
    out << "| mode | concurrency | direct p50 ms | direct p99 ms | proxy p50 ms | proxy p99 ms | "
           "added p50 ms | added p99 ms | ratio p50 | proxy req/s | direct req/s |\n";
    out << "|---|---|---|---|---|---|---|---|---|---|---|\n";
    const QByteArray jsonBody =
        R"({"model":"gpt-4o","messages":[{"role":"user","content":"what is 17*23?"}]})";
    const QByteArray streamBody =
        R"({"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"what is 17*23?"}]})";
    for (bool streaming : {false, true}) {
        for (int concurrency : {1, 64}) {
            const QByteArray body = streaming ? streamBody : jsonBody;
            // Warm both paths (connections, QNAM pool), then measure side by side.
            runPhase(upstreamPort, httpRequest(upstreamPort, body), streaming, concurrency, 300);
            runPhase(proxyPort, httpRequest(proxyPort, body), streaming, concurrency, 300);
            const PhaseResult direct = runPhase(upstreamPort, httpRequest(upstreamPort, body),
                                                streaming, concurrency, requests);
            const PhaseResult proxied =
                runPhase(proxyPort, httpRequest(proxyPort, body), streaming, concurrency, requests);
            out << "| " << (streaming ? "SSE, time to first event" : "JSON, full response") << " | "
                << concurrency << " | " << QString::number(direct.percentile(0.5), 'f', 3) << " | "
                << QString::number(direct.percentile(0.99), 'f', 3) << " | "
                << QString::number(proxied.percentile(0.5), 'f', 3) << " | "
                << QString::number(proxied.percentile(0.99), 'f', 3) << " | "
                << QString::number(proxied.percentile(0.5) - direct.percentile(0.5), 'f', 3)
                << " | "
                << QString::number(proxied.percentile(0.99) - direct.percentile(0.99), 'f', 3)
                << " | "
                << QString::number(proxied.percentile(0.5) / std::max(1e-9, direct.percentile(0.5)),
                                   'f', 2)
                << " | " << QString::number(proxied.rps(), 'f', 0) << " | "
                << QString::number(direct.rps(), 'f', 0) << " |\n";
            out.flush();
        }
    }

    QMetaObject::invokeMethod(
        &proxyAnchor, [&] { delete proxy; }, Qt::BlockingQueuedConnection);
    QMetaObject::invokeMethod(
        &upstreamAnchor, [&] { delete upstream; }, Qt::BlockingQueuedConnection);
    proxyThread.quit();
    upstreamThread.quit();
    proxyThread.wait();
    upstreamThread.wait();
    return 0;
}
