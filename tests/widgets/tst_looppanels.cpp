// The Loop and Code & output panels offscreen, fed hand-made flows and live events shaped as
// core publishes them: one ticker only while a step runs, Follow, the selected step's bar,
// streamed output appended (never re-rendered per chunk), Run N of M, markers of the shown run
// only, the wrap toggle and the apt hint.
#include "models/looptimelinemodel.h"
#include "widgets/codeeditor.h"
#include "widgets/codepanel.h"
#include "widgets/looppanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QJsonArray>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextDocument>
#include <QTimer>

using namespace loopscope;

namespace {

using Kind = InspectorEvent::Kind;
const QString kFlow = QStringLiteral("req_panels");

InspectorEvent liveEvent(Kind kind, int iteration, qint64 at, const QJsonObject &data,
                         const QString &flow = kFlow) {
    static quint64 sequence = 100;
    InspectorEvent e = InspectorEvent::make(kind, flow, iteration, data);
    e.sequence = ++sequence; // as the bus numbers them
    e.timestampMs = at;
    return e;
}

QJsonObject runningFlow(qint64 t0) {
    return {{QStringLiteral("id"), kFlow},
            {QStringLiteral("started_at"), t0},
            {QStringLiteral("state"), QStringLiteral("running")},
            {QStringLiteral("hops"),
             QJsonArray{QJsonObject{{QStringLiteral("kind"), QStringLiteral("client_request")},
                                    {QStringLiteral("at"), t0}}}}};
}

InspectorEvent codeStarted(const QString &callId, int iteration, qint64 at) {
    return liveEvent(Kind::CodeRunStarted, iteration, at,
                     {{QStringLiteral("callId"), callId},
                      {QStringLiteral("code"), QStringLiteral("print('x')  # %1").arg(callId)},
                      {QStringLiteral("containerId"), QStringLiteral("cntr_1")}});
}

InspectorEvent output(const QString &callId, const QString &stream, const QString &text) {
    return liveEvent(Kind::CodeRunOutput, 0, 0,
                     {{QStringLiteral("callId"), callId},
                      {QStringLiteral("stream"), stream},
                      {QStringLiteral("text"), text}});
}

InspectorEvent executed(const QString &callId, int iteration, qint64 at, const QString &out,
                        const QString &err = {}, const QJsonObject &error = {}) {
    QJsonObject data{{QStringLiteral("callId"), callId},
                     {QStringLiteral("code"), QStringLiteral("print('x')  # %1").arg(callId)},
                     {QStringLiteral("stdout"), out},
                     {QStringLiteral("stderr"), err},
                     {QStringLiteral("output"), out},
                     {QStringLiteral("durationMs"), 40.0},
                     {QStringLiteral("containerId"), QStringLiteral("cntr_1")}};
    if (!error.isEmpty())
        data.insert(QStringLiteral("error"), error);
    return liveEvent(Kind::CodeExecuted, iteration, at, data);
}

} // namespace

class TestLoopPanels : public QObject {
    Q_OBJECT

private slots:
    void tickerRunsOnlyWhileAStepRunsAndFollowSelectsIt() {
        LoopPanel panel;
        panel.resize(700, 400);
        panel.show();
        // Now: the elapsed time is then shown in ms and seconds, which visibly tick.
        const qint64 t0 = QDateTime::currentMSecsSinceEpoch();
        panel.setFlow(runningFlow(t0));
        QVERIFY(!panel.elapsedTimer()->isActive());
        QCOMPARE(panel.summaryLabel()->text(), QStringLiteral("0 steps"));

        panel.applyLiveEvents({liveEvent(Kind::UpstreamCallStarted, 0, t0 + 5,
                                         {{QStringLiteral("request"), QJsonObject()}})});
        QVERIFY(panel.elapsedTimer()->isActive());
        QCOMPARE(panel.view()->currentIndex().row(), 0);
        QVERIFY(panel.detailsView()->toPlainText().contains(QStringLiteral("waiting")));
        QCOMPARE(panel.summaryLabel()->text(), QStringLiteral("1 step · running"));
        // The ticker moves the shown elapsed time on by itself.
        const QModelIndex duration =
            panel.timelineModel()->index(0, LoopTimelineModel::DurationColumn);
        const QString first = duration.data().toString();
        QTRY_VERIFY_WITH_TIMEOUT(duration.data().toString() != first, 10'000);

        panel.applyLiveEvents({liveEvent(Kind::UpstreamCall, 0, t0 + 300,
                                         {{QStringLiteral("status"), 200},
                                          {QStringLiteral("latencyMs"), 295.0},
                                          {QStringLiteral("response"), QJsonObject()}}),
                               codeStarted(QStringLiteral("call_a"), 0, t0 + 310)});
        QVERIFY(panel.elapsedTimer()->isActive());
        QCOMPARE(panel.view()->currentIndex().row(), 1); // followed to the running code
        QSignalSpy picked(&panel, &LoopPanel::codeStepSelected);
        // The user picks the model call: following stops, the pick stays.
        panel.view()->selectRow(0);
        QVERIFY(!panel.follows());
        panel.applyLiveEvents(
            {executed(QStringLiteral("call_a"), 0, t0 + 350, QStringLiteral("x\n")),
             liveEvent(Kind::UpstreamCallStarted, 1, t0 + 360, {})});
        QCOMPARE(panel.view()->currentIndex().row(), 0);
        // Follow again: the newest running step.
        panel.setFollow(true);
        QCOMPARE(panel.view()->currentIndex().row(), 2);
        panel.view()->selectRow(1);
        QCOMPARE(picked.count(), 1);
        QCOMPARE(picked.first().first().toString(), QStringLiteral("call_a"));

        panel.applyLiveEvents(
            {liveEvent(Kind::UpstreamCall, 1, t0 + 400,
                       {{QStringLiteral("status"), 200}, {QStringLiteral("latencyMs"), 40.0}}),
             liveEvent(Kind::ExchangeFinished, -1, t0 + 401, {{QStringLiteral("status"), 200}})});
        QVERIFY(!panel.elapsedTimer()->isActive());
        QCOMPARE(panel.summaryLabel()->text(), QStringLiteral("3 steps"));
        panel.setFlow({});
        QCOMPARE(panel.timelineModel()->rowCount(), 0);
        QCOMPARE(panel.summaryLabel()->text(), QStringLiteral("No request selected"));
    }

    // The bar of a selected model call used the selection's own colour and vanished.
    void selectedStepKeepsItsBar() {
        LoopPanel panel;
        panel.resize(700, 400);
        panel.show();
        const qint64 t0 = 2'000'000;
        QJsonObject flow = runningFlow(t0);
        flow.insert(QStringLiteral("state"), QStringLiteral("completed"));
        flow.insert(QStringLiteral("duration_ms"), 100.0);
        QJsonArray hops = flow.value(QStringLiteral("hops")).toArray();
        hops.append(QJsonObject{{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                                {QStringLiteral("at"), t0},
                                {QStringLiteral("iteration"), 0}});
        hops.append(QJsonObject{{QStringLiteral("kind"), QStringLiteral("upstream_response")},
                                {QStringLiteral("at"), t0 + 100},
                                {QStringLiteral("iteration"), 0},
                                {QStringLiteral("status"), 200},
                                {QStringLiteral("latency_ms"), 100.0}});
        flow.insert(QStringLiteral("hops"), hops);
        panel.setFlow(flow);
        panel.selectStep(0);
        QTableView *view = panel.view();
        QVERIFY(view->selectionModel()->isRowSelected(0, {}));
        QCoreApplication::processEvents();
        const QRect cell =
            view->visualRect(panel.timelineModel()->index(0, LoopTimelineModel::TimelineColumn));
        const QImage shot = view->viewport()->grab(cell).toImage();
        const QColor selection = view->palette().color(QPalette::Highlight);
        int bar = 0;
        for (int y = 0; y < shot.height(); ++y)
            for (int x = 0; x < shot.width(); ++x) {
                const QColor c = shot.pixelColor(x, y);
                if (c == QColor(0x3b, 0x7d, 0xd8) && c != selection)
                    ++bar;
            }
        QVERIFY2(bar > shot.width(), qPrintable(QString::number(bar)));
    }

    void codeStreamsAreAppendedNotRerendered() {
        CodePanel panel;
        panel.setFlow(runningFlow(0));
        panel.applyLiveEvents({codeStarted(QStringLiteral("call_a"), 0, 10)});
        QCOMPARE(panel.shownCallId(), QStringLiteral("call_a"));
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("running")));
        QVERIFY(panel.codeView()->toPlainText().contains(QStringLiteral("call_a")));
        QSignalSpy changes(panel.stdoutView()->document(), &QTextDocument::contentsChange);
        panel.applyLiveEvents({output(QStringLiteral("call_a"), QStringLiteral("stdout"),
                                      QStringLiteral("line 1\n"))});
        panel.applyLiveEvents({output(QStringLiteral("call_a"), QStringLiteral("stdout"),
                                      QStringLiteral("line 2\n"))});
        QCOMPARE(panel.stdoutView()->toPlainText(), QStringLiteral("line 1\nline 2\n"));
        QVERIFY(changes.count() >= 2);
        for (const QList<QVariant> &change : std::as_const(changes))
            QCOMPARE(change.at(1).toInt(), 0); // nothing removed: appended
        QCOMPARE(panel.outputTabs()->tabText(1), QStringLiteral("stderr"));
        panel.applyLiveEvents(
            {output(QStringLiteral("call_a"), QStringLiteral("stderr"), QStringLiteral("warn\n"))});
        QCOMPARE(panel.outputTabs()->tabText(1), QStringLiteral("stderr •"));
        // The final event agrees with what streamed: still no re-render.
        changes.clear();
        panel.applyLiveEvents(
            {executed(QStringLiteral("call_a"), 0, 60, QStringLiteral("line 1\nline 2\n"),
                      QStringLiteral("warn\n"))});
        QCOMPARE(changes.count(), 0);
        QVERIFY(!panel.summaryLabel()->text().contains(QStringLiteral("running")));
        QVERIFY(panel.summaryLabel()->text().startsWith(QStringLiteral("40 ms")));
    }

    // The store folds chunks before the window's batch arrives: a snapshot can hold chunks
    // that are still on their way live. Its output_seq says which; none is shown twice.
    void snapshotAndLiveChunksNeverDoubleUp() {
        CodePanel panel;
        panel.setFlow(runningFlow(0));
        const InspectorEvent start = codeStarted(QStringLiteral("call_a"), 0, 1);
        const InspectorEvent one =
            output(QStringLiteral("call_a"), QStringLiteral("stdout"), QStringLiteral("one\n"));
        const InspectorEvent two =
            output(QStringLiteral("call_a"), QStringLiteral("stdout"), QStringLiteral("two\n"));
        const InspectorEvent three =
            output(QStringLiteral("call_a"), QStringLiteral("stdout"), QStringLiteral("three\n"));
        panel.applyLiveEvents({start, one});
        // A snapshot taken after "two" was folded, before its batch arrived.
        QJsonObject flow = runningFlow(0);
        QJsonArray hops = flow.value(QStringLiteral("hops")).toArray();
        hops.append(QJsonObject{{QStringLiteral("kind"), QStringLiteral("code_run")},
                                {QStringLiteral("call_id"), QStringLiteral("call_a")},
                                {QStringLiteral("code"), QStringLiteral("print('x')")},
                                {QStringLiteral("stdout"), QStringLiteral("one\ntwo\n")},
                                {QStringLiteral("stderr"), QString()},
                                {QStringLiteral("output"), QJsonValue::Null},
                                {QStringLiteral("error"), QJsonValue::Null},
                                {QStringLiteral("output_seq"), double(two.sequence)}});
        flow.insert(QStringLiteral("hops"), hops);
        panel.setFlow(flow);
        QCOMPARE(panel.stdoutView()->toPlainText(), QStringLiteral("one\ntwo\n"));
        panel.applyLiveEvents({two, three});
        QCOMPARE(panel.stdoutView()->toPlainText(), QStringLiteral("one\ntwo\nthree\n"));
        // An older snapshot (before "three") does not take "three" away.
        panel.setFlow(flow);
        QCOMPARE(panel.stdoutView()->toPlainText(), QStringLiteral("one\ntwo\nthree\n"));
    }

    void severalRunsHaveASelectorAndOnlyTheShownRunsMarkers() {
        CodePanel panel;
        panel.show();
        panel.setFlow(runningFlow(0));
        const QJsonObject timeout{
            {QStringLiteral("name"), QStringLiteral("TimeoutError")},
            {QStringLiteral("value"), QStringLiteral("the code ran longer than 30 s and was "
                                                     "stopped; long output may be cut off here")}};
        panel.applyLiveEvents({codeStarted(QStringLiteral("call_a"), 0, 1),
                               executed(QStringLiteral("call_a"), 0, 2, QString(),
                                        QStringLiteral("boom\n"), timeout)});
        QVERIFY(!panel.runSelector()->isVisibleTo(&panel)); // one run: no selector
        QCOMPARE(panel.outputTabs()->tabText(2), QStringLiteral("Error •"));
        QCOMPARE(panel.outputTabs()->currentWidget(), panel.errorView());
        // The error wraps, whatever the toggle: a TimeoutError is read whole.
        QCOMPARE(panel.errorView()->lineWrapMode(), QPlainTextEdit::WidgetWidth);
        QVERIFY(!panel.hintLabel()->isVisibleTo(&panel));

        panel.applyLiveEvents({codeStarted(QStringLiteral("call_b"), 1, 3),
                               executed(QStringLiteral("call_b"), 1, 4, QStringLiteral("ok\n"))});
        QCOMPARE(panel.shownCallId(), QStringLiteral("call_b")); // follows the newest
        QVERIFY(panel.runSelector()->isVisibleTo(&panel));
        QCOMPARE(panel.runSelector()->count(), 2);
        QCOMPARE(panel.runSelector()->currentText(), QStringLiteral("Run 2 of 2"));
        QCOMPARE(panel.outputTabs()->tabText(1), QStringLiteral("stderr")); // no stale marker
        QCOMPARE(panel.outputTabs()->tabText(2), QStringLiteral("Error"));
        QCOMPARE(panel.errorView()->toPlainText(), QString());

        panel.showCodeRun(QStringLiteral("call_a"));
        QCOMPARE(panel.runSelector()->currentText(), QStringLiteral("Run 1 of 2"));
        QCOMPARE(panel.outputTabs()->tabText(1), QStringLiteral("stderr •"));
        QVERIFY(panel.errorView()->toPlainText().startsWith(QStringLiteral("TimeoutError")));
        // Picked: a third run does not take the view away.
        panel.applyLiveEvents({codeStarted(QStringLiteral("call_c"), 2, 5)});
        QCOMPARE(panel.shownCallId(), QStringLiteral("call_a"));
        QCOMPARE(panel.runSelector()->itemText(2), QStringLiteral("Run 3 of 3"));
        // Choosing the newest in the selector follows again.
        panel.runSelector()->setCurrentIndex(2);
        emit panel.runSelector()->activated(2);
        QCOMPARE(panel.shownCallId(), QStringLiteral("call_c"));
        panel.applyLiveEvents({codeStarted(QStringLiteral("call_d"), 3, 6)});
        QCOMPARE(panel.shownCallId(), QStringLiteral("call_d"));

        // Wrap applies to stdout and stderr.
        QCOMPARE(panel.stdoutView()->lineWrapMode(), QPlainTextEdit::NoWrap);
        panel.wrapToggle()->setChecked(true);
        QCOMPARE(panel.stdoutView()->lineWrapMode(), QPlainTextEdit::WidgetWidth);
        QCOMPARE(panel.stderrView()->lineWrapMode(), QPlainTextEdit::WidgetWidth);

        // Another flow starts empty.
        QJsonObject other = runningFlow(0);
        other.insert(QStringLiteral("id"), QStringLiteral("req_other"));
        panel.setFlow(other);
        QCOMPARE(panel.runCount(), 0);
        QVERIFY(panel.codeView()->toPlainText().isEmpty());
        QCOMPARE(panel.outputTabs()->tabText(1), QStringLiteral("stderr"));
    }

    void missingDebianModuleGetsAnAptHint_data() {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("hint");
        QTest::newRow("matplotlib") << QStringLiteral("No module named 'matplotlib'")
                                    << QStringLiteral("sudo apt install python3-matplotlib");
        QTest::newRow("PIL") << QStringLiteral("No module named 'PIL'")
                             << QStringLiteral("sudo apt install python3-pil");
        QTest::newRow("unknown") << QStringLiteral("No module named 'zzz_private'") << QString();
    }
    void missingDebianModuleGetsAnAptHint() {
        QFETCH(QString, value);
        QFETCH(QString, hint);
        CodePanel panel;
        panel.show();
        panel.setFlow(runningFlow(0));
        panel.applyLiveEvents(
            {executed(QStringLiteral("call_m"), 0, 1, QString(), QString(),
                      {{QStringLiteral("name"), QStringLiteral("ModuleNotFoundError")},
                       {QStringLiteral("value"), value}})});
        QCOMPARE(panel.hintLabel()->isVisibleTo(&panel), !hint.isEmpty());
        if (!hint.isEmpty())
            QVERIFY2(panel.hintLabel()->text().contains(hint),
                     qPrintable(panel.hintLabel()->text()));
    }

    // Code edited at a breakpoint says so, with the model's own code at hand.
    void editedCodeShowsEditedFrom() {
        QJsonObject flow = runningFlow(0);
        QJsonArray hops = flow.value(QStringLiteral("hops")).toArray();
        hops << QJsonObject{{QStringLiteral("kind"), QStringLiteral("code_run")},
                            {QStringLiteral("iteration"), 0},
                            {QStringLiteral("call_id"), QStringLiteral("call_e")},
                            {QStringLiteral("code"), QStringLiteral("print(2)")},
                            {QStringLiteral("stdout"), QStringLiteral("2\n")},
                            {QStringLiteral("stderr"), QString()},
                            {QStringLiteral("output"), QStringLiteral("2\n")},
                            {QStringLiteral("error"), QJsonValue::Null},
                            {QStringLiteral("duration_ms"), 5.0},
                            {QStringLiteral("edited_from"), QStringLiteral("print(1)")},
                            {QStringLiteral("decision"), QStringLiteral("edited")}};
        flow.insert(QStringLiteral("hops"), hops);
        CodePanel panel;
        panel.show();
        panel.setFlow(flow);
        QVERIFY2(panel.summaryLabel()->text().contains(QStringLiteral("edited from")),
                 qPrintable(panel.summaryLabel()->text()));
        QVERIFY(panel.summaryLabel()->toolTip().contains(QStringLiteral("print(1)")));
    }
};

QTEST_MAIN(TestLoopPanels)
#include "tst_looppanels.moc"
