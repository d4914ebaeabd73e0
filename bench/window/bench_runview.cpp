// bench_runview: the run view (issue 36) over a long agent run stored in a real SQLite file.
// Two Claude-Code-like runs of T turns are recorded through the pass-through events (each
// request resends the whole history under a system prompt + tool list of about K KB, as the
// agent does), then, offscreen:
//  1. RunView::showRun until the conversation is painted (read + decode + render);
//  2. scrolling it end to end a page at a time while a 5 ms heartbeat QTimer on the GUI thread
//     records the longest stall;
//  3. RunCompareWindow on the two runs until its totals and diff are shown;
//  4. RSS the open run added, against the run's compressed size in the store.
// Usage: bench_runview [turns (200)] [request KB (100)]
#undef QT_NO_CAST_FROM_ASCII // agentflows.h writes its JSON as plain literals
#include "models/agentflows.h"

#include "common/benchsupport.h"
#include "common/heaptrimmer.h"
#include "models/flowqueryclient.h"
#include "models/runconversation.h"
#include "widgets/diffview.h"
#include "widgets/runcomparewindow.h"
#include "widgets/runview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QScrollBar>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextStream>
#include <QTimer>

#include <cstdio>

using namespace loopscope;
using loopscope::bench::rssKb;

namespace {

// One run: "fix bug N" → T-1 Bash calls, each result fed back → the answer.
void recordRun(agents::AgentRecorder &recorder, const QString &name, int turns, int requestKb,
               const QString &answer) {
    const QJsonObject headers{{"content-type", "application/json"},
                              {"user-agent", "claude-cli/2.1.0 (external, cli)"},
                              {"x-claude-code-session-id", QString(name + "-session")}};
    // The prompt and tool list carry most of each request, as in Claude Code (~88 KB a turn).
    const QString system = agents::longPrompt("Claude", requestKb * 1024 * 8 / 10 / 52);
    QJsonArray tools;
    for (int i = 0; i < 16; ++i)
        tools << QJsonObject{{"name", QString("Tool%1").arg(i)},
                             {"description", agents::longPrompt("tool", requestKb / 8)},
                             {"input_schema", QJsonObject{{"type", "object"}}}};
    QJsonArray messages{QJsonObject{{"role", "user"}, {"content", QString("fix bug in " + name)}}};
    for (int t = 0; t < turns; ++t) {
        const QString id = QString("%1_%2").arg(name).arg(t, 4, 10, QChar('0'));
        const QJsonObject body{{"model", "claude-sonnet-4-5"},
                               {"max_tokens", 32000},
                               {"system", system},
                               {"tools", tools},
                               {"messages", messages}};
        const bool last = t == turns - 1;
        const QString callId = QString("toolu_%1").arg(t);
        const QJsonArray content =
            last
                ? QJsonArray{QJsonObject{{"type", "text"}, {"text", answer}}}
                : QJsonArray{QJsonObject{{"type", "thinking"},
                                         {"thinking", QString("Step %1: look further.").arg(t)},
                                         {"signature", "sig"}},
                             QJsonObject{{"type", "tool_use"},
                                         {"id", callId},
                                         {"name", "Bash"},
                                         {"input",
                                          QJsonObject{{"command",
                                                       QString("grep -n bug src/%1.py").arg(t)}}}}};
        recorder.exchange(id, "/v1/messages", headers, body,
                          {{"id", QString("msg_" + id)},
                           {"type", "message"},
                           {"role", "assistant"},
                           {"model", "claude-sonnet-4-5"},
                           {"content", content},
                           {"stop_reason", last ? "end_turn" : "tool_use"},
                           {"usage", QJsonObject{{"input_tokens", 40},
                                                 {"output_tokens", 60},
                                                 {"cache_read_input_tokens", 25000 + 50 * t},
                                                 {"cache_creation_input_tokens", 120}}}});
        messages << QJsonObject{{"role", "assistant"}, {"content", content}}
                 << QJsonObject{
                        {"role", "user"},
                        {"content",
                         QJsonArray{QJsonObject{
                             {"type", "tool_result"},
                             {"tool_use_id", callId},
                             {"content", QString("%1: bug = True  # src/%2.py").arg(t).arg(t)}}}}};
    }
}

// Runs the event loop until `done`; the elapsed ms of `clock` then.
double waitFor(const bool &done, const QElapsedTimer &clock) {
    while (!done)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    return double(clock.nsecsElapsed()) / 1e6;
}

} // namespace

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    const int turns = argc > 1 ? QString(argv[1]).toInt() : 200;
    const int requestKb = argc > 2 ? QString(argv[2]).toInt() : 100;
    QTextStream out(stdout);

    QTemporaryDir dir;
    const QString path = dir.filePath("history.sqlite3");
    agents::AgentRecorder recorder(path);
    QElapsedTimer recording;
    recording.start();
    recordRun(recorder, "before", turns, requestKb, "Fixed: the flag was inverted.");
    recordRun(recorder, "after", turns, requestKb, "Fixed: the flag is now False.");
    recorder.store()->flush();
    const QString runA = recorder.store()
                             ->query()
                             ->flow(recorder.ids().constFirst())
                             .value_or(QJsonObject())
                             .value("run_id")
                             .toString();
    const QString runB = recorder.store()
                             ->query()
                             ->flow(recorder.ids().constLast())
                             .value_or(QJsonObject())
                             .value("run_id")
                             .toString();
    qint64 runBytes = 0, requestBytes = 0;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "bench_size");
        db.setDatabaseName(path);
        db.setConnectOptions("QSQLITE_OPEN_READONLY");
        if (db.open()) {
            QSqlQuery q(db);
            q.prepare("SELECT sum(length(summary) + length(hops)) FROM flows WHERE run_id = ?");
            q.addBindValue(runA);
            if (q.exec() && q.next())
                runBytes = q.value(0).toLongLong();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase("bench_size");
    for (const QJsonValue &hop : recorder.store()
                                     ->query()
                                     ->flow(recorder.ids().at(turns - 1))
                                     .value_or(QJsonObject())
                                     .value("hops")
                                     .toArray())
        if (hop.toObject().value("kind").toString() == "client_request")
            requestBytes = QJsonDocument(hop.toObject().value("body").toObject())
                               .toJson(QJsonDocument::Compact)
                               .size();
    out << "recorded 2 runs of " << turns << " turns in " << recording.elapsed()
        << " ms; last request " << requestBytes / 1024 << " KB; run " << runA << " stored in "
        << runBytes / 1024 << " KB (compressed)\n";
    out.flush();

    // Where a turn's time goes: reading the flow from the store (the run view's one read of
    // the run, FlowQuery::readRun), decoding it into the turn.
    {
        QElapsedTimer part;
        qint64 readNs = 0, decodeNs = 0;
        RunConversation run;
        const int sample = qMin(50, turns);
        part.start();
        recorder.store()->query()->readRun(runA, 0, sample, [&](FlowExchange &&flow) {
            readNs += part.nsecsElapsed();
            part.start();
            run.append(flow);
            decodeNs += part.nsecsElapsed();
            part.start();
            return true;
        });
        out << "per turn (first " << sample << "): read " << double(readNs) / 1e6 / sample
            << " ms, decode " << double(decodeNs) / 1e6 / sample << " ms\n";
    }

    FlowQueryClient client;
    client.setFlowStore(recorder.store());

    // 1. Open until painted.
    RunView view;
    view.resize(900, 1000);
    view.show();
    QCoreApplication::processEvents();
    // The app trims the heap on its own thread (HeapTrimmer, every 10 s): the recording's
    // garbage is trimmed before the baseline, the open run's after it is read.
    HeapTrimmer trimmer;
    trimmer.trimIfWorthIt();
    const qint64 rssBefore = rssKb();
    bool first = false, loaded = false;
    QObject::connect(&view, &RunView::firstTurnsShown, [&first] { first = true; });
    QObject::connect(&view, &RunView::loaded, [&loaded] { loaded = true; });
    QElapsedTimer clock;
    clock.start();
    view.showRun(&client, runA);
    waitFor(first, clock);
    view.textView()->viewport()->repaint();
    const double paintedMs = double(clock.nsecsElapsed()) / 1e6;
    const double loadedMs = waitFor(loaded, clock);
    view.textView()->viewport()->repaint();
    const double allPaintedMs = double(clock.nsecsElapsed()) / 1e6;
    const qint64 rssOpen = rssKb();
    out << "open: first " << RunView::kFirstTurns << " turns painted at " << paintedMs
        << " ms (target <= 500); all " << view.conversation().turns().size()
        << " turns read and decoded at " << loadedMs << " ms, painted at " << allPaintedMs
        << " ms\n";
    trimmer.trimIfWorthIt();
    const qint64 rssTrimmed = rssKb();
    const double compressedKb = double(qMax<qint64>(1, runBytes / 1024));
    out << "memory: RSS +" << (rssOpen - rssBefore) << " KB for the open run ("
        << double(rssOpen - rssBefore) / compressedKb << "x its compressed size), +"
        << (rssTrimmed - rssBefore) << " KB after the app's heap trim ("
        << double(rssTrimmed - rssBefore) / compressedKb << "x; target <= 2)\n";

    // 2. Scroll end to end with a heartbeat.
    QElapsedTimer beat;
    double longestStall = 0;
    QTimer heartbeat;
    heartbeat.setInterval(5);
    QObject::connect(&heartbeat, &QTimer::timeout, [&] {
        longestStall = qMax(longestStall, double(beat.nsecsElapsed()) / 1e6);
        beat.restart();
    });
    QScrollBar *bar = view.textView()->verticalScrollBar();
    beat.start();
    heartbeat.start();
    clock.restart();
    int pages = 0;
    while (bar->value() < bar->maximum()) {
        bar->setValue(bar->value() + bar->pageStep());
        ++pages;
        QElapsedTimer frame;
        frame.start();
        while (frame.elapsed() < 16) // a frame's worth of events, the heartbeat included
            QCoreApplication::processEvents(QEventLoop::AllEvents, 16);
    }
    heartbeat.stop();
    out << "scroll: " << pages << " pages end to end in " << clock.elapsed()
        << " ms, longest GUI stall " << (longestStall - 5)
        << " ms over the 5 ms beat (target <= 50)\n";

    // 3. Compare the two runs.
    clock.restart();
    RunCompareWindow *window = RunCompareWindow::open(nullptr, &client, runA, runB);
    bool compared = false;
    QObject::connect(window, &RunCompareWindow::loaded, [&compared] { compared = true; });
    const double comparedMs = waitFor(compared, clock);
    window->repaint();
    out << "compare: totals and diff (" << window->diffView()->summary() << ") shown in "
        << double(clock.nsecsElapsed()) / 1e6 << " ms (loaded " << comparedMs
        << " ms; target <= 1000)\n";
    window->close();
    return 0;
}
