#include "widgets/connectsdkdialog.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>

namespace loopscope {

QString ConnectSdkDialog::snippet(Language language, const QUrl &baseUrl, const QString &model) {
    return ConnectSnippets::snippet(language, baseUrl, model);
}

ConnectSdkDialog::ConnectSdkDialog(const QUrl &baseUrl, const QString &model, QWidget *parent)
    : QDialog(parent)
    , m_tabs(new QTabWidget(this)) {
    setWindowTitle(tr("Connect an SDK"));
    auto *intro = new QLabel(
        tr("Point any OpenAI client at <b>%1</b>. Requests that declare the "
           "<code>code_interpreter</code> tool run their Python in a local sandbox and show up "
           "here live. Each snippet asks <b>%2</b> \"%3\" and prints the code it ran.")
            .arg(baseUrl.toString().toHtmlEscaped(), model.toHtmlEscaped(),
                 ConnectSnippets::prompt().toHtmlEscaped()),
        this);
    intro->setWordWrap(true);
    intro->setTextInteractionFlags(Qt::TextSelectableByMouse);

    for (const Language language : ConnectSnippets::all()) {
        auto *page = new QWidget(m_tabs);
        auto *view = new QPlainTextEdit(snippet(language, baseUrl, model), page);
        view->setReadOnly(true);
        view->setLineWrapMode(QPlainTextEdit::NoWrap);
        view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        m_views.insert(int(language), view);
        auto *copy = new QPushButton(tr("Copy"), page);
        connect(copy, &QPushButton::clicked, view,
                [view] { QApplication::clipboard()->setText(view->toPlainText()); });
        auto *layout = new QVBoxLayout(page);
        layout->addWidget(view, 1);
        layout->addWidget(copy, 0, Qt::AlignRight);
        m_tabs->addTab(page, ConnectSnippets::title(language));
    }

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(buttons);
    resize(720, 440);
}

QString ConnectSdkDialog::snippetText(Language language) const {
    const QPlainTextEdit *view = m_views.value(int(language));
    return view ? view->toPlainText() : QString();
}

} // namespace loopscope
