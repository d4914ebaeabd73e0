#include "widgets/conversationview.h"

#include "inspect/textformat.h"
#include "widgets/diffview.h"
#include "widgets/findbar.h"
#include "widgets/pythonhighlighter.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLocale>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextLayout>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>

namespace loopscope {

namespace {

// A block longer than this shows its first kPreviewLines lines until expanded.
constexpr int kCollapseLines = 40;
constexpr qsizetype kCollapseChars = 4000;
constexpr int kPreviewLines = 6;
const QString kExpandScheme = QStringLiteral("loopscope-expand");

using Entry = Conversation::Entry;
using Kind = Conversation::Kind;
using Format = Conversation::Format;
using Section = Conversation::Section;

QColor mix(const QColor &a, const QColor &b, double t) {
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t),
                            float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

bool isDark(const QPalette &palette) {
    return palette.color(QPalette::Base).lightness() < 128;
}

// Speaker colours come from the palette (theme-aware): links for the user, the highlight for
// the model, a muted text colour for instructions, a red leaning on the text colour for errors.
QColor speakerColor(const QPalette &p, const Entry &e) {
    const QColor text = p.color(QPalette::Text);
    if (e.kind == Kind::Error)
        return mix(text, QColor(0xd1, 0x24, 0x2f), 0.7);
    if (e.kind == Kind::Instructions || e.role == QLatin1String("system") ||
        e.role == QLatin1String("developer"))
        return p.color(QPalette::PlaceholderText);
    if (e.role == QLatin1String("user"))
        return p.color(QPalette::Link);
    if (e.role == QLatin1String("tool"))
        return mix(text, QColor(0x2e, 0xa0, 0x43), 0.6);
    return mix(text, p.color(QPalette::Highlight), 0.7);
}

QString speakerLabel(const Entry &e) {
    switch (e.kind) {
    case Kind::CodeCall:
        return ConversationView::tr("assistant · code");
    case Kind::ToolCall:
        return e.clientSide ? ConversationView::tr("assistant · function call (run by the client)")
                            : ConversationView::tr("assistant · function call");
    case Kind::CodeRun:
        return ConversationView::tr("output fed back to the model");
    case Kind::ToolOutput:
        return ConversationView::tr("tool output");
    case Kind::Reasoning:
        return ConversationView::tr("reasoning");
    default:
        return e.role;
    }
}

// The grey text after the speaker: what the speaker label does not already say.
QString detail(const Entry &e) {
    if (e.title == e.role)
        return {};
    const bool plainCallTitle =
        e.kind == Kind::CodeRun ||
        (e.kind == Kind::ToolOutput && e.title.startsWith(QLatin1String("tool output"))) ||
        (e.kind == Kind::CodeCall && e.title.startsWith(QLatin1String("code ")));
    if (plainCallTitle)
        return e.callId;
    if (e.kind == Kind::ToolCall && e.title.startsWith(QLatin1String("function call ")))
        return e.title.mid(int(qstrlen("function call ")));
    return e.title;
}

} // namespace

ConversationView::ConversationView(QWidget *parent)
    : QWidget(parent)
    , m_iterations(new QComboBox(this))
    , m_showAll(new QCheckBox(tr("Show all sent items"), this))
    , m_compare(new QToolButton(this))
    , m_text(new QTextBrowser(this)) {
    m_showAll->setToolTip(
        tr("Show everything sent to the model, not only what is new since the previous "
           "iteration"));
    m_compare->setText(tr("Compare with previous"));
    m_compare->setToolTip(tr("Diff what was sent and replied at this iteration against the "
                             "previous one"));
    m_text->setOpenLinks(false);
    connect(m_text, &QTextBrowser::anchorClicked, this, [this](const QUrl &url) {
        if (url.scheme() != kExpandScheme)
            return;
        m_expanded.insert(url.path());
        render();
    });
    m_text->setPlaceholderText(tr("Select a request to see its conversation."));
    FindBar::attach(m_text); // Ctrl+F, "3 of 12", wrap

    auto *bar = new QHBoxLayout;
    bar->addWidget(m_iterations, 1);
    bar->addWidget(m_showAll);
    bar->addWidget(m_compare);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(m_text, 1);

    connect(m_iterations, &QComboBox::activated, this,
            [this](int index) { showIteration(m_iterations->itemData(index).toInt()); });
    connect(m_showAll, &QCheckBox::toggled, this, &ConversationView::setShowAllSent);
    connect(m_compare, &QToolButton::clicked, this, [this] {
        const int right =
            m_iteration >= 1 ? m_iteration : int(m_conversation.iterations().size()) - 1;
        if (right < 1)
            return;
        emit compareIterationsRequested(m_flow, right - 1, right);
        if (m_opensDiff)
            DiffView::openIterations(this, m_flow, right - 1, right);
    });
    updateControls();
}

int ConversationView::currentIteration() const {
    return m_iteration < 0 ? -1 : m_conversation.iterations().at(m_iteration).index;
}

bool ConversationView::showAllSent() const {
    return m_showAll->isChecked();
}

QString ConversationView::text() const {
    return m_text->toPlainText();
}

void ConversationView::setFlow(const QJsonObject &flow) {
    const bool sameFlow = flow.value(QStringLiteral("id")) == m_flow.value(QStringLiteral("id"));
    m_flow = flow;
    m_conversation = Conversation::fromFlow(flow);
    if (!sameFlow)
        m_expanded.clear();
    if (!sameFlow || m_iteration >= m_conversation.iterations().size())
        m_iteration = -1;
    updateControls();
    render();
}

void ConversationView::showIteration(int iteration) {
    // `iteration` is the hops' number; m_iteration the position in the list (the same for
    // every recorded loop, which numbers its model calls 0, 1, …).
    m_iteration = -1;
    const auto &iterations = m_conversation.iterations();
    for (qsizetype i = 0; i < iterations.size(); ++i)
        if (iterations.at(i).index == iteration)
            m_iteration = int(i);
    updateControls();
    render();
}

void ConversationView::setShowAllSent(bool all) {
    if (m_showAll->isChecked() != all) {
        m_showAll->setChecked(all); // re-enters through toggled
        return;
    }
    render();
}

void ConversationView::updateControls() {
    const QSignalBlocker block(m_iterations);
    m_iterations->clear();
    const auto &iterations = m_conversation.iterations();
    m_iterations->addItem(iterations.isEmpty() && m_conversation.isEmpty()
                              ? tr("No conversation")
                              : tr("All iterations (%1)").arg(iterations.size()),
                          -1);
    for (const Conversation::Iteration &it : iterations) {
        QStringList parts;
        parts << tr("new items sent: %1").arg(it.newCount());
        int code = 0, calls = 0;
        for (const Entry &e : it.reply) {
            code += e.kind == Kind::CodeCall ? 1 : 0;
            calls += e.kind == Kind::ToolCall ? 1 : 0;
        }
        if (code)
            parts << tr("code calls: %1").arg(code);
        if (calls)
            parts << tr("function calls: %1").arg(calls);
        if (it.status >= 400)
            parts << tr("HTTP %1").arg(it.status);
        m_iterations->addItem(tr("Iteration %1 — %2").arg(it.index + 1).arg(parts.join(u", ")),
                              it.index);
    }
    m_iterations->setCurrentIndex(m_iteration + 1);
    m_iterations->setEnabled(!m_conversation.isEmpty());
    m_compare->setEnabled(m_iteration >= 1 || (m_iteration < 0 && iterations.size() >= 2));
}

void ConversationView::heading(QTextCursor &cursor, const QString &text, int level) {
    QTextBlockFormat block;
    block.setTopMargin(level == 1 ? 14 : 8);
    block.setBottomMargin(2);
    QTextCharFormat chars;
    chars.setFontWeight(QFont::Bold);
    QFont f = font();
    chars.setFontPointSize(f.pointSizeF() * (level == 1 ? 1.25 : 1.05));
    chars.setForeground(palette().color(level == 1 ? QPalette::Text : QPalette::PlaceholderText));
    if (cursor.position() > 0 || !cursor.block().text().isEmpty())
        cursor.insertBlock(block, chars);
    else {
        cursor.setBlockFormat(block);
        cursor.setCharFormat(chars);
    }
    cursor.insertText(text, chars);
}

void ConversationView::renderEntry(QTextCursor &cursor, const Entry &e) {
    const QPalette p = palette();
    // Header line: speaker, title, note, "new".
    QTextBlockFormat headBlock;
    headBlock.setTopMargin(6);
    headBlock.setLeftMargin(8);
    QTextCharFormat speaker;
    speaker.setFontWeight(QFont::Bold);
    speaker.setForeground(speakerColor(p, e));
    cursor.insertBlock(headBlock, speaker);
    cursor.insertText(speakerLabel(e), speaker);
    QTextCharFormat meta;
    meta.setForeground(p.color(QPalette::PlaceholderText));
    if (const QString more = detail(e); !more.isEmpty())
        cursor.insertText(QStringLiteral("  ") + more, meta);
    if (!e.note.isEmpty()) {
        QTextCharFormat note = meta;
        note.setFontItalic(true);
        cursor.insertText(QStringLiteral("  (") + e.note + u')', note);
    }
    if (e.section == Section::Sent && e.isNew) {
        QTextCharFormat tag;
        tag.setFontWeight(QFont::Bold);
        tag.setForeground(p.color(QPalette::Highlight));
        cursor.insertText(QStringLiteral("  ") + tr("new"), tag);
    }

    // Body.
    QTextBlockFormat body;
    body.setLeftMargin(20);
    QTextCharFormat chars;
    chars.setForeground(p.color(QPalette::Text));
    const bool mono =
        e.format != Format::Text || e.kind == Kind::CodeRun || e.kind == Kind::ToolOutput;
    if (mono) {
        body.setBackground(p.color(QPalette::AlternateBase));
        chars.setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        chars.setForeground(p.color(QPalette::Text));
    }
    QString text = e.text;
    if (text.endsWith(u'\n'))
        text.chop(1); // the block ends the line; the exact text is in Raw
    if (text.isEmpty()) {
        QTextCharFormat empty = meta;
        empty.setFontItalic(true);
        cursor.insertBlock(body, empty);
        cursor.insertText(tr("(empty)"), empty);
        return;
    }
    if (e.format != Format::Python) {
        const qsizetype lines = text.count(u'\n') + 1;
        const QString key = collapseKey(e);
        if ((lines > kCollapseLines || text.size() > kCollapseChars) && !m_expanded.contains(key)) {
            QStringList preview = text.left(kCollapseChars / 4).split(u'\n');
            preview = preview.mid(0, kPreviewLines);
            cursor.insertBlock(body, chars);
            cursor.insertText(preview.join(u'\n'), chars);
            QTextCharFormat link = meta;
            link.setAnchor(true);
            link.setAnchorHref(kExpandScheme + u':' + key);
            link.setFontUnderline(true);
            link.setForeground(p.color(QPalette::Link));
            QTextBlockFormat more;
            more.setLeftMargin(20);
            cursor.insertBlock(more, link);
            cursor.insertText(tr("Show all: %1 lines, %2")
                                  .arg(lines)
                                  .arg(QLocale().formattedDataSize(text.toUtf8().size())),
                              link);
            return;
        }
        cursor.insertBlock(body, chars);
        cursor.insertText(text, chars);
        return;
    }
    // Python: colour it in a scratch document with the Code panel's highlighter, then copy
    // the text and its highlight ranges here (one document stays selectable and searchable).
    QTextDocument scratch;
    scratch.setPlainText(text);
    PythonHighlighter highlighter(&scratch);
    highlighter.setDarkPalette(isDark(p));
    highlighter.rehighlight();
    for (QTextBlock line = scratch.firstBlock(); line.isValid(); line = line.next()) {
        cursor.insertBlock(body, chars);
        const int start = cursor.position();
        cursor.insertText(line.text(), chars);
        for (const QTextLayout::FormatRange &range : line.layout()->formats()) {
            QTextCursor c(cursor.document());
            c.setPosition(start + range.start);
            c.setPosition(start + range.start + range.length, QTextCursor::KeepAnchor);
            c.mergeCharFormat(range.format);
        }
    }
}

QString ConversationView::collapseKey(const Entry &e) {
    // The same block repeated in every iteration (an agent's system prompt) opens everywhere.
    return QString::number(int(e.kind)) + u'-' + QString::number(e.text.size()) + u'-' +
           QString::number(qHash(e.title + e.text), 16);
}

void ConversationView::renderEntries(QTextCursor &cursor, const QList<Entry> &entries) {
    for (const Entry &e : entries)
        renderEntry(cursor, e);
}

void ConversationView::renderIteration(QTextCursor &cursor, int index) {
    const Conversation::Iteration &it = m_conversation.iterations().at(index);
    QStringList meta;
    if (it.status > 0)
        meta << tr("HTTP %1").arg(it.status);
    if (it.latencyMs > 0)
        meta << textformat::formatDuration(it.latencyMs);
    if (const int tokens = it.usage.value(QStringLiteral("total_tokens")).toInt(); tokens > 0)
        meta << tr("tokens: %1").arg(tokens);
    heading(cursor,
            tr("Iteration %1").arg(it.index + 1) +
                (meta.isEmpty() ? QString() : QStringLiteral("  ·  ") + meta.join(u" · ")),
            1);
    QList<Entry> sent;
    for (const Entry &e : it.sent)
        if (showAllSent() || e.isNew)
            sent << e;
    const int hidden = int(it.sent.size() - sent.size());
    heading(
        cursor,
        hidden > 0
            ? tr("Sent to the model — new: %1, earlier (hidden): %2").arg(sent.size()).arg(hidden)
            : tr("Sent to the model"),
        2);
    if (sent.isEmpty()) {
        QTextCharFormat none;
        none.setFontItalic(true);
        none.setForeground(palette().color(QPalette::PlaceholderText));
        QTextBlockFormat b;
        b.setLeftMargin(8);
        cursor.insertBlock(b, none);
        cursor.insertText(tr("nothing new"), none);
    }
    renderEntries(cursor, sent);
    heading(cursor, tr("Model reply"), 2);
    if (it.reply.isEmpty()) {
        QTextCharFormat none;
        none.setFontItalic(true);
        none.setForeground(palette().color(QPalette::PlaceholderText));
        QTextBlockFormat b;
        b.setLeftMargin(8);
        cursor.insertBlock(b, none);
        // status 0: the call is still in flight (a running pass-through flow).
        cursor.insertText(it.status == 0 ? tr("(no reply yet)") : tr("(empty reply)"), none);
    }
    renderEntries(cursor, it.reply);
    if (!it.fedBack.isEmpty()) {
        heading(cursor, tr("Fed back to the model"), 2);
        renderEntries(cursor, it.fedBack);
    }
}

void ConversationView::render() {
    m_rendering = true;
    const int scroll = m_text->verticalScrollBar()->value();
    QTextDocument *doc = m_text->document();
    doc->clear();
    if (!m_conversation.isEmpty()) {
        QTextCursor cursor(doc);
        cursor.beginEditBlock();
        const int count = int(m_conversation.iterations().size());
        if (m_iteration < 0) {
            for (int i = 0; i < count; ++i)
                renderIteration(cursor, i);
        } else {
            renderIteration(cursor, m_iteration);
        }
        if ((m_iteration < 0 || m_iteration == count - 1) &&
            !m_conversation.finalAnswer().isEmpty()) {
            heading(
                cursor,
                tr("Final answer to the client") +
                    (m_conversation.finalStatus() > 0
                         ? QStringLiteral("  ·  ") + tr("HTTP %1").arg(m_conversation.finalStatus())
                         : QString()),
                1);
            renderEntries(cursor, m_conversation.finalAnswer());
        }
        cursor.endEditBlock();
    }
    m_text->verticalScrollBar()->setValue(scroll); // a live reload keeps the reading position
    m_rendering = false;
}

void ConversationView::changeEvent(QEvent *event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && !m_rendering)
        render();
}

} // namespace loopscope
