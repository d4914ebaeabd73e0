// Latency of the agentic loop through the whole proxy in one process: a real loopback HTTP
// client in front, the scripted OpenAI-compatible upstream (answers at once) behind, and either
// the recording sandbox backend (zero code time) or the real local bubblewrap backend between.
// Every request is checked (status, code runs, final answer) before its sample counts.
//
// Sections (median / p99 / min / max in milliseconds; --only picks some):
//  1a. Loopscope's own time per loop iteration with the zero-time recording backend, three
//      ways: the x-loopscope-overhead-ms header (Loopscope's clock minus upstream and sandbox
//      time), client wall time minus the upstream latencies the loop reported, and the whole
//      wall time (an upper bound: the fake model and the client share this thread).
//  1b. The header measure with the real local sandbox.
//  2.  End-to-end wall time of a one-round loop (tool call → real sandbox print → answer),
//      with its parts; 2c the same streamed on /v1/responses; 2d in a session (sandbox
//      reused); 2b back to back.
//  3.  The same requests without the tool (plain pass-through), for context.
#include "inspect/eventbus.h"
#include "interception/codeinterpreterinterception.h"
#include "interception/interceptionsettings.h"
#include "loop/agenticloopinterceptor.h"
#include "loop/loopinspector.h"
#include "loopfixtures.h"
#include "proxy/interceptionstack.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "proxy/rawhttpclient.h"
#include "proxy/scriptedupstream.h"
#include "sandbox/local/localpythonbackend.h"
#include "sandbox/sandboxregistry.h"
#include "support/recordingsandboxbackend.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

using namespace loopscope;
using loopscope::test::RawHttpClient;
using loopscope::test::ScriptedUpstream;

namespace {

[[noreturn]] void fail(const QString &why) {
    std::fprintf(stderr, "bench_loop: %s\n", qPrintable(why));
    std::exit(1);
}

double msSince(const QElapsedTimer &timer) {
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

QString firstLine(const QString &path, const QByteArray &prefix = {}) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    for (const QByteArray &line : file.readAll().split('\n'))
        if (line.startsWith(prefix))
            return QString::fromLatin1(prefix.isEmpty() ? line : line.mid(line.indexOf(':') + 1))
                .trimmed();
    return {};
}

// Like QTest::qWaitFor, without linking QtTest into a benchmark.
bool waitFor(const std::function<bool()> &condition, int timeoutMs = 60000) {
    QElapsedTimer clock;
    clock.start();
    while (!condition()) {
        if (clock.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QThread::usleep(500);
    }
    return true;
}

enum class Api { Responses, Chat };

const char *apiName(Api api) {
    return api == Api::Responses ? "responses" : "chat";
}

QByteArray pathOf(Api api) {
    return api == Api::Responses ? "/v1/responses" : "/v1/chat/completions";
}

// What the client sends: the hosted code_interpreter tool, or nothing (pass-through).
QJsonObject clientRequest(Api api, bool withTool, bool stream, bool session) {
    QJsonObject body{{QStringLiteral("model"), QStringLiteral("gpt-5")}};
    if (stream)
        body.insert(QStringLiteral("stream"), true);
    if (session) // a sticky sandbox: created by the first request, reused by the next
        body.insert(QStringLiteral("metadata"),
                    QJsonObject{{QStringLiteral("session_id"), QStringLiteral("bench-session")}});
    if (api == Api::Responses)
        body.insert(QStringLiteral("input"), QStringLiteral("Compute with Python, please."));
    else
        body.insert(QStringLiteral("messages"),
                    QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                           {QStringLiteral("content"),
                                            QStringLiteral("Compute with Python, please.")}}});
    if (withTool)
        body.insert(QStringLiteral("tools"),
                    QJsonArray{QJsonObject{
                        {QStringLiteral("type"), QStringLiteral("code_interpreter")},
                        {QStringLiteral("container"),
                         QJsonObject{{QStringLiteral("type"), QStringLiteral("auto")}}}}});
    return body;
}

// The model's script for one request: `rounds` tool calls (distinct code, so the repeated
// fingerprint rail stays quiet), then the final answer.
void enqueueScript(ScriptedUpstream &upstream, Api api, int rounds) {
    for (int i = 1; i <= rounds; ++i) {
        const QString code = QStringLiteral("print(%1)").arg(i);
        const QString callId = QStringLiteral("call_%1").arg(i);
        upstream.enqueue(ScriptedUpstream::Response::json(
            api == Api::Responses ? loopfixtures::responsesFunctionCall(code, callId)
                                  : loopfixtures::chatToolCall(code, callId)));
    }
    upstream.enqueue(ScriptedUpstream::Response::json(
        api == Api::Responses ? loopfixtures::responsesMessage(QStringLiteral("done"))
                              : loopfixtures::chatText(QStringLiteral("done"))));
}

// A keep-alive loopback client (like an SDK's connection pool of one) that waits for each
// response inside a QEventLoop, so the proxy and the upstream in this thread keep running.
class Client {
public:
    struct Reply {
        RawHttpClient::Response response;
        double wallMs = 0;
        // When each requested marker first showed up in the (de-chunked) body, -1 if never.
        QList<double> markMs;
    };

    explicit Client(quint16 port)
        : m_port(port) {}

    Reply post(const QByteArray &path, const QJsonObject &json,
               const QList<QByteArray> &markers = {}) {
        if (m_socket.state() != QAbstractSocket::ConnectedState) {
            m_socket.abort();
            m_socket.connectToHost(QStringLiteral("127.0.0.1"), m_port);
            if (!m_socket.waitForConnected(10000))
                fail(QStringLiteral("cannot connect to the proxy"));
        }
        const QByteArray body = QJsonDocument(json).toJson(QJsonDocument::Compact);
        QByteArray bytes =
            "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
            "authorization: Bearer sk-bench-loop-0001\r\n" +
            "content-type: application/json\r\ncontent-length: " + QByteArray::number(body.size()) +
            "\r\n\r\n" + body;
        m_buffer.clear();
        Reply reply;
        reply.markMs = QList<double>(markers.size(), -1.0);
        QEventLoop loop;
        QElapsedTimer clock;
        const auto onData = QObject::connect(&m_socket, &QTcpSocket::readyRead, &loop, [&] {
            m_buffer += m_socket.readAll();
            qsizetype consumed = 0;
            RawHttpClient::Response r = RawHttpClient::parse(m_buffer, &consumed);
            for (qsizetype i = 0; i < markers.size(); ++i)
                if (reply.markMs[i] < 0 && r.body.contains(markers[i]))
                    reply.markMs[i] = msSince(clock);
            if (r.complete) {
                reply.wallMs = msSince(clock);
                reply.response = std::move(r);
                loop.quit();
            }
        });
        QTimer::singleShot(60000, &loop, [&] { loop.exit(1); });
        clock.start();
        m_socket.write(bytes);
        const int rc = loop.exec();
        QObject::disconnect(onData);
        if (rc != 0)
            fail(QStringLiteral("no complete response within 60 s on ") +
                 QString::fromLatin1(path));
        return reply;
    }

private:
    QTcpSocket m_socket;
    QByteArray m_buffer;
    quint16 m_port;
};

// What the loop itself reported for one request through the inspector events.
struct Tally {
    double upstreamMs = 0;
    int upstreamCalls = 0;
    double codeMs = 0;
    int codeRuns = 0;
};

// The proxy with the interception wired as the app wires it. `Local` uses InterceptionStack
// itself; `Recording` builds the same pieces by hand around the zero-time recording backend
// (InterceptionStack has no seam for a custom backend).
class Rig {
public:
    enum class Sandbox { Recording, Local };

    Rig(Sandbox sandbox, int poolSize)
        : m_poolSize(poolSize) {
        if (!m_upstream.listen())
            fail(QStringLiteral("scripted upstream cannot listen"));
        m_upstream.setRecordRequests(false);
        ProxyConfig config;
        config.port = 0;
        QString error;
        config.defaultRoute = ProxyConfig::routeForUpstream(m_upstream.baseUrl(), &error);
        if (!config.defaultRoute)
            fail(error);
        m_server = std::make_unique<ProxyServer>(config);
        if (sandbox == Sandbox::Local) {
            m_stack = std::make_unique<InterceptionStack>(m_server.get(), &m_bus);
            LocalSandboxOptions options;
            options.poolSize = poolSize;
            if (!m_stack->init(options, &error))
                fail(error);
            m_registry = m_stack->registry();
            m_local = m_stack->localBackend();
        } else {
            m_registry = new SandboxRegistry(&m_owner);
            m_recording = new RecordingSandboxBackend(&m_owner);
            m_recording->uniqueIds = true;
            m_recording->stdoutText = QStringLiteral("1\n");
            auto *interception = new CodeInterpreterInterception(InterceptionSettings{}, m_registry,
                                                                 m_recording, &m_owner);
            m_server->addInterceptor(
                new AgenticLoopInterceptor(interception, m_server->upstream(), &m_bus, &m_owner));
            new LoopInspector(m_registry, &m_bus, &m_owner);
        }
        QObject::connect(
            &m_bus, &EventBus::eventPublished, &m_owner, [this](const InspectorEvent &event) {
                if (event.kind == InspectorEvent::Kind::UpstreamCall) {
                    m_tally.upstreamMs += event.data.value(QStringLiteral("latencyMs")).toDouble();
                    ++m_tally.upstreamCalls;
                } else if (event.kind == InspectorEvent::Kind::CodeExecuted) {
                    m_tally.codeMs += event.data.value(QStringLiteral("durationMs")).toDouble();
                    ++m_tally.codeRuns;
                }
            });
        if (!m_server->listen())
            fail(QStringLiteral("proxy cannot listen"));
        m_client = std::make_unique<Client>(m_server->port());
    }

    ~Rig() {
        m_client.reset();
        if (m_stack) {
            QFuture<void> done = m_stack->shutdown();
            waitFor([&] { return done.isFinished(); }, 30000);
        }
    }

    struct Sample {
        double wallMs = 0;
        double headerMs = 0;
        Tally tally;
        QList<double> markMs; // streaming only, see kStreamMarkers
    };

    // Responses streaming milestones: the first event, the code's result, the last event.
    static inline const QList<QByteArray> kStreamMarkers{
        "event: response.created\n", "event: response.code_interpreter_call.completed\n",
        "event: response.completed\n"};

    // One request of `rounds` tool rounds (or a pass-through request when !withTool), checked.
    // A streaming request (Responses only) is checked on its response.completed event.
    Sample request(Api api, int rounds, bool withTool, bool stream = false, bool session = false) {
        enqueueScript(m_upstream, api, withTool ? rounds : 0);
        m_tally = {};
        const Client::Reply reply =
            m_client->post(pathOf(api), clientRequest(api, withTool, stream, session),
                           stream ? kStreamMarkers : QList<QByteArray>{});
        const RawHttpClient::Response &r = reply.response;
        if (r.status != 200)
            fail(QStringLiteral("status %1: %2").arg(r.status).arg(QString::fromUtf8(r.body)));
        check(api, rounds, withTool, stream ? completedEventResponse(r.body) : r.json());
        bool ok = false;
        Sample sample;
        sample.wallMs = reply.wallMs;
        sample.headerMs = r.header("x-loopscope-overhead-ms").toDouble(&ok);
        if (!ok)
            fail(QStringLiteral("no x-loopscope-overhead-ms header"));
        sample.tally = m_tally;
        sample.markMs = reply.markMs;
        if (stream && sample.markMs.contains(-1.0))
            fail(QStringLiteral("a streaming milestone never arrived"));
        return sample;
    }

    // At most `sandboxes` left (0 unless a session keeps one) and the warm pool full again
    // (the delete and the refill run after the response was sent).
    void settle(int sandboxes = 0) {
        if (!waitFor([this, sandboxes] {
                return m_registry->size() <= sandboxes &&
                       (!m_local || m_local->readyPoolCount() >= m_poolSize);
            }))
            fail(QStringLiteral("sandboxes did not settle within 60 s"));
    }

    // Deletes the session sandboxes (as DELETE /v1/containers/{id} would), then settles.
    void dropSessions() {
        QFuture<void> done = m_registry->removeAll(SandboxRemovalReason::Deleted);
        if (!waitFor([&] { return done.isFinished(); }))
            fail(QStringLiteral("session sandboxes were not deleted within 60 s"));
        settle();
    }

private:
    static QJsonObject completedEventResponse(const QByteArray &sse) {
        const QByteArray marker = "event: response.completed\ndata: ";
        const qsizetype at = sse.lastIndexOf(marker);
        if (at < 0)
            fail(QStringLiteral("stream without response.completed"));
        const qsizetype from = at + marker.size();
        const QByteArray data = sse.mid(from, sse.indexOf('\n', from) - from);
        return QJsonDocument::fromJson(data).object().value(QStringLiteral("response")).toObject();
    }

    void check(Api api, int rounds, bool withTool, const QJsonObject &body) const {
        const auto bad = [&](const QString &why) {
            fail(QStringLiteral("%1 rounds=%2: %3: %4")
                     .arg(QLatin1String(apiName(api)))
                     .arg(rounds)
                     .arg(why, QString::fromUtf8(QJsonDocument(body).toJson())));
        };
        if (withTool && m_tally.codeRuns != rounds)
            bad(QStringLiteral("expected %1 code runs, saw %2").arg(rounds).arg(m_tally.codeRuns));
        if (api == Api::Responses) {
            if (body.value(QStringLiteral("status")).toString() != QLatin1String("completed"))
                bad(QStringLiteral("not completed"));
            const QJsonArray output = body.value(QStringLiteral("output")).toArray();
            const int expected = withTool ? rounds : 0;
            if (output.size() != expected + 1)
                bad(QStringLiteral("unexpected output length"));
            for (int i = 0; i < expected; ++i) {
                const QJsonObject call = output.at(i).toObject();
                if (call.value(QStringLiteral("type")).toString() !=
                        QLatin1String("code_interpreter_call") ||
                    call.value(QStringLiteral("outputs"))
                            .toArray()
                            .at(0)
                            .toObject()
                            .value(QStringLiteral("logs"))
                            .toString() !=
                        (m_recording ? QStringLiteral("1\n") : QStringLiteral("%1\n").arg(i + 1)))
                    bad(QStringLiteral("code_interpreter_call %1 wrong").arg(i));
            }
        } else {
            const QJsonObject choice =
                body.value(QStringLiteral("choices")).toArray().at(0).toObject();
            if (choice.value(QStringLiteral("finish_reason")).toString() != QLatin1String("stop") ||
                choice.value(QStringLiteral("message"))
                        .toObject()
                        .value(QStringLiteral("content"))
                        .toString() != QLatin1String("done"))
                bad(QStringLiteral("not the final answer"));
        }
    }

    // Destroyed in reverse: the client, the hand-wired pieces, the stack, then the server.
    ScriptedUpstream m_upstream;
    EventBus m_bus;
    std::unique_ptr<ProxyServer> m_server;
    std::unique_ptr<InterceptionStack> m_stack;
    QObject m_owner;
    std::unique_ptr<Client> m_client;
    SandboxRegistry *m_registry = nullptr;
    RecordingSandboxBackend *m_recording = nullptr;
    LocalPythonBackend *m_local = nullptr;
    Tally m_tally;
    int m_poolSize = 0;
};

struct Row {
    QString name;
    QList<double> samples;
};

double quantile(QList<double> samples, double q) {
    std::sort(samples.begin(), samples.end());
    const qsizetype i =
        std::min<qsizetype>(samples.size() - 1, static_cast<qsizetype>(q * samples.size()));
    return samples.at(i);
}

void printHeader(const char *title) {
    std::printf("\n%s\n", title);
    std::printf("| %-62s | %5s | %8s | %8s | %8s | %8s |\n", "measure (ms)", "runs", "median",
                "p99", "min", "max");
    std::printf("|%s|%s|%s|%s|%s|%s|\n",
                "----------------------------------------------------------------", "-------",
                "----------", "----------", "----------", "----------");
}

void print(const Row &row) {
    if (row.samples.isEmpty())
        fail(QStringLiteral("no samples for ") + row.name);
    QList<double> s = row.samples;
    std::sort(s.begin(), s.end());
    std::printf("| %-62s | %5lld | %8.3f | %8.3f | %8.3f | %8.3f |\n", qPrintable(row.name),
                static_cast<long long>(s.size()), quantile(s, 0.5), quantile(s, 0.99), s.first(),
                s.last());
    std::fflush(stdout);
}

using Extract = std::function<double(const Rig::Sample &)>;

// Runs `runs` measured requests (after a few unmeasured ones) and returns one sample list per
// extractor. `settle` waits (untimed) for sandbox deletion and the pool refill between requests.
// With `session` every request reuses one sticky sandbox (settling then waits for it to stay).
QList<QList<double>> measure(Rig &rig, Api api, int rounds, bool withTool, int runs, bool settle,
                             const QList<Extract> &extract, bool stream = false,
                             bool session = false) {
    constexpr int kWarmup = 20;
    QList<QList<double>> out(extract.size());
    for (int i = 0; i < kWarmup + runs; ++i) {
        if (settle)
            rig.settle(session ? 1 : 0);
        const Rig::Sample sample = rig.request(api, rounds, withTool, stream, session);
        if (i < kWarmup)
            continue;
        for (qsizetype e = 0; e < extract.size(); ++e)
            out[e] << extract[e](sample);
    }
    return out;
}

QString loadAverage() {
    return firstLine(QStringLiteral("/proc/loadavg")).section(u' ', 0, 2);
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Agentic-loop latency (issue 5)."));
    parser.addHelpOption();
    QCommandLineOption runsOption(QStringList{QStringLiteral("n"), QStringLiteral("runs")},
                                  QStringLiteral("Measured requests per row (default 300)."),
                                  QStringLiteral("count"), QStringLiteral("300"));
    parser.addOption(runsOption);
    QCommandLineOption onlyOption(
        QStringLiteral("only"),
        QStringLiteral("Comma-separated sections to run: 1a,1b,2,2c,2d,2b,3 (default all)."),
        QStringLiteral("sections"), QStringLiteral("1a,1b,2,2c,2d,2b,3"));
    parser.addOption(onlyOption);
    parser.process(app);
    const int runs = std::max(1, parser.value(runsOption).toInt());
    const QStringList only = parser.value(onlyOption).split(u',', Qt::SkipEmptyParts);
    const auto wanted = [&](const char *section) { return only.contains(QLatin1String(section)); };

    std::printf("machine: %d cores, %s; load average at start: %s\n", QThread::idealThreadCount(),
                qPrintable(firstLine(QStringLiteral("/proc/cpuinfo"), "model name")),
                qPrintable(loadAverage()));
    std::printf("An iteration is one upstream model call and Loopscope's handling of its answer "
                "(gate, plan, follow-up or final shaping); k tool rounds = k + 1 iterations.\n");

    const Extract headerPerIteration = [](const Rig::Sample &s) {
        return s.headerMs / s.tally.upstreamCalls;
    };
    const Extract ownPerIteration = [](const Rig::Sample &s) {
        return (s.wallMs - s.tally.upstreamMs - s.tally.codeMs) / s.tally.upstreamCalls;
    };
    // Everything, the in-process fake model and client included: an upper bound.
    const Extract wallPerIteration = [](const Rig::Sample &s) {
        return s.wallMs / s.tally.upstreamCalls;
    };
    const Extract header = [](const Rig::Sample &s) { return s.headerMs; };
    const Extract wall = [](const Rig::Sample &s) { return s.wallMs; };
    const Extract upstream = [](const Rig::Sample &s) { return s.tally.upstreamMs; };
    const Extract code = [](const Rig::Sample &s) { return s.tally.codeMs; };
    const Extract rest = [](const Rig::Sample &s) {
        return s.wallMs - s.tally.upstreamMs - s.tally.codeMs - s.headerMs;
    };

    if (wanted("1a")) {
        printHeader("1a. Loopscope's own time per iteration, recording sandbox backend (zero code "
                    "time)");
        Rig rig(Rig::Sandbox::Recording, 0);
        for (Api api : {Api::Responses, Api::Chat}) {
            double wholeOwn[2] = {0, 0};
            for (int k : {1, 3}) {
                const auto s =
                    measure(rig, api, k, true, runs, false,
                            {headerPerIteration, ownPerIteration, wallPerIteration, header, wall});
                const QString tag =
                    QStringLiteral("%1, k=%2").arg(QLatin1String(apiName(api))).arg(k);
                print({tag + QStringLiteral(": overhead header / iteration"), s[0]});
                print({tag + QStringLiteral(": (wall - upstream) / iteration"), s[1]});
                print({tag + QStringLiteral(": wall / iteration (upper bound)"), s[2]});
                print({tag + QStringLiteral(": overhead header, whole request"), s[3]});
                print({tag + QStringLiteral(": wall, whole request"), s[4]});
                QList<double> own;
                for (qsizetype i = 0; i < s[1].size(); ++i)
                    own << s[1][i] * (k + 1);
                wholeOwn[k == 1 ? 0 : 1] = quantile(own, 0.5);
            }
            std::printf("| %-62s |       | %8.3f |          |          |          |\n",
                        qPrintable(QStringLiteral("%1: marginal own time per extra round (medians)")
                                       .arg(QLatin1String(apiName(api)))),
                        (wholeOwn[1] - wholeOwn[0]) / 2);
        }
    }
    if (wanted("1b") || wanted("2") || wanted("2c") || wanted("2d") || wanted("2b") ||
        wanted("3")) {
        if (wanted("1b"))
            printHeader("1b. Loopscope's own time per iteration, real local sandbox (pool refilled "
                        "between requests)");
        Rig rig(Rig::Sandbox::Local, LocalSandboxOptions{}.poolSize); // the app's default pool
        for (Api api : {Api::Responses, Api::Chat})
            for (int k : {1, 3}) {
                if (!wanted("1b"))
                    break;
                const auto s = measure(rig, api, k, true, runs, true, {headerPerIteration});
                print({QStringLiteral("%1, k=%2: overhead header / iteration")
                           .arg(QLatin1String(apiName(api)))
                           .arg(k),
                       s[0]});
            }

        if (wanted("2"))
            printHeader(
                "2. End to end, one-round loop: tool call -> real sandbox print(1) -> answer "
                "(warm pool)");
        for (Api api : {Api::Responses, Api::Chat}) {
            if (!wanted("2"))
                break;
            const auto s =
                measure(rig, api, 1, true, runs, true, {wall, upstream, code, header, rest});
            const QString tag = QLatin1String(apiName(api));
            print({tag + QStringLiteral(": wall time at the client"), s[0]});
            print({tag + QStringLiteral(":   of which upstream (2 calls)"), s[1]});
            print({tag + QStringLiteral(":   of which the code run (reported durationMs)"), s[2]});
            print({tag + QStringLiteral(":   overhead header"), s[3]});
            print(
                {tag + QStringLiteral(":   rest (sandbox hand-off, pool refill, wakeups)"), s[4]});
        }
        if (wanted("2c")) {
            printHeader("2c. The same, streaming (/v1/responses, stream: true): when the client "
                        "sees each milestone");
            const auto mark = [](qsizetype i) {
                return Extract([i](const Rig::Sample &s) { return s.markMs.at(i); });
            };
            const auto s = measure(rig, Api::Responses, 1, true, runs, true,
                                   {mark(0), mark(1), mark(2)}, true);
            print({QStringLiteral("responses stream: response.created"), s[0]});
            print({QStringLiteral("responses stream: code_interpreter_call.completed"), s[1]});
            print({QStringLiteral("responses stream: response.completed (end)"), s[2]});
        }
        if (wanted("2d")) {
            printHeader("2d. The same in a session (metadata.session_id): the sandbox is reused, "
                        "no hand-off, refill or delete");
            for (Api api : {Api::Responses, Api::Chat}) {
                const auto s = measure(rig, api, 1, true, runs, true,
                                       {wall, upstream, code, header, rest}, false, true);
                const QString tag = QLatin1String(apiName(api));
                print({tag + QStringLiteral(": wall time at the client"), s[0]});
                print({tag + QStringLiteral(":   of which upstream (2 calls)"), s[1]});
                print({tag + QStringLiteral(":   of which the code run (reported durationMs)"),
                       s[2]});
                print({tag + QStringLiteral(":   overhead header"), s[3]});
                print({tag + QStringLiteral(":   rest (wakeups)"), s[4]});
            }
            rig.dropSessions();
        }
        if (wanted("2b"))
            printHeader(
                "2b. End to end, one-round loop, back to back (no wait for the pool refill)");
        for (Api api : {Api::Responses, Api::Chat}) {
            if (!wanted("2b"))
                break;
            rig.settle();
            const auto s = measure(rig, api, 1, true, runs, false, {wall});
            print(
                {QLatin1String(apiName(api)) + QStringLiteral(": wall time at the client"), s[0]});
        }

        if (wanted("3"))
            printHeader("3. Pass-through, same request without the tool");
        rig.settle();
        for (Api api : {Api::Responses, Api::Chat}) {
            if (!wanted("3"))
                break;
            const auto s = measure(rig, api, 0, false, runs, false, {wall, header});
            const QString tag = QLatin1String(apiName(api));
            print({tag + QStringLiteral(": wall time at the client"), s[0]});
            print({tag + QStringLiteral(": overhead header"), s[1]});
        }
    }
    std::printf("\nload average at end: %s\n", qPrintable(loadAverage()));
    return 0;
}
