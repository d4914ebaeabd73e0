#pragma once

#include "models/requestrecord.h"

#include <QWidget>

class QDialog;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QTabWidget;
class QTreeWidget;

namespace loopscope {

class CodeEditor;
class PythonHighlighter;

// One code run: the Python source (highlighted, numbered), its stdout, stderr, error and
// traceback, the pictures it produced (thumbnails; click to enlarge and save) and the container
// files it wrote, and the facts around it (duration, sandbox, truncation, timeout).
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
    QListWidget *imagesView() const { return m_images; }
    QTreeWidget *filesView() const { return m_files; }

    // The enlarged picture `index` of the shown run, with a Save button; owned by this panel.
    QDialog *openImage(int index);
    // Writes picture `index` to `path`; false on failure.
    bool saveImage(int index, const QString &path) const;

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
    QListWidget *m_images;
    QTreeWidget *m_files;
    QList<CodeRunImage> m_shownImages;
};

} // namespace loopscope
