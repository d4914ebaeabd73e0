#pragma once

#include "inspect/inspectorevent.h"

#include <QJsonObject>
#include <QPointer>
#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QDialog;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QTemporaryDir;
class QTreeWidget;

namespace loopscope {

class CodeEditor;
class ContainerFileCommands;
class PythonHighlighter;

// A picture a run produced (the code_run hop's "images"), decoded from its data: URL.
struct CodeRunImage {
    QString name;
    QString mimeType;
    QByteArray data;
};

// The code runs of one flow: the Python source (highlighted, numbered), its stdout and stderr
// streamed as printed, error and traceback (with an apt hint for a missing Debian-packaged
// module), the pictures it produced and the container's files, and the facts around it. Several
// runs: a selector ("Run 2 of 2"); it follows the newest run until another one is picked.
class CodePanel : public QWidget {
    Q_OBJECT
public:
    explicit CodePanel(QWidget *parent = nullptr);
    ~CodePanel() override;

    CodeEditor *codeView() const { return m_code; }
    QPlainTextEdit *stdoutView() const { return m_stdout; }
    QPlainTextEdit *stderrView() const { return m_stderr; }
    QPlainTextEdit *errorView() const { return m_error; }
    QLabel *summaryLabel() const { return m_summary; }
    QLabel *hintLabel() const { return m_hint; }
    PythonHighlighter *highlighter() const { return m_highlighter; }
    QTabWidget *outputTabs() const { return m_tabs; }
    QComboBox *runSelector() const { return m_runs; }
    QCheckBox *wrapToggle() const { return m_wrap; }
    QListWidget *imagesView() const { return m_images; }
    QTreeWidget *filesView() const { return m_files; }
    QLabel *filesStatus() const { return m_filesStatus; }
    QString shownCallId() const;
    int runCount() const { return int(m_runHops.size()); }

    // The enlarged picture `index` of the shown run, with a Save button; owned by this panel.
    QDialog *openImage(int index);
    // Writes picture `index` to `path`; false on failure.
    bool saveImage(int index, const QString &path) const;

    // The Files tab lists the shown run's container through these (the proxy's file store);
    // without them it lists the files the shown run wrote.
    void setFileCommands(ContainerFileCommands *commands);
    // Seams for tests: how a file is opened, where Save as… writes, whether Delete may go on.
    void setOpener(std::function<bool(const QUrl &)> opener) { m_opener = std::move(opener); }
    void setSavePathChooser(std::function<QString(const QString &suggested)> chooser) {
        m_chooseSavePath = std::move(chooser);
    }
    void setConfirmation(std::function<bool(const QString &question)> confirm) {
        m_confirm = std::move(confirm);
    }
    // Files tab actions on the selected file (asynchronous; filesStatus() tells how it went).
    bool openSelectedFile();
    bool saveSelectedFile();
    bool deleteSelectedFile();
    void refreshFiles();

public slots:
    // The contract of every detail panel: the full flow (empty clears) and the live batches.
    void setFlow(const QJsonObject &flow);
    void applyLiveEvents(const QList<loopscope::InspectorEvent> &events);
    // Shows the run of this call id (the Loop panel's codeStepSelected).
    void showCodeRun(const QString &callId);
    void clear();

protected:
    void changeEvent(QEvent *event) override;

private:
    int indexOf(const QString &callId) const;
    void showIndex(int index);
    void render();
    void pickTab();
    void renderStreams();
    void updateSelector();
    void updateMarkers();
    void showRunFiles();
    void showContainerFiles(const QJsonArray &files);
    void setWrap(bool on);
    QString selectedFileId() const;
    QString selectedFileName() const;
    QString containerOfShownRun() const;

    CodeEditor *m_code;
    PythonHighlighter *m_highlighter;
    QLabel *m_summary;
    QComboBox *m_runs;
    QCheckBox *m_wrap;
    QTabWidget *m_tabs;
    QPlainTextEdit *m_stdout;
    QPlainTextEdit *m_stderr;
    QWidget *m_errorPage;
    QLabel *m_hint;
    QPlainTextEdit *m_error;
    QListWidget *m_images;
    QWidget *m_filesPage;
    QTreeWidget *m_files;
    QLabel *m_filesStatus;
    QPushButton *m_openFile;
    QPushButton *m_saveFile;
    QPushButton *m_deleteFile;

    QString m_flowId;
    std::vector<QJsonObject> m_runHops; // code_run hops, loop order; live ones kept current
    int m_shown = -1;
    bool m_followNewest = true;
    // What the stdout/stderr views hold, so live chunks are appended instead of re-rendered.
    QString m_shownStdout;
    QString m_shownStderr;
    QList<CodeRunImage> m_shownImages;

    QPointer<ContainerFileCommands> m_fileCommands;
    QString m_filesContainer;
    std::unique_ptr<QTemporaryDir> m_openDir;
    std::function<bool(const QUrl &)> m_opener;
    std::function<QString(const QString &)> m_chooseSavePath;
    std::function<bool(const QString &)> m_confirm;
};

} // namespace loopscope
