// TextDiff (line diff via dtl) on fixed cases, and FlowDiff over flows recorded by a real
// in-memory FlowStore: two iterations of one loop, two flows.
#undef QT_NO_CAST_FROM_ASCII
#include "models/conversationflows.h"

#include "models/flowdiff.h"
#include "models/textdiff.h"

#include <QtTest>

using namespace loopscope;
using Op = TextDiff::Op;

namespace {
// Each side's lines appear in order, all of them, with their line numbers: what lets the view
// align the two panes.
void checkSides(const QList<TextDiff::Line> &rows, const QString &left, const QString &right) {
    QStringList l, r;
    int nextLeft = 0, nextRight = 0;
    for (const TextDiff::Line &row : rows) {
        if (row.op != Op::Added) {
            QCOMPARE(row.leftLine, nextLeft++);
            l << row.text;
        }
        if (row.op != Op::Removed) {
            QCOMPARE(row.rightLine, nextRight++);
            r << row.text;
        }
    }
    QCOMPARE(l, TextDiff::splitLines(left));
    QCOMPARE(r, TextDiff::splitLines(right));
}
} // namespace

class TstTextDiff : public QObject {
    Q_OBJECT
private slots:
    void unified_data() {
        QTest::addColumn<QString>("left");
        QTest::addColumn<QString>("right");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<int>("added");
        QTest::addColumn<int>("removed");
        QTest::newRow("both empty") << ""
                                    << ""
                                    << "" << 0 << 0;
        QTest::newRow("equal") << "a\nb\n"
                               << "a\nb"
                               << "  a\n  b\n"
                               << 0 << 0;
        QTest::newRow("all added") << ""
                                   << "x\ny"
                                   << "+ x\n+ y\n"
                                   << 2 << 0;
        QTest::newRow("all removed") << "x\ny"
                                     << ""
                                     << "- x\n- y\n"
                                     << 0 << 2;
        QTest::newRow("one changed") << "a\nb\nc"
                                     << "a\nB\nc"
                                     << "  a\n- b\n+ B\n  c\n"
                                     << 1 << 1;
        QTest::newRow("insert middle") << "a\nc"
                                       << "a\nb\nc"
                                       << "  a\n+ b\n  c\n"
                                       << 1 << 0;
        QTest::newRow("delete first") << "a\nb\nc"
                                      << "b\nc"
                                      << "- a\n  b\n  c\n"
                                      << 0 << 1;
        QTest::newRow("left longer") << "a\nb\nc\nd\ne"
                                     << "b\nd"
                                     << "- a\n  b\n- c\n  d\n- e\n"
                                     << 0 << 3;
        QTest::newRow("blank lines") << "a\n\nb"
                                     << "a\nb"
                                     << "  a\n- \n  b\n"
                                     << 0 << 1;
        QTest::newRow("unicode") << "π = 3.14\n→"
                                 << "π = 3.1416\n→"
                                 << "- π = 3.14\n+ π = 3.1416\n  →\n"
                                 << 1 << 1;
    }

    void unified() {
        QFETCH(QString, left);
        QFETCH(QString, right);
        QFETCH(QString, expected);
        QFETCH(int, added);
        QFETCH(int, removed);
        const QList<TextDiff::Line> rows = TextDiff::diff(left, right);
        QCOMPARE(TextDiff::unified(rows), expected);
        QCOMPARE(TextDiff::count(rows, Op::Added), added);
        QCOMPARE(TextDiff::count(rows, Op::Removed), removed);
        checkSides(rows, left, right);
    }

    void twoIterationsOfOneLoop() {
        convo::Recorder recorder;
        const QJsonObject flow = recorder.responsesLoop();
        const FlowDiff::Sides sides = FlowDiff::iterations(flow, 0, 1);
        QCOMPARE(sides.leftTitle, QString("req_loop · iteration 1"));
        QCOMPARE(sides.rightTitle, QString("req_loop · iteration 2"));
        const QList<TextDiff::Line> rows = FlowDiff::rows(sides);
        checkSides(rows, sides.left, sides.right);
        const QString unified = TextDiff::unified(rows);
        // What iteration 2 sent in addition: the call and its output; the reply changed.
        QVERIFY2(unified.contains("+ [tool output (call_1)]\n"), qPrintable(unified));
        QVERIFY(!unified.contains("Iteration")); // the titles say which is which
        QVERIFY(unified.contains("  [instructions]\n  Use python.\n"));
        QVERIFY(unified.contains("+ 6*7 = 42"));
        // Part by part: the reply's code is not matched against the code sent back later.
        QVERIFY(unified.contains("  == Model reply\n- [code (call_1)]\n"));
        QVERIFY(unified.contains("  == Fed back\n- [output fed back (call_1)]\n- 42\n"));
        QVERIFY(unified.contains("+ [tool output (call_1)]\n+ 42\n"));
    }

    void twoFlows() {
        convo::Recorder recorder;
        const QJsonObject a = recorder.responsesLoop("req_a");
        const QJsonObject b = recorder.responsesLoop("req_b", true);
        const FlowDiff::Sides sides = FlowDiff::flows(a, b);
        QCOMPARE(sides.leftTitle, QString("req_a · gpt-test"));
        const QList<TextDiff::Line> rows = FlowDiff::rows(sides);
        checkSides(rows, sides.left, sides.right);
        QVERIFY(sides.left.contains("== Iteration 2 · Model reply\n[assistant]\n6*7 = 42"));
        // Same loop, streamed or not: the conversations are identical.
        QCOMPARE(TextDiff::count(rows, Op::Added), 0);
        QCOMPARE(TextDiff::count(rows, Op::Removed), 0);
        const QJsonObject c = recorder.chatLoop();
        const QList<TextDiff::Line> other = FlowDiff::rows(FlowDiff::flows(a, c));
        QVERIFY(TextDiff::count(other, Op::Added) > 0);
        QVERIFY(TextDiff::unified(other).contains("+ 5! = 120"));
    }
};

QTEST_GUILESS_MAIN(TstTextDiff)
#include "tst_textdiff.moc"
