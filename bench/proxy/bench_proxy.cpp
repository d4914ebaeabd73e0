// bench_proxy: pass-through overhead of Loopscope against calling the scripted upstream
// directly, at concurrency 1 and 64, non-streaming (full latency) and streaming (time to the
// first SSE event). Upstream, proxy and load generator each run on their own thread in one
// process. Usage: bench_proxy [requests-per-phase (default 4000)]
#include "common/instantchatupstream.h"
#include "common/passthroughload.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"

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
using namespace loopscope::bench;

int main(int argc, char *argv[]) {
    QCoreApplication app(argc, argv);
    const int requests = argc > 1 ? std::max(100, atoi(argv[1])) : 4000;

    const InstantChatUpstream upstream; // on its own thread
    const quint16 upstreamPort = upstream.port();

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
    proxyThread.quit();
    proxyThread.wait();
    return 0;
}
