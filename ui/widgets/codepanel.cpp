#include "widgets/codepanel.h"

#include "widgets/codeeditor.h"
#include "widgets/pythonhighlighter.h"

#include <QEvent>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

namespace loopscope {

namespace {

QPlainTextEdit *makeOutputView(QWidget *parent, const QString &placeholder) {
    auto *view = new QPlainTextEdit(parent);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    view->setPlaceholderText(placeholder);
    return view;
}

bool isDark(const QPalette &palette) {
    return palette.color(QPalette::Base).lightness() < 128;
}

} // namespace

CodePanel::CodePanel(QWidget *parent)
    : QWidget(parent)
    , m_code(new CodeEditor(this))
    , m_highlighter(new PythonHighlighter(m_code->document()))
    , m_summary(new QLabel(this))
    , m_tabs(new QTabWidget(this))
    , m_stdout(makeOutputView(this, tr("No output")))
    , m_stderr(makeOutputView(this, tr("Nothing on stderr")))
    , m_error(makeOutputView(this, tr("No error"))) {
    m_highlighter->setDarkPalette(isDark(palette()));
    m_code->setPlaceholderText(tr("Select a request that ran code."));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_stdout, tr("stdout"));
    m_tabs->addTab(m_stderr, tr("stderr"));
    m_tabs->addTab(m_error, tr("Error"));

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_code);
    splitter->addWidget(m_tabs);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(splitter, 1);
    clear();
}

void CodePanel::showRun(const CodeRunRecord &run) {
    m_code->setPlainText(run.code);
    m_stdout->setPlainText(run.stdoutText);
    m_stderr->setPlainText(run.stderrText);
    QString error;
    if (run.hasError()) {
        error = run.errorName + QStringLiteral(": ") + run.errorValue;
        if (!run.traceback.isEmpty())
            error += QStringLiteral("\n\n") + run.traceback;
    }
    m_error->setPlainText(error);
    m_tabs->setTabText(1, run.stderrText.isEmpty() ? tr("stderr") : tr("stderr •"));
    m_tabs->setTabText(2, error.isEmpty() ? tr("Error") : tr("Error •"));
    if (!error.isEmpty())
        m_tabs->setCurrentWidget(m_error);
    else
        m_tabs->setCurrentWidget(m_stdout);

    QStringList facts;
    facts << tr("%1 ms").arg(run.durationMs, 0, 'f', 1);
    if (!run.containerId.isEmpty())
        facts << tr("sandbox %1").arg(run.containerId);
    if (!run.sessionId.isEmpty())
        facts << tr("session %1").arg(run.sessionId);
    if (!run.executed)
        facts << tr("not executed");
    if (run.truncated)
        facts << tr("output truncated");
    if (run.timedOut)
        facts << tr("timed out");
    if (run.hasError())
        facts << run.errorName;
    m_summary->setText(facts.join(QStringLiteral(" · ")));
}

void CodePanel::clear() {
    m_code->clear();
    m_stdout->clear();
    m_stderr->clear();
    m_error->clear();
    m_summary->setText(tr("No code run selected"));
}

void CodePanel::changeEvent(QEvent *event) {
    if (event->type() == QEvent::PaletteChange)
        m_highlighter->setDarkPalette(isDark(palette()));
    QWidget::changeEvent(event);
}

} // namespace loopscope
