#include "widgets/codepanel.h"

#include "widgets/codeeditor.h"
#include "widgets/pythonhighlighter.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTreeWidget>
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
    , m_error(makeOutputView(this, tr("No error")))
    , m_images(new QListWidget(this))
    , m_files(new QTreeWidget(this)) {
    m_highlighter->setDarkPalette(isDark(palette()));
    m_code->setPlaceholderText(tr("Select a request that ran code."));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_stdout, tr("stdout"));
    m_tabs->addTab(m_stderr, tr("stderr"));
    m_tabs->addTab(m_error, tr("Error"));
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
    m_tabs->addTab(m_files, tr("Files"));

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

    m_shownImages = run.images;
    m_images->clear();
    for (const CodeRunImage &image : run.images) {
        QPixmap pixmap;
        pixmap.loadFromData(image.data);
        auto *item =
            new QListWidgetItem(QIcon(pixmap.scaled(m_images->iconSize(), Qt::KeepAspectRatio,
                                                    Qt::SmoothTransformation)),
                                image.name, m_images);
        item->setToolTip(tr("%1 — %2×%3").arg(image.name).arg(pixmap.width()).arg(pixmap.height()));
    }
    m_tabs->setTabText(3, run.images.isEmpty() ? tr("Images")
                                               : tr("Images (%1)").arg(run.images.size()));
    m_files->clear();
    for (const CodeRunFile &file : run.files) {
        auto *item = new QTreeWidgetItem(
            m_files, {file.path, QLocale().formattedDataSize(file.bytes), file.source});
        item->setToolTip(0, file.id);
    }
    m_tabs->setTabText(4,
                       run.files.isEmpty() ? tr("Files") : tr("Files (%1)").arg(run.files.size()));
    if (!error.isEmpty())
        m_tabs->setCurrentWidget(m_error);
    else if (!run.images.isEmpty())
        m_tabs->setCurrentWidget(m_images); // a chart is what a data-analysis run is for
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

void CodePanel::clear() {
    m_shownImages.clear();
    m_images->clear();
    m_files->clear();
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
