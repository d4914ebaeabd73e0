// Container file uploads (issue 37): the proxy's peak resident memory while one, then several,
// large files are uploaded at once (`POST /v1/containers/{id}/files`, multipart) into local
// sandboxes, through the REAL loopscope binary. Several binaries (e.g. a build of main and this
// tree) are measured side by side in one run, each scenario on a freshly started process.
//
//   bench_upload --binary before=/path/a/loopscope --binary after=/path/b/loopscope
//                [--mib 31] [--at-once 1,8] [--rounds 1]
//
// Per scenario: start the binary (its own HOME and XDG dirs), create one container per upload,
// send each a small file first (so every code path has run once), let the pools settle, then
// read VmRSS, reset the high-water mark (/proc/<pid>/clear_refs "5"; without that, the figure
// is the mark's growth over the start-up's), send the uploads at once, check every answer
// (200, the file's byte count) and read VmHWM; RSS again 12 s later (after a heap trim). Only the
// proxy process is measured: the sandboxes are processes of their own.
#include "common/headlessprocess.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include <csignal>

using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

[[noreturn]] void fail(const QString &why) {
    std::fprintf(stderr, "bench_upload: %s\n", qPrintable(why));
    std::exit(1);
}

bool waitFor(const std::function<bool()> &condition, int timeoutMs) {
    return loopscope::bench::pollUntil(condition, timeoutMs);
}

void pause(int ms) {
    waitFor([] { return false; }, ms);
}

// A "Vm…:" line of /proc/<pid>/status, in bytes.
qint64 statusBytes(qint64 pid, const QByteArray &key) {
    QFile file(QStringLiteral("/proc/%1/status").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : file.readAll().split('\n'))
        if (line.startsWith(QByteArray(key + ':')))
            return line.mid(key.size() + 1).trimmed().split(' ').first().toLongLong() * 1024;
    return 0;
}

// Resets VmHWM to the current RSS (Linux 4.0+); false where /proc does not let us.
bool resetHighWaterMark(qint64 pid) {
    QFile file(QStringLiteral("/proc/%1/clear_refs").arg(pid));
    return file.open(QIODevice::WriteOnly) && file.write("5") == 1;
}

QByteArray multipart(const QByteArray &boundary, const QByteArray &data) {
    return "--" + boundary +
           "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"upload.bin\"\r\n"
           "Content-Type: application/octet-stream\r\n\r\n" +
           data + "\r\n--" + boundary + "--\r\n";
}

// Starts at once; any failure ends the benchmark.
class Binary : public loopscope::bench::HeadlessProcess {
public:
    Binary(const QString &path, const QString &upstream)
        : HeadlessProcess(path, upstream) {
        if (const QString error = HeadlessProcess::start(); !error.isEmpty())
            fail(error);
    }
};

RawHttpClient::Response call(quint16 port, const QByteArray &method, const QByteArray &target,
                             const QByteArray &body,
                             const QList<QPair<QByteArray, QByteArray>> &headers) {
    RawHttpClient client(port);
    client.request(method, target, body, headers);
    if (!waitFor([&] { return client.hasCompleteResponse() || client.isDisconnected(); }, 120000))
        fail(QStringLiteral("no answer to ") + QString::fromLatin1(method + ' ' + target));
    return client.current();
}

const QList<QPair<QByteArray, QByteArray>> kAuth{{"authorization", "Bearer sk-bench-upload-0001"}};

QByteArray createContainer(quint16 port) {
    const auto r =
        call(port, "POST", "/v1/containers", "{\"name\":\"bench\"}",
             kAuth + QList<QPair<QByteArray, QByteArray>>{{"content-type", "application/json"}});
    const QByteArray id = r.json().value(QStringLiteral("id")).toString().toUtf8();
    if (r.status != 200 || id.isEmpty())
        fail(QStringLiteral("container create: %1 %2")
                 .arg(r.status)
                 .arg(QString::fromUtf8(r.body.left(300))));
    return id;
}

// Sends `body` to every container at once; checks each answer names `bytes` bytes.
void uploadAll(quint16 port, const QList<QByteArray> &containers, const QByteArray &body,
               qint64 bytes) {
    const QList<QPair<QByteArray, QByteArray>> headers =
        kAuth + QList<QPair<QByteArray, QByteArray>>{
                    {"content-type", "multipart/form-data; boundary=BenchBoundary"}};
    std::vector<std::unique_ptr<RawHttpClient>> clients;
    for (const QByteArray &id : containers) {
        clients.push_back(std::make_unique<RawHttpClient>(port));
        clients.back()->request("POST", "/v1/containers/" + id + "/files", body, headers);
    }
    if (!waitFor(
            [&] {
                return std::all_of(clients.begin(), clients.end(), [](const auto &c) {
                    return c->hasCompleteResponse() || c->isDisconnected();
                });
            },
            300000))
        fail(QStringLiteral("uploads did not finish"));
    for (const auto &client : clients) {
        const RawHttpClient::Response r = client->current();
        if (r.status != 200 || r.json().value(QStringLiteral("bytes")).toInteger() != bytes)
            fail(QStringLiteral("upload: %1 %2")
                     .arg(r.status)
                     .arg(QString::fromUtf8(r.body.left(300))));
    }
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Container upload memory (issue 37)."));
    parser.addHelpOption();
    const QCommandLineOption binaryOption(
        QStringLiteral("binary"),
        QStringLiteral("LABEL=PATH of a loopscope binary (repeat to compare)."),
        QStringLiteral("label=path"));
    const QCommandLineOption mibOption(QStringLiteral("mib"), QStringLiteral("File size (31)."),
                                       QStringLiteral("MiB"), QStringLiteral("31"));
    const QCommandLineOption atOnceOption(QStringLiteral("at-once"),
                                          QStringLiteral("Uploads at once, per scenario (1,8)."),
                                          QStringLiteral("list"), QStringLiteral("1,8"));
    const QCommandLineOption roundsOption(QStringLiteral("rounds"),
                                          QStringLiteral("Alternating rounds (1)."),
                                          QStringLiteral("n"), QStringLiteral("1"));
    parser.addOptions({binaryOption, mibOption, atOnceOption, roundsOption});
    parser.process(app);
    const qint64 fileBytes = qint64(parser.value(mibOption).toDouble() * kMiB);
    QList<int> scenarios;
    for (const QString &n : parser.value(atOnceOption).split(u','))
        scenarios << n.toInt();
    const int rounds = parser.value(roundsOption).toInt();

    // Uploads never reach the model; the binary only needs an upstream to start.
    ScriptedUpstream upstream;
    if (!upstream.listen())
        fail(QStringLiteral("scripted upstream cannot listen"));

    QList<QPair<QString, QString>> binaries;
    for (const QString &spec : parser.values(binaryOption)) {
        const qsizetype eq = spec.indexOf(u'=');
        binaries.append({eq > 0 ? spec.left(eq) : spec, eq > 0 ? spec.mid(eq + 1) : spec});
    }
    if (binaries.isEmpty())
        fail(QStringLiteral("give at least one --binary"));

    QByteArray data(fileBytes, Qt::Uninitialized);
    for (qsizetype i = 0; i + 4 <= data.size(); i += 4) {
        const quint32 word = QRandomGenerator::global()->generate();
        std::memcpy(data.data() + i, &word, 4);
    }
    const QByteArray body = multipart("BenchBoundary", data);
    const QByteArray small = multipart("BenchBoundary", QByteArray(1024, 'x'));

    std::printf("| round | binary | uploads at once | file MiB | RSS before MiB | peak RSS MiB | "
                "peak − before MiB | per upload, × the file | RSS 12 s after MiB | mark |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int round = 1; round <= rounds; ++round) {
        for (const int atOnce : scenarios) {
            for (const auto &[label, path] : binaries) {
                Binary binary(path, upstream.baseUrl());
                QList<QByteArray> containers;
                for (int i = 0; i < atOnce; ++i)
                    containers << createContainer(binary.port());
                uploadAll(binary.port(), containers, small, 1024);
                pause(3000); // pool refills, first-use allocations
                const qint64 before = statusBytes(binary.pid(), "VmRSS");
                const bool reset = resetHighWaterMark(binary.pid());
                const qint64 markBefore = statusBytes(binary.pid(), "VmHWM");
                uploadAll(binary.port(), containers, body, fileBytes);
                const qint64 peak = statusBytes(binary.pid(), "VmHWM");
                pause(12000); // past the heap trimmer's 10 s (HeapTrimmer)
                const qint64 after = statusBytes(binary.pid(), "VmRSS");
                // Without a reset the mark may still be the start-up's: count only its growth.
                const qint64 growth = reset ? peak - before : peak - markBefore;
                std::printf("| %d | %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %s |\n",
                            round, qPrintable(label), atOnce, double(fileBytes) / kMiB,
                            double(before) / kMiB, double(peak) / kMiB, double(growth) / kMiB,
                            double(growth) / double(fileBytes) / atOnce, double(after) / kMiB,
                            reset ? "reset" : "growth only");
                std::fflush(stdout);
                binary.stop();
            }
        }
    }
    return 0;
}
