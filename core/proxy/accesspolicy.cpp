#include "proxy/accesspolicy.h"

#include "http/responsesink.h"

#include <QCryptographicHash>
#include <QUrl>

namespace loopscope {

namespace {

// Request headers a page may send (preflight): what the official SDKs send. The x-stainless-*
// family varies by SDK version, so it is matched by prefix.
bool allowedRequestHeader(const QByteArray &lowerName) {
    static const QSet<QByteArray> names{"authorization",   "content-type",        "api-key",
                                        "x-api-key",       "openai-organization", "openai-project",
                                        "openai-beta",     "idempotency-key",     "accept",
                                        "accept-language", "content-language",    "x-request-id"};
    return names.contains(lowerName) || lowerName.startsWith("x-stainless-");
}

const QByteArray kExposedHeaders =
    "x-request-id, x-loopscope-overhead-ms, openai-processing-ms, openai-version, retry-after, "
    "x-ratelimit-limit-requests, x-ratelimit-remaining-requests, x-ratelimit-reset-requests, "
    "x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, x-ratelimit-reset-tokens";

QString stripVersion(const QString &path) {
    if (path == QLatin1String("/v1"))
        return QStringLiteral("/");
    return path.startsWith(QLatin1String("/v1/")) ? path.mid(3) : path;
}

} // namespace

void AccessPolicy::setAllowedOrigins(const QStringList &origins) {
    m_allowedOrigins.clear();
    for (const QString &origin : origins) {
        const QByteArray normalized = normalizeOrigin(origin.trimmed().toUtf8());
        if (!normalized.isEmpty())
            m_allowedOrigins.insert(normalized);
    }
}

QStringList AccessPolicy::allowedOrigins() const {
    QStringList out;
    for (const QByteArray &origin : m_allowedOrigins)
        out << QString::fromUtf8(origin);
    out.sort();
    return out;
}

QByteArray AccessPolicy::normalizeOrigin(const QByteArray &origin) {
    QByteArray text = origin.trimmed();
    while (text.endsWith('/'))
        text.chop(1);
    const QUrl url(QString::fromUtf8(text), QUrl::StrictMode);
    const QString scheme = url.scheme().toLower();
    if (!url.isValid() || (scheme != QLatin1String("http") && scheme != QLatin1String("https")) ||
        url.host().isEmpty() || !url.path().isEmpty() || url.hasQuery() || url.hasFragment() ||
        !url.userInfo().isEmpty())
        return {};
    const int defaultPort = scheme == QLatin1String("https") ? 443 : 80;
    const int port = url.port(defaultPort);
    QString host = url.host().toLower();
    if (host.contains(u':'))
        host = u'[' + host + u']';
    QString out = scheme + QStringLiteral("://") + host;
    if (port != defaultPort)
        out += u':' + QString::number(port);
    return out.toUtf8();
}

bool AccessPolicy::isLoopbackOrigin(const QByteArray &origin) {
    const QByteArray normalized = normalizeOrigin(origin);
    if (normalized.isEmpty())
        return false;
    const QUrl url(QString::fromUtf8(normalized));
    const QString host = url.host();
    return host == QLatin1String("localhost") || host == QLatin1String("127.0.0.1") ||
           host == QLatin1String("::1");
}

bool AccessPolicy::originAllowed(const QByteArray &origin) const {
    if (origin.isEmpty())
        return true; // not a browser request
    if (isLoopbackOrigin(origin))
        return true;
    const QByteArray normalized = normalizeOrigin(origin);
    return !normalized.isEmpty() && m_allowedOrigins.contains(normalized);
}

bool AccessPolicy::isJsonContentType(const QByteArray &contentType) {
    QByteArray type = contentType;
    const qsizetype semicolon = type.indexOf(';');
    if (semicolon >= 0)
        type.truncate(semicolon);
    type = type.trimmed().toLower();
    return type == "application/json" ||
           (type.startsWith("application/") && type.endsWith("+json"));
}

bool AccessPolicy::isModelRoute(const QString &path) {
    const QString p = stripVersion(path);
    return p == QLatin1String("/responses") || p == QLatin1String("/chat/completions") ||
           p == QLatin1String("/completions") || p == QLatin1String("/embeddings");
}

bool AccessPolicy::isControlPath(const QString &path) {
    return path == QLatin1String("/loopscope") || path.startsWith(QLatin1String("/loopscope/"));
}

bool AccessPolicy::constantTimeEquals(const QByteArray &a, const QByteArray &b) {
    // Compare digests: equal length always, so neither the length nor the first differing byte
    // of the secret shows in the timing.
    const QByteArray da = QCryptographicHash::hash(a, QCryptographicHash::Sha256);
    const QByteArray db = QCryptographicHash::hash(b, QCryptographicHash::Sha256);
    unsigned char diff = a.isEmpty() != b.isEmpty() ? 1 : 0;
    for (qsizetype i = 0; i < da.size(); ++i)
        diff |= static_cast<unsigned char>(da[i] ^ db[i]);
    return diff == 0;
}

HttpHeaders AccessPolicy::corsHeaders(const QByteArray &origin) const {
    return {{QByteArrayLiteral("Access-Control-Allow-Origin"), origin},
            {QByteArrayLiteral("Access-Control-Expose-Headers"), kExposedHeaders}};
}

HttpHeaders AccessPolicy::preflightHeaders(const HttpRequest &request,
                                           const QByteArray &origin) const {
    QByteArrayList allowed;
    for (const QByteArray &raw : request.header("access-control-request-headers").split(',')) {
        const QByteArray name = raw.trimmed().toLower();
        if (!name.isEmpty() && allowedRequestHeader(name) && !allowed.contains(name))
            allowed << name;
    }
    if (!allowed.contains("authorization"))
        allowed << "authorization";
    if (!allowed.contains("content-type"))
        allowed << "content-type";
    return {{QByteArrayLiteral("Access-Control-Allow-Origin"), origin},
            {QByteArrayLiteral("Access-Control-Allow-Methods"),
             QByteArrayLiteral("GET, POST, PUT, DELETE, OPTIONS")},
            {QByteArrayLiteral("Access-Control-Allow-Headers"), allowed.join(", ")},
            {QByteArrayLiteral("Access-Control-Max-Age"), QByteArrayLiteral("600")},
            {QByteArrayLiteral("Vary"), QByteArrayLiteral("Origin, Access-Control-Request-Method, "
                                                          "Access-Control-Request-Headers")}};
}

AccessPolicy::Verdict AccessPolicy::admit(const HttpRequest &request, ResponseSink *sink) const {
    const bool hasOrigin = request.hasHeader("origin");
    const QByteArray origin = request.header("origin").trimmed();
    if (hasOrigin) {
        // Responses differ by Origin: caches must key on it, allowed or not.
        sink->setAccessHeaders({{QByteArrayLiteral("Vary"), QByteArrayLiteral("Origin")}});
        if (!originAllowed(origin)) {
            sink->sendError(403,
                            QStringLiteral("Requests from this web page's origin are not allowed: "
                                           "start Loopscope with --allow-origin ORIGIN (or "
                                           "general_settings.allow_origins) to allow it"),
                            QStringLiteral("permission_error"),
                            QStringLiteral("origin_not_allowed"));
            return Verdict::Answered;
        }
        if (request.method == "OPTIONS" && request.hasHeader("access-control-request-method")) {
            sink->setAccessHeaders(preflightHeaders(request, origin));
            sink->send(204, {}, {});
            return Verdict::Answered;
        }
        HttpHeaders headers = corsHeaders(origin);
        headers.append({QByteArrayLiteral("Vary"), QByteArrayLiteral("Origin")});
        sink->setAccessHeaders(headers);
    }
    // An empty body carries nothing to run; it gets the usual 400 further on.
    if (request.method == "POST" && !request.body.isEmpty() && isModelRoute(request.path) &&
        !isJsonContentType(request.header("content-type"))) {
        sink->sendError(415,
                        QStringLiteral("Content-Type must be application/json for %1")
                            .arg(request.path.left(64)),
                        QStringLiteral("invalid_request_error"),
                        QStringLiteral("unsupported_media_type"));
        return Verdict::Answered;
    }
    return Verdict::Proceed;
}

bool AccessPolicy::controlTokenMatches(const HttpRequest &request) const {
    if (m_controlToken.isEmpty())
        return false;
    const QByteArray auth = request.header("authorization").trimmed();
    if (auth.size() <= 7 || auth.left(7).toLower() != "bearer ")
        return false;
    return constantTimeEquals(auth.mid(7).trimmed(), m_controlToken);
}

void AccessPolicy::refuseControl(ResponseSink *sink) {
    sink->sendError(401,
                    QStringLiteral("Missing or wrong control token: send Authorization: Bearer "
                                   "<control token> (printed at start-up, or in "
                                   "<data dir>/control-token)"),
                    QStringLiteral("authentication_error"),
                    QStringLiteral("invalid_control_token"));
}

} // namespace loopscope
