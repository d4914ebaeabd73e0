// bench_record: what recording every flow costs and how the store scales.
//  1. Added pass-through latency, side by side in one run: the same proxy with no recording,
//     recording to the in-memory store (--no-history) and recording to a SQLite file, each on
//     its own thread with its own store (JSON full response and SSE time to first event,
//     concurrency 1).
//  2. 100,000 stored flows: list (limit 50) and q= search latency, start-up (open) time, and
//     bytes per flow on disk.
//  3. --sustained: one proxy recording to a SQLite file held at a request rate (default 2,000/s,
//     JSON and SSE pass-through alternating) for a while (default 60 s): every flow in the
//     store, no event lost (published vs received by the recorder, unmatched, failed writes),
//     RSS sampled every second and its growth after warm-up (default 10 s).
// Usage: bench_record [requests-per-mode (default 3000)] [stored flows (default 100000)]
//                     [rounds (default 10)]
//        bench_record --sustained [rate (2000)] [seconds (60)] [warm-up seconds (10)]
#include "common/instantchatupstream.h"
#include "common/passthroughload.h"
#include "inspect/eventbus.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "record/flowstore.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTextStream>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <utility>
#include <vector>

using namespace loopscope;
using namespace loopscope::bench;

namespace {

// One proxy (and its store) on its own thread, as in the app.
struct ProxyUnderTest {
    QString name;
    QThread thread;
    QObject anchor;
    ProxyServer *proxy = nullptr;
    std::unique_ptr<EventBus> bus;
    std::unique_ptr<FlowStore> store;
    quint16 port = 0;

    ProxyUnderTest(const QString &label, quint16 upstreamPort, int storeMode, const QString &path)
        : name(label) {
        if (storeMode > 0) {
            bus = std::make_unique<EventBus>();
            FlowStoreOptions options;
            options.inMemory = storeMode == 1;
            options.path = path;
            store = std::make_unique<FlowStore>(options);
            if (!store->open())
                qFatal("store");
            store->attach(bus.get());
        }
        thread.start();
        anchor.moveToThread(&thread);
        QMetaObject::invokeMethod(
            &anchor,
            [&] {
                ProxyConfig config;
                config.port = 0;
                config.defaultRoute = ProxyConfig::routeForUpstream(
                    QStringLiteral("http://127.0.0.1:%1/v1").arg(upstreamPort), nullptr);
                proxy = new ProxyServer(config);
                proxy->setEventBus(bus.get());
                proxy->listen();
            },
            Qt::BlockingQueuedConnection);
        port = proxy->port();
    }
    ~ProxyUnderTest() {
        QMetaObject::invokeMethod(
            &anchor, [&] { delete proxy; }, Qt::BlockingQueuedConnection);
        thread.quit();
        thread.wait();
    }
};

QJsonObject typicalFlow(int i, qint64 startedAt) {
    const QString id = QStringLiteral("req_bench%1").arg(i, 10, 10, QLatin1Char('0'));
    const QJsonObject request{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"),
         QStringLiteral("Compute the mean of the numbers in the attached list, number %1, and "
                        "explain the method briefly.")
             .arg(i)},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")}}}}};
    const QJsonObject response{
        {QStringLiteral("id"), QStringLiteral("resp_%1").arg(i)},
        {QStringLiteral("object"), QStringLiteral("response")},
        {QStringLiteral("output"),
         QJsonArray{QJsonObject{
             {QStringLiteral("type"), QStringLiteral("message")},
             {QStringLiteral("role"), QStringLiteral("assistant")},
             {QStringLiteral("content"),
              QJsonArray{QJsonObject{
                  {QStringLiteral("type"), QStringLiteral("output_text")},
                  {QStringLiteral("text"),
                   QStringLiteral("The mean is %1. I summed the values and divided by their "
                                  "count using Python.")
                       .arg(i % 977)}}}}}}},
        {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 120},
                                              {QStringLiteral("output_tokens"), 40},
                                              {QStringLiteral("total_tokens"), 160}}}};
    const QJsonObject headers{{QStringLiteral("authorization"), QStringLiteral("Bearer …abcd")},
                              {QStringLiteral("content-type"), QStringLiteral("application/json")},
                              {QStringLiteral("user-agent"), QStringLiteral("OpenAI/Python 1.99")}};
    const QJsonArray hops{
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_request")},
                    {QStringLiteral("at"), startedAt},
                    {QStringLiteral("headers"), headers},
                    {QStringLiteral("body"), request}},
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                    {QStringLiteral("at"), startedAt + 1},
                    {QStringLiteral("iteration"), 0},
                    {QStringLiteral("body"), request}},
        QJsonObject{
            {QStringLiteral("kind"), QStringLiteral("code_run")},
            {QStringLiteral("at"), startedAt + 400},
            {QStringLiteral("code"),
             QStringLiteral("xs = list(range(%1))\nprint(sum(xs)/len(xs))").arg(i % 977 * 2 + 1)},
            {QStringLiteral("stdout"), QStringLiteral("%1.0\n").arg(i % 977)},
            {QStringLiteral("stderr"), QString()},
            {QStringLiteral("output"), QStringLiteral("%1.0\n").arg(i % 977)}},
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("upstream_response")},
                    {QStringLiteral("at"), startedAt + 900},
                    {QStringLiteral("iteration"), 0},
                    {QStringLiteral("status"), 200},
                    {QStringLiteral("body"), response}},
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_response")},
                    {QStringLiteral("at"), startedAt + 901},
                    {QStringLiteral("status"), 200},
                    {QStringLiteral("body"), response}}};
    return {{QStringLiteral("id"), id},
            {QStringLiteral("started_at"), startedAt},
            {QStringLiteral("method"), QStringLiteral("POST")},
            {QStringLiteral("path"), QStringLiteral("/v1/responses")},
            {QStringLiteral("model"), QStringLiteral("gpt-5")},
            {QStringLiteral("status"), 200},
            {QStringLiteral("state"), QStringLiteral("completed")},
            {QStringLiteral("intercepted"), true},
            {QStringLiteral("iterations"), 1},
            {QStringLiteral("code_runs"), 1},
            {QStringLiteral("duration_ms"), 901.0},
            {QStringLiteral("usage"), response.value(QStringLiteral("usage"))},
            {QStringLiteral("run_id"), QStringLiteral("run_bench%1").arg(i / 4)},
            {QStringLiteral("hops"), hops}};
}

// Every flow that reached the store, counted by paging through the list as a client would.
int countFlows(FlowStore *store) {
    store->flush();
    FlowFilter all;
    all.limit = 1000;
    int n = 0;
    for (;;) {
        const QJsonObject page = store->query()->list(all);
        const QJsonArray data = page.value(QStringLiteral("data")).toArray();
        n += int(data.size());
        if (!page.value(QStringLiteral("has_more")).toBool() || data.isEmpty())
            return n;
        all.before = data.last().toObject().value(QStringLiteral("id")).toString();
    }
}

// Resident set size of this process (proxy, store, upstream and load generator), in KiB.
qint64 rssKiB() {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    return -1;
}

double loadAverage() {
    QFile file(QStringLiteral("/proc/loadavg"));
    return file.open(QIODevice::ReadOnly) ? file.readAll().split(' ').value(0).toDouble() : -1;
}

int sustained(int rate, int seconds, int warmup) {
    QTemporaryDir dir;
    QTextStream out(stdout);
    const InstantChatUpstream upstream; // on its own thread
    const QString path = dir.filePath(QStringLiteral("sustained.sqlite3"));
    ProxyUnderTest proxy(QStringLiteral("history file (SQLite)"), upstream.port(), 2, path);
    std::atomic<quint64> published{0};
    QObject::connect(
        proxy.bus.get(), &EventBus::eventPublished, proxy.bus.get(),
        [&published] { published.fetch_add(1, std::memory_order_relaxed); }, Qt::DirectConnection);
    const QByteArray jsonBody =
        R"({"model":"gpt-4o","messages":[{"role":"user","content":"what is 17*23?"}]})";
    const QByteArray streamBody =
        R"({"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"what is 17*23?"}]})";
    const QList<PacedRequest> requests{{httpRequest(proxy.port, jsonBody), false},
                                       {httpRequest(proxy.port, streamBody), true}};
    out << "bench_record --sustained: " << rate << " requests/s for " << seconds
        << " s (JSON and SSE pass-through alternating, 16 keep-alive connections), history "
           "file, "
        << QThread::idealThreadCount() << " cores, load average " << loadAverage()
        << " at start\n\n";
    out << "| second | requests done | req/s this second | backlog | events published | "
           "events received | flows written | RSS MiB | load 1 min |\n"
           "|---|---|---|---|---|---|---|---|---|\n";
    out.flush();
    std::vector<qint64> rss; // KiB, one per second
    qint64 lastDone = 0;
    const PacedResult result = runPacedPhase(
        proxy.port, requests, 16, rate, seconds, [&](int second, qint64 done, qint64 backlog) {
            rss.push_back(rssKiB());
            const FlowStoreCounters c = proxy.store->counters();
            out << "| " << second << " | " << done << " | " << (done - lastDone) << " | " << backlog
                << " | " << published.load() << " | " << c.eventsReceived << " | " << c.flowsWritten
                << " | " << QString::number(double(rss.back()) / 1024.0, 'f', 1) << " | "
                << loadAverage() << " |\n";
            out.flush();
            lastDone = done;
        });
    const int stored = countFlows(proxy.store.get()); // flushes first
    const FlowStoreCounters c = proxy.store->counters();
    const qint64 rssEnd = rssKiB();
    out << "\nrequests sent " << result.issued << ", answered " << result.phase.samples.size()
        << " in " << QString::number(result.phase.seconds, 'f', 1) << " s ("
        << QString::number(result.phase.rps(), 'f', 0) << " req/s), latency p50 "
        << QString::number(result.phase.percentile(0.5), 'f', 3) << " ms, p99 "
        << QString::number(result.phase.percentile(0.99), 'f', 3) << " ms, p99.9 "
        << QString::number(result.phase.percentile(0.999), 'f', 3) << " ms, max backlog "
        << result.maxBacklog << "\n";
    // Retention (history.max_mb, 500 MB by default) deletes the oldest flows of a long run:
    // every flow is accounted for when stored + removed by retention = sent.
    const qint64 removedByRetention = qint64(proxy.store->counters().retentionRemoved);
    const bool accounted = stored + removedByRetention == result.issued;
    out << "flows in the store: " << stored << " of " << result.issued;
    if (removedByRetention > 0)
        out << ", plus " << removedByRetention << " removed by retention (oldest first)";
    out << (accounted ? " (every flow accounted for)" : " (MISSING FLOWS)") << "\n";
    out << "events published " << published.load() << ", received by the recorder "
        << c.eventsReceived << ", unmatched " << c.eventsUnmatched << ", rows written "
        << c.flowsWritten << ", rows failed " << c.flowsFailed
        << ((published.load() == c.eventsReceived && c.eventsUnmatched == 0 && c.flowsFailed == 0)
                ? " (no event lost)"
                : " (EVENTS LOST)")
        << "; at most " << c.writerQueuedPeak << " finished flows waited for the writer\n";
    if (int(rss.size()) > warmup) {
        const qint64 atWarm = rss[size_t(warmup - 1)];
        const qint64 peak = *std::max_element(rss.begin() + warmup, rss.end());
        // Least-squares slope over the samples after warm-up, MiB per minute.
        const size_t n = rss.size() - size_t(warmup);
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (size_t i = 0; i < n; ++i) {
            const double x = double(i), y = double(rss[size_t(warmup) + i]) / 1024.0;
            sx += x, sy += y, sxx += x * x, sxy += x * y;
        }
        const double slope = (double(n) * sxy - sx * sy) / (double(n) * sxx - sx * sx) * 60.0;
        out << "RSS: " << QString::number(double(rss.front()) / 1024.0, 'f', 1)
            << " MiB after 1 s, " << QString::number(double(atWarm) / 1024.0, 'f', 1)
            << " MiB after warm-up (" << warmup << " s), peak after warm-up "
            << QString::number(double(peak) / 1024.0, 'f', 1) << " MiB (+"
            << QString::number(100.0 * double(peak - atWarm) / double(atWarm), 'f', 1)
            << " %), last " << QString::number(double(rss.back()) / 1024.0, 'f', 1)
            << " MiB, after the store flushed " << QString::number(double(rssEnd) / 1024.0, 'f', 1)
            << " MiB; slope after warm-up " << QString::number(slope, 'f', 2) << " MiB/min\n";
    }
    out << "load average at the end " << loadAverage() << "\n";
    out.flush();
    return stored == result.issued && published.load() == c.eventsReceived &&
                   c.eventsUnmatched == 0 && c.flowsFailed == 0
               ? 0
               : 1;
}

// p99 of the samples of the given rounds, pooled, in ms.
double pooledP99(const std::vector<PhaseResult> &rounds, const std::vector<size_t> &pick,
                 std::vector<qint64> &scratch) {
    scratch.clear();
    for (size_t r : pick)
        scratch.insert(scratch.end(), rounds[r].samples.begin(), rounds[r].samples.end());
    if (scratch.empty())
        return 0;
    const auto nth =
        scratch.begin() +
        std::ptrdiff_t(std::min(scratch.size() - 1, size_t(0.99 * double(scratch.size()))));
    std::nth_element(scratch.begin(), nth, scratch.end());
    return double(*nth) / 1e6;
}

// How sure a p99 difference is: a paired bootstrap over rounds. Rounds, not single requests,
// are resampled because slow requests come in bursts (a checkpoint, a busy core), and the same
// rounds for both modes because a round of one ran minutes apart from the next round but
// seconds apart from the same round of the other. Returns the 2.5th and 97.5th percentiles of
// p99(a) - p99(b) over 2,000 resamples (fixed seed: the same samples give the same interval).
std::pair<double, double> p99DifferenceInterval(const std::vector<PhaseResult> &a,
                                                const std::vector<PhaseResult> &b) {
    std::mt19937 random(20261201);
    std::uniform_int_distribution<size_t> anyRound(0, a.size() - 1);
    std::vector<double> differences;
    std::vector<size_t> pick(a.size());
    std::vector<qint64> scratch;
    for (int i = 0; i < 2000; ++i) {
        for (size_t &r : pick)
            r = anyRound(random);
        differences.push_back(pooledP99(a, pick, scratch) - pooledP99(b, pick, scratch));
    }
    std::sort(differences.begin(), differences.end());
    return {differences[size_t(0.025 * double(differences.size()))],
            differences[size_t(0.975 * double(differences.size()))]};
}

template<typename Fn> double medianMs(int times, Fn fn) {
    std::vector<qint64> samples;
    for (int i = 0; i < times; ++i) {
        QElapsedTimer clock;
        clock.start();
        fn();
        samples.push_back(clock.nsecsElapsed());
    }
    std::sort(samples.begin(), samples.end());
    return double(samples[samples.size() / 2]) / 1e6;
}

} // namespace

int main(int argc, char *argv[]) {
    QCoreApplication app(argc, argv);
    if (argc > 1 && QByteArray(argv[1]) == "--sustained")
        return sustained(argc > 2 ? std::max(1, atoi(argv[2])) : 2000,
                         argc > 3 ? std::max(2, atoi(argv[3])) : 60,
                         argc > 4 ? std::max(1, atoi(argv[4])) : 10);
    const int requests = argc > 1 ? std::max(100, atoi(argv[1])) : 3000;
    const int stored = argc > 2 ? std::max(1000, atoi(argv[2])) : 100000;
    const int rounds = argc > 3 ? std::max(2, atoi(argv[3])) : 10;
    QTemporaryDir dir;
    QTextStream out(stdout);

    const InstantChatUpstream upstream; // on its own thread
    const quint16 upstreamPort = upstream.port();

    // The modes, in this order (the indexes name them below); the file store last, so its
    // exchange count is the one reported at the end.
    enum Mode : size_t { NoRecording, Memory, MemoryControl, File };
    std::vector<std::unique_ptr<ProxyUnderTest>> proxies;
    proxies.push_back(std::make_unique<ProxyUnderTest>(QStringLiteral("no recording"), upstreamPort,
                                                       0, QString()));
    proxies.push_back(std::make_unique<ProxyUnderTest>(QStringLiteral("--no-history (memory)"),
                                                       upstreamPort, 1, QString()));
    // A second, identical in-memory store: the difference between the two is what run-to-run
    // noise alone makes of "file minus memory" (an A/A control).
    proxies.push_back(std::make_unique<ProxyUnderTest>(
        QStringLiteral("--no-history, again (control)"), upstreamPort, 1, QString()));
    const QString livePath = dir.filePath(QStringLiteral("live.sqlite3"));
    proxies.push_back(std::make_unique<ProxyUnderTest>(QStringLiteral("history file (SQLite)"),
                                                       upstreamPort, 2, livePath));

    out << "bench_record: " << requests << " requests per mode in " << rounds
        << " interleaved rounds, concurrency 1, " << QThread::idealThreadCount() << " cores\n\n";
    out << "| mode | proxy | p50 ms | p99 ms | added p50 vs no recording | added p99 | req/s |\n";
    out << "|---|---|---|---|---|---|---|\n";
    const QByteArray jsonBody =
        R"({"model":"gpt-4o","messages":[{"role":"user","content":"what is 17*23?"}]})";
    const QByteArray streamBody =
        R"({"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"what is 17*23?"}]})";
    // Exchanges each proxy has been sent, so a phase can wait until the store of the one before
    // it has written everything: otherwise that store's last batch (encode, FTS, commit) lands
    // in the next phase and is charged to whichever mode runs after it. The same for the
    // file's checkpoint in the pause after its phase (FlowStoreOptions::idleCheckpointMs).
    std::vector<quint64> sentTo(proxies.size(), 0);
    const auto checkpointsOf = [&](size_t i) {
        return proxies[i]->store ? proxies[i]->store->counters().idleCheckpoints : 0;
    };
    const auto waitUntilQuiet = [&](size_t i, quint64 checkpointsBefore) {
        if (!proxies[i]->store)
            return;
        QElapsedTimer waited;
        waited.start();
        while (proxies[i]->store->counters().flowsWritten < sentTo[i] && waited.elapsed() < 5000)
            QThread::msleep(5);
        if (i == File)
            while (checkpointsOf(i) == checkpointsBefore && waited.elapsed() < 10000)
                QThread::msleep(5);
        QThread::msleep(20); // the commit that counted them is still returning
    };
    const int perRound = std::max(1, requests / rounds);
    for (bool streaming : {false, true}) {
        const QByteArray body = streaming ? streamBody : jsonBody;
        for (size_t i = 0; i < proxies.size(); ++i) {
            const quint64 checkpoints = checkpointsOf(i);
            runPhase(proxies[i]->port, httpRequest(proxies[i]->port, body), streaming, 1, 300);
            sentTo[i] += 300;
            waitUntilQuiet(i, checkpoints);
        }
        // Interleaved rounds so drift on a shared machine hits every mode alike, each round in
        // a rotated order so no mode always follows the same one.
        std::vector<PhaseResult> results(proxies.size());
        std::vector<std::vector<PhaseResult>> byRound(proxies.size());
        for (int round = 0; round < rounds; ++round) {
            for (size_t k = 0; k < proxies.size(); ++k) {
                const size_t i = (k + size_t(round)) % proxies.size();
                const quint64 checkpoints = checkpointsOf(i);
                PhaseResult r = runPhase(proxies[i]->port, httpRequest(proxies[i]->port, body),
                                         streaming, 1, perRound);
                sentTo[i] += quint64(perRound);
                waitUntilQuiet(i, checkpoints);
                results[i].samples.insert(results[i].samples.end(), r.samples.begin(),
                                          r.samples.end());
                results[i].seconds += r.seconds;
                byRound[i].push_back(std::move(r));
            }
        }
        for (size_t i = 0; i < proxies.size(); ++i) {
            const PhaseResult &r = results[i];
            out << "| " << (streaming ? "SSE, first event" : "JSON, full response") << " | "
                << proxies[i]->name << " | " << QString::number(r.percentile(0.5), 'f', 3) << " | "
                << QString::number(r.percentile(0.99), 'f', 3) << " | "
                << QString::number(r.percentile(0.5) - results[NoRecording].percentile(0.5), 'f', 3)
                << " | "
                << QString::number(r.percentile(0.99) - results[NoRecording].percentile(0.99), 'f',
                                   3)
                << " | " << QString::number(r.rps(), 'f', 0) << " |\n";
        }
        const auto difference = [&](size_t a, size_t b) {
            const auto [low, high] = p99DifferenceInterval(byRound[a], byRound[b]);
            return QStringLiteral("p50 %1 ms, p99 %2 ms (95 % interval %3 to %4)")
                .arg(results[a].percentile(0.5) - results[b].percentile(0.5), 0, 'f', 3)
                .arg(results[a].percentile(0.99) - results[b].percentile(0.99), 0, 'f', 3)
                .arg(low, 0, 'f', 3)
                .arg(high, 0, 'f', 3);
        };
        out << "| " << (streaming ? "SSE" : "JSON")
            << ": history file minus --no-history: " << difference(File, Memory)
            << "; control minus --no-history (noise): " << difference(MemoryControl, Memory)
            << " |\n";
        out.flush();
    }
    const int sent = int(sentTo[File]);
    int liveFlows = 0;
    for (auto &p : proxies) {
        if (!p->store)
            continue;
        QThread::msleep(500); // the last exchanges' events are still queued
        liveFlows = countFlows(p->store.get());
        out << "\n" << p->name << ": " << liveFlows << " flows stored of " << sent << " exchanges";
        if (const quint64 checkpoints = p->store->counters().idleCheckpoints)
            out << ", " << checkpoints << " checkpoints in the pauses between phases";
    }
    out << "\n";
    proxies.clear(); // closes the stores (checkpoint)
    const qint64 liveBytes = QFileInfo(livePath).size();
    out << "history file after the latency phases: " << liveFlows << " flows stored, " << liveBytes
        << " bytes, " << QString::number(double(liveBytes) / std::max(1, liveFlows), 'f', 0)
        << " bytes per pass-through flow (Chat JSON/SSE, headers and bodies)\n\n";
    out.flush();

    // 2. A big history.
    const QString bigPath = dir.filePath(QStringLiteral("big.sqlite3"));
    {
        FlowStoreOptions options;
        options.path = bigPath;
        options.maxBytes = 50LL * 1024 * 1024 * 1024;
        options.maxDays = 3650;
        FlowStore store(options);
        store.open();
        QElapsedTimer fill;
        fill.start();
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QList<QJsonObject> batch;
        for (int i = 0; i < stored; ++i) {
            batch.append(typicalFlow(i, now - qint64(stored - i) * 1000));
            if (batch.size() == 2000) {
                store.importFlows(batch);
                batch.clear();
            }
        }
        store.importFlows(batch);
        out << "filled " << stored << " flows in "
            << QString::number(fill.elapsed() / 1000.0, 'f', 1) << " s\n";
    }
    const qint64 bigBytes = QFileInfo(bigPath).size();
    QElapsedTimer openClock;
    openClock.start();
    FlowStoreOptions options;
    options.path = bigPath;
    options.maxBytes = 50LL * 1024 * 1024 * 1024;
    options.maxDays = 3650;
    FlowStore store(options);
    store.open();
    const double openMs = double(openClock.nsecsElapsed()) / 1e6;
    const double listMs = medianMs(50, [&] { store.query()->list({}); });
    FlowFilter page2;
    page2.before = QStringLiteral("req_bench%1").arg(stored / 2, 10, 10, QLatin1Char('0'));
    const double pageMs = medianMs(50, [&] { store.query()->list(page2); });
    FlowFilter rare;
    rare.q = QStringLiteral("range(1953)"); // in the code of ~1/977 of the flows
    const double rareMs = medianMs(20, [&] { store.query()->list(rare); });
    FlowFilter common;
    common.q = QStringLiteral("mean");
    const double commonMs = medianMs(20, [&] { store.query()->list(common); });
    const double flowMs = medianMs(50, [&] { store.query()->flow(page2.before); });
    const double runsMs = medianMs(20, [&] { store.query()->runs(50); });
    out << "| 100k history | value |\n|---|---|\n";
    out << "| flows stored | " << stored << " |\n";
    out << "| file size | " << QString::number(double(bigBytes) / 1048576.0, 'f', 1) << " MiB |\n";
    out << "| bytes per typical intercepted flow (5 hops, code run) | "
        << QString::number(double(bigBytes) / stored, 'f', 0) << " |\n";
    out << "| open (start-up) | " << QString::number(openMs, 'f', 1) << " ms |\n";
    out << "| GET /flows?limit=50, newest page, p50 | " << QString::number(listMs, 'f', 2)
        << " ms |\n";
    out << "| GET /flows?limit=50&before=<middle>, p50 | " << QString::number(pageMs, 'f', 2)
        << " ms |\n";
    out << "| q= rare term (~100 hits), p50 | " << QString::number(rareMs, 'f', 2) << " ms |\n";
    out << "| q= term in every flow, p50 | " << QString::number(commonMs, 'f', 2) << " ms |\n";
    out << "| GET /flows/{id}, p50 | " << QString::number(flowMs, 'f', 2) << " ms |\n";
    out << "| GET /runs?limit=50, p50 | " << QString::number(runsMs, 'f', 2) << " ms |\n";

    return 0;
}
