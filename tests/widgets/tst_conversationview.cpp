// ConversationView offscreen, over flows recorded by a real
// in-memory FlowStore (tests/models/conversationflows.h): the text they show, their toggles,
// palette-derived colours.
// JSON fixtures are written as plain literals here.
#undef QT_NO_CAST_FROM_ASCII
#include "models/conversationflows.h"

#include "widgets/conversationview.h"
#include "widgets/diffview.h"
#include "widgets/pythonhighlighter.h"
#include "widgets/theme.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QTextBlock>
#include <QTextBrowser>
#include <QToolButton>
#include <QUrl>
#include <QtTest>

using namespace loopscope;

namespace {

QList<DiffView *> openDiffWindows() {
    QList<DiffView *> out;
    for (QWidget *w : QApplication::topLevelWidgets())
        if (auto *d = qobject_cast<DiffView *>(w); d && d->isVisible())
            out << d;
    return out;
}

// The foreground of the text `word` (first match) in a document.
QColor foregroundOf(QTextDocument *doc, const QString &word) {
    const QTextCursor found = doc->find(word);
    return found.isNull() ? QColor() : found.charFormat().foreground().color();
}

QTextBlock blockContaining(QTextDocument *doc, const QString &text) {
    for (QTextBlock b = doc->firstBlock(); b.isValid(); b = b.next())
        if (b.text().contains(text))
            return b;
    return {};
}

} // namespace

class TstConversationView : public QObject {
    Q_OBJECT
private slots:
    void init() {
        for (DiffView *d : openDiffWindows())
            d->close();
        QApplication::setPalette(QApplication::style()->standardPalette());
    }

    void showsDecodedConversation() {
        convo::Recorder recorder;
        ConversationView view;
        view.resize(800, 600);
        view.setFlow(recorder.responsesLoop());
        QCOMPARE(view.iterationBox()->count(), 3);
        QCOMPARE(view.iterationBox()->itemText(0), QString("All iterations (2)"));
        QCOMPARE(view.iterationBox()->itemText(1),
                 QString("Iteration 1 — new items sent: 2, code calls: 1"));
        const QString text = view.text();
        for (const char *part :
             {"Iteration 1", "Sent to the model", "What is 6*7?", "assistant · code",
              "x = 6 * 7\nprint(x)", "Fed back to the model", "output fed back to the model",
              "Iteration 2", "6*7 = 42", "Final answer to the client", "code_interpreter_call"})
            QVERIFY2(text.contains(QString::fromUtf8(part)), part);
        // Code is Python source, not escaped JSON inside a string.
        QVERIFY(!text.contains("\\n"));
        QVERIFY(!text.contains("{\"code\""));
        QVERIFY(view.compareButton()->isEnabled());
    }

    void iterationAndShowAllToggle() {
        convo::Recorder recorder;
        ConversationView view;
        view.setFlow(recorder.responsesLoop());
        view.showIteration(1);
        QCOMPARE(view.currentIteration(), 1);
        QCOMPARE(view.iterationBox()->currentIndex(), 2);
        QString text = view.text();
        QVERIFY(text.contains("Iteration 2"));
        QVERIFY(!text.contains("Iteration 1"));
        QVERIFY2(text.contains("Sent to the model — new: 2, earlier (hidden): 2"),
                 qPrintable(text));
        QVERIFY(!text.contains("Use python.")); // the unchanged instructions are hidden
        QVERIFY(text.contains("tool output"));
        QVERIFY(text.contains("Final answer to the client")); // the last iteration ends there
        view.showAllSentBox()->click();
        QVERIFY(view.showAllSent());
        text = view.text();
        QVERIFY(text.contains("Use python."));
        QVERIFY(!text.contains("hidden"));
        view.showIteration(0);
        QVERIFY(!view.text().contains("Final answer to the client"));
        QVERIFY(!view.compareButton()->isEnabled());
        // Choosing in the box is the same as showIteration.
        view.iterationBox()->setCurrentIndex(0);
        emit view.iterationBox()->activated(0);
        QCOMPARE(view.currentIteration(), -1);
        view.showIteration(7); // out of range → everything
        QCOMPARE(view.currentIteration(), -1);
    }

    void reloadKeepsIterationAndEmptyClears() {
        convo::Recorder recorder;
        ConversationView view;
        const QJsonObject flow = recorder.responsesLoop();
        view.setFlow(flow);
        view.showIteration(1);
        view.setFlow(flow); // a live update of the same flow
        QCOMPARE(view.currentIteration(), 1);
        view.setFlow(recorder.chatLoop()); // another flow starts at "all"
        QCOMPARE(view.currentIteration(), -1);
        QVERIFY(view.text().contains("5! = 120"));
        view.setFlow({});
        QVERIFY(view.text().isEmpty());
        QVERIFY(!view.iterationBox()->isEnabled());
        QVERIFY(!view.compareButton()->isEnabled());
    }

    // An agent's system prompt (Claude Code sends ~88 KB of it each turn) shows its first lines
    // and a link with its size; the link opens it, and it stays open when the flow reloads.
    void longBlocksCollapseUntilOpened() {
        QStringList lines;
        for (int i = 0; i < 500; ++i)
            lines << QStringLiteral("rule %1: be careful with the tools").arg(i);
        const QString system = lines.join(u'\n');
        const QJsonObject flow{
            {"id", "req_long"},
            {"api", "messages"},
            {"hops",
             QJsonArray{QJsonObject{
                 {"kind", "upstream_request"},
                 {"iteration", 0},
                 {"body", QJsonObject{{"system", system},
                                      {"messages", QJsonArray{QJsonObject{
                                                       {"role", "user"}, {"content", "hi"}}}}}}}}}};
        ConversationView view;
        view.setFlow(flow);
        QVERIFY(view.text().contains("rule 0: be careful"));
        QVERIFY(!view.text().contains("rule 499"));
        QVERIFY2(view.text().contains("Show all: 500 lines"), qPrintable(view.text()));
        QVERIFY(view.text().contains("hi")); // what follows is still there
        // Follow the link as a click would.
        const QTextDocument *doc = view.textView()->document();
        QString href;
        for (QTextBlock b = doc->begin(); b.isValid() && href.isEmpty(); b = b.next())
            for (auto it = b.begin(); !it.atEnd(); ++it)
                if (it.fragment().charFormat().isAnchor())
                    href = it.fragment().charFormat().anchorHref();
        QVERIFY(href.startsWith("loopscope-expand:"));
        emit view.textView()->anchorClicked(QUrl(href));
        QVERIFY(view.text().contains("rule 499"));
        QVERIFY(!view.text().contains("Show all: 500 lines"));
        view.setFlow(flow); // a live reload of the same flow
        QVERIFY(view.text().contains("rule 499"));
        QJsonObject other = flow;
        other.insert("id", "req_other");
        view.setFlow(other); // another flow starts collapsed
        QVERIFY(!view.text().contains("rule 499"));
    }

    void codeIsHighlightedAndJsonPretty() {
        convo::Recorder recorder;
        ConversationView view;
        view.setFlow(recorder.chatLoop());
        QTextDocument reference;
        PythonHighlighter highlighter(&reference);
        highlighter.setDarkPalette(false);
        QCOMPARE(foregroundOf(view.textView()->document(), "import"),
                 highlighter.formatFor(PythonHighlighter::Token::Keyword).foreground().color());
        QCOMPARE(foregroundOf(view.textView()->document(), "print"),
                 highlighter.formatFor(PythonHighlighter::Token::Builtin).foreground().color());
        // Plain messages are not coloured as code.
        QCOMPARE(foregroundOf(view.textView()->document(), "You run code."),
                 view.palette().color(QPalette::Text));

        view.setFlow(recorder.clientFunctionCall());
        const QString text = view.text();
        QVERIFY2(text.contains("\"city\": \"Paris\""), qPrintable(text));
        QVERIFY(text.contains("function call (run by the client)"));
    }

    void emptyRepliesAndErrorsAreSaid() {
        convo::Recorder recorder;
        ConversationView view;
        view.setFlow(recorder.oddReplies());
        QVERIFY(view.text().contains("(empty reply)"));
        QVERIFY(view.text().contains("arguments are not valid JSON"));
        QVERIFY(view.text().contains("{city: Paris"));
        view.setFlow(recorder.rejected());
        QCOMPARE(view.iterationBox()->itemText(0), QString("All iterations (0)"));
        QVERIFY2(view.text().contains("HTTP 401: Invalid API key"), qPrintable(view.text()));
        view.setFlow(recorder.upstreamError());
        QCOMPARE(view.iterationBox()->itemText(1),
                 QString("Iteration 1 — new items sent: 1, HTTP 500"));
        QVERIFY(view.text().contains("HTTP 500: upstream exploded"));
    }

    void followsThePalette() {
        convo::Recorder recorder;
        ConversationView view;
        view.setFlow(recorder.responsesLoop());
        const QPalette dark = Theme::darkPalette();
        view.setPalette(dark);
        QApplication::processEvents();
        const QTextBlock code = blockContaining(view.textView()->document(), "x = 6 * 7");
        QVERIFY(code.isValid());
        QCOMPARE(code.blockFormat().background().color(), dark.color(QPalette::AlternateBase));
        QVERIFY(code.blockFormat().background().color().lightness() < 128);
        // The highlighter switched to its dark colours.
        QTextDocument reference;
        PythonHighlighter highlighter(&reference);
        highlighter.setDarkPalette(true);
        QCOMPARE(foregroundOf(view.textView()->document(), "print"),
                 highlighter.formatFor(PythonHighlighter::Token::Builtin).foreground().color());
    }

    void compareOpensADiffOfTwoIterations() {
        convo::Recorder recorder;
        ConversationView view;
        const QJsonObject flow = recorder.responsesLoop();
        view.setFlow(flow);
        view.showIteration(1);
        QSignalSpy asked(&view, &ConversationView::compareIterationsRequested);
        view.setOpensDiffItself(false);
        view.compareButton()->click();
        QCOMPARE(asked.size(), 1);
        QCOMPARE(asked.at(0).at(1).toInt(), 0);
        QCOMPARE(asked.at(0).at(2).toInt(), 1);
        QVERIFY(openDiffWindows().isEmpty());
        view.setOpensDiffItself(true);
        view.compareButton()->click();
        const QList<DiffView *> windows = openDiffWindows();
        QCOMPARE(windows.size(), 1);
        QVERIFY(windows.first()->unifiedText().contains("+ [tool output (call_1)]"));
        QVERIFY(windows.first()->testAttribute(Qt::WA_DeleteOnClose));
        windows.first()->close();
    }
};

QTEST_MAIN(TstConversationView)
#include "tst_conversationview.moc"
