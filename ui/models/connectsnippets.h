#pragma once

#include <QList>
#include <QString>
#include <QUrl>

#include <optional>

namespace loopscope {

// Copy-ready client code that runs a code-interpreter loop through Loopscope (issue 13), and
// the settings that point the agents people run at it (the Anthropic SDK, Claude Code, Codex
// CLI): the Connect-an-SDK dialog shows it, `loopscope --print-snippet LANG` prints it. Against
// the demo model the prompt makes it run code; otherwise the configured model name is used.
class ConnectSnippets {
public:
    enum class Language { Python, Node, Curl, LiteLlm, AgentsSdk, AnthropicSdk, ClaudeCode, Codex };

    static QList<Language> all();
    // "Python", "Node", "curl", "LiteLLM", "Agents SDK", "Anthropic SDK", "Claude Code",
    // "Codex CLI".
    static QString title(Language language);
    // "python", "node", "curl", "litellm", "agents", "anthropic", "claude-code", "codex" (the
    // --print-snippet names).
    static QString name(Language language);
    static std::optional<Language> fromName(const QString &name);
    // The demo model's id; what the snippets use when the demo model answers.
    static QString demoModel() { return QStringLiteral("loopscope-demo"); }
    // A question the demo model answers by running Python.
    static QString prompt() { return QStringLiteral("What is 17*23?"); }

    // The --print-snippet names, comma-separated, for messages.
    static QString names();

    // `baseUrl` is the /v1 base, e.g. http://127.0.0.1:4000/v1 (Anthropic's clients are given
    // the root: they add /v1 themselves).
    static QString snippet(Language language, const QUrl &baseUrl, const QString &model);
};

} // namespace loopscope
