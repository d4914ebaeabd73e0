#pragma once

#include "http/httprequest.h"

#include <QJsonObject>
#include <QString>
#include <QUrl>

namespace loopscope {

// Where one model's calls go and how they authenticate: resolved from the config (model_list)
// or from --upstream, never from a request body (the CVE-2024-6587 class).
struct UpstreamRoute {
    // The wire a route speaks: OpenAI's (OpenAI and every compatible server), Azure's flavour
    // of it, Anthropic's Messages, or the built-in demo model (which speaks both).
    enum class Provider { OpenAi, Azure, Anthropic, Demo };

    QString modelName;     // what clients ask for (config model_name, or the client's model)
    QString upstreamModel; // what is sent upstream (litellm_params.model without "openai/" etc.)
    QUrl baseUrl; // API base including /v1: https://api.openai.com/v1, https://api.anthropic.com/v1
    Provider provider = Provider::OpenAi;
    QString apiKey; // configured key (os.environ/ resolved); empty = forward the client's
    // The client's own credential headers (Authorization, x-api-key, api-key) as it sent them:
    // forwarded when the route has no configured key and Loopscope has no master key, so a
    // provider that authenticates another way than OpenAI (Anthropic's x-api-key) still can.
    HttpHeaders clientCredentials;
    HttpHeaders forwardHeaders; // client headers safe to send upstream (openai-*, user-agent…)
    int timeoutMs = 600000;     // no upstream byte for this long → 504
    int maxAgenticLoops = 0;    // litellm_params.max_agentic_loops (0 = not set)
    QJsonObject litellmParams;  // the model's litellm_params minus api_key, for interception
    // LiteLLM's provider name ("openai", "azure", "hosted_vllm", …): what enabled_providers and
    // custom_llm_provider see.
    QString providerName = QStringLiteral("openai");
    // Non-empty: the config names this model but Loopscope cannot reach it (a provider with its
    // own API, a missing api_base); requests get 400 with this text.
    QString unavailableReason;
    // How a Responses request (/responses) reaches this route (dialects.md §5): Auto tries
    // /responses and bridges over /chat/completions when the upstream says it has no such
    // route; ChatOnly bridges at once (litellm_params.upstream_api: chat_completions, LiteLLM's
    // model_info.supported_endpoints without /v1/responses, or a provider known to be
    // chat-only); Native never bridges (upstream_api: responses); Stateless speaks Responses but
    // keeps no state (Ollama's /v1/responses; upstream_api: responses_stateless): Loopscope
    // resolves previous_response_id / conversation itself and sends the whole input.
    enum class ResponsesApi { Auto, ChatOnly, Native, Stateless };
    ResponsesApi responsesApi = ResponsesApi::Auto;
    int configLine = 0;   // line of the model_list entry, for messages (0 = not from a file)
    QString apiKeySource; // "api_key", "$GROQ_API_KEY" or empty (the client's key): --check-config

    bool isAvailable() const { return unavailableReason.isEmpty(); }

    bool isDemo() const { return provider == Provider::Demo; }
    bool isAnthropic() const { return provider == Provider::Anthropic; }
    // Base URL joined with an API path such as "/responses" (query kept when given).
    QUrl urlFor(const QString &pathAndQuery) const {
        QString base = baseUrl.toString(QUrl::FullyEncoded);
        while (base.endsWith(u'/'))
            base.chop(1);
        return QUrl::fromEncoded(base.toUtf8() + pathAndQuery.toUtf8());
    }
    // The header that carries the configured key in this provider's scheme (empty: no key).
    QPair<QByteArray, QByteArray> authHeader() const {
        if (apiKey.isEmpty())
            return {};
        if (provider == Provider::Azure)
            return {QByteArrayLiteral("api-key"), apiKey.toUtf8()};
        if (provider == Provider::Anthropic)
            return {QByteArrayLiteral("x-api-key"), apiKey.toUtf8()};
        return {QByteArrayLiteral("Authorization"), "Bearer " + apiKey.toUtf8()};
    }
    // What authenticates the call upstream: the configured key alone when there is one (a
    // client's key never travels beside it), else the client's own credential headers.
    HttpHeaders credentialHeaders() const {
        if (!apiKey.isEmpty())
            return {authHeader()};
        return clientCredentials;
    }
};

} // namespace loopscope
