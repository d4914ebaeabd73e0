#include "inspect/credentialpolicy.h"

#include <QReadLocker>
#include <QRegularExpression>
#include <QSet>
#include <QWriteLocker>

#include <algorithm>
#include <utility>

namespace loopscope {

namespace {

// Common key formats, matched as whole tokens: OpenAI and Anthropic (sk-…, sk-proj-…,
// sk-ant-…), AWS access key ids (AKIA…), GitHub tokens (ghp_…, gho_…, ghu_…, ghs_…, ghr_…).
// The lengths keep ordinary words ("sk-learn", "AKIA" in prose) out.
constexpr auto kFormats = u"(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}(?![0-9A-Z])"
                          u"|gh[pousr]_[A-Za-z0-9]{36,})";
// A live stream holds back at most this much of an unfinished word.
constexpr qsizetype kMaxHoldback = 4096;

bool isWordChar(QChar c) {
    const char16_t u = c.unicode();
    return (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9') ||
           u == u'_' || u == u'-';
}

bool isAllWordChars(const QString &s) {
    return std::all_of(s.begin(), s.end(), isWordChar);
}

} // namespace

struct CredentialPolicy::Snapshot {
    QStringList values;     // configured and client values, longest first
    QStringList oddValues;  // values with characters a token has not (holdback checks them)
    QRegularExpression any; // every value, then the formats
};

CredentialPolicy::CredentialPolicy() {
    QWriteLocker lock(&m_lock);
    rebuild();
}

CredentialPolicy::~CredentialPolicy() = default;

const CredentialPolicy &CredentialPolicy::formatsOnly() {
    static const CredentialPolicy policy;
    return policy;
}

QString CredentialPolicy::mask(const QString &secret) {
    const QChar ellipsis(0x2026);
    if (secret.size() < 8)
        return QString(ellipsis);
    return ellipsis + secret.right(4);
}

QString CredentialPolicy::maskAuthorization(const QString &headerValue) {
    const qsizetype space = headerValue.indexOf(u' ');
    if (space < 0)
        return mask(headerValue);
    // Only a scheme is kept ("Bearer", "Basic", "Token"): a short word of letters. Anything
    // else before the first space may be the key itself ("sk-… extra") and is masked whole.
    const QString scheme = headerValue.left(space);
    const bool isScheme =
        scheme.size() <= 16 && std::all_of(scheme.begin(), scheme.end(), [](QChar c) {
            return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || c == u'-';
        });
    if (!isScheme)
        return mask(headerValue.trimmed());
    return headerValue.left(space + 1) + mask(headerValue.mid(space + 1).trimmed());
}

bool CredentialPolicy::isMasked(const QString &value) {
    // Exactly what mask() and maskAuthorization() write, repeated headers joined by ", ".
    // Anything else is masked (again), whatever ellipsis it holds: a value that merely
    // contains " …" may still hold a whole key.
    static const QRegularExpression masked(QStringLiteral(
        "^(?:[A-Za-z-]{1,16} )?\u2026[^,]{0,4}(?:, (?:[A-Za-z-]{1,16} )?\u2026[^,]{0,4})*$"));
    return masked.match(value).hasMatch();
}

bool CredentialPolicy::isSecretHeader(QByteArrayView lowerName) {
    return lowerName == "authorization" || lowerName == "proxy-authorization" ||
           lowerName == "api-key" || lowerName == "x-api-key" || lowerName == "cookie" ||
           lowerName == "set-cookie" || lowerName == "x-goog-api-key" ||
           isSecretKey(QString::fromLatin1(lowerName));
}

bool CredentialPolicy::isSecretKey(const QString &key) {
    const QString k = key.toLower();
    return k == QLatin1String("api_key") || k == QLatin1String("apikey") ||
           k == QLatin1String("authorization") || k == QLatin1String("x-api-key") ||
           k == QLatin1String("master_key") || k == QLatin1String("token") ||
           k == QLatin1String("access_token") || k == QLatin1String("x-access-token") ||
           k.endsWith(QLatin1String("_api_key")) || k.endsWith(QLatin1String("accesstoken")) ||
           k == QLatin1String("user_api_key_hash") || k == QLatin1String("control_token");
}

void CredentialPolicy::setConfiguredSecrets(const QStringList &values) {
    QWriteLocker lock(&m_lock);
    m_configured.clear();
    for (const QString &v : values)
        if (v.size() >= kMinSecretLength && !m_configured.contains(v))
            m_configured << v;
    rebuild();
}

void CredentialPolicy::addClientKey(const QString &key) {
    if (key.size() < kMinSecretLength)
        return;
    {
        QReadLocker lock(&m_lock);
        if (m_current->values.contains(key))
            return;
    }
    QWriteLocker lock(&m_lock);
    if (m_clientKeys.contains(key) || m_configured.contains(key))
        return;
    if (m_clientKeys.size() >= kMaxClientKeys)
        m_clientKeys.removeFirst();
    m_clientKeys << key;
    rebuild();
}

QStringList CredentialPolicy::knownSecrets() const {
    return snapshot()->values;
}

void CredentialPolicy::rebuild() {
    auto next = std::make_shared<Snapshot>();
    QStringList values = m_configured;
    for (const QString &k : std::as_const(m_clientKeys))
        if (!values.contains(k))
            values << k;
    // Longest first: a value that contains another is masked whole.
    std::stable_sort(values.begin(), values.end(),
                     [](const QString &a, const QString &b) { return a.size() > b.size(); });
    QStringList alternatives;
    for (const QString &v : std::as_const(values)) {
        alternatives << QRegularExpression::escape(v);
        if (!isAllWordChars(v))
            next->oddValues << v;
    }
    alternatives << QString::fromUtf16(kFormats);
    next->values = values;
    next->any = QRegularExpression(alternatives.join(u'|'));
    next->any.optimize(); // compiled here, once, so concurrent matches only read it
    m_current = std::move(next);
}

std::shared_ptr<const CredentialPolicy::Snapshot> CredentialPolicy::snapshot() const {
    QReadLocker lock(&m_lock);
    return m_current;
}

namespace {

QString maskWith(const QRegularExpression &any, const QString &text) {
    if (text.size() < CredentialPolicy::kMinSecretLength)
        return text;
    QRegularExpressionMatchIterator it = any.globalMatch(text);
    if (!it.hasNext())
        return text;
    QString out;
    out.reserve(text.size());
    qsizetype last = 0;
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        out += QStringView(text).mid(last, m.capturedStart() - last);
        out += CredentialPolicy::mask(m.captured());
        last = m.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out;
}

// Each returns whether anything below needed masking, and only then fills `out`: an object or
// array without secrets is returned as it came, which for the bodies the recorder masks
// (nearly all without secrets) is a read instead of a copy.
bool maskObjectInto(const QRegularExpression &any, const QJsonObject &object, QJsonObject &out);
bool maskArrayInto(const QRegularExpression &any, const QJsonArray &array, QJsonArray &out);

bool maskChild(const QRegularExpression &any, const QString &key, const QJsonValue &value,
               QJsonValue &out) {
    if (value.isString()) {
        const QString s = value.toString();
        if (!key.isNull() && CredentialPolicy::isSecretKey(key)) {
            if (CredentialPolicy::isMasked(s) || s.isEmpty())
                return false;
            out = key.compare(QLatin1String("authorization"), Qt::CaseInsensitive) == 0
                      ? CredentialPolicy::maskAuthorization(s)
                      : CredentialPolicy::mask(s);
            return true;
        }
        QString masked = maskWith(any, s);
        if (masked.size() == s.size() && masked == s)
            return false;
        out = std::move(masked);
        return true;
    }
    if (value.isObject()) {
        QJsonObject object;
        if (maskObjectInto(any, value.toObject(), object)) {
            out = object;
            return true;
        }
    } else if (value.isArray()) {
        QJsonArray array;
        if (maskArrayInto(any, value.toArray(), array)) {
            out = array;
            return true;
        }
    }
    return false;
}

bool maskObjectInto(const QRegularExpression &any, const QJsonObject &object, QJsonObject &out) {
    bool changed = false;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        QJsonValue masked;
        if (!maskChild(any, it.key(), it.value(), masked))
            continue;
        if (!std::exchange(changed, true))
            out = object;
        out.insert(it.key(), masked);
    }
    return changed;
}

bool maskArrayInto(const QRegularExpression &any, const QJsonArray &array, QJsonArray &out) {
    bool changed = false;
    for (qsizetype i = 0; i < array.size(); ++i) {
        QJsonValue masked;
        if (!maskChild(any, QString(), array.at(i), masked))
            continue;
        if (!std::exchange(changed, true))
            out = array;
        out.replace(i, masked);
    }
    return changed;
}

} // namespace

QString CredentialPolicy::maskText(const QString &text) const {
    if (text.size() < kMinSecretLength)
        return text;
    return maskWith(snapshot()->any, text);
}

QByteArray CredentialPolicy::maskText(const QByteArray &utf8) const {
    if (utf8.size() < kMinSecretLength)
        return utf8;
    const QString text = QString::fromUtf8(utf8);
    const QString masked = maskWith(snapshot()->any, text);
    return masked.size() == text.size() && masked == text ? utf8 : masked.toUtf8();
}

QJsonValue CredentialPolicy::maskValue(const QJsonValue &value) const {
    QJsonValue out;
    return maskChild(snapshot()->any, QString(), value, out) ? out : value;
}

QJsonObject CredentialPolicy::maskObject(const QJsonObject &object) const {
    QJsonObject out;
    return maskObjectInto(snapshot()->any, object, out) ? out : object;
}

QJsonArray CredentialPolicy::maskArray(const QJsonArray &array) const {
    QJsonArray out;
    return maskArrayInto(snapshot()->any, array, out) ? out : array;
}

QString CredentialPolicy::maskHeaderValue(const QString &lowerName, const QString &value) const {
    // A header holding a secret anywhere is masked whole, as a secret header is: its other
    // parts (a scheme, a prefix) say nothing a reader needs.
    if (!isSecretHeader(lowerName.toLatin1()))
        return maskText(value) == value ? value : mask(value);
    if (isMasked(value))
        return value;
    return lowerName.endsWith(QLatin1String("authorization")) ? maskAuthorization(value)
                                                              : mask(value);
}

QJsonObject
CredentialPolicy::maskHeaders(const QList<QPair<QByteArray, QByteArray>> &headers) const {
    QJsonObject out;
    for (const auto &h : headers) {
        const QString key = QString::fromLatin1(h.first.toLower());
        const QString value = maskHeaderValue(key, QString::fromUtf8(h.second));
        const QJsonValue existing = out.value(key);
        out.insert(key, existing.isString() ? existing.toString() + QStringLiteral(", ") + value
                                            : value);
    }
    return out;
}

qsizetype CredentialPolicy::holdback(QStringView text) const {
    // An unfinished token may be a key the next chunk completes (every key format, and most
    // configured keys, are runs of these characters).
    qsizetype hold = 0;
    while (hold < text.size() && hold < kMaxHoldback && isWordChar(text[text.size() - 1 - hold]))
        ++hold;
    // A configured value with other characters: the longest end that begins it.
    const auto s = snapshot();
    for (const QString &v : s->oddValues) {
        for (qsizetype k = std::min(v.size() - 1, text.size()); k > hold; --k) {
            if (text.endsWith(QStringView(v).left(k))) {
                hold = k;
                break;
            }
        }
    }
    return hold;
}

qsizetype CredentialPolicy::safeCut(const QString &text, qsizetype at) const {
    const auto s = snapshot();
    QRegularExpressionMatchIterator it = s->any.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        if (m.capturedStart() >= at)
            break;
        if (m.capturedEnd() > at)
            return m.capturedStart();
    }
    return at;
}

} // namespace loopscope
