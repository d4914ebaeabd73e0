#pragma once

#include "common/openaierror.h"
#include "http/httprequest.h"

#include <QByteArray>
#include <QJsonObject>
#include <QNetworkReply>
#include <QString>

namespace loopscope {

// The complete answer of one non-streaming upstream call (UpstreamClient::postJson).
struct UpstreamReply {
    int status = 0;   // HTTP status; 0 when no HTTP answer arrived
    QByteArray body;  // raw body, byte-exact
    QJsonObject json; // body parsed, when it is a JSON object
    bool isJson = false;
    HttpHeaders headers; // response headers safe to relay to a client
    QNetworkReply::NetworkError networkError = QNetworkReply::NoError; // transport errors only
    QString errorString;                                               // transport error text
    bool timedOut = false;
    bool tooLarge = false; // aborted at UpstreamClient::maxBodyBytes()
    double latencyMs = 0;  // send → complete
    // The wire the call went out in, when a bridge translated it (ResponsesBridge): the call
    // the caller asked for (a Responses body to /responses) went to `wireUrl` as `wireRequest`
    // in `dialect` ("chat_completions"), and `wireResponse` came back; `json` is the translated
    // answer. `bridgeNote` says why (e.g. "/v1/responses answered 404").
    bool bridged = false;
    QString dialect;
    QString wireUrl;
    QJsonObject wireRequest;
    QJsonObject wireResponse;
    QString bridgeNote;

    // Adds the bridged wire to an UpstreamCall event's payload (nothing when not bridged), so
    // the flow's hop shows what really went upstream and in which dialect.
    void addWireTo(QJsonObject &data) const {
        if (!bridged)
            return;
        data.insert(QStringLiteral("bridged"), true);
        data.insert(QStringLiteral("dialect"), dialect);
        data.insert(QStringLiteral("wireUrl"), wireUrl);
        data.insert(QStringLiteral("wireRequest"), wireRequest);
        data.insert(QStringLiteral("wireResponse"), wireResponse);
        if (!bridgeNote.isEmpty())
            data.insert(QStringLiteral("bridgeNote"), bridgeNote);
    }

    // A 2xx answer arrived.
    bool ok() const { return status >= 200 && status < 300; }
    // What a client should see when this call failed: the upstream status, else 504 on a
    // timeout, else 502 (unreachable, connection reset, bad TLS...).
    int clientStatus() const { return status > 0 ? status : (timedOut ? 504 : 502); }
    // OpenAI-shaped error for transport failures (status == 0).
    QByteArray transportErrorBody() const {
        if (tooLarge)
            return OpenAiError::json(QStringLiteral("Upstream reply too large: over the limit of "
                                                    "general_settings.max_upstream_body_bytes"),
                                     QStringLiteral("api_error"),
                                     QStringLiteral("upstream_reply_too_large"));
        if (timedOut)
            return OpenAiError::json(QStringLiteral("Upstream did not answer in time"),
                                     QStringLiteral("timeout_error"),
                                     QStringLiteral("upstream_timeout"));
        return OpenAiError::json(QStringLiteral("Upstream unreachable: %1").arg(errorString),
                                 QStringLiteral("api_connection_error"),
                                 QStringLiteral("upstream_unreachable"));
    }
};

} // namespace loopscope
