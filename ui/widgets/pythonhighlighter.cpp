#include "widgets/pythonhighlighter.h"

#include <QColor>
#include <QFont>

namespace loopscope {

namespace {

enum BlockState { Normal = 0, InTripleSingle = 1, InTripleDouble = 2 };

const char *const kKeywords[] = {
    "False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
    "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
    "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
    "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
    "while",   "with",     "yield",    "match",  "case"};

const char *const kBuiltins[] = {
    "abs",         "all",        "any",        "bool",     "bytes",      "dict",
    "dir",         "enumerate",  "filter",     "float",    "format",     "getattr",
    "hasattr",     "int",        "isinstance", "len",      "list",       "map",
    "max",         "min",        "open",       "print",    "range",      "repr",
    "reversed",    "round",      "set",        "setattr",  "sorted",     "str",
    "sum",         "super",      "tuple",      "type",     "zip",        "self",
    "Exception",   "ValueError", "TypeError",  "KeyError", "IndexError", "ZeroDivisionError",
    "RuntimeError"};

QString wordAlternation(const char *const *words, size_t count) {
    QStringList list;
    for (size_t i = 0; i < count; ++i)
        list.append(QLatin1String(words[i]));
    return QStringLiteral("\\b(") + list.join(u'|') + QStringLiteral(")\\b");
}

} // namespace

PythonHighlighter::PythonHighlighter(QTextDocument *document)
    : QSyntaxHighlighter(document) {
    m_rules.push_back(
        {QRegularExpression(wordAlternation(kKeywords, std::size(kKeywords))), Token::Keyword, 1});
    m_rules.push_back(
        {QRegularExpression(wordAlternation(kBuiltins, std::size(kBuiltins))), Token::Builtin, 1});
    m_rules.push_back(
        {QRegularExpression(QStringLiteral("\\b(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\\d["
                                           "\\d_]*\\.?\\d*(?:[eE][+-]?\\d+)?j?)\\b")),
         Token::Number, 1});
    m_rules.push_back({QRegularExpression(QStringLiteral("^\\s*(@[\\w.]+)")), Token::Decorator, 1});
    m_rules.push_back(
        {QRegularExpression(QStringLiteral("\\b(?:def|class)\\s+(\\w+)")), Token::Definition, 1});
    buildFormats(false);
}

void PythonHighlighter::buildFormats(bool dark) {
    const auto make = [](const QColor &color, bool bold = false, bool italic = false) {
        QTextCharFormat f;
        f.setForeground(color);
        if (bold)
            f.setFontWeight(QFont::Bold);
        f.setFontItalic(italic);
        return f;
    };
    m_formats[int(Token::Keyword)] =
        make(dark ? QColor(0xc6, 0x78, 0xdd) : QColor(0x00, 0x00, 0xa0), true);
    m_formats[int(Token::Builtin)] =
        make(dark ? QColor(0x56, 0xb6, 0xc2) : QColor(0x00, 0x70, 0x80));
    m_formats[int(Token::Number)] =
        make(dark ? QColor(0xd1, 0x9a, 0x66) : QColor(0x09, 0x86, 0x58));
    m_formats[int(Token::String)] =
        make(dark ? QColor(0x98, 0xc3, 0x79) : QColor(0xa3, 0x15, 0x15));
    m_formats[int(Token::Comment)] =
        make(dark ? QColor(0x7f, 0x84, 0x8e) : QColor(0x6a, 0x73, 0x7d), false, true);
    m_formats[int(Token::Decorator)] =
        make(dark ? QColor(0xe5, 0xc0, 0x7b) : QColor(0x80, 0x50, 0x00));
    m_formats[int(Token::Definition)] =
        make(dark ? QColor(0x61, 0xaf, 0xef) : QColor(0x79, 0x5e, 0x26), true);
}

void PythonHighlighter::setDarkPalette(bool dark) {
    buildFormats(dark);
    rehighlight();
}

QTextCharFormat PythonHighlighter::formatFor(Token token) const {
    return m_formats[int(token)];
}

int PythonHighlighter::highlightTripleString(const QString &text, int start,
                                             const QString &delimiter, int state) {
    const int searchFrom = start < 0 ? 0 : start + 3;
    const int end = int(text.indexOf(delimiter, searchFrom));
    const int from = start < 0 ? 0 : start;
    if (end < 0) {
        setFormat(from, int(text.size()) - from, m_formats[int(Token::String)]);
        setCurrentBlockState(state);
        return -1;
    }
    setFormat(from, end + 3 - from, m_formats[int(Token::String)]);
    return end + 3;
}

void PythonHighlighter::highlightBlock(const QString &text) {
    setCurrentBlockState(Normal);
    int pos = 0;
    const int previous = previousBlockState();
    if (previous == InTripleSingle || previous == InTripleDouble) {
        const QString delimiter =
            previous == InTripleSingle ? QStringLiteral("'''") : QStringLiteral("\"\"\"");
        pos = highlightTripleString(text, -1, delimiter, previous);
        if (pos < 0)
            return;
    }

    for (const Rule &rule : m_rules) {
        auto it = rule.pattern.globalMatch(text, pos);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            setFormat(int(m.capturedStart(rule.group)), int(m.capturedLength(rule.group)),
                      m_formats[int(rule.token)]);
        }
    }

    // Strings and comments last, scanning left to right so '#' inside a string and quotes
    // inside a comment are treated correctly; they override the word rules above.
    const int n = int(text.size());
    while (pos < n) {
        const QChar c = text.at(pos);
        if (c == u'#') {
            setFormat(pos, n - pos, m_formats[int(Token::Comment)]);
            return;
        }
        if (c == u'\'' || c == u'"') {
            const QString triple(3, c);
            if (text.mid(pos, 3) == triple) {
                pos = highlightTripleString(text, pos, triple,
                                            c == u'\'' ? InTripleSingle : InTripleDouble);
                if (pos < 0)
                    return;
                continue;
            }
            int end = pos + 1;
            while (end < n && text.at(end) != c) {
                if (text.at(end) == u'\\')
                    ++end;
                ++end;
            }
            end = std::min(end + 1, n);
            setFormat(pos, end - pos, m_formats[int(Token::String)]);
            pos = end;
            continue;
        }
        ++pos;
    }
}

} // namespace loopscope
