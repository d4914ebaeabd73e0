#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace loopscope {

// Which provider a request goes to, for `enabled_providers` scoping (spec §2.4). LiteLLM asks
// its full model→provider resolver; we keep the subset interception needs: an explicit
// `custom_llm_provider`, a known `provider/` prefix, or a table of well-known model families.
// Hand-written because no Debian package knows LLM model names.
class ProviderResolver {
public:
    // custom_llm_provider (non-empty string) wins; else a string `model` is resolved with
    // providerForModel; anything else (missing or non-string model) → nullopt.
    static std::optional<QString> resolve(const QJsonObject &kwargs);

    // "vertex_ai/gemini-2.0" → vertex_ai (known prefix); "gpt-5" → openai; "claude-3" →
    // anthropic; unknown names and unknown prefixes → nullopt.
    static std::optional<QString> providerForModel(const QString &model);

    // Provider slugs accepted as a `provider/` prefix.
    static const QStringList &knownProviders();
};

} // namespace loopscope
