#include "widgets/pythonhighlighter.h"

#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>

using namespace loopscope;
using Token = PythonHighlighter::Token;

Q_DECLARE_METATYPE(PythonHighlighter::Token)

namespace {

// The colour the highlighter gave the character at (line, column); invalid when uncoloured.
QColor colourAt(const QTextDocument &doc, int line, int column) {
    const QTextBlock block = doc.findBlockByNumber(line);
    for (const QTextLayout::FormatRange &range : block.layout()->formats()) {
        // The highlighter also records uncoloured stretches: skip them.
        if (column >= range.start && column < range.start + range.length &&
            range.format.hasProperty(QTextFormat::ForegroundBrush))
            return range.format.foreground().color();
    }
    return {};
}

} // namespace

class TestPythonHighlighter : public QObject {
    Q_OBJECT

private slots:
    void tokens_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<int>("token");                                     // -1: not coloured
        const QString src = QStringLiteral("import math  # the maths\n"     // 0
                                           "@cache\n"                       // 1
                                           "def fib(n):\n"                  // 2
                                           "    s = 'not # a comment'\n"    // 3
                                           "    doc = \"\"\"first\n"        // 4
                                           "still a string: def if\n"       // 5
                                           "end\"\"\" ; x = 0x1F + 2.5e3\n" // 6
                                           "    return len(s) if n else None\n"); // 7
        QTest::newRow("keyword import") << src << 0 << 0 << int(Token::Keyword);
        QTest::newRow("plain name") << src << 0 << 8 << -1;
        QTest::newRow("comment") << src << 0 << 13 << int(Token::Comment);
        QTest::newRow("decorator") << src << 1 << 1 << int(Token::Decorator);
        QTest::newRow("def keyword") << src << 2 << 0 << int(Token::Keyword);
        QTest::newRow("function name") << src << 2 << 4 << int(Token::Definition);
        QTest::newRow("string start") << src << 3 << 8 << int(Token::String);
        QTest::newRow("hash inside string") << src << 3 << 12 << int(Token::String);
        QTest::newRow("triple string opens") << src << 4 << 10 << int(Token::String);
        QTest::newRow("keyword inside triple string") << src << 5 << 16 << int(Token::String);
        QTest::newRow("triple string closes") << src << 6 << 4 << int(Token::String);
        QTest::newRow("code after triple string") << src << 6 << 8 << -1;
        QTest::newRow("hex number") << src << 6 << 14 << int(Token::Number);
        QTest::newRow("float number") << src << 6 << 22 << int(Token::Number);
        QTest::newRow("builtin") << src << 7 << 11 << int(Token::Builtin);
        QTest::newRow("None") << src << 7 << 28 << int(Token::Keyword);
    }

    void tokens() {
        QFETCH(QString, source);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(int, token);
        QTextDocument doc;
        PythonHighlighter highlighter(&doc);
        doc.setPlainText(source);
        // Attaching schedules a highlight for the next event loop turn; do it now.
        highlighter.rehighlight();
        const QColor shown = colourAt(doc, line, column);
        if (token < 0)
            QVERIFY2(!shown.isValid(), qPrintable(shown.name()));
        else
            QCOMPARE(shown, highlighter.formatFor(Token(token)).foreground().color());
    }

    void darkPaletteChangesColours() {
        QTextDocument doc;
        PythonHighlighter highlighter(&doc);
        doc.setPlainText(QStringLiteral("import os"));
        highlighter.rehighlight();
        const QColor light = colourAt(doc, 0, 0);
        highlighter.setDarkPalette(true);
        const QColor dark = colourAt(doc, 0, 0);
        QVERIFY(light.isValid() && dark.isValid());
        QVERIFY(light != dark);
        QVERIFY(dark.lightness() > light.lightness());
    }
};

QTEST_MAIN(TestPythonHighlighter)
#include "tst_pythonhighlighter.moc"
