#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

#include <vector>

namespace loopscope {

// Python colouring for the Code panel: keywords, builtins, numbers, decorators, comments and
// strings, including triple-quoted strings that span lines (tracked in the block state).
// Hand-written: Qt has no Python highlighter and KSyntaxHighlighting is not packaged for Qt 6 in
// Debian 12.
class PythonHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    explicit PythonHighlighter(QTextDocument *document);

    // Re-derives the colours from a palette (light or dark) and re-highlights.
    void setDarkPalette(bool dark);

    enum class Token { Keyword, Builtin, Number, String, Comment, Decorator, Definition };
    QTextCharFormat formatFor(Token token) const;

protected:
    void highlightBlock(const QString &text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        Token token;
        int group;
    };
    void buildFormats(bool dark);
    // Highlights a triple-quoted string that starts at `start` (or continues from the previous
    // block when start < 0); returns where highlighting may continue, or -1 at end of block.
    int highlightTripleString(const QString &text, int start, const QString &delimiter, int state);

    std::vector<Rule> m_rules;
    QTextCharFormat m_formats[7];
};

} // namespace loopscope
