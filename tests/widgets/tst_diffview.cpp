// DiffView offscreen: aligned sides, palette-derived tints, modes, two flows and two
// iterations recorded by a real in-memory FlowStore (tests/models/conversationflows.h).
#undef QT_NO_CAST_FROM_ASCII
#include "models/conversationflows.h"

#include "widgets/diffview.h"
#include "widgets/theme.h"

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QTextBlock>
#include <QtTest>

using namespace loopscope;

class TstDiffView : public QObject {
    Q_OBJECT
private slots:
    void diffView_data() {
        QTest::addColumn<QString>("left");
        QTest::addColumn<QString>("right");
        QTest::addColumn<QString>("shownLeft");
        QTest::addColumn<QString>("shownRight");
        QTest::addColumn<QString>("summary");
        QTest::newRow("changed line") << "a\nb\nc"
                                      << "a\nB\nc"
                                      << "a\nb\nc"
                                      << "a\nB\nc"
                                      << "lines added: 1, removed: 1";
        QTest::newRow("removed lines padded") << "a\nx\ny\nc"
                                              << "a\nc"
                                              << "a\nx\ny\nc"
                                              << "a\n\n\nc"
                                              << "lines added: 0, removed: 2";
        QTest::newRow("added line padded") << "a"
                                           << "a\nb"
                                           << "a\n"
                                           << "a\nb"
                                           << "lines added: 1, removed: 0";
        QTest::newRow("same") << "a\nb"
                              << "a\nb"
                              << "a\nb"
                              << "a\nb"
                              << "No differences";
        QTest::newRow("empty") << ""
                               << ""
                               << ""
                               << ""
                               << "Nothing to compare";
    }

    void diffView() {
        QFETCH(QString, left);
        QFETCH(QString, right);
        QFETCH(QString, shownLeft);
        QFETCH(QString, shownRight);
        QFETCH(QString, summary);
        DiffView view;
        view.setTexts(left, right, "left title", "right title");
        QCOMPARE(view.leftView()->toPlainText(), shownLeft);
        QCOMPARE(view.rightView()->toPlainText(), shownRight);
        QCOMPARE(view.leftView()->document()->blockCount(),
                 view.rightView()->document()->blockCount());
        QCOMPARE(view.summary(), summary);
        QVERIFY(view.findChildren<QLabel *>().size() >= 3);
    }

    void diffColoursAndModes() {
        DiffView view;
        view.setTexts("a\nb\nc", "a\nB\nc");
        const auto removed = view.leftView()->extraSelections();
        const auto added = view.rightView()->extraSelections();
        QCOMPARE(removed.size(), 1);
        QCOMPARE(added.size(), 1);
        QCOMPARE(removed.first().cursor.block().text(), QString("b"));
        const QColor red = removed.first().format.background().color();
        const QColor green = added.first().format.background().color();
        QVERIFY(red.red() > red.green());
        QVERIFY(green.green() > green.red());
        QCOMPARE(view.mode(), DiffView::Mode::SideBySide);
        view.setMode(DiffView::Mode::Unified);
        QCOMPARE(view.unifiedView()->toPlainText(), QString("  a\n- b\n+ B\n  c"));
        QCOMPARE(view.unifiedView()->extraSelections().size(), 2);
        QCOMPARE(view.findChild<QComboBox *>()->currentIndex(), 1);
        view.findChild<QComboBox *>()->setCurrentIndex(0);
        QCOMPARE(view.mode(), DiffView::Mode::SideBySide);

        // Dark theme: the tints are mixed from the dark base, not light fixed colours.
        view.setPalette(Theme::darkPalette());
        QApplication::processEvents();
        for (const auto &s :
             view.leftView()->extraSelections() + view.rightView()->extraSelections())
            QVERIFY(s.format.background().color().lightness() < 128);
    }

    void diffTwoFlowsAndIterations() {
        convo::Recorder recorder;
        const QJsonObject loop = recorder.responsesLoop();
        const QJsonObject chat = recorder.chatLoop();
        DiffView view;
        view.compareFlows(loop, chat);
        QVERIFY(view.addedCount() > 0 && view.removedCount() > 0);
        QVERIFY(view.unifiedText().contains("+ 5! = 120"));
        QVERIFY(view.unifiedText().contains("- 6*7 = 42"));
        view.compareIterations(loop, 0, 1);
        QVERIFY(view.rightView()->toPlainText().contains("[tool output (call_1)]"));
        QVERIFY(!view.leftView()->toPlainText().contains("[tool output (call_1)]"));
        DiffView *window = DiffView::openFlows(nullptr, loop, chat);
        QVERIFY(window->isWindow());
        QVERIFY(window->windowTitle().contains("req_loop"));
        QVERIFY(!view.closeButton()->isVisibleTo(&view)); // embedded: nothing to close
        QVERIFY(window->closeButton()->isVisible());
        const QPointer<DiffView> closed(window);
        window->closeButton()->click(); // deleted on close
        QVERIFY(!window->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(!closed, 5000);
    }

    // Esc closes a Compare window, also with the focus in one of its panes; an embedded diff
    // ignores it.
    void escapeClosesTheCompareWindow() {
        convo::Recorder recorder;
        const QJsonObject loop = recorder.responsesLoop();
        const QJsonObject chat = recorder.chatLoop();
        QWidget host; // a diff inside another window (the conversation view's)
        auto *embedded = new DiffView(&host);
        host.show();
        QTest::keyClick(embedded->leftView(), Qt::Key_Escape);
        QVERIFY(embedded->isVisible()); // close() would have hidden it
        DiffView *window = DiffView::openFlows(nullptr, loop, chat);
        const QPointer<DiffView> closed(window);
        QTest::keyClick(window->leftView(), Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(!closed, 5000);
    }
};

QTEST_MAIN(TstDiffView)
#include "tst_diffview.moc"
