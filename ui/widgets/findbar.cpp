#include "widgets/findbar.h"

#include <QAction>
#include <QApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QStyle>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextEdit>
#include <QTimer>
#include <QToolButton>

namespace loopscope {

using namespace Qt::StringLiterals;

namespace {
// Counting stops here so a one-letter query on a huge body stays instant.
constexpr int kMaxMatches = 10000;
// Highlighting every match of a huge count costs more than it shows.
constexpr int kMaxHighlights = 2000;
} // namespace

void FindBar::scheduleRefresh() {
    // setPlainText replaces the document's text (and may swap layouts): recount once, after it.
    if (!isVisible() || m_refreshQueued)
        return;
    m_refreshQueued = true;
    QTimer::singleShot(0, this, [this] {
        m_refreshQueued = false;
        refresh();
    });
}

FindBar *FindBar::attach(QPlainTextEdit *edit) {
    if (FindBar *existing = of(edit))
        return existing;
    auto *bar = new FindBar(edit, edit->document());
    bar->m_plain = edit;
    bar->setUp();
    connect(edit, &QPlainTextEdit::textChanged, bar, &FindBar::scheduleRefresh);
    return bar;
}

FindBar *FindBar::attach(QTextEdit *edit) {
    if (FindBar *existing = of(edit))
        return existing;
    auto *bar = new FindBar(edit, edit->document());
    bar->m_rich = edit;
    bar->setUp();
    connect(edit, &QTextEdit::textChanged, bar, &FindBar::scheduleRefresh);
    return bar;
}

FindBar *FindBar::of(const QWidget *pane) {
    return pane ? pane->findChild<FindBar *>(QString(), Qt::FindDirectChildrenOnly) : nullptr;
}

FindBar::FindBar(QWidget *pane, QTextDocument *document)
    : QFrame(pane)
    , m_pane(pane)
    , m_document(document)
    , m_field(new QLineEdit(this))
    , m_status(new QLabel(this))
    , m_previous(new QToolButton(this))
    , m_next(new QToolButton(this))
    , m_wrapButton(new QToolButton(this))
    , m_close(new QToolButton(this))
    , m_wrapAction(new QAction(tr("Wrap lines"), pane))
    , m_findAction(new QAction(tr("Find…"), pane)) {}

void FindBar::setUp() {
    setObjectName(u"findBar"_s);
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    setCursor(Qt::ArrowCursor); // the pane's viewport shows an I-beam

    m_field->setPlaceholderText(tr("Find in this pane"));
    m_field->setClearButtonEnabled(true);
    m_field->setMinimumWidth(fontMetrics().horizontalAdvance(u'x') * 22);
    m_field->installEventFilter(this);
    // Wide enough for the longest state so the text never gets cut off.
    m_status->setMinimumWidth(
        qMax(fontMetrics().horizontalAdvance(tr("No matches")),
             fontMetrics().horizontalAdvance(tr("%1 of %2").arg(u"10000+"_s, u"10000+"_s))) +
        8);
    m_status->setAlignment(Qt::AlignCenter);

    m_previous->setArrowType(Qt::UpArrow);
    m_previous->setToolTip(tr("Previous match (Shift+Enter)"));
    m_next->setArrowType(Qt::DownArrow);
    m_next->setToolTip(tr("Next match (Enter)"));
    m_close->setText(u"✕"_s);
    m_close->setToolTip(tr("Close (Esc)"));
    m_close->setAutoRaise(true);

    m_wrapAction->setCheckable(true);
    m_wrapAction->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Z));
    m_wrapAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_wrapAction->setToolTip(tr("Wrap long lines (Alt+Z)"));
    m_wrapAction->setChecked(wrapEnabled());
    m_wrapButton->setDefaultAction(m_wrapAction);
    m_wrapButton->setText(tr("Wrap"));
    m_wrapButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
    connect(m_wrapAction, &QAction::toggled, this, &FindBar::setWrapEnabled);

    m_findAction->setShortcut(QKeySequence::Find);
    m_findAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(m_findAction, &QAction::triggered, this, &FindBar::open);
    m_pane->addAction(m_findAction);
    m_pane->addAction(m_wrapAction);

    connect(m_field, &QLineEdit::textChanged, this, [this] {
        m_current = -1;
        refresh();
    });
    connect(m_previous, &QToolButton::clicked, this, &FindBar::findPrevious);
    connect(m_next, &QToolButton::clicked, this, &FindBar::findNext);
    connect(m_close, &QToolButton::clicked, this, &FindBar::dismiss);

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 2, 2, 2);
    layout->setSpacing(2);
    layout->addWidget(m_field, 1);
    layout->addWidget(m_status);
    layout->addWidget(m_previous);
    layout->addWidget(m_next);
    layout->addWidget(m_wrapButton);
    layout->addWidget(m_close);

    m_pane->installEventFilter(this);
    hide();
    updateStatus();
}

bool FindBar::wrapEnabled() const {
    if (m_plain)
        return m_plain->lineWrapMode() != QPlainTextEdit::NoWrap;
    return m_rich && m_rich->lineWrapMode() != QTextEdit::NoWrap;
}

void FindBar::setWrapEnabled(bool on) {
    if (m_plain)
        m_plain->setLineWrapMode(on ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap);
    else if (m_rich)
        m_rich->setLineWrapMode(on ? QTextEdit::WidgetWidth : QTextEdit::NoWrap);
    const QSignalBlocker block(m_wrapAction);
    m_wrapAction->setChecked(on);
}

bool FindBar::noMatches() const {
    return !m_field->text().isEmpty() && m_matches.isEmpty();
}

QString FindBar::statusText() const {
    return m_status->text();
}

void FindBar::open() {
    const QString selected = m_plain ? m_plain->textCursor().selectedText()
                                     : (m_rich ? m_rich->textCursor().selectedText() : QString());
    // A selection within one line is what the user wants to find (U+2029 = paragraph break).
    if (!selected.isEmpty() && !selected.contains(QChar(0x2029)) && selected.size() < 200)
        m_field->setText(selected);
    show();
    raise();
    reposition();
    m_field->setFocus(Qt::ShortcutFocusReason);
    m_field->selectAll();
    refresh();
}

void FindBar::dismiss() {
    hide();
    m_matches.clear();
    m_current = -1;
    highlightAll();
    m_pane->setFocus(Qt::OtherFocusReason);
}

void FindBar::setQuery(const QString &text) {
    m_field->setText(text); // textChanged → refresh
}

void FindBar::refresh() {
    m_matches.clear();
    m_capped = false;
    const QString query = m_field->text();
    if (!query.isEmpty()) {
        QTextCursor cursor(m_document);
        while (true) {
            cursor = m_document->find(query, cursor);
            if (cursor.isNull())
                break;
            if (m_matches.size() >= kMaxMatches) {
                m_capped = true;
                break;
            }
            m_matches.append({cursor.selectionStart(), cursor.selectionEnd()});
        }
    }
    if (m_matches.isEmpty()) {
        m_current = -1;
    } else if (m_current < 0 || m_current >= m_matches.size()) {
        // Start at the first match at or after the pane's cursor, like editors do.
        const int from = paneSelection().first;
        m_current = 0;
        for (qsizetype i = 0; i < m_matches.size(); ++i) {
            if (m_matches.at(i).first >= from) {
                m_current = int(i);
                break;
            }
        }
    }
    highlightAll();
    if (m_current >= 0)
        select(m_current);
    updateStatus();
}

void FindBar::findNext() {
    if (m_matches.isEmpty())
        return;
    select(m_current < 0 ? 0 : int((m_current + 1) % m_matches.size()));
}

void FindBar::findPrevious() {
    if (m_matches.isEmpty())
        return;
    select(m_current <= 0 ? int(m_matches.size() - 1) : m_current - 1);
}

void FindBar::select(int index) {
    m_current = index;
    const auto [start, end] = m_matches.at(index);
    setPaneSelection(start, end);
    updateStatus();
}

void FindBar::highlightAll() {
    QList<QTextEdit::ExtraSelection> selections;
    QTextCharFormat format;
    format.setBackground(QColor(255, 200, 0, 110)); // readable on light and dark themes
    for (qsizetype i = 0; i < m_matches.size() && i < kMaxHighlights; ++i) {
        QTextCursor cursor(m_document);
        cursor.setPosition(m_matches.at(i).first);
        cursor.setPosition(m_matches.at(i).second, QTextCursor::KeepAnchor);
        selections.append({cursor, format});
    }
    if (m_plain)
        m_plain->setExtraSelections(selections);
    else if (m_rich)
        m_rich->setExtraSelections(selections);
}

QPair<int, int> FindBar::paneSelection() const {
    const QTextCursor c = m_plain ? m_plain->textCursor() : m_rich->textCursor();
    return {c.selectionStart(), c.selectionEnd()};
}

void FindBar::setPaneSelection(int start, int end) {
    QTextCursor cursor(m_document);
    cursor.setPosition(start);
    cursor.setPosition(end, QTextCursor::KeepAnchor);
    if (m_plain) {
        m_plain->setTextCursor(cursor);
        m_plain->ensureCursorVisible();
    } else {
        m_rich->setTextCursor(cursor);
        m_rich->ensureCursorVisible();
    }
}

void FindBar::updateStatus() {
    const bool none = noMatches();
    if (m_field->text().isEmpty())
        m_status->clear();
    else if (none)
        m_status->setText(tr("No matches"));
    else
        m_status->setText(tr("%1 of %2")
                              .arg(m_current + 1)
                              .arg(m_capped ? QString::number(kMaxMatches) + u'+'
                                            : QString::number(m_matches.size())));
    // Visible "no matches" state: a red-tinted field and label, like browsers do.
    m_field->setStyleSheet(none ? u"QLineEdit { background: rgba(220, 50, 50, 70); }"_s
                                : QString());
    m_status->setStyleSheet(none ? u"color: #d03030; font-weight: bold;"_s : QString());
    m_previous->setEnabled(!m_matches.isEmpty());
    m_next->setEnabled(!m_matches.isEmpty());
    emit matchesChanged(currentMatch(), matchCount());
}

void FindBar::reposition() {
    auto *area = static_cast<QAbstractScrollArea *>(m_pane);
    const QRect viewport = area->viewport()->geometry();
    const QSize hint = sizeHint();
    const int width = qMin(hint.width(), qMax(viewport.width() - 8, minimumSizeHint().width()));
    resize(width, hint.height());
    move(qMax(0, viewport.right() - width - 4), viewport.top() + 4);
}

bool FindBar::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_pane && event->type() == QEvent::Resize && isVisible())
        reposition();
    if (event->type() == QEvent::KeyPress) {
        auto *key = static_cast<QKeyEvent *>(event);
        if (key->key() == Qt::Key_Escape && isVisible() &&
            (watched == m_field || watched == m_pane)) {
            dismiss();
            return true;
        }
        if (watched == m_field && (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter)) {
            if (key->modifiers() & Qt::ShiftModifier)
                findPrevious();
            else
                findNext();
            return true;
        }
    }
    return QFrame::eventFilter(watched, event);
}

} // namespace loopscope
