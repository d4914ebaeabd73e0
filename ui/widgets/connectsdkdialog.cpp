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

QString ConnectSdkDialog::snippet(Language language, const QUrl &baseUrl) {
    const QString base = baseUrl.toString(QUrl::StripTrailingSlash);
    switch (language) {
    case Language::Python:
        return QStringLiteral("# pip install openai\n"
                              "# or without code changes: export OPENAI_BASE_URL=%1\n"
                              "from openai import OpenAI\n"
                              "\n"
                              "client = OpenAI(base_url=\"%1\", api_key=\"sk-anything\")\n"
                              "response = client.responses.create(\n"
                              "    model=\"gpt-4.1-mini\",\n"
                              "    tools=[{\"type\": \"code_interpreter\", \"container\": "
                              "{\"type\": \"auto\"}}],\n"
                              "    input=\"Use Python to compute the 20th Fibonacci number.\",\n"
                              ")\n"
                              "print(response.output_text)\n")
            .arg(base);
    case Language::Node:
        return QStringLiteral(
                   "// npm install openai\n"
                   "// or without code changes: export OPENAI_BASE_URL=%1\n"
                   "import OpenAI from \"openai\";\n"
                   "\n"
                   "const client = new OpenAI({ baseURL: \"%1\", apiKey: \"sk-anything\" });\n"
                   "const response = await client.responses.create({\n"
                   "  model: \"gpt-4.1-mini\",\n"
                   "  tools: [{ type: \"code_interpreter\", container: { type: \"auto\" } }],\n"
                   "  input: \"Use Python to compute the 20th Fibonacci number.\",\n"
                   "});\n"
                   "console.log(response.output_text);\n")
            .arg(base);
    case Language::Curl:
        return QStringLiteral(
                   "curl %1/responses \\\n"
                   "  -H \"Content-Type: application/json\" \\\n"
                   "  -H \"Authorization: Bearer $OPENAI_API_KEY\" \\\n"
                   "  -d '{\n"
                   "    \"model\": \"gpt-4.1-mini\",\n"
                   "    \"tools\": [{\"type\": \"code_interpreter\", \"container\": {\"type\": "
                   "\"auto\"}}],\n"
                   "    \"input\": \"Use Python to compute the 20th Fibonacci number.\"\n"
                   "  }'\n")
            .arg(base);
    }
    return {};
}

ConnectSdkDialog::ConnectSdkDialog(const QUrl &baseUrl, QWidget *parent)
    : QDialog(parent)
    , m_tabs(new QTabWidget(this)) {
    setWindowTitle(tr("Connect an SDK"));
    auto *intro = new QLabel(
        tr("Point any OpenAI client at <b>%1</b>. Requests that declare the "
           "<code>code_interpreter</code> tool run their Python in a local sandbox and show up "
           "here live.")
            .arg(baseUrl.toString().toHtmlEscaped()),
        this);
    intro->setWordWrap(true);
    intro->setTextInteractionFlags(Qt::TextSelectableByMouse);

    const struct {
        Language language;
        QString title;
    } tabs[] = {{Language::Python, QStringLiteral("Python")},
                {Language::Node, QStringLiteral("Node")},
                {Language::Curl, QStringLiteral("curl")}};
    for (const auto &tab : tabs) {
        auto *page = new QWidget(m_tabs);
        auto *view = new QPlainTextEdit(snippet(tab.language, baseUrl), page);
        view->setReadOnly(true);
        view->setLineWrapMode(QPlainTextEdit::NoWrap);
        view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        m_views[int(tab.language)] = view;
        auto *copy = new QPushButton(tr("Copy"), page);
        connect(copy, &QPushButton::clicked, view,
                [view] { QApplication::clipboard()->setText(view->toPlainText()); });
        auto *layout = new QVBoxLayout(page);
        layout->addWidget(view, 1);
        layout->addWidget(copy, 0, Qt::AlignRight);
        m_tabs->addTab(page, tab.title);
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
    return m_views[int(language)]->toPlainText();
}

} // namespace loopscope
