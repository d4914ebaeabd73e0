#pragma once

#include "models/connectsnippets.h"

#include <QDialog>
#include <QHash>
#include <QUrl>

class QPlainTextEdit;
class QTabWidget;

namespace loopscope {

// Copy-ready client snippets (Python, Node, curl, LiteLLM, Agents SDK) pointed at the running
// proxy, each running a code-interpreter loop against `model` (ConnectSnippets).
class ConnectSdkDialog : public QDialog {
    Q_OBJECT
public:
    using Language = ConnectSnippets::Language;

    explicit ConnectSdkDialog(const QUrl &baseUrl,
                              const QString &model = ConnectSnippets::demoModel(),
                              QWidget *parent = nullptr);

    // `baseUrl` is the /v1 base, e.g. http://127.0.0.1:4000/v1.
    static QString snippet(Language language, const QUrl &baseUrl,
                           const QString &model = ConnectSnippets::demoModel());
    QTabWidget *tabs() const { return m_tabs; }
    QString snippetText(Language language) const;

private:
    QTabWidget *m_tabs;
    QHash<int, QPlainTextEdit *> m_views;
};

} // namespace loopscope
