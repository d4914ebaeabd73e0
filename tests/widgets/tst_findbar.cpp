// FindBar offscreen: match count, next/previous with wrap-around, the "No matches" state, Esc,
// the line-wrap toggle, recounting when the pane's text changes, and Ctrl+F reaching the
// focused pane inside a floating dock (a WindowShortcut on the main window would not).
#undef QT_NO_CAST_FROM_ASCII // expectations as plain literals
#include "widgets/codeeditor.h"
#include "widgets/findbar.h"
#include "widgets/jsonview.h"

#include <QApplication>
#include <QDockWidget>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTextEdit>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtTest>

using namespace loopscope;

class TstFindBar : public QObject {
    Q_OBJECT

    static void activate(QWidget *window) {
        window->show();
        QApplication::setActiveWindow(window);
        QVERIFY(QTest::qWaitForWindowActive(window));
    }

private slots:
    void countsAndStepsThroughMatches() {
        QPlainTextEdit edit;
        edit.setPlainText("foo bar\nFoo baz\nqux foo");
        FindBar *bar = FindBar::attach(&edit);
        QCOMPARE(FindBar::attach(&edit), bar); // attaching twice gives the same bar
        QCOMPARE(FindBar::of(&edit), bar);
        activate(&edit);
        QVERIFY(!bar->isVisible());
        bar->open();
        QVERIFY(bar->isVisible());
        QTest::keyClicks(bar->field(), "foo");
        QCOMPARE(bar->matchCount(), 3); // case-insensitive
        QCOMPARE(bar->statusText(), QStringLiteral("1 of 3"));
        QCOMPARE(edit.textCursor().selectionStart(), 0);
        QTest::keyClick(bar->field(), Qt::Key_Return);
        QCOMPARE(bar->statusText(), QStringLiteral("2 of 3"));
        QCOMPARE(edit.textCursor().selectedText(), QStringLiteral("Foo"));
        QTest::keyClick(bar->field(), Qt::Key_Enter);
        QCOMPARE(bar->statusText(), QStringLiteral("3 of 3"));
        QTest::keyClick(bar->field(), Qt::Key_Return);
        QCOMPARE(bar->statusText(), QStringLiteral("1 of 3")); // wraps around
        QTest::keyClick(bar->field(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(bar->statusText(), QStringLiteral("3 of 3")); // and backwards
        QCOMPARE(edit.textCursor().selectionStart(), edit.toPlainText().lastIndexOf("foo"));
        QTest::keyClick(bar->field(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(bar->statusText(), QStringLiteral("2 of 3"));
        QCOMPARE(edit.extraSelections().size(), 3); // every match highlighted
    }

    void noMatchesIsVisible() {
        QPlainTextEdit edit;
        edit.setPlainText("alpha beta");
        FindBar *bar = FindBar::attach(&edit);
        activate(&edit);
        bar->open();
        bar->setQuery("gamma");
        QCOMPARE(bar->matchCount(), 0);
        QVERIFY(bar->noMatches());
        QCOMPARE(bar->statusText(), QStringLiteral("No matches"));
        QVERIFY(bar->statusLabel()->isVisible());
        QVERIFY(!bar->field()->styleSheet().isEmpty()); // the field turns red
        // Enter with nothing to find does nothing (and does not crash).
        QTest::keyClick(bar->field(), Qt::Key_Return);
        QCOMPARE(bar->statusText(), QStringLiteral("No matches"));
        bar->setQuery("beta");
        QVERIFY(!bar->noMatches());
        QCOMPARE(bar->statusText(), QStringLiteral("1 of 1"));
        QVERIFY(bar->field()->styleSheet().isEmpty());
        bar->setQuery(QString());
        QCOMPARE(bar->statusText(), QString());
        QVERIFY(!bar->noMatches());
        // The label is wide enough for its longest text.
        QVERIFY(bar->statusLabel()->minimumWidth() >=
                bar->statusLabel()->fontMetrics().horizontalAdvance("No matches"));
    }

    void escapeClosesAndReturnsFocus() {
        QPlainTextEdit edit;
        edit.setPlainText("one two one");
        FindBar *bar = FindBar::attach(&edit);
        activate(&edit);
        edit.setFocus();
        QTest::keyClick(&edit, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(bar->isVisible());
        QVERIFY(bar->field()->hasFocus());
        QTest::keyClicks(bar->field(), "one");
        QCOMPARE(bar->matchCount(), 2);
        QTest::keyClick(bar->field(), Qt::Key_Escape);
        QVERIFY(!bar->isVisible());
        QVERIFY(edit.hasFocus());
        QCOMPARE(edit.extraSelections().size(), 0); // highlights go with the bar
    }

    void prefillsWithTheSelection() {
        QPlainTextEdit edit;
        edit.setPlainText("find this word here, this word again");
        QTextCursor cursor = edit.textCursor();
        cursor.setPosition(5);
        cursor.setPosition(9, QTextCursor::KeepAnchor);
        edit.setTextCursor(cursor);
        FindBar *bar = FindBar::attach(&edit);
        activate(&edit);
        bar->open();
        QCOMPARE(bar->field()->text(), QStringLiteral("this"));
        QCOMPARE(bar->matchCount(), 2);
    }

    void wrapToggle() {
        QPlainTextEdit edit;
        edit.setLineWrapMode(QPlainTextEdit::NoWrap);
        edit.setPlainText(QString(500, 'x'));
        FindBar *bar = FindBar::attach(&edit);
        activate(&edit);
        QVERIFY(!bar->wrapEnabled());
        QVERIFY(!bar->wrapAction()->isChecked());
        bar->open();
        bar->wrapButton()->click();
        QCOMPARE(edit.lineWrapMode(), QPlainTextEdit::WidgetWidth);
        QVERIFY(bar->wrapEnabled());
        bar->wrapButton()->click();
        QCOMPARE(edit.lineWrapMode(), QPlainTextEdit::NoWrap);
        // Alt+Z on the pane, bar closed.
        bar->dismiss();
        edit.setFocus();
        QTest::keyClick(&edit, Qt::Key_Z, Qt::AltModifier);
        QCOMPARE(edit.lineWrapMode(), QPlainTextEdit::WidgetWidth);
        QVERIFY(bar->wrapAction()->isChecked());
        bar->setWrapEnabled(false);
        QVERIFY(!bar->wrapAction()->isChecked());
    }

    void recountsWhenTheTextChanges() {
        QPlainTextEdit edit;
        edit.setPlainText("a b a");
        FindBar *bar = FindBar::attach(&edit);
        activate(&edit);
        bar->open();
        bar->setQuery("a");
        QCOMPARE(bar->matchCount(), 2);
        edit.setPlainText("a a a a"); // a live update of the pane
        QTRY_COMPARE(bar->matchCount(), 4);
        QCOMPARE(bar->statusText(), QStringLiteral("1 of 4"));
    }

    void worksOnQTextEdit() {
        QTextEdit edit;
        edit.setPlainText("Traceback\n  File x\nZeroDivisionError: division by zero");
        FindBar *bar = FindBar::attach(&edit);
        activate(&edit);
        bar->open();
        bar->setQuery("division");
        QCOMPARE(bar->matchCount(), 2);
        bar->findNext();
        QCOMPARE(bar->currentMatch(), 2);
        QCOMPARE(edit.textCursor().selectedText(), QStringLiteral("division"));
        bar->setWrapEnabled(false);
        QCOMPARE(edit.lineWrapMode(), QTextEdit::NoWrap);
    }

    void codeAndJsonPanesComeWithABar() {
        CodeEditor code;
        QVERIFY(FindBar::of(&code));
        QCOMPARE(FindBar::attach(&code), FindBar::of(&code));
        JsonView json;
        json.setJson(QJsonObject{{"traceback", "ZeroDivisionError"}, {"error", "Zero"}});
        FindBar *bar = FindBar::of(json.textView());
        QVERIFY(bar);
        activate(&json);
        json.findChild<QTabWidget *>()->setCurrentWidget(json.textView());
        json.textView()->setFocus();
        QTRY_VERIFY(json.textView()->hasFocus());
        QTest::keyClick(json.textView(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(bar->isVisible());
        QTest::keyClicks(bar->field(), "zero");
        QCOMPARE(bar->matchCount(), 2);
    }

    void ctrlFOpensTheFocusedPaneInAFloatingDock() {
        QMainWindow window;
        auto *central = new QPlainTextEdit(&window);
        central->setPlainText("main window text");
        window.setCentralWidget(central);
        auto *dock = new QDockWidget("Body", &window);
        auto *panel = new QWidget(dock);
        auto *first = new QPlainTextEdit(panel);
        auto *second = new QPlainTextEdit(panel);
        first->setPlainText("first pane: needle");
        second->setPlainText("second pane: needle needle");
        auto *layout = new QVBoxLayout(panel);
        layout->addWidget(first);
        layout->addWidget(second);
        dock->setWidget(panel);
        window.addDockWidget(Qt::RightDockWidgetArea, dock);
        FindBar *centralBar = FindBar::attach(central);
        FindBar *firstBar = FindBar::attach(first);
        FindBar *secondBar = FindBar::attach(second);
        window.resize(900, 600);
        activate(&window);
        dock->setFloating(true);
        dock->resize(500, 400);
        activate(dock);
        QVERIFY(dock->isWindow());

        second->setFocus();
        QTRY_VERIFY(second->hasFocus());
        QTest::keyClick(second, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(secondBar->isVisible()); // the focused pane's bar, in the floating window
        QVERIFY(!firstBar->isVisible());
        QVERIFY(!centralBar->isVisible());
        QTest::keyClicks(secondBar->field(), "needle");
        QCOMPARE(secondBar->statusText(), QStringLiteral("1 of 2"));

        first->setFocus();
        QTRY_VERIFY(first->hasFocus());
        QTest::keyClick(first, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(firstBar->isVisible());
        QVERIFY(firstBar->field()->hasFocus());
        QVERIFY(!centralBar->isVisible());
    }
};

QTEST_MAIN(TstFindBar)
#include "tst_findbar.moc"
