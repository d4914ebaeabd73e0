#include "interception/providerresolver.h"

#include "interception/litellmproviders.h"

#include <QRegularExpression>

namespace loopscope {

namespace {

struct FamilyRule {
    QRegularExpression pattern;
    QString provider;
};

// Well-known model families by name, first match wins. Anchored and case-insensitive.
const QList<FamilyRule> &familyRules() {
    static const QList<FamilyRule> rules = [] {
        const auto rx = [](const char *pattern) {
            return QRegularExpression(QString::fromLatin1(pattern),
                                      QRegularExpression::CaseInsensitiveOption);
        };
        const QString openai = QStringLiteral("openai");
        return QList<FamilyRule>{
            {rx("^gpt-"), openai},
            {rx("^o[134](-|$)"), openai},
            {rx("^chatgpt-"), openai},
            {rx("^text-embedding-"), openai},
            {rx("^(dall-e-|whisper-|tts-|omni-moderation-|text-moderation-|codex-)"), openai},
            {rx("^claude-"), QStringLiteral("anthropic")},
            {rx("^gemini-"), QStringLiteral("gemini")},
            {rx("^(mistral|open-mistral|codestral|magistral|ministral|pixtral|devstral)"),
             QStringLiteral("mistral")},
            {rx("^command-"), QStringLiteral("cohere")},
            {rx("^deepseek-"), QStringLiteral("deepseek")},
            {rx("^grok-"), QStringLiteral("xai")},
        };
    }();
    return rules;
}

} // namespace

const QStringList &ProviderResolver::knownProviders() {
    // The same names the config loader reads (LiteLlmProviders), so enabled_providers and a
    // model's `provider/` prefix can never disagree.
    static const QStringList providers = LiteLlmProviders::names();
    return providers;
}

std::optional<QString> ProviderResolver::resolve(const QJsonObject &kwargs) {
    const QJsonValue custom = kwargs.value(QLatin1String("custom_llm_provider"));
    if (custom.isString() && !custom.toString().isEmpty())
        return custom.toString();
    const QJsonValue model = kwargs.value(QLatin1String("model"));
    if (!model.isString())
        return std::nullopt;
    return providerForModel(model.toString());
}

std::optional<QString> ProviderResolver::providerForModel(const QString &model) {
    const qsizetype slash = model.indexOf(QLatin1Char('/'));
    if (slash > 0) {
        const QString prefix = model.left(slash);
        if (knownProviders().contains(prefix))
            return prefix;
    }
    for (const FamilyRule &rule : familyRules()) {
        if (rule.pattern.match(model).hasMatch())
            return rule.provider;
    }
    return std::nullopt;
}

} // namespace loopscope
