// The run view and the run comparison offscreen (issue 36), over agent runs recorded by a real
// in-memory FlowStore (tests/models/agentflows.h): the system prompt collapsed with its size,
// the Runs panel reading the selected run through the store, two runs compared (a token
// difference shown; Close and Esc).
#undef QT_NO_CAST_FROM_ASCII
#include "models/agentflows.h"

#include "models/flowqueryclient.h"
#include "models/runconversation.h"
#include "models/runsmodel.h"
#include "widgets/diffview.h"
#include "widgets/runcomparewindow.h"
#include "widgets/runspanel.h"
#include "widgets/runview.h"

#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTreeView>
#include <QtTest>

using namespace loopscope;

namespace {

// The href of the first link in the view's document ("" when none).
QString firstLink(QTextBrowser *browser) {
    for (QTextBlock b = browser->document()->firstBlock(); b.isValid(); b = b.next())
        for (auto it = b.begin(); !it.atEnd(); ++it)
            if (it.fragment().charFormat().isAnchor())
                return it.fragment().charFormat().anchorHref();
    return {};
}

QString cell(QTableWidget *table, const QString &row, int column) {
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->verticalHeaderItem(r)->text() == row)
            return table->item(r, column)->text();
    return "(no row " + row + ")";
}

} // namespace

class TstRunView : public QObject {
    Q_OBJECT
private slots:
    void systemPromptCollapsedWithItsSize() {
        agents::AgentRecorder recorder;
        const RunConversation run = RunConversation::fromFlows(recorder.claudeRun());
        RunView view;
        view.resize(800, 600);
        view.setConversation("run_claude", run);
        view.show();
        const QString system = run.turns().first().added.first().entry.text;
        QVERIFY(system.contains("Claude rule 80:"));
        const QString size = QString("Show all: %1 lines, %2")
                                 .arg(system.count('\n') + 1)
                                 .arg(QLocale().formattedDataSize(system.toUtf8().size()));
        QString text = view.text();
        if (qEnvironmentVariableIsSet("LOOPSCOPE_PRINT"))
            qInfo().noquote() << text;
        QVERIFY2(text.startsWith("fix the bug — claude-cli/2.1.0 · claude-sonnet-4-5\n"),
                 qPrintable(text.left(200)));
        QVERIFY(text.contains("Turn 1"));
        QVERIFY2(text.contains("system\n" + size), qPrintable(text.left(400)));
        QVERIFY(!text.contains("Claude rule 80:")); // nothing of the prompt until opened
        QVERIFY(text.contains("tool call Bash: cat main.py"));
        QVERIFY(text.contains("→ result\nprint(1/0)"));
        QVERIFY(text.contains("cache read 10,060 · cache write 5,060"));
        QVERIFY(text.contains("1 tool result shown with their calls"));
        // Opening the block shows the prompt, and only that block.
        const QString link = firstLink(view.textView());
        QVERIFY(!link.isEmpty());
        emit view.textView()->anchorClicked(QUrl(link));
        text = view.text();
        QVERIFY(text.contains("Claude rule 80:"));
        QVERIFY(!text.contains(size));
    }

    void runsPanelShowsTheSelectedRun() {
        agents::AgentRecorder recorder;
        recorder.claudeRun();
        FlowQueryClient client;
        client.setFlowStore(recorder.store());
        RunsModel model(&client);
        model.setFlowStore(recorder.store());
        RunsPanel panel(&model);
        panel.resize(900, 700);
        panel.show();
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, 10000);
        QSignalSpy loaded(panel.runView(), &RunView::loaded);
        panel.view()->selectionModel()->setCurrentIndex(
            model.index(0, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 10000);
        QCOMPARE(panel.runView()->conversation().turns().size(), 4);
        QVERIFY(panel.runView()->text().contains("Fixed."));
        QVERIFY(!panel.compareButton()->isEnabled()); // one run selected
        // The agent goes on: its next flow joins the run and the view follows.
        recorder.exchange(
            "claude_4", "/v1/messages",
            {{"content-type", "application/json"}, {"x-claude-code-session-id", "claude-session"}},
            {{"model", "claude-sonnet-4-5"},
             {"max_tokens", 100},
             {"messages",
              QJsonArray{QJsonObject{{"role", "user"}, {"content", "thanks, now run it"}}}}},
            {{"id", "msg_4"},
             {"type", "message"},
             {"role", "assistant"},
             {"content", QJsonArray{QJsonObject{{"type", "text"}, {"text", "Ran."}}}}});
        QTRY_COMPARE_WITH_TIMEOUT(panel.runView()->conversation().turns().size(), 5, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(panel.runView()->text().contains("Ran."), 10000);
    }

    void compareTwoRuns() {
        agents::AgentRecorder before, after;
        const RunConversation left = RunConversation::fromFlows(before.codexRun("before"));
        const RunConversation right =
            RunConversation::fromFlows(after.codexRun("after", "Two files: a.txt and b.txt.", 30));
        QPointer<RunCompareWindow> window =
            RunCompareWindow::open(nullptr, nullptr, "run_before", "run_after");
        window->setRuns(left, "run_before", right, "run_after");
        QTableWidget *table = window->totalsTable();
        QCOMPARE(cell(table, "Output tokens", 0), QLocale().toString(52.0, 'f', 0));
        QCOMPARE(cell(table, "Output tokens", 1), QLocale().toString(70.0, 'f', 0));
        QCOMPARE(cell(table, "Output tokens", 2), "+18");
        QCOMPARE(cell(table, "Turns", 2), "same");
        // The answers face each other in the diff; the rest of the runs is the same.
        QVERIFY(window->diffView()->addedCount() >= 1);
        QVERIFY(window->diffView()->unifiedText().contains("+ Two files: a.txt and b.txt."));
        QVERIFY(window->diffView()->unifiedText().contains("- There are two files."));
        QVERIFY(window->closeButton()->isVisible());
        window->activateWindow();
        QTest::keyClick(window, Qt::Key_Escape);
        QTRY_VERIFY(window.isNull()); // closed and deleted
    }

    void compareFromThePanel() {
        agents::AgentRecorder recorder;
        recorder.codexRun("one");
        recorder.codexRun("two", "Two files.", 30);
        FlowQueryClient client;
        client.setFlowStore(recorder.store());
        RunsModel model(&client);
        model.setFlowStore(recorder.store());
        RunsPanel panel(&model);
        panel.show();
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 2, 10000);
        panel.view()->selectionModel()->select(QItemSelection(model.index(0, 0), model.index(1, 0)),
                                               QItemSelectionModel::ClearAndSelect |
                                                   QItemSelectionModel::Rows);
        QVERIFY(panel.compareButton()->isEnabled());
        panel.compareButton()->click();
        auto *window = panel.findChild<RunCompareWindow *>();
        QVERIFY(window);
        QSignalSpy loaded(window, &RunCompareWindow::loaded);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 10000);
        // Runs are listed newest first; the older one is compared on the left.
        QCOMPARE(cell(window->totalsTable(), "Output tokens", 2), "+18");
        window->close();
    }
};

QTEST_MAIN(TstRunView)
#include "tst_runview.moc"
