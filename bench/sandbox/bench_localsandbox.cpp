// Latency of the local sandbox backend: create from the warm pool, create cold, print(1) round
// trip, a 1 MiB output run, delete. Prints median / p99 / min / max in milliseconds.
#include "common/benchsupport.h"
#include "sandbox/localpythonbackend.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFutureWatcher>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace loopscope;

namespace {

using bench::await;
using bench::check;

void waitUntil(const std::function<bool()> &condition) {
    QElapsedTimer clock;
    clock.start();
    while (!condition()) {
        if (clock.elapsed() > 60000) {
            std::fprintf(stderr, "timed out waiting for the pool\n");
            std::exit(1);
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        QThread::usleep(500);
    }
}

void report(const char *name, QList<double> samples) {
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) {
        const qsizetype i =
            std::min<qsizetype>(samples.size() - 1, static_cast<qsizetype>(q * samples.size()));
        return samples.at(i);
    };
    std::printf("| %-34s | %5lld | %8.3f | %8.3f | %8.3f | %8.3f |\n", name,
                static_cast<long long>(samples.size()), at(0.5), at(0.99), samples.first(),
                samples.last());
    std::fflush(stdout);
}

double msSince(const QElapsedTimer &timer) {
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

QString cpuModel() {
    QFile file(QStringLiteral("/proc/cpuinfo"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    for (const QByteArray &line : file.readAll().split('\n'))
        if (line.startsWith("model name"))
            return QString::fromLatin1(line.mid(line.indexOf(':') + 1)).trimmed();
    return {};
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    QCommandLineOption runsOption(QStringList{QStringLiteral("n"), QStringLiteral("runs")},
                                  QStringLiteral("Samples per operation (default 300)."),
                                  QStringLiteral("count"), QStringLiteral("300"));
    parser.addOption(runsOption);
    parser.process(app);
    const int runs = std::max(1, parser.value(runsOption).toInt());

    std::printf("machine: %d cores (QThread::idealThreadCount), %s\n", QThread::idealThreadCount(),
                qPrintable(cpuModel()));
    std::printf("| %-34s | %5s | %8s | %8s | %8s | %8s |\n", "operation (ms)", "runs", "median",
                "p99", "min", "max");
    std::printf("|%s|%s|%s|%s|%s|%s|\n", "------------------------------------", "-------",
                "----------", "----------", "----------", "----------");

    {
        // Create from the pool: the pool is given time to refill between samples (not timed).
        LocalSandboxOptions options;
        options.poolSize = 2;
        LocalPythonBackend backend(options);
        QList<double> create;
        QList<double> remove;
        for (int i = 0; i < runs; ++i) {
            waitUntil([&] { return backend.readyPoolCount() >= options.poolSize; });
            QElapsedTimer timer;
            timer.start();
            const SandboxHandle handle = check(await(backend.create({})), "create (pool)");
            create << msSince(timer);
            timer.restart();
            check(await(backend.remove(handle, {})), "delete");
            remove << msSince(timer);
        }
        report("create from warm pool", create);
        report("delete (kill + reap)", remove);
    }
    {
        LocalSandboxOptions options;
        options.poolSize = 0;
        LocalPythonBackend backend(options);
        QList<double> create;
        for (int i = 0; i < runs; ++i) {
            QElapsedTimer timer;
            timer.start();
            const SandboxHandle handle = check(await(backend.create({})), "create (cold)");
            create << msSince(timer);
            check(await(backend.remove(handle, {})), "delete");
        }
        report("create cold (bwrap + python start)", create);

        const SandboxHandle handle = check(await(backend.create({})), "create");
        QList<double> roundTrip;
        QList<double> bigOutput;
        for (int i = 0; i < runs; ++i) {
            QElapsedTimer timer;
            timer.start();
            const ExecutionResult r =
                check(await(backend.run(handle, QStringLiteral("print(1)"), {})), "print(1)");
            roundTrip << msSince(timer);
            if (r.stdoutText != QLatin1String("1\n")) {
                std::fprintf(stderr, "unexpected output\n");
                return 1;
            }
        }
        for (int i = 0; i < runs; ++i) {
            QElapsedTimer timer;
            timer.start();
            const ExecutionResult r = check(
                await(backend.run(handle, QStringLiteral("print('x' * 1048575)"), {})), "1 MiB");
            bigOutput << msSince(timer);
            if (r.stdoutText.size() != 1048576 || r.stdoutTruncated) {
                std::fprintf(stderr, "unexpected 1 MiB output size %lld\n",
                             static_cast<long long>(r.stdoutText.size()));
                return 1;
            }
        }
        report("print(1) round trip (warm)", roundTrip);
        report("1 MiB stdout run (warm)", bigOutput);
    }
    return 0;
}
