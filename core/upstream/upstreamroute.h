#pragma once

#include "http/httprequest.h"

#include <QJsonObject>
#include <QString>
#include <QUrl>

namespace loopscope {

// Where one model's calls go and how they authenticate: resolved from the config (model_list)
// or from --upstream, never from a request body (the CVE-2024-6587 class).
struct UpstreamRoute {
    enum class Provider { OpenAi, Azure, Demo };

    QString modelName;     // what clients ask for (config model_name, or the client's model)
    QString upstreamModel; // what is sent upstream (litellm_params.model without "openai/" etc.)
    QUrl baseUrl;          // OpenAI-style base including /v1, e.g. https://api.openai.com/v1
    Provider provider = Provider::OpenAi;
    QString apiKey; // configured key (os.environ/ resolved); empty = forward the client's
    QByteArray clientAuthorization; // the client's Authorization header, forwarded when no apiKey
    HttpHeaders forwardHeaders; // client headers safe to send upstream (openai-*, user-agent…)
    int timeoutMs = 600000;     // no upstream byte for this long → 504
    int maxAgenticLoops = 0;    // litellm_params.max_agentic_loops (0 = not set)
    QJsonObject litellmParams;  // the model's litellm_params minus api_key, for interception

    bool isDemo() const { return provider == Provider::Demo; }
    // Base URL joined with an API path such as "/responses" (query kept when given).
    QUrl urlFor(const QString &pathAndQuery) const {
        QString base = baseUrl.toString(QUrl::FullyEncoded);
        while (base.endsWith(u'/'))
            base.chop(1);
        return QUrl::fromEncoded(base.toUtf8() + pathAndQuery.toUtf8());
    }
    // The authentication header to send upstream, if any.
    QPair<QByteArray, QByteArray> authHeader() const {
        if (!apiKey.isEmpty()) {
            if (provider == Provider::Azure)
                return {QByteArrayLiteral("api-key"), apiKey.toUtf8()};
            return {QByteArrayLiteral("Authorization"), "Bearer " + apiKey.toUtf8()};
        }
        if (!clientAuthorization.isEmpty())
            return {QByteArrayLiteral("Authorization"), clientAuthorization};
        return {};
    }
};

} // namespace loopscope
