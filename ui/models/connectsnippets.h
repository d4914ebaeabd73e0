#pragma once

#include <QList>
#include <QString>
#include <QUrl>

#include <optional>

namespace loopscope {

// Copy-ready client code that runs a code-interpreter loop through Loopscope (issue 13): the
// Connect-an-SDK dialog shows it, `loopscope --print-snippet LANG` prints it. Against the
// demo model the prompt makes it run code; otherwise the configured model name is used.
class ConnectSnippets {
public:
    enum class Language { Python, Node, Curl, LiteLlm, AgentsSdk };

    static QList<Language> all();
    // "Python", "Node", "curl", "LiteLLM", "Agents SDK".
    static QString title(Language language);
    // "python", "node", "curl", "litellm", "agents" (the --print-snippet names).
    static QString name(Language language);
    static std::optional<Language> fromName(const QString &name);
    // The demo model's id; what the snippets use when the demo model answers.
    static QString demoModel() { return QStringLiteral("loopscope-demo"); }
    // A question the demo model answers by running Python.
    static QString prompt() { return QStringLiteral("What is 17*23?"); }

    // `baseUrl` is the /v1 base, e.g. http://127.0.0.1:4000/v1.
    static QString snippet(Language language, const QUrl &baseUrl, const QString &model);
};

} // namespace loopscope
