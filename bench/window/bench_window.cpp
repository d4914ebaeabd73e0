// bench_window: the window (MainWindow, offscreen) over the flow store.
//  1. A history of N stored flows (default 100,000, typical intercepted flows): time from
//     setFlowStore to the first rows in the Requests view and to their first paint; full-text
//     search (rare and common term) until the answer is in the view; RSS per summary row
//     loaded by scrolling.
//  2. With the window open: pass-through load through a proxy on its own thread (instant
//     upstream, concurrency C) for S seconds while a 5 ms heartbeat QTimer on the GUI thread
//     records the longest stall; then every flow is counted in the store and the window.
// Usage: bench_window [history flows (100000)] [load seconds (60)] [concurrency (4)]
//                     [requests/s (2000; 0 = as fast as the proxy answers)]
#include "common/benchsupport.h"
#include "common/heaptrimmer.h"
#include "common/instantchatupstream.h"
#include "common/passthroughload.h"
#include "inspect/eventbus.h"
#include "models/flowlistmodel.h"
#include "models/runsmodel.h"
#include "proxy/proxyconfig.h"
#include "proxy/proxyserver.h"
#include "record/flowstore.h"
#include "widgets/mainwindow.h"
#include "widgets/requestspanel.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QLineEdit>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextStream>
#include <QThread>
#include <QTimer>

#include <memory>

#include <unistd.h>

using namespace loopscope;
using namespace loopscope::bench;

namespace {

// A typical intercepted flow: request with code_interpreter, a code run, the answer.
QJsonObject typicalFlow(int i, qint64 startedAt) {
    const QString id = QStringLiteral("req_hist%1").arg(i, 10, 10, QLatin1Char('0'));
    const QJsonObject request{
        {QStringLiteral("model"), QStringLiteral("gpt-5")},
        {QStringLiteral("input"),
         QStringLiteral("Compute the mean of the numbers in list %1 and explain briefly.").arg(i)},
        {QStringLiteral("tools"),
         QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("code_interpreter")}}}}};
    const QJsonObject response{
        {QStringLiteral("id"), QStringLiteral("resp_%1").arg(i)},
        {QStringLiteral("object"), QStringLiteral("response")},
        {QStringLiteral("status"), QStringLiteral("completed")},
        {QStringLiteral("output_text"), QStringLiteral("The mean is %1.").arg(i % 977)},
        {QStringLiteral("usage"), QJsonObject{{QStringLiteral("input_tokens"), 120},
                                              {QStringLiteral("output_tokens"), 40},
                                              {QStringLiteral("total_tokens"), 160}}}};
    const QJsonArray hops{
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_request")},
                    {QStringLiteral("at"), startedAt},
                    {QStringLiteral("body"), request}},
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("code_run")},
                    {QStringLiteral("at"), startedAt + 400},
                    {QStringLiteral("code"),
                     QStringLiteral("xs = list(range(%1))\nprint(sum(xs)/len(xs))").arg(i % 977)},
                    {QStringLiteral("stdout"), QStringLiteral("%1.0\n").arg(i % 977)}},
        QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_response")},
                    {QStringLiteral("at"), startedAt + 901},
                    {QStringLiteral("status"), 200},
                    {QStringLiteral("body"), response}}};
    return {{QStringLiteral("id"), id},
            {QStringLiteral("started_at"), double(startedAt)},
            {QStringLiteral("method"), QStringLiteral("POST")},
            {QStringLiteral("path"), QStringLiteral("/v1/responses")},
            {QStringLiteral("api"), QStringLiteral("responses")},
            {QStringLiteral("model"), QStringLiteral("gpt-5")},
            {QStringLiteral("status"), 200},
            {QStringLiteral("state"), QStringLiteral("completed")},
            {QStringLiteral("iterations"), 2},
            {QStringLiteral("code_runs"), 1},
            {QStringLiteral("duration_ms"), 901.0},
            {QStringLiteral("usage"), response.value(QStringLiteral("usage"))},
            {QStringLiteral("hops"), hops}};
}

// Runs the GUI thread's event loop until done(). It sleeps between events as the app's loop
// does (a busy processEvents loop here took half a core from the proxy and the store); a 2 ms
// timer wakes it to look at conditions other threads change.
bool waitFor(const std::function<bool()> &done, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    QTimer wake;
    wake.start(2);
    while (!done()) {
        if (clock.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
    }
    return true;
}

// The load generator on its own thread (runPhase spins its own event loop there).
struct LoadThread : QThread {
    quint16 port;
    QByteArray request;
    int concurrency;
    int seconds;
    int rate; // requests/s held (open loop), 0: as fast as the proxy answers
    PhaseResult result;
    qint64 maxBacklog = 0;
    LoadThread(quint16 p, QByteArray r, int c, int s, int perSecond)
        : port(p)
        , request(std::move(r))
        , concurrency(c)
        , seconds(s)
        , rate(perSecond) {}
    void run() override {
        if (rate > 0) {
            const PacedResult paced = runPacedPhase(port, {{request, false}}, concurrency, rate,
                                                    seconds, [](int, qint64, qint64) {});
            result = paced.phase;
            maxBacklog = paced.maxBacklog;
            return;
        }
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < qint64(seconds) * 1000) {
            PhaseResult r = runPhase(port, request, false, concurrency, 2000);
            result.samples.insert(result.samples.end(), r.samples.begin(), r.samples.end());
        }
        result.seconds = double(clock.elapsed()) / 1000.0;
    }
};

// BENCH_TRACE_STALLS=1: every event delivery on the GUI thread that takes longer than 20 ms is
// printed with its receiver and event type (nested deliveries print first), to find what a
// stall is made of without a profiler.
struct TracingApplication : QApplication {
    using QApplication::QApplication;
    bool trace = !qEnvironmentVariableIsEmpty("BENCH_TRACE_STALLS");
    QElapsedTimer sinceStart;
    bool notify(QObject *receiver, QEvent *event) override {
        if (!trace || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        QElapsedTimer clock;
        clock.start();
        const int type = event->type();
        const bool handled = QApplication::notify(receiver, event);
        if (const qint64 ms = clock.elapsed(); ms > 20)
            fprintf(stderr, "[%7.3f s] %4lld ms: %s (%s) in %s, event %d\n",
                    double(sinceStart.elapsed()) / 1000.0, ms, receiver->metaObject()->className(),
                    qPrintable(receiver->objectName()),
                    receiver->parent() ? receiver->parent()->metaObject()->className() : "-", type);
        return handled;
    }
};

} // namespace

int main(int argc, char *argv[]) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TracingApplication app(argc, argv);
    app.sinceStart.start();
    // As in the app (app/main.cpp): free heap pages go back to the system after a burst.
    const HeapTrimmer heapTrimmer;
    QCoreApplication::setOrganizationName(QStringLiteral("LoopscopeBench"));
    QCoreApplication::setApplicationName(QStringLiteral("bench_window"));
    const int historyFlows = argc > 1 ? std::max(1000, atoi(argv[1])) : 100000;
    const int loadSeconds = argc > 2 ? std::max(1, atoi(argv[2])) : 60;
    const int concurrency = argc > 3 ? std::max(1, atoi(argv[3])) : 4;
    const int rate = argc > 4 ? std::max(0, atoi(argv[4])) : 2000;
    QTextStream out(stdout);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("history.sqlite3"));
    out << "bench_window: " << historyFlows << " stored flows, " << loadSeconds
        << " s load at concurrency " << concurrency << ", "
        << (rate > 0 ? QString::number(rate) + QStringLiteral(" requests/s held")
                     : QStringLiteral("as fast as answered"))
        << ", " << QThread::idealThreadCount() << " cores\n";

    // 1. The history.
    {
        FlowStoreOptions options;
        options.path = path;
        options.maxBytes = 0;
        FlowStore store(options);
        if (!store.open())
            qFatal("store");
        const qint64 t0 = QDateTime::currentMSecsSinceEpoch() - qint64(historyFlows) * 1000;
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < historyFlows; i += 5000) {
            QList<QJsonObject> chunk;
            for (int j = i; j < std::min(historyFlows, i + 5000); ++j)
                chunk.append(typicalFlow(j, t0 + qint64(j) * 1000));
            store.importFlows(chunk);
        }
        out << "filled " << historyFlows << " flows in " << clock.elapsed() << " ms\n";
    }
    EventBus bus;
    FlowStoreOptions options;
    options.path = path;
    options.maxBytes = 0;
    QElapsedTimer openClock;
    openClock.start();
    FlowStore store(options);
    if (!store.open())
        qFatal("store");
    store.attach(&bus);
    const qint64 openMs = openClock.elapsed();
    const qint64 rssBefore = rssKb();
    MainWindow window(&bus, nullptr, nullptr);
    window.resize(1280, 800);
    window.show();
    QCoreApplication::processEvents();
    FlowListModel *model = window.flowListModel();
    QTableView *view = window.requestsPanel()->view();

    QElapsedTimer clock;
    clock.start();
    window.setFlowStore(&store);
    waitFor([&] { return model->rowCount() > 0; }, 60'000);
    const double firstRowsMs = double(clock.nsecsElapsed()) / 1e6;
    view->viewport()->repaint();
    const double firstPaintMs = double(clock.nsecsElapsed()) / 1e6;
    out << "\n| 100k history in the window | value |\n|---|---|\n";
    out << "| open the store | " << openMs << " ms |\n";
    out << "| setFlowStore → first rows in the view | " << QString::number(firstRowsMs, 'f', 1)
        << " ms |\n";
    out << "| … → first paint of those rows | " << QString::number(firstPaintMs, 'f', 1)
        << " ms |\n";

    const auto search = [&](const QString &text) {
        QElapsedTimer c;
        c.start();
        window.requestsPanel()->searchField()->setText(text);
        window.requestsPanel()->applyFilter();
        waitFor([&] { return !model->isLoading(); }, 60'000);
        view->viewport()->repaint();
        return std::make_pair(double(c.nsecsElapsed()) / 1e6, model->rowCount());
    };
    const auto rare = search(QStringLiteral("list 4242"));
    out << "| search, rare term (\"list 4242\"), to rows painted | "
        << QString::number(rare.first, 'f', 1) << " ms (" << rare.second << " rows) |\n";
    const auto common = search(QStringLiteral("mean"));
    out << "| search, term in every flow (\"mean\"), first page painted | "
        << QString::number(common.first, 'f', 1) << " ms (" << common.second << " rows) |\n";
    const auto none = search(QStringLiteral("zzzznotthere"));
    out << "| search, no match | " << QString::number(none.first, 'f', 1) << " ms |\n";
    search(QString());

    // Rows loaded by scrolling: RSS per summary in the model.
    const qint64 rssOpen = rssKb();
    clock.restart();
    while (model->rowCount() < std::min(historyFlows, 20000) && model->hasMore()) {
        view->scrollToBottom();
        waitFor([&] { return !model->isLoading(); }, 60'000);
        QCoreApplication::processEvents();
    }
    const double scrollMs = double(clock.nsecsElapsed()) / 1e6;
    const qint64 rssScrolled = rssKb();
    out << "| scroll to row " << model->rowCount() << " (pages of 200) | "
        << QString::number(scrollMs, 'f', 0) << " ms |\n";
    out << "| RSS: before window / first page / " << model->rowCount() << " rows | "
        << rssBefore / 1024 << " / " << rssOpen / 1024 << " / " << rssScrolled / 1024 << " MiB |\n";
    out << "| RSS per row in view | "
        << QString::number(double(rssScrolled - rssOpen) * 1024.0 /
                               std::max(1, model->rowCount() - 200),
                           'f', 0)
        << " bytes |\n";
    out.flush();

    // 2. Live load with the window open.
    // Diagnostics: BENCH_NO_FOLLOW=1 leaves Follow off, BENCH_NO_RUNS=1 stops the Runs view's
    // live reloads (to see what the stalls come from).
    window.requestsPanel()->setAutoFollow(qEnvironmentVariableIsEmpty("BENCH_NO_FOLLOW"));
    if (!qEnvironmentVariableIsEmpty("BENCH_NO_RUNS"))
        QObject::disconnect(&store, nullptr, window.runsModel(), nullptr);
    const InstantChatUpstream upstream;
    QThread proxyThread;
    QObject anchor;
    ProxyServer *proxy = nullptr;
    proxyThread.start();
    anchor.moveToThread(&proxyThread);
    QMetaObject::invokeMethod(
        &anchor,
        [&] {
            ProxyConfig config;
            config.port = 0;
            config.defaultRoute = ProxyConfig::routeForUpstream(
                QStringLiteral("http://127.0.0.1:%1/v1").arg(upstream.port()), nullptr);
            proxy = new ProxyServer(config);
            proxy->setEventBus(&bus);
            proxy->listen();
        },
        Qt::BlockingQueuedConnection);
    const quint16 port = proxy->port();
    store.flush();
    const int storedBefore = store.query()->count();
    // BENCH_KEEP_ALL_ROWS=1: every new flow stays in view ("Requests kept" raised past the run),
    // so the RSS per flow in view is measured over all of them. Otherwise the window's default
    // (Settings → Requests kept) bounds the rows, as a user runs it.
    const bool keepAll = !qEnvironmentVariableIsEmpty("BENCH_KEEP_ALL_ROWS");
    if (keepAll)
        model->setLiveRowLimit(1'000'000);
    const int rowsBefore = model->rowCount();

    QElapsedTimer beat;
    qint64 longestStallMs = 0;
    qint64 stallsOver50 = 0;
    QTimer heartbeat;
    heartbeat.setInterval(5);
    QObject::connect(&heartbeat, &QTimer::timeout, [&] {
        const qint64 gap = beat.restart() - 5;
        if (app.trace && gap > 50)
            fprintf(stderr, "[%7.3f s] heartbeat %lld ms late\n",
                    double(app.sinceStart.elapsed()) / 1000.0, gap);
        longestStallMs = std::max(longestStallMs, gap);
        stallsOver50 += gap > 50;
    });
    const QByteArray body =
        R"({"model":"gpt-4o","messages":[{"role":"user","content":"what is 17*23?"}]})";
    LoadThread load(port, httpRequest(port, body), concurrency, loadSeconds, rate);
    const qint64 rssLoadStart = rssKb();
    QTimer rssSampler; // BENCH_TRACE_STALLS: RSS and rows every 5 s, to see where memory goes
    rssSampler.setInterval(5000);
    QObject::connect(&rssSampler, &QTimer::timeout, [&] {
        fprintf(stderr, "[%7.3f s] RSS %lld MiB (heap free %lld MiB), %d rows, %d stored\n",
                double(app.sinceStart.elapsed()) / 1000.0, rssKb() / 1024,
                HeapTrimmer::freeHeapBytes() / (1024 * 1024), model->rowCount(),
                int(store.counters().flowsWritten));
    });
    if (app.trace)
        rssSampler.start();
    beat.start();
    heartbeat.start();
    load.start();
    waitFor([&] { return load.isFinished(); }, (loadSeconds + 120) * 1000);
    heartbeat.stop();
    const int sent = int(load.result.samples.size());
    store.flush();
    waitFor(
        [&] {
            return model->idAt(0).isEmpty() || !keepAll || model->rowCount() >= rowsBefore + sent;
        },
        30'000);
    waitFor([&] { return store.query()->count() - storedBefore >= sent; }, 30'000);
    const int stored = store.query()->count() - storedBefore;
    const int rowsAdded = model->rowCount() - rowsBefore;
    const qint64 rssLoadEnd = rssKb();
    out << "\n| " << loadSeconds << " s pass-through with the window open | value |\n|---|---|\n";
    out << "| requests answered | " << sent << " (" << QString::number(load.result.rps(), 'f', 0)
        << " req/s, p50 " << QString::number(load.result.percentile(0.5), 'f', 2) << " ms, p99 "
        << QString::number(load.result.percentile(0.99), 'f', 2) << " ms"
        << (rate > 0 ? QStringLiteral(", at most %1 requests due and waiting").arg(load.maxBacklog)
                     : QString())
        << ") |\n";
    out << "| longest GUI-thread stall (5 ms heartbeat) | " << longestStallMs << " ms ("
        << stallsOver50 << " beats late by > 50 ms) |\n";
    out << "| flows stored / rows added to the view | " << stored << " / " << rowsAdded << " of "
        << sent << " |\n";
    out << (keepAll ? "| RSS growth per new row in view (every flow kept) | "
                    : "| RSS growth per flow passed (rows bounded by Requests kept) | ")
        << QString::number(double(rssLoadEnd - rssLoadStart) * 1024.0 /
                               std::max(1, keepAll ? rowsAdded : sent),
                           'f', 0)
        << " bytes |\n";
    out.flush();
    if (!qEnvironmentVariableIsEmpty("BENCH_QUICK_EXIT"))
        ::_exit(0); // for heaptrack: what is still allocated now shows as "leaked"
    QMetaObject::invokeMethod(
        &anchor, [&] { delete proxy; }, Qt::BlockingQueuedConnection);
    proxyThread.quit();
    proxyThread.wait();
    return 0;
}
