// Sandbox capacity for bursts (issue 16): requests per second and latency of 4 concurrent
// clients running a one-round code-interpreter loop through the REAL loopscope binary against
// an instant scripted model, with a fresh sandbox per request ("fresh") and with one session
// sandbox per client ("session"), then the idle CPU of the binary and its sandboxes with the pool
// full. Several binaries (e.g. a build of main and this tree) are measured in alternating
// rounds in one run, so they share the machine's load. Every response is checked.
//
//   bench_capacity --binary before=/path/a/loopscope --binary after=/path/b/loopscope
//                  [--seconds 15] [--clients 4] [--rounds 2] [--idle-seconds 5]
//
// A binary spec "label=path@N" starts that binary with --sandbox-pool N (warm pool size; 0 =
// none), so one build can be measured without, and with, its pool in the same run.
#include "common/headlessprocess.h"
#include "loopfixtures.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include <csignal>
#include <unistd.h>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

[[noreturn]] void fail(const QString &why) {
    std::fprintf(stderr, "bench_capacity: %s\n", qPrintable(why));
    std::exit(1);
}

QString loadAverage() {
    QFile file(QStringLiteral("/proc/loadavg"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromLatin1(file.readAll()).section(u' ', 0, 2);
}

double quantile(QList<double> samples, double q) {
    if (samples.isEmpty())
        return 0;
    std::sort(samples.begin(), samples.end());
    const qsizetype i =
        std::min<qsizetype>(samples.size() - 1, static_cast<qsizetype>(q * samples.size()));
    return samples.at(i);
}

// CPU ticks (utime + stime) of `pid` from /proc/<pid>/stat, 0 when gone; with `reaped`, plus
// those of its reaped children (cutime + cstime): a sandbox's whole tree once it is deleted.
qint64 cpuTicks(qint64 pid, bool reaped = false) {
    QFile file(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray stat = file.readAll();
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.size() <= 14)
        return 0;
    qint64 ticks = fields.at(11).toLongLong() + fields.at(12).toLongLong();
    if (reaped)
        ticks += fields.at(13).toLongLong() + fields.at(14).toLongLong();
    return ticks;
}

// Busy CPU of the whole machine (every core: user, nice, system, irq, softirq, steal) in ms
// since boot, from /proc/stat. Counts what per-process figures miss: processes reaped by
// someone other than the binary (a zygote's forks), kernel threads (network namespaces are
// torn down in a workqueue), and this harness.
double machineBusyMs() {
    QFile file(QStringLiteral("/proc/stat"));
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> f = file.readLine().simplified().split(' ');
    if (f.size() < 9 || f.at(0) != "cpu")
        return 0;
    qint64 busy = 0;
    for (int i : {1, 2, 3, 6, 7, 8})
        busy += f.at(i).toLongLong();
    return 1000.0 * double(busy) / double(::sysconf(_SC_CLK_TCK));
}

// Pids of every process whose command line carries the sandbox marker of `appPid`
// ("loopscope-sandbox:<pid>", see BubblewrapCommand::processMarker), bwrap included.
QList<qint64> sandboxPids(qint64 appPid) {
    QList<qint64> pids;
    const QByteArray marker = "loopscope-sandbox:" + QByteArray::number(appPid);
    for (const QString &entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool ok = false;
        const qint64 pid = entry.toLongLong(&ok);
        if (!ok)
            continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(marker))
            pids << pid;
    }
    return pids;
}

bool waitFor(const std::function<bool()> &condition, int timeoutMs) {
    return bench::pollUntil(condition, timeoutMs);
}

// One keep-alive client sending one-round code-interpreter requests back to back, never
// blocking the event loop (the scripted model lives in the same thread).
class Client : public QObject {
public:
    Client(quint16 port, int index, bool session, QObject *parent)
        : QObject(parent)
        , m_port(port)
        , m_index(index)
        , m_session(session) {
        connect(&m_socket, &QTcpSocket::readyRead, this, &Client::onData);
        connect(&m_socket, &QTcpSocket::connected, this, &Client::sendRequest);
    }

    void start(qint64 untilMs, QElapsedTimer *clock) {
        m_until = untilMs;
        m_clock = clock;
        m_socket.connectToHost(QStringLiteral("127.0.0.1"), m_port);
    }
    bool done() const { return m_done; }
    QList<double> latencies;
    QList<double> pythonCpu; // ms of CPU the sandbox interpreter had used when the code ran
    int errors = 0;

private:
    void sendRequest() {
        if (m_clock->elapsed() >= m_until) {
            m_done = true;
            m_socket.disconnectFromHost();
            return;
        }
        QJsonObject body{{QStringLiteral("model"), QStringLiteral("gpt-5")},
                         {QStringLiteral("input"), QStringLiteral("Compute with Python, please.")},
                         {QStringLiteral("tools"),
                          QJsonArray{QJsonObject{
                              {QStringLiteral("type"), QStringLiteral("code_interpreter")},
                              {QStringLiteral("container"),
                               QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}}}};
        if (m_session)
            body.insert(QStringLiteral("metadata"),
                        QJsonObject{{QStringLiteral("session_id"),
                                     QStringLiteral("bench-client-%1").arg(m_index)}});
        const QByteArray json = QJsonDocument(body).toJson(QJsonDocument::Compact);
        m_buffer.clear();
        m_started.start();
        m_socket.write("POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "authorization: Bearer sk-bench-capacity-0001\r\n"
                       "content-type: application/json\r\ncontent-length: " +
                       QByteArray::number(json.size()) + "\r\n\r\n" + json);
    }

    void onData() {
        m_buffer += m_socket.readAll();
        qsizetype consumed = 0;
        const RawHttpClient::Response r = RawHttpClient::parse(m_buffer, &consumed);
        if (!r.complete)
            return;
        const double ms = static_cast<double>(m_started.nsecsElapsed()) / 1e6;
        const QJsonObject answer = r.json();
        const QJsonArray output = answer.value(QStringLiteral("output")).toArray();
        // The code prints the CPU time its interpreter has used so far (start-up included).
        bool isNumber = false;
        const double pythonCpuMs = output.at(0)
                                       .toObject()
                                       .value(QStringLiteral("outputs"))
                                       .toArray()
                                       .at(0)
                                       .toObject()
                                       .value(QStringLiteral("logs"))
                                       .toString()
                                       .trimmed()
                                       .toDouble(&isNumber);
        const bool ok = r.status == 200 && output.size() == 2 && isNumber;
        if (ok) {
            latencies << ms;
            pythonCpu << pythonCpuMs;
        } else if (++errors <= 3)
            std::fprintf(stderr, "bench_capacity: bad answer (%d): %s\n", r.status,
                         r.body.left(300).constData());
        sendRequest();
    }

    QTcpSocket m_socket;
    QByteArray m_buffer;
    QElapsedTimer m_started;
    QElapsedTimer *m_clock = nullptr;
    qint64 m_until = 0;
    quint16 m_port;
    int m_index;
    bool m_session;
    bool m_done = false;
};

struct Result {
    int requests = 0;
    int errors = 0;
    double seconds = 0;
    QList<double> latencies;
    QList<double> pythonCpu;
};

Result drive(quint16 port, int clients, int seconds, bool session) {
    QObject owner;
    QElapsedTimer clock;
    clock.start();
    QList<Client *> all;
    for (int i = 0; i < clients; ++i) {
        auto *client = new Client(port, i, session, &owner);
        client->start(qint64(seconds) * 1000, &clock);
        all << client;
    }
    if (!waitFor(
            [&] {
                return std::all_of(all.begin(), all.end(), [](Client *c) { return c->done(); });
            },
            (seconds + 120) * 1000))
        fail(QStringLiteral("clients did not finish"));
    Result result;
    result.seconds = static_cast<double>(clock.nsecsElapsed()) / 1e9;
    for (Client *client : all) {
        result.latencies += client->latencies;
        result.pythonCpu += client->pythonCpu;
        result.errors += client->errors;
    }
    result.requests = int(result.latencies.size());
    return result;
}

class Binary : public bench::HeadlessProcess {
public:
    Binary(const QString &label, const QString &path, const QString &upstream,
           const QStringList &extraArguments)
        : HeadlessProcess(path, upstream, extraArguments)
        , label(label) {}

    void start() {
        if (const QString error = HeadlessProcess::start(); !error.isEmpty())
            fail(label + QStringLiteral(": ") + error);
    }

    // CPU of the binary and every sandbox it has reaped, in ms.
    double cpuMs() const {
        return 1000.0 * double(cpuTicks(pid(), true)) / double(::sysconf(_SC_CLK_TCK));
    }
    // CPU used by the binary and its sandboxes (pool included) over `seconds` of idleness, in
    // percent of one core, after `settleSeconds` for the pool to fill and shrink.
    double idleCpuPercent(int settleSeconds, int seconds) {
        waitFor([] { return false; }, settleSeconds * 1000);
        // Per process, counted only for processes alive at both ends (a pool shrink or a
        // session expiry in between must not count negative).
        const auto ticks = [this] {
            QHash<qint64, qint64> out{{pid(), cpuTicks(pid())}};
            for (qint64 child : sandboxPids(pid()))
                out.insert(child, cpuTicks(child));
            return out;
        };
        const QHash<qint64, qint64> before = ticks();
        waitFor([] { return false; }, seconds * 1000);
        const QHash<qint64, qint64> after = ticks();
        qint64 used = 0;
        for (auto it = after.constBegin(); it != after.constEnd(); ++it)
            if (before.contains(it.key()) && it.value() >= before.value(it.key()))
                used += it.value() - before.value(it.key());
        return 100.0 * double(used) / double(::sysconf(_SC_CLK_TCK)) / seconds;
    }

    QString label;
};

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Sandbox capacity for bursts (issue 16)."));
    parser.addHelpOption();
    const QCommandLineOption binaryOption(QStringLiteral("binary"),
                                          QStringLiteral("LABEL=PATH of a loopscope binary "
                                                         "(repeat to compare)."),
                                          QStringLiteral("label=path"));
    const QCommandLineOption secondsOption(QStringLiteral("seconds"),
                                           QStringLiteral("Seconds per measurement (15)."),
                                           QStringLiteral("s"), QStringLiteral("15"));
    const QCommandLineOption clientsOption(QStringLiteral("clients"),
                                           QStringLiteral("Concurrent clients (4)."),
                                           QStringLiteral("n"), QStringLiteral("4"));
    const QCommandLineOption roundsOption(QStringLiteral("rounds"),
                                          QStringLiteral("Alternating rounds (2)."),
                                          QStringLiteral("n"), QStringLiteral("2"));
    const QCommandLineOption idleOption(QStringLiteral("idle-seconds"),
                                        QStringLiteral("Idle CPU window (5)."), QStringLiteral("s"),
                                        QStringLiteral("5"));
    parser.addOptions({binaryOption, secondsOption, clientsOption, roundsOption, idleOption});
    parser.process(app);
    const int seconds = parser.value(secondsOption).toInt();
    const int clients = parser.value(clientsOption).toInt();
    const int rounds = parser.value(roundsOption).toInt();
    const int idleSeconds = parser.value(idleOption).toInt();

    // The instant model: a tool call for a new question, the final answer once it saw the output.
    ScriptedUpstream upstream;
    upstream.setRecordRequests(false);
    upstream.setResponder([](const ScriptedUpstream::Request &request) {
        const QJsonArray input = request.json().value(QStringLiteral("input")).toArray();
        for (const QJsonValue &item : input) {
            if (item.toObject().value(QStringLiteral("type")).toString() ==
                QLatin1String("function_call_output"))
                return ScriptedUpstream::Response::json(
                    loopfixtures::responsesMessage(QStringLiteral("done")));
        }
        return ScriptedUpstream::Response::json(loopfixtures::responsesFunctionCall(
            QStringLiteral("import time\nprint(round(time.process_time() * 1000, 2))"),
            QStringLiteral("c1")));
    });
    if (!upstream.listen())
        fail(QStringLiteral("scripted upstream cannot listen"));

    std::vector<std::unique_ptr<Binary>> binaries;
    for (const QString &spec : parser.values(binaryOption)) {
        const qsizetype eq = spec.indexOf(u'=');
        QString path = eq > 0 ? spec.mid(eq + 1) : spec;
        QStringList extra;
        if (const qsizetype at = path.lastIndexOf(u'@'); at > 0) {
            extra << QStringLiteral("--sandbox-pool") << path.mid(at + 1);
            path.truncate(at);
        }
        binaries.push_back(std::make_unique<Binary>(eq > 0 ? spec.left(eq) : spec, path,
                                                    upstream.baseUrl(), extra));
    }
    if (binaries.empty())
        fail(QStringLiteral("give at least one --binary"));

    // "proxy+bwrap CPU": the binary's own CPU plus that of the sandbox processes it reaped
    // (bwrap; the interpreter dies with its PID namespace and is not counted there), per request;
    // a zygote reaps its own forks, so there it is the binary alone. "machine CPU": every core's
    // busy time over the measured seconds, harness and kernel included, per request.
    // "python CPU": what the sandbox interpreter had used when the code ran (its start-up; in a
    // session it accumulates over the session's runs, so only the fresh row means anything).
    std::printf("| round | binary | mode | req/s | p50 ms | p99 ms | proxy+bwrap CPU ms/req | "
                "machine CPU ms/req | python CPU ms (median) | errors | load avg (1/5/15) |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n");
    QHash<QString, QList<double>> idle;
    for (int round = 1; round <= rounds; ++round) {
        for (auto &binary : binaries) {
            binary->start();
            for (const bool session : {false, true}) {
                // A few unmeasured requests first (connections, the first sandboxes).
                drive(binary->port(), clients, 1, session);
                const QString load = loadAverage();
                const double cpuBefore = binary->cpuMs();
                const double machineBefore = machineBusyMs();
                const Result r = drive(binary->port(), clients, seconds, session);
                const double machineMs = machineBusyMs() - machineBefore;
                // Deleted sandboxes are reaped shortly after their response: let them be.
                waitFor([] { return false; }, 2000);
                const double cpuPerRequest =
                    r.requests > 0 ? (binary->cpuMs() - cpuBefore) / r.requests : 0;
                const QString pythonCpu = session
                                              ? QStringLiteral("-")
                                              : QString::number(quantile(r.pythonCpu, 0.5), 'f', 1);
                std::printf("| %d | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %d | %s |\n",
                            round, qPrintable(binary->label), session ? "session" : "fresh",
                            r.requests / r.seconds, quantile(r.latencies, 0.5),
                            quantile(r.latencies, 0.99), cpuPerRequest,
                            r.requests > 0 ? machineMs / r.requests : 0, qPrintable(pythonCpu),
                            r.errors, qPrintable(load));
                std::fflush(stdout);
            }
            // After the adaptive pool's idle shrink (LocalSandboxOptions::poolIdleMs, 30 s).
            const double cpu = binary->idleCpuPercent(35, idleSeconds);
            std::printf("| %d | %s | idle (pool full) | CPU %.2f %% of a core | | | | | | | %s |\n",
                        round, qPrintable(binary->label), cpu, qPrintable(loadAverage()));
            std::fflush(stdout);
            binary->stop();
        }
    }
    return 0;
}
