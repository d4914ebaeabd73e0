#pragma once

#include <QDialog>
#include <QUrl>

class QPlainTextEdit;
class QTabWidget;

namespace loopscope {

// Copy-ready client snippets (Python, Node, curl) pointed at the running proxy.
class ConnectSdkDialog : public QDialog {
    Q_OBJECT
public:
    enum class Language { Python, Node, Curl };

    explicit ConnectSdkDialog(const QUrl &baseUrl, QWidget *parent = nullptr);

    // `baseUrl` is the /v1 base, e.g. http://127.0.0.1:4000/v1.
    static QString snippet(Language language, const QUrl &baseUrl);
    QTabWidget *tabs() const { return m_tabs; }
    QString snippetText(Language language) const;

private:
    QTabWidget *m_tabs;
    QPlainTextEdit *m_views[3];
};

} // namespace loopscope
