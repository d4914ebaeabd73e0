#include "widgets/runview.h"

#include "inspect/textformat.h"
#include "models/flowqueryclient.h"
#include "widgets/findbar.h"

#include "common/futurechain.h"
#include "common/heaptrimmer.h"

#include <QAbstractTextDocumentLayout>
#include <QEvent>
#include <QFontDatabase>
#include <QLabel>
#include <QLocale>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>

namespace loopscope {

namespace {

const QString kExpandScheme = QStringLiteral("loopscope-run-expand");
constexpr int kPreviewLines = 3;

using Entry = Conversation::Entry;
using Kind = Conversation::Kind;
using Step = RunConversation::Step;

QString number(qint64 n) {
    return QLocale().toString(n);
}

// Who speaks, as the step's header says it.
QString speaker(const Entry &e) {
    switch (e.kind) {
    case Kind::Instructions:
        return e.role == QLatin1String("tools") ? RunView::tr("tool list") : e.role;
    case Kind::CodeCall:
    case Kind::ToolCall: {
        QString name = e.title;
        if (name.startsWith(QLatin1String("function call ")))
            name = name.mid(int(qstrlen("function call ")));
        if (!e.callId.isEmpty()) // the id is noise here; the pairing shows what it links
            name.remove(QStringLiteral(" (") + e.callId + u')');
        return RunView::tr("tool call %1").arg(name);
    }
    case Kind::ToolOutput:
    case Kind::CodeRun:
        return RunView::tr("result");
    case Kind::Reasoning:
        return RunView::tr("reasoning");
    case Kind::Error:
        return RunView::tr("error");
    default:
        return e.role.isEmpty() ? e.title : e.role;
    }
}

QColor speakerColor(const QPalette &p, const Entry &e) {
    if (e.kind == Kind::Error)
        return QColor(0xd1, 0x24, 0x2f);
    if (e.kind == Kind::Instructions || e.kind == Kind::Reasoning ||
        e.role == QLatin1String("system") || e.role == QLatin1String("developer"))
        return p.color(QPalette::PlaceholderText);
    if (e.role == QLatin1String("user"))
        return p.color(QPalette::Link);
    return p.color(QPalette::Text);
}

} // namespace

RunView::RunView(QWidget *parent)
    : QWidget(parent)
    , m_totals(new QLabel(this))
    , m_text(new QTextBrowser(this)) {
    m_totals->setWordWrap(true);
    m_totals->setTextFormat(Qt::PlainText); // a title is the user's text, never markup
    m_totals->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setOpenLinks(false);
    m_text->setPlaceholderText(tr("Select a run to read it as one conversation."));
    connect(m_text, &QTextBrowser::anchorClicked, this, [this](const QUrl &url) {
        if (url.scheme() != kExpandScheme)
            return;
        m_expanded.insert(url.path());
        render();
    });
    FindBar::attach(m_text);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_totals);
    layout->addWidget(m_text, 1);
}

void RunView::showRun(FlowQueryClient *client, const QString &runId) {
    const quint64 generation = ++m_generation;
    if (!client || runId.isEmpty()) {
        clear();
        return;
    }
    // Decoding a long agent run (100 KB requests, hundreds of turns) is the heavy part: it
    // runs on the query client's pool, flow by flow; the first turns are shown meanwhile.
    using Part = std::pair<RunConversation, qsizetype>; // the first turns, how many read
    whenFinished(client->submit<Part>([runId](const FlowQuery &query) {
        Part part;
        part.second = part.first.appendRun(query, runId, 0, kFirstTurns);
        if (part.second < kFirstTurns)
            part.first.finish();
        return part;
    }),
                 this, [this, client, generation, runId](const QFuture<Part> &f) {
                     if (generation != m_generation)
                         return; // a newer run was asked for meanwhile
                     const Part part = resultOr(f, Part());
                     setConversation(runId, part.first);
                     emit firstTurnsShown(runId);
                     if (part.second < kFirstTurns) {
                         emit loaded(runId);
                         return;
                     }
                     whenFinished(
                         client->submit<RunConversation>([part, runId](const FlowQuery &query) {
                             RunConversation run = part.first;
                             run.appendRun(query, runId, kFirstTurns);
                             run.finish();
                             return run;
                         }),
                         this, [this, generation, runId](const QFuture<RunConversation> &rest) {
                             if (generation != m_generation)
                                 return;
                             setConversation(runId, resultOr(rest, RunConversation()));
                             // The first turns' document is garbage now, megabytes for a
                             // long run: given back at once, not at HeapTrimmer's next pass.
                             HeapTrimmer::trimNow();
                             emit loaded(runId);
                         });
                 });
}

void RunView::setConversation(const QString &runId, const RunConversation &run) {
    if (runId != m_runId) {
        m_expanded.clear();
        m_expandAll = false;
    }
    m_runId = runId;
    m_run = run;
    render();
}

void RunView::clear() {
    m_runId.clear();
    m_run = {};
    m_expanded.clear();
    render();
}

QString RunView::text() const {
    return m_totals->text() + u'\n' + m_text->toPlainText();
}

void RunView::expandAll() {
    m_expandAll = true;
    render();
}

void RunView::scrollToFirstReply() {
    const QTextCursor found = m_text->document()->find(tr("Model reply"));
    if (found.isNull())
        return;
    const QRectF block = m_text->document()->documentLayout()->blockBoundingRect(found.block());
    m_text->verticalScrollBar()->setValue(int(block.top()) - m_text->viewport()->height() / 4);
}

QString RunView::tokensText(const RunConversation::Tokens &t) {
    QStringList out{tr("in %1").arg(number(t.input)), tr("out %1").arg(number(t.output))};
    if (t.cacheRead > 0 || t.cacheWrite > 0)
        out << tr("cache read %1").arg(number(t.cacheRead))
            << tr("cache write %1").arg(number(t.cacheWrite));
    if (t.costKnown)
        out << QStringLiteral("$") + QString::number(t.cost, 'f', 4);
    return out.join(QStringLiteral(" · "));
}

QString RunView::totalsText(const RunConversation::Totals &totals) {
    QStringList out{textformat::plural(totals.turns, tr("turn")), tokensText(totals.tokens),
                    textformat::formatDuration(totals.durationMs),
                    textformat::plural(totals.toolCalls, tr("tool call"))};
    if (totals.errors > 0)
        out << textformat::plural(totals.errors, tr("error"));
    return out.join(QStringLiteral(" · "));
}

void RunView::line(QTextCursor &cursor, const QString &text, const QColor &color, bool bold,
                   int indent, int topMargin) {
    QTextBlockFormat block;
    block.setLeftMargin(indent);
    block.setTopMargin(topMargin);
    QTextCharFormat chars;
    chars.setForeground(color);
    chars.setFontWeight(bold ? QFont::Bold : QFont::Normal);
    if (cursor.position() > 0)
        cursor.insertBlock(block, chars);
    else
        cursor.setBlockFormat(block);
    cursor.insertText(text, chars);
}

void RunView::renderBody(QTextCursor &cursor, const Entry &e, bool collapsed, const QString &key) {
    const QPalette p = palette();
    QString text = e.text;
    if (text.endsWith(u'\n'))
        text.chop(1);
    QTextBlockFormat body;
    body.setLeftMargin(24);
    QTextCharFormat chars;
    chars.setForeground(p.color(QPalette::Text));
    if (e.format != Conversation::Format::Text || e.kind == Kind::ToolOutput) {
        body.setBackground(p.color(QPalette::AlternateBase));
        chars.setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    }
    if (text.isEmpty()) {
        QTextCharFormat empty = chars;
        empty.setFontItalic(true);
        empty.setForeground(p.color(QPalette::PlaceholderText));
        cursor.insertBlock(body, empty);
        cursor.insertText(tr("(empty)"), empty);
        return;
    }
    const bool open = !collapsed || m_expandAll || m_expanded.contains(key);
    if (open) {
        cursor.insertBlock(body, chars);
        cursor.insertText(text, chars);
        return;
    }
    // Collapsed: a short preview, unless it is a prompt or a tool list (their first lines say
    // little), and a link with the size.
    if (e.kind != Kind::Instructions && e.role != QLatin1String("system") &&
        e.role != QLatin1String("developer")) {
        cursor.insertBlock(body, chars);
        cursor.insertText(text.left(600).split(u'\n').mid(0, kPreviewLines).join(u'\n'), chars);
    }
    QTextCharFormat link;
    link.setAnchor(true);
    link.setAnchorHref(kExpandScheme + u':' + key);
    link.setFontUnderline(true);
    link.setForeground(p.color(QPalette::Link));
    QTextBlockFormat more;
    more.setLeftMargin(24);
    cursor.insertBlock(more, link);
    cursor.insertText(tr("Show all: %1 lines, %2")
                          .arg(text.count(u'\n') + 1)
                          .arg(QLocale().formattedDataSize(text.toUtf8().size())),
                      link);
}

void RunView::renderStep(QTextCursor &cursor, const Step &s, const QString &key) {
    const QPalette p = palette();
    QString head = speaker(s.entry);
    if (!s.label.isEmpty())
        head += QStringLiteral(": ") + s.label;
    if (!s.entry.note.isEmpty())
        head += QStringLiteral("  (") + s.entry.note + u')';
    line(cursor, head, speakerColor(p, s.entry), true, 8, 6);
    if (!s.labelSaysAll)
        renderBody(cursor, s.entry, s.collapsed, key);
    if (!s.hasResult)
        return;
    QString result = tr("→ result");
    if (!s.result.note.isEmpty()) // "error" for a failed tool (Messages is_error)
        result += QStringLiteral("  (") + s.result.note + u')';
    line(cursor, result, speakerColor(p, s.result), true, 16, 2);
    renderBody(cursor, s.result, RunConversation::collapsedByDefault(s.result), key + u'r');
}

void RunView::renderTurn(QTextCursor &cursor, int index) {
    const RunConversation::Turn &t = m_run.turns().at(index);
    const QPalette p = palette();
    QStringList meta{t.model};
    if (t.status > 0)
        meta << tr("HTTP %1").arg(t.status);
    if (t.durationMs > 0)
        meta << textformat::formatDuration(t.durationMs);
    meta << tokensText(t.tokens);
    meta.removeAll(QString());
    line(cursor,
         tr("Turn %1").arg(index + 1) + QStringLiteral("  ·  ") + meta.join(QStringLiteral(" · ")),
         t.failed ? QColor(0xd1, 0x24, 0x2f) : p.color(QPalette::Text), true, 0,
         index == 0 ? 0 : 16);
    int paired = 0;
    for (const RunConversation::Turn &earlier : m_run.turns())
        for (const Step &s : earlier.reply)
            paired += s.hasResult && s.resultTurn == index ? 1 : 0;
    QStringList quiet;
    if (t.extends >= 0)
        quiet << tr("%1 from turn %2 resent (hidden)")
                     .arg(textformat::plural(t.resent, tr("item")))
                     .arg(t.extends + 1);
    if (paired > 0)
        quiet << tr("%1 shown with their calls").arg(textformat::plural(paired, tr("tool result")));
    if (!quiet.isEmpty())
        line(cursor, quiet.join(QStringLiteral("; ")), p.color(QPalette::PlaceholderText), false, 8,
             2);
    const QString turnKey = QString::number(index) + u'-';
    for (int i = 0; i < t.added.size(); ++i)
        renderStep(cursor, t.added.at(i), turnKey + u'a' + QString::number(i));
    line(cursor, tr("Model reply"), p.color(QPalette::PlaceholderText), true, 0, 8);
    if (t.reply.isEmpty())
        line(cursor, t.status == 0 ? tr("(no reply yet)") : tr("(empty reply)"),
             p.color(QPalette::PlaceholderText), false, 8);
    for (int i = 0; i < t.reply.size(); ++i)
        renderStep(cursor, t.reply.at(i), turnKey + u'p' + QString::number(i));
}

void RunView::render() {
    m_rendering = true;
    m_totals->setText(m_run.isEmpty() ? QString()
                                      : m_run.title() + u'\n' + totalsText(m_run.totals()));
    m_totals->setVisible(!m_run.isEmpty());
    const int scroll = m_text->verticalScrollBar()->value();
    QTextDocument *doc = m_text->document();
    doc->clear();
    QTextCursor cursor(doc);
    cursor.beginEditBlock();
    for (int i = 0; i < m_run.turns().size(); ++i)
        renderTurn(cursor, i);
    cursor.endEditBlock();
    m_text->verticalScrollBar()->setValue(scroll); // an expand keeps the reading position
    m_rendering = false;
}

void RunView::changeEvent(QEvent *event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && !m_rendering)
        render();
}

} // namespace loopscope
