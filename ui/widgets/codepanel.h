#pragma once

#include "models/requestrecord.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTabWidget;

namespace loopscope {

class CodeEditor;
class PythonHighlighter;

// One code run: the Python source (highlighted, numbered), its stdout, stderr, error and
// traceback, and the facts around it (duration, sandbox, truncation, timeout).
class CodePanel : public QWidget {
    Q_OBJECT
public:
    explicit CodePanel(QWidget *parent = nullptr);

    CodeEditor *codeView() const { return m_code; }
    QPlainTextEdit *stdoutView() const { return m_stdout; }
    QPlainTextEdit *stderrView() const { return m_stderr; }
    QPlainTextEdit *errorView() const { return m_error; }
    QLabel *summaryLabel() const { return m_summary; }
    PythonHighlighter *highlighter() const { return m_highlighter; }
    QTabWidget *outputTabs() const { return m_tabs; }

public slots:
    void showRun(const loopscope::CodeRunRecord &run);
    void clear();

protected:
    void changeEvent(QEvent *event) override;

private:
    CodeEditor *m_code;
    PythonHighlighter *m_highlighter;
    QLabel *m_summary;
    QTabWidget *m_tabs;
    QPlainTextEdit *m_stdout;
    QPlainTextEdit *m_stderr;
    QPlainTextEdit *m_error;
};

} // namespace loopscope
