#pragma once

#include "common/outcome.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace loopscope {

// Flows ↔ HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/).
// Export: one entry per flow, the client's request and Loopscope's response as the client saw
// them (headers already masked by the store; SSE answers as their event text); everything else
// (summary, hops, code runs) under the entry's "_loopscope" key, HAR's custom-field rule.
// Import: a HAR from Loopscope (its "_loopscope" flow is taken whole), a browser's DevTools or
// any proxy (request/response become client_request/client_response hops). Imported flows get
// fresh ids (the original is kept as "imported_from"), "imported":true, and secret headers
// (authorization, cookies, api keys) masked like recorded ones. Pure functions, any thread.
class HarCodec {
public:
    // `baseUrl` ("http://127.0.0.1:4000") prefixes each flow's path in request.url.
    static QJsonObject exportHar(const QList<QJsonObject> &fullFlows, const QString &baseUrl,
                                 const QString &creatorVersion);
    // The flows of a HAR document, or a readable error (→ 400).
    static Outcome<QList<QJsonObject>> importHar(const QByteArray &document);
    static constexpr int kMaxEntries = 50000;
};

} // namespace loopscope
