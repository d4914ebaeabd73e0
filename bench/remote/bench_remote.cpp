// Latency of the remote backends on this machine: JupyterBackend against a real local
// jupyter-server (kernel create + first run, print(1) round trip on a warm kernel, delete) and
// E2bBackend against the loopback e2b stand-in (client-side cost only: create, run, delete).
// Prints median / p99 / min / max in milliseconds.
#include "common/benchsupport.h"
#include "e2bstandin.h"
#include "jupyterserverprocess.h"
#include "sandbox/remote/e2bbackend.h"
#include "sandbox/remote/jupyterbackend.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFutureWatcher>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

using namespace loopscope;

namespace {

using bench::await;
using bench::check;

void report(const char *name, QList<double> ms) {
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) { return ms.at(qMin(ms.size() - 1, qsizetype(q * ms.size()))); };
    std::printf("%-34s n=%4lld  median %8.2f  p99 %8.2f  min %8.2f  max %8.2f ms\n", name,
                static_cast<long long>(ms.size()), at(0.5), at(0.99), ms.first(), ms.last());
    std::fflush(stdout);
}

double timed(const std::function<void()> &op) {
    QElapsedTimer clock;
    clock.start();
    op();
    return double(clock.nsecsElapsed()) / 1e6;
}

void benchJupyter(int kernels, int runs) {
    test::JupyterServerProcess server;
    if (!server.start()) {
        std::fprintf(stderr, "jupyter-server: %s\n", qPrintable(server.error()));
        std::exit(1);
    }
    const SandboxParams params{QStringLiteral("jupyter"), server.token(), server.baseUrl()};
    JupyterBackend backend;
    QList<double> cold, warm, removal;
    for (int i = 0; i < kernels; ++i) {
        SandboxHandle handle;
        cold << timed([&] {
            handle = check(await(backend.create(params)), "create");
            check(await(backend.run(handle, QStringLiteral("print(1)"), params)), "first run");
        });
        if (i == 0) {
            for (int r = 0; r < runs; ++r)
                warm << timed([&] {
                    check(await(backend.run(handle, QStringLiteral("print(1)"), params)), "run");
                });
        }
        removal << timed([&] { check(await(backend.remove(handle, params)), "remove"); });
    }
    report("jupyter create + first print(1)", cold);
    report("jupyter print(1) round trip", warm);
    report("jupyter delete", removal);
    server.stop();
}

void benchE2b(int sandboxes, int runs) {
    test::E2bStandIn standIn;
    if (!standIn.listen())
        std::exit(1);
    // One chunk, no pacing: measure the client, not the stand-in's fragmenting.
    standIn.setExecuteHandler([](const test::E2bStandIn::Request &, const QString &,
                                 test::E2bStandIn::Sandbox &sandbox) {
        test::E2bStandIn::ExecuteReply reply;
        reply.body = QByteArrayLiteral("{\"type\":\"stdout\",\"text\":\"1\\n\"}\n"
                                       "{\"type\":\"number_of_executions\",\"execution_count\":") +
                     QByteArray::number(++sandbox.executions) + "}\n";
        reply.pauseMs = 0;
        return reply;
    });
    E2bBackend::Options options;
    options.executeUrlTemplate = standIn.executeUrlTemplate();
    E2bBackend backend(options);
    const SandboxParams params{QStringLiteral("e2b"),
                               QString::fromLatin1(test::E2bStandIn::kApiKey), standIn.baseUrl()};
    QList<double> create, run, removal;
    for (int i = 0; i < sandboxes; ++i) {
        SandboxHandle handle;
        create << timed([&] { handle = check(await(backend.create(params)), "create"); });
        if (i == 0)
            for (int r = 0; r < runs; ++r)
                run << timed([&] {
                    check(await(backend.run(handle, QStringLiteral("print(1)"), params)), "run");
                });
        removal << timed([&] { check(await(backend.remove(handle, params)), "remove"); });
    }
    report("e2b (stand-in) create", create);
    report("e2b (stand-in) run", run);
    report("e2b (stand-in) delete", removal);
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    QCommandLineOption kernels(QStringLiteral("kernels"), QStringLiteral("Kernels to create."),
                               QStringLiteral("n"), QStringLiteral("20"));
    QCommandLineOption runs(QStringLiteral("runs"), QStringLiteral("Warm runs."),
                            QStringLiteral("n"), QStringLiteral("200"));
    parser.addOptions({kernels, runs});
    parser.process(app);
    benchJupyter(parser.value(kernels).toInt(), parser.value(runs).toInt());
    benchE2b(parser.value(runs).toInt(), parser.value(runs).toInt());
    return 0;
}
