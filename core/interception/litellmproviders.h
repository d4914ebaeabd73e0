#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace loopscope {

// LiteLLM's provider names (the `provider/` prefix of litellm_params.model and the entries of
// enabled_providers) and how Loopscope reaches each: the one table both the config loader and
// the interception scoping read, so a name means the same thing everywhere.
struct LiteLlmProvider {
    enum class Wire {
        OpenAi,     // speaks OpenAI's /chat/completions (and often /responses): forwarded
        Azure,      // Azure OpenAI: OpenAI's wire under /openai/v1 with an api-key header
        Demo,       // loopscope/…: the built-in scripted model
        Anthropic,  // Anthropic's Messages API (/v1/messages, x-api-key)
        Unsupported // its own API (Bedrock, Vertex, Gemini, …): listed, not routed
    };

    QString name;
    Wire wire = Wire::Unsupported;
    QString defaultApiBase;      // empty: api_base (or an apiBaseEnv variable) is required
    QStringList apiBaseEnv;      // read when the config has no api_base, first set one wins
    QStringList apiKeyEnv;       // read when the config has no api_key, first set one wins
    bool bareHostGetsV1 = false; // "http://host:port" → "http://host:port/v1"
    QString source;              // where the default and the variables come from
    // Serves /chat/completions but no Responses API: Responses requests on its routes are
    // bridged over chat at once (dialects.md §5) instead of being tried first.
    bool chatOnly = false;
    // Serves the Responses API but keeps no state (previous_response_id refused): Loopscope
    // resolves chains itself and sends the whole input.
    bool statelessResponses = false;

    bool routable() const { return wire != Wire::Unsupported; }
};

class LiteLlmProviders {
public:
    // Every provider Loopscope knows by name, routable or not, in table order.
    static const QList<LiteLlmProvider> &all();
    // nullptr for a name that is not in the table.
    static const LiteLlmProvider *find(const QString &name);
    static QStringList names();
    // The names Loopscope can route, for messages and the README.
    static QStringList routableNames();
};

} // namespace loopscope
