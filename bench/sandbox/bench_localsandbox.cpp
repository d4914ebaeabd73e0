// Latency of the local sandbox backend: create from the warm pool, create cold, print(1) round
// trip, a 1 MiB output run, delete. Prints median / p99 / min / max in milliseconds, then the
// unreclaimable kernel memory one sandbox's tmpfs inodes take when it fills all three up to their
// nr_inodes caps (docs/security.md, "Memory, honestly"). That reads the machine-wide SUnreclaim,
// which anything else running moves: a figure for a quiet machine, not a unit test.
#include "common/benchsupport.h"
#include "sandbox/local/localpythonbackend.h"

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

qint64 unreclaimableSlabBytes() {
    QFile meminfo(QStringLiteral("/proc/meminfo"));
    if (!meminfo.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : meminfo.readAll().split('\n')) {
        if (line.startsWith("SUnreclaim:"))
            return line.mid(11).trimmed().split(' ').first().toLongLong() * 1024;
    }
    return -1;
}

// Fills %1 with empty files (os.mknod) until an error or %2 of them; prints how many and the
// errno name.
const char *kInodeFill = R"(import errno, os
n, end = 0, 'none'
try:
    while n < %2:
        os.mknod('%1/f%d' % n)
        n += 1
except OSError as e:
    end = errno.errorcode.get(e.errno, str(e.errno))
print(n, end))";

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
    {
        // Median of a few fills, each in a fresh sandbox that still holds its files when read.
        const LocalSandboxOptions defaults;
        LocalSandboxOptions options;
        options.poolSize = 0;
        LocalPythonBackend backend(options);
        QString code;
        for (const char *dir : {"/dev/shm", "/tmp", "/mnt/data"})
            code += QString::fromLatin1(kInodeFill)
                        .arg(QString::fromLatin1(dir))
                        .arg(3 * std::max(defaults.tmpDirInodes, defaults.workDirInodes)) +
                    u'\n';
        QList<double> grownMiB;
        QString counts;
        for (int i = 0; i < 5; ++i) {
            const SandboxHandle handle = check(await(backend.create({})), "create");
            const qint64 before = unreclaimableSlabBytes();
            const ExecutionResult r = check(await(backend.run(handle, code, {})), "inode fill");
            grownMiB << static_cast<double>(unreclaimableSlabBytes() - before) / (1024.0 * 1024.0);
            counts = r.stdoutText.simplified();
            check(await(backend.remove(handle, {})), "delete");
        }
        std::sort(grownMiB.begin(), grownMiB.end());
        std::printf("\nSUnreclaim grown by one sandbox filling its tmpfs inodes (%s): median %.1f "
                    "MiB, min %.1f, max %.1f\n",
                    qPrintable(counts), grownMiB.at(grownMiB.size() / 2), grownMiB.first(),
                    grownMiB.last());
    }
    return 0;
}
