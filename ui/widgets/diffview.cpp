#include "widgets/diffview.h"

#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTextBlock>
#include <QVBoxLayout>

namespace loopscope {

namespace {

QColor mix(const QColor &a, const QColor &b, double t) {
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t),
                            float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

enum class Tint { None, Added, Removed, Filler };

// Tints relative to the palette's base: a quarter of the hue over a light or a dark base.
QColor tintColor(const QPalette &palette, Tint tint) {
    const QColor base = palette.color(QPalette::Base);
    switch (tint) {
    case Tint::Added:
        return mix(base, QColor(0x2e, 0xa0, 0x43), 0.28);
    case Tint::Removed:
        return mix(base, QColor(0xd1, 0x24, 0x2f), 0.28);
    case Tint::Filler:
        return palette.color(QPalette::AlternateBase);
    case Tint::None:
        break;
    }
    return base;
}

QPlainTextEdit *makePane(QWidget *parent) {
    auto *pane = new QPlainTextEdit(parent);
    pane->setReadOnly(true);
    pane->setLineWrapMode(QPlainTextEdit::NoWrap); // rows must stay aligned across the panes
    pane->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    pane->setUndoRedoEnabled(false);
    return pane;
}

void fill(QPlainTextEdit *pane, const QPalette &palette, const QStringList &lines,
          const QList<Tint> &tints) {
    pane->setPlainText(lines.join(u'\n'));
    QList<QTextEdit::ExtraSelection> selections;
    QTextBlock block = pane->document()->firstBlock();
    for (qsizetype i = 0; i < tints.size() && block.isValid(); ++i, block = block.next()) {
        if (tints.at(i) == Tint::None)
            continue;
        QTextEdit::ExtraSelection s;
        s.cursor = QTextCursor(block);
        s.format.setBackground(tintColor(palette, tints.at(i)));
        s.format.setProperty(QTextFormat::FullWidthSelection, true);
        selections.append(s);
    }
    pane->setExtraSelections(selections);
}

} // namespace

DiffView::DiffView(QWidget *parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_modeBox(new QComboBox(this))
    , m_leftTitle(new QLabel(this))
    , m_rightTitle(new QLabel(this))
    , m_stack(new QStackedWidget(this))
    , m_left(makePane(this))
    , m_right(makePane(this))
    , m_unified(makePane(this))
    , m_close(new QPushButton(tr("Close"), this)) {
    m_modeBox->addItem(tr("Side by side"));
    m_modeBox->addItem(tr("Unified"));
    auto *bar = new QHBoxLayout;
    bar->addWidget(m_summary, 1);
    bar->addWidget(m_modeBox);
    bar->addWidget(m_close);
    m_close->hide();
    connect(m_close, &QPushButton::clicked, this, &QWidget::close);

    auto *sides = new QWidget(this);
    auto *grid = new QHBoxLayout(sides);
    grid->setContentsMargins(0, 0, 0, 0);
    for (auto [title, pane] : {std::pair{m_leftTitle, m_left}, std::pair{m_rightTitle, m_right}}) {
        auto *column = new QVBoxLayout;
        title->setTextInteractionFlags(Qt::TextSelectableByMouse);
        title->setWordWrap(true);
        column->addWidget(title);
        column->addWidget(pane, 1);
        grid->addLayout(column);
    }
    m_stack->addWidget(sides);
    m_stack->addWidget(m_unified);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(m_stack, 1);

    // The two sides scroll together: their rows are aligned.
    for (auto [from, to] : {std::pair{m_left, m_right}, std::pair{m_right, m_left}}) {
        connect(from->verticalScrollBar(), &QScrollBar::valueChanged, to->verticalScrollBar(),
                &QScrollBar::setValue);
        connect(from->horizontalScrollBar(), &QScrollBar::valueChanged, to->horizontalScrollBar(),
                &QScrollBar::setValue);
    }
    connect(m_modeBox, &QComboBox::currentIndexChanged, this,
            [this](int index) { setMode(index == 1 ? Mode::Unified : Mode::SideBySide); });
    setTexts({}, {});
}

void DiffView::setTexts(const QString &left, const QString &right, const QString &leftTitle,
                        const QString &rightTitle) {
    setRows(TextDiff::diff(left, right), leftTitle, rightTitle);
}

void DiffView::setRows(const QList<TextDiff::Line> &rows, const QString &leftTitle,
                       const QString &rightTitle) {
    m_rows = rows;
    m_added = TextDiff::count(m_rows, TextDiff::Op::Added);
    m_removed = TextDiff::count(m_rows, TextDiff::Op::Removed);
    m_leftTitle->setText(leftTitle);
    m_rightTitle->setText(rightTitle);
    m_leftTitle->setVisible(!leftTitle.isEmpty());
    m_rightTitle->setVisible(!rightTitle.isEmpty());
    m_summary->setText(summary());
    render();
}

void DiffView::setSides(const FlowDiff::Sides &sides) {
    setRows(FlowDiff::rows(sides), sides.leftTitle, sides.rightTitle);
}

void DiffView::compareIterations(const QJsonObject &flow, int left, int right) {
    setSides(FlowDiff::iterations(flow, left, right));
}

void DiffView::compareFlows(const QJsonObject &left, const QJsonObject &right) {
    setSides(FlowDiff::flows(left, right));
}

QString DiffView::summary() const {
    if (m_added == 0 && m_removed == 0)
        return m_rows.isEmpty() ? tr("Nothing to compare") : tr("No differences");
    return tr("lines added: %1, removed: %2").arg(m_added).arg(m_removed);
}

QString DiffView::unifiedText() const {
    return TextDiff::unified(m_rows);
}

void DiffView::setMode(Mode mode) {
    m_mode = mode;
    const QSignalBlocker block(m_modeBox);
    m_modeBox->setCurrentIndex(mode == Mode::Unified ? 1 : 0);
    m_stack->setCurrentIndex(mode == Mode::Unified ? 1 : 0);
}

void DiffView::render() {
    m_rendering = true;
    using Op = TextDiff::Op;
    QStringList left, right, unified;
    QList<Tint> leftTints, rightTints, unifiedTints;
    // A run of removed lines followed by added ones sits side by side, row for row; the
    // shorter side is padded with tinted filler rows.
    qsizetype i = 0;
    while (i < m_rows.size()) {
        const TextDiff::Line &row = m_rows.at(i);
        if (row.op == Op::Equal) {
            left << row.text;
            right << row.text;
            leftTints << Tint::None;
            rightTints << Tint::None;
            ++i;
            continue;
        }
        QStringList removed, added;
        while (i < m_rows.size() && m_rows.at(i).op == Op::Removed)
            removed << m_rows.at(i++).text;
        while (i < m_rows.size() && m_rows.at(i).op == Op::Added)
            added << m_rows.at(i++).text;
        for (qsizetype k = 0; k < qMax(removed.size(), added.size()); ++k) {
            left << removed.value(k);
            leftTints << (k < removed.size() ? Tint::Removed : Tint::Filler);
            right << added.value(k);
            rightTints << (k < added.size() ? Tint::Added : Tint::Filler);
        }
    }
    for (const TextDiff::Line &row : std::as_const(m_rows)) {
        unifiedTints << (row.op == Op::Added     ? Tint::Added
                         : row.op == Op::Removed ? Tint::Removed
                                                 : Tint::None);
    }
    unified = TextDiff::splitLines(TextDiff::unified(m_rows));
    fill(m_left, palette(), left, leftTints);
    fill(m_right, palette(), right, rightTints);
    fill(m_unified, palette(), unified, unifiedTints);
    m_rendering = false;
}

void DiffView::changeEvent(QEvent *event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && !m_rendering)
        render();
}

void DiffView::keyPressEvent(QKeyEvent *event) {
    if (isWindow() && event->key() == Qt::Key_Escape && event->modifiers() == Qt::NoModifier) {
        close();
        return;
    }
    QWidget::keyPressEvent(event);
}

DiffView *DiffView::openWindow(QWidget *parent, const FlowDiff::Sides &sides) {
    auto *view = new DiffView(parent);
    view->setWindowFlag(Qt::Window);
    view->setAttribute(Qt::WA_DeleteOnClose);
    view->m_close->show();
    view->setWindowTitle(tr("Compare — %1 ↔ %2").arg(sides.leftTitle, sides.rightTitle));
    view->setSides(sides);
    view->resize(1000, 700);
    view->show();
    return view;
}

DiffView *DiffView::openIterations(QWidget *parent, const QJsonObject &flow, int left, int right) {
    return openWindow(parent, FlowDiff::iterations(flow, left, right));
}

DiffView *DiffView::openFlows(QWidget *parent, const QJsonObject &left, const QJsonObject &right) {
    return openWindow(parent, FlowDiff::flows(left, right));
}

} // namespace loopscope
