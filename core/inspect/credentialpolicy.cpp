#include "inspect/credentialpolicy.h"

#include <QByteArrayMatcher>
#include <QReadLocker>
#include <QRegularExpression>
#include <QSet>
#include <QStringMatcher>
#include <QWriteLocker>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

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

// The shortest match of a key format (AKIA and 16 more).
constexpr qsizetype kMinFormatLength = 20;
// Past this many word values a long word goes to the expression (one scan) instead of one
// search per value.
constexpr qsizetype kMaxValuesSearched = 8;

// What finds secrets in a text: one compiled expression, and a cheaper first look.
struct Matcher {
    QRegularExpression any; // every value, then the formats
    QStringList wordValues; // values made of word characters only
    QStringList oddValues;  // values with characters a token has not (holdback checks them)
    std::vector<QStringMatcher> wordMatchers;        // one per word value, for mayMatch
    std::vector<QStringMatcher> oddMatchers;         // one per odd value
    std::vector<QByteArrayMatcher> utf8WordMatchers; // the same values as UTF-8, for
    std::vector<QByteArrayMatcher> utf8OddMatchers;  // mayMatchUtf8
    qsizetype shortestWordValue = std::numeric_limits<qsizetype>::max();

    // Whether `any` may match `text`, found with a few vectorised searches: entering the
    // expression costs about as much as scanning a short string, and an event holds thousands
    // of strings, nearly all without a secret. Never false where `any` matches: a key format
    // begins a word run (its lookbehind) of at least 20 characters with its prefix; a value is
    // searched for whole (past kMaxValuesSearched word values, a run as long as the shortest).
    bool mayMatch(QStringView text) const { return mayMatchIn(text, wordMatchers, oddMatchers); }

    // mayMatch for UTF-8 text without escapes (JSON as it came), searched as bytes: a byte of a
    // multi-byte character is never a word character, as in the decoded text.
    bool mayMatchUtf8(QByteArrayView text) const {
        return mayMatchIn(text, utf8WordMatchers, utf8OddMatchers);
    }

    // One code unit of either text, as UTF-16 (a UTF-8 byte over 0x7f is no word character,
    // nor is what it is part of), and Qt's vectorised search for an ASCII character.
    static char16_t unitAt(QStringView text, qsizetype i) { return text[i].unicode(); }
    static char16_t unitAt(QByteArrayView text, qsizetype i) { return uchar(text[i]); }
    static qsizetype find(QStringView text, char c, qsizetype from) {
        return text.indexOf(QLatin1Char(c), from);
    }
    static qsizetype find(QByteArrayView text, char c, qsizetype from) {
        return text.indexOf(c, from);
    }
    template<typename View> static bool isWordAt(View text, qsizetype i) {
        return isWordChar(QChar(unitAt(text, i)));
    }

    template<typename View, typename ValueMatcher>
    bool mayMatchIn(View text, const std::vector<ValueMatcher> &words,
                    const std::vector<ValueMatcher> &odds) const {
        // Key formats: found by the characters that mark them ("sk-", "AKIA", "gh?_"), each
        // with Qt's vectorised character search, reading the run only where one occurs (a
        // character-by-character pass, or a substring search per prefix, over a 1 MB body was
        // most of the recorder's masking time).
        const qsizetype n = text.size();
        const auto is = [text](qsizetype i, char c) { return unitAt(text, i) == char16_t(c); };
        for (qsizetype p = find(text, '-', 2); p >= 0; p = find(text, '-', p + 1))
            if (is(p - 2, 's') && is(p - 1, 'k') && beginsLongRun(text, p - 2))
                return true;
        for (qsizetype p = find(text, 'K', 1); p >= 0 && p + 2 < n; p = find(text, 'K', p + 1))
            if (is(p - 1, 'A') && is(p + 1, 'I') && is(p + 2, 'A') && beginsLongRun(text, p - 1))
                return true;
        for (qsizetype p = find(text, '_', 3); p >= 0; p = find(text, '_', p + 1))
            if (is(p - 3, 'g') && is(p - 2, 'h') && beginsLongRun(text, p - 3))
                return true;
        // Values: Boyer-Moore (built once per policy) skips most of a text.
        if (!words.empty()) {
            if (words.size() > size_t(kMaxValuesSearched)) {
                if (hasRunOf(text, shortestWordValue))
                    return true;
            } else {
                for (const ValueMatcher &m : words)
                    if (m.indexIn(text) >= 0)
                        return true;
            }
        }
        return std::any_of(odds.begin(), odds.end(),
                           [text](const ValueMatcher &m) { return m.indexIn(text) >= 0; });
    }

    // Whether a word run (the expression's lookbehind: not preceded by a word character) of at
    // least kMinFormatLength begins at `p`.
    template<typename View> static bool beginsLongRun(View text, qsizetype p) {
        if (p > 0 && isWordAt(text, p - 1))
            return false;
        const qsizetype limit = std::min(text.size(), p + kMinFormatLength);
        qsizetype end = p;
        while (end < limit && isWordAt(text, end))
            ++end;
        return end - p >= kMinFormatLength;
    }

    // Whether `text` holds a word run of at least `length` characters.
    template<typename View> static bool hasRunOf(View text, qsizetype length) {
        qsizetype run = 0;
        for (qsizetype i = 0; i < text.size(); ++i) {
            run = isWordAt(text, i) ? run + 1 : 0;
            if (run >= length)
                return true;
        }
        return false;
    }
};

} // namespace

struct CredentialPolicy::Snapshot {
    QStringList values; // configured and client values, longest first
    Matcher matcher;
    quint64 generation = 0;
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
    // Compared without case instead of lowered: every string of every event passes here.
    // Every name holds "key", "token" or "authorization": mayNeedMasking() looks for only those.
    const auto is = [&key](QLatin1String name) {
        return key.size() == name.size() && key.compare(name, Qt::CaseInsensitive) == 0;
    };
    const auto ends = [&key](QLatin1String tail) {
        return key.endsWith(tail, Qt::CaseInsensitive);
    };
    return is(QLatin1String("api_key")) || is(QLatin1String("apikey")) ||
           is(QLatin1String("authorization")) || is(QLatin1String("x-api-key")) ||
           is(QLatin1String("master_key")) || is(QLatin1String("token")) ||
           is(QLatin1String("access_token")) || is(QLatin1String("x-access-token")) ||
           ends(QLatin1String("_api_key")) || ends(QLatin1String("accesstoken")) ||
           is(QLatin1String("user_api_key_hash")) || is(QLatin1String("control_token"));
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

quint64 CredentialPolicy::generation() const {
    return snapshot()->generation;
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
    Matcher &m = next->matcher;
    for (const QString &v : std::as_const(values)) {
        alternatives << QRegularExpression::escape(v);
        if (isAllWordChars(v)) {
            m.wordValues << v;
            m.wordMatchers.emplace_back(v);
            m.utf8WordMatchers.emplace_back(v.toUtf8());
            m.shortestWordValue = std::min(m.shortestWordValue, v.size());
        } else {
            m.oddValues << v;
            m.oddMatchers.emplace_back(v);
            m.utf8OddMatchers.emplace_back(v.toUtf8());
        }
    }
    alternatives << QString::fromUtf16(kFormats);
    next->values = values;
    next->generation = ++m_generation;
    m.any = QRegularExpression(alternatives.join(u'|'));
    m.any.optimize(); // compiled here, once, so concurrent matches only read it
    m_current = std::move(next);
}

std::shared_ptr<const CredentialPolicy::Snapshot> CredentialPolicy::snapshot() const {
    QReadLocker lock(&m_lock);
    return m_current;
}

namespace {

QString maskWith(const Matcher &matcher, const QString &text) {
    if (text.size() < CredentialPolicy::kMinSecretLength || !matcher.mayMatch(text))
        return text;
    QRegularExpressionMatchIterator it = matcher.any.globalMatch(text);
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
bool maskObjectInto(const Matcher &matcher, const QJsonObject &object, QJsonObject &out);
bool maskArrayInto(const Matcher &matcher, const QJsonArray &array, QJsonArray &out);

// `keyOf` gives the member's name (a null string in an array); read for strings only, as
// reading a name copies it.
template<typename KeyOf>
bool maskChild(const Matcher &matcher, const KeyOf &keyOf, const QJsonValue &value,
               QJsonValue &out) {
    if (value.isString()) {
        const QString s = value.toString();
        const QString key = keyOf();
        if (!key.isNull() && CredentialPolicy::isSecretKey(key)) {
            if (CredentialPolicy::isMasked(s) || s.isEmpty())
                return false;
            out = key.compare(QLatin1String("authorization"), Qt::CaseInsensitive) == 0
                      ? CredentialPolicy::maskAuthorization(s)
                      : CredentialPolicy::mask(s);
            return true;
        }
        QString masked = maskWith(matcher, s);
        if (masked.size() == s.size() && masked == s)
            return false;
        out = std::move(masked);
        return true;
    }
    if (value.isObject()) {
        QJsonObject object;
        if (maskObjectInto(matcher, value.toObject(), object)) {
            out = object;
            return true;
        }
    } else if (value.isArray()) {
        QJsonArray array;
        if (maskArrayInto(matcher, value.toArray(), array)) {
            out = array;
            return true;
        }
    }
    return false;
}

bool maskObjectInto(const Matcher &matcher, const QJsonObject &object, QJsonObject &out) {
    bool changed = false;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        QJsonValue masked;
        if (!maskChild(
                matcher, [&it] { return it.key(); }, it.value(), masked))
            continue;
        if (!std::exchange(changed, true))
            out = object;
        out.insert(it.key(), masked);
    }
    return changed;
}

bool maskArrayInto(const Matcher &matcher, const QJsonArray &array, QJsonArray &out) {
    bool changed = false;
    for (qsizetype i = 0; i < array.size(); ++i) {
        QJsonValue masked;
        if (!maskChild(
                matcher, [] { return QString(); }, array.at(i), masked))
            continue;
        if (!std::exchange(changed, true))
            out = array;
        out.replace(i, masked);
    }
    return changed;
}

} // namespace

namespace {

// Whether `text` holds `word` (lower-case ASCII) in any case.
bool containsNoCase(QByteArrayView text, QByteArrayView word) {
    const char lower = word.front();
    const char upper = char(lower - 'a' + 'A');
    for (const char first : {lower, upper})
        for (qsizetype p = text.indexOf(first); p >= 0 && p + word.size() <= text.size();
             p = text.indexOf(first, p + 1))
            if (qstrnicmp(text.data() + p, word.size(), word.data(), word.size()) == 0)
                return true;
    return false;
}

} // namespace

bool CredentialPolicy::mayNeedMasking(QByteArrayView utf8) const {
    if (utf8.contains('\\'))
        return true; // an escape can spell anything
    if (containsNoCase(utf8, "key") || containsNoCase(utf8, "token") ||
        containsNoCase(utf8, "authorization"))
        return true;
    return snapshot()->matcher.mayMatchUtf8(utf8);
}

QString CredentialPolicy::maskText(const QString &text) const {
    if (text.size() < kMinSecretLength)
        return text;
    return maskWith(snapshot()->matcher, text);
}

QByteArray CredentialPolicy::maskText(const QByteArray &utf8) const {
    if (utf8.size() < kMinSecretLength)
        return utf8;
    const QString text = QString::fromUtf8(utf8);
    const QString masked = maskWith(snapshot()->matcher, text);
    return masked.size() == text.size() && masked == text ? utf8 : masked.toUtf8();
}

QJsonValue CredentialPolicy::maskValue(const QJsonValue &value) const {
    QJsonValue out;
    return maskChild(
               snapshot()->matcher, [] { return QString(); }, value, out)
               ? out
               : value;
}

QJsonObject CredentialPolicy::maskObject(const QJsonObject &object, bool *masked) const {
    QJsonObject out;
    const bool changed = maskObjectInto(snapshot()->matcher, object, out);
    if (masked)
        *masked = changed;
    return changed ? out : object;
}

QJsonArray CredentialPolicy::maskArray(const QJsonArray &array, bool *masked) const {
    QJsonArray out;
    const bool changed = maskArrayInto(snapshot()->matcher, array, out);
    if (masked)
        *masked = changed;
    return changed ? out : array;
}

namespace {

// One header's value: a header holding a secret anywhere is masked whole, as a secret header
// is: its other parts (a scheme, a prefix) say nothing a reader needs.
QString maskHeaderValueWith(const Matcher &matcher, QByteArrayView lowerName,
                            const QString &value) {
    if (!CredentialPolicy::isSecretHeader(lowerName))
        return maskWith(matcher, value) == value ? value : CredentialPolicy::mask(value);
    if (CredentialPolicy::isMasked(value))
        return value;
    return lowerName.endsWith("authorization") ? CredentialPolicy::maskAuthorization(value)
                                               : CredentialPolicy::mask(value);
}

} // namespace

QString CredentialPolicy::maskHeaderValue(const QString &lowerName, const QString &value) const {
    return maskHeaderValueWith(snapshot()->matcher, lowerName.toLatin1(), value);
}

QJsonObject
CredentialPolicy::maskHeaders(const QList<QPair<QByteArray, QByteArray>> &headers) const {
    const auto s = snapshot(); // once for all of them
    QJsonObject out;
    for (const auto &h : headers) {
        const QByteArray lower = h.first.toLower();
        const QString key = QString::fromLatin1(lower);
        const QString value = maskHeaderValueWith(s->matcher, lower, QString::fromUtf8(h.second));
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
    for (const QString &v : s->matcher.oddValues) {
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
    QRegularExpressionMatchIterator it = s->matcher.any.globalMatch(text);
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
