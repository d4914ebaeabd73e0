#pragma once

#include "http/httprequest.h"

#include <QByteArray>
#include <QSet>
#include <QStringList>

namespace loopscope {

class ResponseSink;

// Who may talk to Loopscope at all (docs: control-api.md "Access"), decided once per request in
// the HTTP front before any body is parsed or any code runs:
//  - Browser pages: a request with an Origin that is neither loopback (http(s)://localhost,
//    127.0.0.1, [::1], any port) nor listed in --allow-origin is refused with 403. Allowed
//    origins get CORS answers (preflight included) that echo the origin, never a wildcard.
//  - A POST to a model route must carry a JSON Content-Type (415 otherwise): a page's
//    no-cors text/plain POST is the one cross-site request a browser sends without a preflight.
//  - /loopscope/… routes need Authorization: Bearer <control token>, compared in constant time.
// Requests without an Origin header (SDKs, curl) are not browser requests and pass the Origin
// rule; the token and the proxy's own master key still apply.
class AccessPolicy {
public:
    enum class Verdict {
        Proceed, // go on with the request; CORS headers (if any) are set on the sink
        Answered // the policy answered (403, 415 or a preflight 204): do nothing more
    };

    // "scheme://host[:port]" entries; invalid ones are ignored (see normalizeOrigin).
    void setAllowedOrigins(const QStringList &origins);
    QStringList allowedOrigins() const;
    // Empty: every control route answers 401 (fail closed).
    void setControlToken(const QByteArray &token) { m_controlToken = token; }
    bool hasControlToken() const { return !m_controlToken.isEmpty(); }

    // The Origin rule, the preflight and the 415 rule for one request, in that order.
    Verdict admit(const HttpRequest &request, ResponseSink *sink) const;
    // Authorization: Bearer <control token>, in constant time (no early exit on length).
    bool controlTokenMatches(const HttpRequest &request) const;
    // Answers 401 for a control route whose token is missing or wrong.
    static void refuseControl(ResponseSink *sink);

    bool originAllowed(const QByteArray &origin) const;
    // "scheme://host[:port]" lower-case, default ports dropped, or empty when not an origin.
    static QByteArray normalizeOrigin(const QByteArray &origin);
    static bool isLoopbackOrigin(const QByteArray &origin);
    // application/json, application/<x>+json, with or without parameters.
    static bool isJsonContentType(const QByteArray &contentType);
    // Routes whose POST body is a model call (JSON by contract), with or without /v1.
    static bool isModelRoute(const QString &path);
    static bool isControlPath(const QString &path);
    static bool constantTimeEquals(const QByteArray &a, const QByteArray &b);

private:
    HttpHeaders corsHeaders(const QByteArray &origin) const;
    HttpHeaders preflightHeaders(const HttpRequest &request, const QByteArray &origin) const;

    QSet<QByteArray> m_allowedOrigins;
    QByteArray m_controlToken;
};

} // namespace loopscope
