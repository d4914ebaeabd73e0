#include "widgets/codepanel.h"

#include "common/futurechain.h"
#include "models/containerfilecommands.h"
#include "models/looptimelinemodel.h"
#include "models/missingmodulehint.h"
#include "record/coderunhop.h"
#include "widgets/codeeditor.h"
#include "widgets/findbar.h"
#include "widgets/pythonhighlighter.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QMessageBox>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>

namespace loopscope {

namespace {

using Kind = InspectorEvent::Kind;

enum Tab { StdoutTab, StderrTab, ErrorTab, ImagesTab, FilesTab };
enum FileRole { FileIdRole = Qt::UserRole + 1 };

QPlainTextEdit *makeOutputView(QWidget *parent, const QString &placeholder) {
    auto *view = new QPlainTextEdit(parent);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    view->setPlaceholderText(placeholder);
    FindBar::attach(view); // Ctrl+F inside stdout, stderr and the error
    return view;
}

bool isDark(const QPalette &palette) {
    return palette.color(QPalette::Base).lightness() < 128;
}

bool finished(const QJsonObject &hop) {
    return !hop.value(QStringLiteral("output")).isNull() ||
           !hop.value(QStringLiteral("error")).isNull();
}

QString errorText(const QJsonObject &hop) {
    const QJsonObject error = hop.value(QStringLiteral("error")).toObject();
    if (error.isEmpty())
        return {};
    QString text = error.value(QStringLiteral("name")).toString() + QStringLiteral(": ") +
                   error.value(QStringLiteral("value")).toString();
    const QJsonValue traceback = error.value(QStringLiteral("traceback"));
    QString trace = traceback.toString();
    if (traceback.isArray()) {
        QStringList lines;
        for (const QJsonValue &line : traceback.toArray())
            lines << line.toString();
        trace = lines.join(u'\n');
    }
    if (!trace.isEmpty())
        text += QStringLiteral("\n\n") + trace;
    return text;
}

// Appends `text` at the end of a view, keeping the view at the bottom if it was there.
void appendText(QPlainTextEdit *view, const QString &text) {
    QScrollBar *bar = view->verticalScrollBar();
    const bool atBottom = bar->value() == bar->maximum();
    QTextCursor cursor(view->document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(text);
    if (atBottom)
        bar->setValue(bar->maximum());
}

// The stored hop after a CodeExecuted (CodeRunHop, as the recorder folds it), plus what only
// this panel shows from the event: the session and whether the code ran at all.
void applyExecuted(QJsonObject &hop, const QJsonObject &d) {
    CodeRunHop::applyExecuted(hop, d);
    if (const QString s = d.value(QStringLiteral("sessionId")).toString(); !s.isEmpty())
        hop.insert(QStringLiteral("session_id"), s);
    if (d.contains(QStringLiteral("executed")))
        hop.insert(QStringLiteral("executed"), d.value(QStringLiteral("executed")));
}

} // namespace

CodePanel::CodePanel(QWidget *parent)
    : QWidget(parent)
    , m_code(new CodeEditor(this))
    , m_highlighter(new PythonHighlighter(m_code->document()))
    , m_summary(new QLabel(this))
    , m_runs(new QComboBox(this))
    , m_wrap(new QCheckBox(tr("Wrap"), this))
    , m_tabs(new QTabWidget(this))
    , m_stdout(makeOutputView(this, tr("No output")))
    , m_stderr(makeOutputView(this, tr("Nothing on stderr")))
    , m_errorPage(nullptr)
    , m_hint(new QLabel(this))
    , m_error(makeOutputView(this, tr("No error")))
    , m_images(new QListWidget(this))
    , m_filesPage(new QWidget(this))
    , m_files(new QTreeWidget(m_filesPage))
    , m_filesStatus(new QLabel(m_filesPage))
    , m_openFile(new QPushButton(tr("Open"), m_filesPage))
    , m_saveFile(new QPushButton(tr("Save as…"), m_filesPage))
    , m_deleteFile(new QPushButton(tr("Delete…"), m_filesPage)) {
    m_highlighter->setDarkPalette(isDark(palette()));
    m_code->setPlaceholderText(tr("Select a request that ran code."));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_runs->setToolTip(tr("The flow's code runs"));
    m_runs->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(m_runs, &QComboBox::activated, this, [this](int index) {
        m_followNewest = index == runCount() - 1;
        showIndex(index);
    });
    m_wrap->setToolTip(tr("Wrap long lines of stdout, stderr and the error"));
    connect(m_wrap, &QCheckBox::toggled, this, &CodePanel::setWrap);
    m_hint->setWordWrap(true);
    m_hint->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_hint->setStyleSheet(QStringLiteral("QLabel { padding: 4px; border-radius: 3px; "
                                         "background: rgba(230, 160, 40, 60); }"));
    m_hint->hide();

    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_stdout, tr("stdout"));
    m_tabs->addTab(m_stderr, tr("stderr"));
    m_tabs->addTab(m_error, tr("Error"));
    // A traceback or a TimeoutError message is read whole: the error view wraps from the start.
    m_error->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_images->setViewMode(QListView::IconMode);
    m_images->setIconSize(QSize(160, 120));
    m_images->setResizeMode(QListView::Adjust);
    m_images->setMovement(QListView::Static);
    m_images->setSpacing(8);
    m_images->setToolTip(tr("Click a picture to enlarge and save it"));
    connect(m_images, &QListWidget::itemClicked, this,
            [this](QListWidgetItem *item) { openImage(m_images->row(item)); });
    m_tabs->addTab(m_images, tr("Images"));

    m_files->setColumnCount(3);
    m_files->setHeaderLabels({tr("File"), tr("Size"), tr("Source")});
    m_files->setRootIsDecorated(false);
    m_files->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_filesStatus->setWordWrap(true);
    connect(m_files, &QTreeWidget::itemDoubleClicked, this, [this] { openSelectedFile(); });
    connect(m_files, &QTreeWidget::itemSelectionChanged, this, [this] {
        const bool picked = !selectedFileId().isEmpty();
        m_openFile->setEnabled(picked);
        m_saveFile->setEnabled(picked);
        m_deleteFile->setEnabled(picked && m_fileCommands);
    });
    connect(m_openFile, &QPushButton::clicked, this, [this] { openSelectedFile(); });
    connect(m_saveFile, &QPushButton::clicked, this, [this] { saveSelectedFile(); });
    connect(m_deleteFile, &QPushButton::clicked, this, [this] { deleteSelectedFile(); });
    m_openFile->setEnabled(false);
    m_saveFile->setEnabled(false);
    m_deleteFile->setEnabled(false);
    auto *fileButtons = new QHBoxLayout;
    fileButtons->addWidget(m_filesStatus, 1);
    fileButtons->addWidget(m_openFile);
    fileButtons->addWidget(m_saveFile);
    fileButtons->addWidget(m_deleteFile);
    auto *filesLayout = new QVBoxLayout(m_filesPage);
    filesLayout->setContentsMargins(0, 0, 0, 0);
    filesLayout->addWidget(m_files, 1);
    filesLayout->addLayout(fileButtons);
    m_tabs->addTab(m_filesPage, tr("Files"));

    m_opener = [](const QUrl &url) { return QDesktopServices::openUrl(url); };
    m_chooseSavePath = [this](const QString &suggested) {
        return QFileDialog::getSaveFileName(this, tr("Save file"), suggested);
    };
    m_confirm = [this](const QString &question) {
        return QMessageBox::question(this, tr("Delete file"), question) == QMessageBox::Yes;
    };

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_summary, 1);
    top->addWidget(m_runs);
    top->addWidget(m_wrap);
    auto *bottom = new QWidget(this);
    auto *bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    bottomLayout->addWidget(m_hint);
    bottomLayout->addWidget(m_tabs, 1);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_code);
    splitter->addWidget(bottom);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);
    clear();
}

CodePanel::~CodePanel() = default;

QString CodePanel::shownCallId() const {
    if (m_shown < 0 || m_shown >= runCount())
        return {};
    return m_runHops[size_t(m_shown)].value(QStringLiteral("call_id")).toString();
}

int CodePanel::indexOf(const QString &callId) const {
    for (int i = runCount() - 1; i >= 0; --i)
        if (m_runHops[size_t(i)].value(QStringLiteral("call_id")).toString() == callId)
            return i;
    return -1;
}

void CodePanel::setFlow(const QJsonObject &flow) {
    const QString id = flow.value(QStringLiteral("id")).toString();
    std::vector<QJsonObject> runs;
    for (const QJsonValue &v : flow.value(QStringLiteral("hops")).toArray())
        if (v.toObject().value(QStringLiteral("kind")).toString() == QLatin1String("code_run"))
            runs.push_back(v.toObject());
    if (id.isEmpty() || id != m_flowId) {
        clear();
        m_flowId = id;
        m_runHops = std::move(runs);
        updateSelector();
        if (!m_runHops.empty())
            showIndex(runCount() - 1);
        return;
    }
    // A newer snapshot of the same flow. Live events may be ahead of it: a run the snapshot
    // does not finish yet keeps the output already streamed.
    const QString shown = shownCallId();
    for (QJsonObject &run : runs) {
        const int known = indexOf(run.value(QStringLiteral("call_id")).toString());
        if (known < 0 || finished(run))
            continue;
        const QJsonObject &live = m_runHops[size_t(known)];
        const auto seqOf = [](const QJsonObject &hop) {
            return hop.value(QStringLiteral("output_seq")).toDouble(-1);
        };
        if (finished(live) || seqOf(live) > seqOf(run))
            run = live;
    }
    for (const QJsonObject &live : m_runHops) { // runs only the events have told of yet
        const QString callId = live.value(QStringLiteral("call_id")).toString();
        if (std::none_of(runs.cbegin(), runs.cend(), [&](const QJsonObject &r) {
                return r.value(QStringLiteral("call_id")).toString() == callId;
            }))
            runs.push_back(live);
    }
    m_runHops = std::move(runs);
    updateSelector();
    const int index = m_followNewest ? runCount() - 1 : indexOf(shown);
    if (index == m_shown && index >= 0)
        render(); // streams are appended, not re-rendered, when only they grew
    else
        showIndex(index >= 0 ? index : runCount() - 1);
}

void CodePanel::applyLiveEvents(const QList<InspectorEvent> &events) {
    if (m_flowId.isEmpty())
        return;
    for (const InspectorEvent &e : events) {
        if (e.requestId != m_flowId)
            continue;
        const QJsonObject &d = e.data;
        const QString callId = d.value(QStringLiteral("callId")).toString();
        switch (e.kind) {
        case Kind::CodeRunStarted: {
            if (indexOf(callId) >= 0)
                break;
            m_runHops.push_back(CodeRunHop::started(e));
            updateSelector();
            if (m_followNewest)
                showIndex(runCount() - 1);
            break;
        }
        case Kind::CodeRunOutput: {
            const int index = indexOf(callId);
            if (index < 0)
                break;
            QJsonObject &hop = m_runHops[size_t(index)];
            // A snapshot may already hold this chunk (the store folds events before the
            // window's batch arrives): its output_seq says up to where.
            if (finished(hop) ||
                double(e.sequence) <= hop.value(QStringLiteral("output_seq")).toDouble(-1))
                break;
            CodeRunHop::appendOutput(hop, e);
            if (index == m_shown) {
                renderStreams();
                updateMarkers();
            }
            break;
        }
        case Kind::CodeExecuted: {
            int index = indexOf(callId);
            if (index < 0) {
                m_runHops.push_back(CodeRunHop::started(e));
                index = runCount() - 1;
                updateSelector();
            }
            applyExecuted(m_runHops[size_t(index)], d);
            if (m_followNewest && index == runCount() - 1 && index != m_shown)
                showIndex(index);
            else if (index == m_shown) {
                render();
                pickTab(); // the error (or the chart) is what a finished run has to say
            }
            // What the run wrote is in the container now.
            if (m_fileCommands && !m_filesContainer.isEmpty() &&
                d.value(QStringLiteral("containerId")).toString() == m_filesContainer)
                refreshFiles();
            break;
        }
        default:
            break;
        }
    }
}

void CodePanel::showCodeRun(const QString &callId) {
    const int index = indexOf(callId);
    if (index < 0)
        return;
    m_followNewest = index == runCount() - 1;
    if (index != m_shown)
        showIndex(index);
}

void CodePanel::updateSelector() {
    const int n = runCount();
    m_runs->blockSignals(true);
    while (m_runs->count() > n)
        m_runs->removeItem(m_runs->count() - 1);
    for (int i = 0; i < n; ++i) {
        const QString text = tr("Run %1 of %2").arg(i + 1).arg(n);
        if (i < m_runs->count())
            m_runs->setItemText(i, text);
        else
            m_runs->addItem(text);
    }
    if (m_shown >= 0 && m_shown < n)
        m_runs->setCurrentIndex(m_shown);
    m_runs->blockSignals(false);
    m_runs->setVisible(n > 1);
}

void CodePanel::showIndex(int index) {
    if (index < 0 || index >= runCount())
        return;
    m_shown = index;
    m_shownStdout.clear();
    m_shownStderr.clear();
    m_stdout->clear();
    m_stderr->clear();
    m_runs->blockSignals(true);
    m_runs->setCurrentIndex(index);
    m_runs->blockSignals(false);
    m_code->clear();
    render();
    pickTab();
    const QString container =
        m_runHops[size_t(index)].value(QStringLiteral("container_id")).toString();
    if (m_fileCommands && container != m_filesContainer) {
        m_filesContainer = container;
        refreshFiles();
    }
}

void CodePanel::pickTab() {
    const QJsonObject &hop = m_runHops[size_t(m_shown)];
    if (!errorText(hop).isEmpty())
        m_tabs->setCurrentWidget(m_error);
    else if (!hop.value(QStringLiteral("images")).toArray().isEmpty())
        m_tabs->setCurrentWidget(m_images); // a chart is what a data-analysis run is for
    else if (!finished(hop) && hop.value(QStringLiteral("stdout")).toString().isEmpty() &&
             !hop.value(QStringLiteral("stderr")).toString().isEmpty())
        m_tabs->setCurrentWidget(m_stderr);
    else
        m_tabs->setCurrentWidget(m_stdout);
}

void CodePanel::renderStreams() {
    const QJsonObject &hop = m_runHops[size_t(m_shown)];
    const auto sync = [](QPlainTextEdit *view, QString &shown, const QString &text) {
        if (text == shown)
            return;
        if (text.startsWith(shown)) // a live chunk: append, no re-render
            appendText(view, text.mid(shown.size()));
        else
            view->setPlainText(text);
        shown = text;
    };
    sync(m_stdout, m_shownStdout, hop.value(QStringLiteral("stdout")).toString());
    sync(m_stderr, m_shownStderr, hop.value(QStringLiteral("stderr")).toString());
}

void CodePanel::updateMarkers() {
    // Markers tell about the shown run only.
    const QJsonObject &hop = m_runHops[size_t(m_shown)];
    m_tabs->setTabText(StderrTab, hop.value(QStringLiteral("stderr")).toString().isEmpty()
                                      ? tr("stderr")
                                      : tr("stderr •"));
    m_tabs->setTabText(ErrorTab, errorText(hop).isEmpty() ? tr("Error") : tr("Error •"));
}

void CodePanel::render() {
    if (m_shown < 0 || m_shown >= runCount())
        return;
    const QJsonObject &hop = m_runHops[size_t(m_shown)];
    const QString code = hop.value(QStringLiteral("code")).toString();
    if (m_code->toPlainText() != code)
        m_code->setPlainText(code);
    renderStreams();
    const QString error = errorText(hop);
    if (m_error->toPlainText() != error)
        m_error->setPlainText(error);
    const QJsonObject errorObject = hop.value(QStringLiteral("error")).toObject();
    const QString hint =
        MissingModuleHint::forError(errorObject.value(QStringLiteral("name")).toString(),
                                    errorObject.value(QStringLiteral("value")).toString());
    m_hint->setText(hint);
    m_hint->setVisible(!hint.isEmpty());
    updateMarkers();

    m_shownImages.clear();
    m_images->clear();
    for (const QJsonValue &v : hop.value(QStringLiteral("images")).toArray()) {
        const QJsonObject image = v.toObject();
        const QString url = image.value(QStringLiteral("url")).toString();
        const qsizetype comma = url.indexOf(u',');
        if (!url.startsWith(QLatin1String("data:")) || comma < 0)
            continue;
        CodeRunImage picture{image.value(QStringLiteral("name")).toString(),
                             image.value(QStringLiteral("mime")).toString(),
                             QByteArray::fromBase64(url.mid(comma + 1).toLatin1())};
        QPixmap pixmap;
        pixmap.loadFromData(picture.data);
        auto *item =
            new QListWidgetItem(QIcon(pixmap.scaled(m_images->iconSize(), Qt::KeepAspectRatio,
                                                    Qt::SmoothTransformation)),
                                picture.name, m_images);
        item->setToolTip(
            tr("%1 — %2×%3").arg(picture.name).arg(pixmap.width()).arg(pixmap.height()));
        m_shownImages.append(picture);
    }
    m_tabs->setTabText(ImagesTab, m_shownImages.isEmpty()
                                      ? tr("Images")
                                      : tr("Images (%1)").arg(m_shownImages.size()));
    if (!m_fileCommands)
        showRunFiles();

    const bool running = !finished(hop);
    QStringList facts;
    if (running)
        facts << tr("running…");
    else
        facts << LoopTimelineModel::formatDuration(
            hop.value(QStringLiteral("duration_ms")).toDouble());
    if (const QString c = hop.value(QStringLiteral("container_id")).toString(); !c.isEmpty())
        facts << tr("sandbox %1").arg(c);
    if (const QString s = hop.value(QStringLiteral("session_id")).toString(); !s.isEmpty())
        facts << tr("session %1").arg(s);
    if (!hop.value(QStringLiteral("executed")).toBool(true))
        facts << tr("not executed");
    if (hop.value(QStringLiteral("truncated")).toBool())
        facts << tr("output truncated");
    if (hop.value(QStringLiteral("timed_out")).toBool())
        facts << tr("timed out");
    if (!errorObject.isEmpty())
        facts << errorObject.value(QStringLiteral("name")).toString();
    // Code edited at a breakpoint ran instead of the model's: say so, and keep the model's
    // version at hand.
    const QString editedFrom = hop.value(QStringLiteral("edited_from")).toString();
    const QString decision = hop.value(QStringLiteral("decision")).toString();
    if (!editedFrom.isEmpty())
        facts << tr("edited at a breakpoint, edited from the model's code (hover to see it)");
    else if (!decision.isEmpty() && decision != QLatin1String("continued"))
        facts << tr("breakpoint: %1").arg(decision);
    m_summary->setText(facts.join(QStringLiteral(" · ")));
    m_summary->setToolTip(editedFrom.isEmpty()
                              ? QString()
                              : tr("Edited from the model's code:\n\n%1").arg(editedFrom));
}

void CodePanel::showRunFiles() {
    m_files->clear();
    const QJsonArray files =
        m_shown >= 0 && m_shown < runCount()
            ? m_runHops[size_t(m_shown)].value(QStringLiteral("files")).toArray()
            : QJsonArray();
    for (const QJsonValue &v : files) {
        const QJsonObject file = v.toObject();
        auto *item = new QTreeWidgetItem(
            m_files, {file.value(QStringLiteral("path")).toString(),
                      QLocale().formattedDataSize(file.value(QStringLiteral("bytes")).toInteger()),
                      file.value(QStringLiteral("source")).toString()});
        item->setData(0, FileIdRole, file.value(QStringLiteral("id")).toString());
        item->setToolTip(0, file.value(QStringLiteral("id")).toString());
    }
    m_tabs->setTabText(FilesTab,
                       files.isEmpty() ? tr("Files") : tr("Files (%1)").arg(files.size()));
}

void CodePanel::showContainerFiles(const QJsonArray &files) {
    const QString selected = selectedFileId();
    m_files->clear();
    for (const QJsonValue &v : files) {
        const QJsonObject file = v.toObject();
        auto *item = new QTreeWidgetItem(
            m_files, {file.value(QStringLiteral("path")).toString(),
                      QLocale().formattedDataSize(file.value(QStringLiteral("bytes")).toInteger()),
                      file.value(QStringLiteral("source")).toString()});
        const QString id = file.value(QStringLiteral("id")).toString();
        item->setData(0, FileIdRole, id);
        item->setToolTip(0, id);
        if (id == selected)
            item->setSelected(true);
    }
    m_tabs->setTabText(FilesTab,
                       files.isEmpty() ? tr("Files") : tr("Files (%1)").arg(files.size()));
}

void CodePanel::setFileCommands(ContainerFileCommands *commands) {
    m_fileCommands = commands;
    m_filesContainer = containerOfShownRun();
    refreshFiles();
}

QString CodePanel::containerOfShownRun() const {
    if (m_shown < 0 || m_shown >= runCount())
        return {};
    return m_runHops[size_t(m_shown)].value(QStringLiteral("container_id")).toString();
}

void CodePanel::refreshFiles() {
    if (!m_fileCommands) {
        showRunFiles();
        return;
    }
    if (m_filesContainer.isEmpty()) {
        showContainerFiles({});
        m_filesStatus->setText(tr("No sandbox"));
        return;
    }
    const QString container = m_filesContainer;
    whenFinished(
        m_fileCommands->list(container), this,
        [this, container](const QFuture<Outcome<QJsonArray>> &listed) {
            if (container != m_filesContainer)
                return; // another run's container by now
            const auto files =
                resultOr(listed, Outcome<QJsonArray>::failure(tr("the proxy did not answer")));
            if (!files.ok()) {
                // An ephemeral sandbox ends with its request: what the run wrote is
                // still on record.
                showRunFiles();
                m_filesStatus->setText(tr("Sandbox %1: %2; listed: the files this run wrote")
                                           .arg(container, files.error));
                return;
            }
            showContainerFiles(files.value);
            m_filesStatus->setText(tr("Sandbox %1").arg(container));
        });
}

QString CodePanel::selectedFileId() const {
    const QList<QTreeWidgetItem *> items = m_files->selectedItems();
    return items.isEmpty() ? QString() : items.first()->data(0, FileIdRole).toString();
}

QString CodePanel::selectedFileName() const {
    const QList<QTreeWidgetItem *> items = m_files->selectedItems();
    return items.isEmpty() ? QString() : items.first()->text(0).section(u'/', -1);
}

bool CodePanel::openSelectedFile() {
    const QString id = selectedFileId();
    if (id.isEmpty() || !m_fileCommands)
        return false;
    const QString name = selectedFileName();
    whenFinished(
        m_fileCommands->read(m_filesContainer, id), this,
        [this, name](const QFuture<Outcome<QByteArray>> &read) {
            const auto bytes =
                resultOr(read, Outcome<QByteArray>::failure(tr("the proxy did not answer")));
            if (!bytes.ok()) {
                m_filesStatus->setText(tr("Could not read %1: %2").arg(name, bytes.error));
                return;
            }
            // A private directory per panel, removed with it: the viewer gets a copy.
            if (!m_openDir)
                m_openDir = std::make_unique<QTemporaryDir>();
            const QString path = m_openDir->filePath(name);
            QFile file(path);
            if (!file.open(QIODevice::WriteOnly) || file.write(bytes.value) != bytes.value.size()) {
                m_filesStatus->setText(tr("Could not write %1").arg(path));
                return;
            }
            file.close();
            m_filesStatus->setText(m_opener(QUrl::fromLocalFile(path))
                                       ? tr("Opened %1").arg(name)
                                       : tr("No application opens %1").arg(name));
        });
    return true;
}

bool CodePanel::saveSelectedFile() {
    const QString id = selectedFileId();
    if (id.isEmpty())
        return false;
    const QString name = selectedFileName();
    const QString path = m_chooseSavePath(QDir::home().filePath(name));
    if (path.isEmpty() || !m_fileCommands)
        return false;
    whenFinished(m_fileCommands->read(m_filesContainer, id), this,
                 [this, name, path](const QFuture<Outcome<QByteArray>> &read) {
                     const auto bytes = resultOr(
                         read, Outcome<QByteArray>::failure(tr("the proxy did not answer")));
                     QFile file(path);
                     if (!bytes.ok())
                         m_filesStatus->setText(tr("Could not read %1: %2").arg(name, bytes.error));
                     else if (!file.open(QIODevice::WriteOnly) ||
                              file.write(bytes.value) != bytes.value.size())
                         m_filesStatus->setText(tr("Could not write %1").arg(path));
                     else
                         m_filesStatus->setText(tr("Saved %1").arg(path));
                 });
    return true;
}

bool CodePanel::deleteSelectedFile() {
    const QString id = selectedFileId();
    if (id.isEmpty() || !m_fileCommands)
        return false;
    const QString name = selectedFileName();
    if (!m_confirm(tr("Delete %1 from sandbox %2?").arg(name, m_filesContainer)))
        return false;
    whenFinished(m_fileCommands->remove(m_filesContainer, id), this,
                 [this, name](const QFuture<Outcome<bool>> &removed) {
                     const auto done =
                         resultOr(removed, Outcome<bool>::failure(tr("the proxy did not answer")));
                     m_filesStatus->setText(
                         done.ok() ? tr("Deleted %1").arg(name)
                                   : tr("Could not delete %1: %2").arg(name, done.error));
                     refreshFiles();
                 });
    return true;
}

QDialog *CodePanel::openImage(int index) {
    if (index < 0 || index >= m_shownImages.size())
        return nullptr;
    const CodeRunImage image = m_shownImages.at(index);
    auto *dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(image.name);
    auto *label = new QLabel(dialog);
    QPixmap pixmap;
    pixmap.loadFromData(image.data);
    label->setPixmap(pixmap);
    auto *scroll = new QScrollArea(dialog);
    scroll->setWidget(label);
    scroll->setAlignment(Qt::AlignCenter);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    connect(buttons->button(QDialogButtonBox::Save), &QPushButton::clicked, dialog,
            [this, dialog, index, name = image.name] {
                const QString path = QFileDialog::getSaveFileName(dialog, tr("Save picture"), name,
                                                                  tr("PNG images (*.png)"));
                if (!path.isEmpty())
                    saveImage(index, path);
            });
    auto *layout = new QVBoxLayout(dialog);
    layout->addWidget(scroll, 1);
    layout->addWidget(buttons);
    dialog->resize(qMin(pixmap.width() + 40, 1200), qMin(pixmap.height() + 80, 900));
    dialog->show();
    return dialog;
}

bool CodePanel::saveImage(int index, const QString &path) const {
    if (index < 0 || index >= m_shownImages.size())
        return false;
    QFile file(path);
    return file.open(QIODevice::WriteOnly) &&
           file.write(m_shownImages.at(index).data) == m_shownImages.at(index).data.size();
}

void CodePanel::setWrap(bool on) {
    const auto mode = on ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap;
    m_stdout->setLineWrapMode(mode);
    m_stderr->setLineWrapMode(mode);
}

void CodePanel::clear() {
    m_flowId.clear();
    m_runHops.clear();
    m_shown = -1;
    m_followNewest = true;
    m_shownStdout.clear();
    m_shownStderr.clear();
    m_shownImages.clear();
    m_images->clear();
    m_files->clear();
    m_code->clear();
    m_stdout->clear();
    m_stderr->clear();
    m_error->clear();
    m_hint->clear();
    m_hint->hide();
    m_tabs->setTabText(StderrTab, tr("stderr"));
    m_tabs->setTabText(ErrorTab, tr("Error"));
    m_tabs->setTabText(ImagesTab, tr("Images"));
    m_tabs->setTabText(FilesTab, tr("Files"));
    m_filesContainer.clear();
    m_filesStatus->clear();
    updateSelector();
    m_summary->setText(tr("No code run selected"));
}

void CodePanel::changeEvent(QEvent *event) {
    if (event->type() == QEvent::PaletteChange)
        m_highlighter->setDarkPalette(isDark(palette()));
    QWidget::changeEvent(event);
}

} // namespace loopscope
