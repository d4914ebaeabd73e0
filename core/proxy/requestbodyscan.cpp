#include "proxy/requestbodyscan.h"

#include <QJsonDocument>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace loopscope {

namespace {

// Below QJsonDocument's own nesting limit, so nothing it refuses for depth passes here.
constexpr int kMaxDepth = 512;
// Top-level members checked for repeats pairwise; no request has nearly this many.
constexpr qsizetype kMaxMembers = 256;
// Numbers QJsonDocument reads as a double for sure: not too long, exponent well in range.
constexpr qsizetype kMaxNumberChars = 40;
constexpr int kMaxExponent = 250;

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;

// Skips the run of plain string bytes at p (printable ASCII other than '"' and '\\'), a block
// at a time: a body's bulk is long strings.
const char *skipPlain(const char *p, const char *end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
        // Signed: bytes >= 0x80 are negative, so "< 0x20" also finds them.
        const __m128i stop =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmplt_epi8(v, space));
        const int mask = _mm_movemask_epi8(stop);
        if (mask != 0)
            return p + __builtin_ctz(unsigned(mask));
        p += 16;
    }
#endif
    const auto hasZero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
    while (end - p >= 8) {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        if ((((v - 0x20 * kOnes) | v) & kHighs) | hasZero(v ^ (0x22 * kOnes)) |
            hasZero(v ^ (0x5c * kOnes)))
            break;
        p += 8;
    }
    return p;
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

class Scanner {
public:
    Scanner(const char *begin, const char *end)
        : p(begin)
        , m_end(end) {}

    const char *p;

    bool atEnd() const { return p == m_end; }
    void skipSpace() {
        while (p < m_end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
            ++p;
    }

    bool value(int depth) {
        if (p == m_end)
            return false;
        switch (*p) {
        case '{':
            return object(depth + 1);
        case '[':
            return array(depth + 1);
        case '"':
            return string(nullptr);
        case 't':
            return literal("true");
        case 'f':
            return literal("false");
        case 'n':
            return literal("null");
        default:
            return number();
        }
    }

    // A string at p (its opening quote); `escaped` (when given) says whether it held one.
    bool string(bool *escaped) {
        ++p;
        for (;;) {
            p = skipPlain(p, m_end);
            if (p == m_end)
                return false;
            const auto c = static_cast<unsigned char>(*p);
            if (c == '"') {
                ++p;
                return true;
            }
            if (c == '\\') {
                if (escaped)
                    *escaped = true;
                if (!escape())
                    return false;
            } else if (c < 0x20) {
                return false;
            } else if (c < 0x80) {
                ++p;
            } else if (!utf8()) {
                return false;
            }
        }
    }

    // An object's members or an array's elements, p at its opening bracket: `item` reads one
    // (it starts at p) and says whether it was well-formed.
    template<typename Item> bool sequence(int depth, char close, Item item) {
        if (depth > kMaxDepth)
            return false;
        ++p;
        skipSpace();
        if (p < m_end && *p == close) {
            ++p;
            return true;
        }
        for (;;) {
            if (!item())
                return false;
            skipSpace();
            if (p == m_end)
                return false;
            if (*p == close) {
                ++p;
                return true;
            }
            if (*p != ',')
                return false;
            ++p;
            skipSpace();
        }
    }

    // `"key": value`, p at the key's quote; the key's text (without quotes) goes to `key`.
    bool member(int depth, QByteArrayView *key, bool *keyEscaped, const char **valueStart) {
        if (p == m_end || *p != '"')
            return false;
        const char *keyStart = p + 1;
        if (!string(keyEscaped))
            return false;
        if (key)
            *key = QByteArrayView(keyStart, p - 1 - keyStart);
        skipSpace();
        if (p == m_end || *p != ':')
            return false;
        ++p;
        skipSpace();
        if (valueStart)
            *valueStart = p;
        return value(depth);
    }

private:
    bool object(int depth) {
        return sequence(depth, '}', [&] { return member(depth, nullptr, nullptr, nullptr); });
    }

    bool array(int depth) {
        return sequence(depth, ']', [&] { return value(depth); });
    }

    bool literal(const char *word) {
        const auto n = qsizetype(std::strlen(word));
        if (m_end - p < n || std::memcmp(p, word, size_t(n)) != 0)
            return false;
        p += n;
        return true;
    }

    bool number() {
        const char *start = p;
        if (p < m_end && *p == '-')
            ++p;
        if (p == m_end || !isDigit(*p))
            return false;
        if (*p == '0')
            ++p;
        else
            while (p < m_end && isDigit(*p))
                ++p;
        if (p < m_end && *p == '.') {
            ++p;
            if (p == m_end || !isDigit(*p))
                return false;
            while (p < m_end && isDigit(*p))
                ++p;
        }
        if (p < m_end && (*p == 'e' || *p == 'E')) {
            ++p;
            if (p < m_end && (*p == '+' || *p == '-'))
                ++p;
            if (p == m_end || !isDigit(*p))
                return false;
            int exponent = 0;
            while (p < m_end && isDigit(*p)) {
                exponent = exponent * 10 + (*p - '0');
                if (exponent > kMaxExponent)
                    return false;
                ++p;
            }
        }
        return p - start <= kMaxNumberChars;
    }

    int hex4() {
        if (m_end - p < 4 || !std::all_of(p, p + 4, [](char c) { return std::isxdigit(uchar(c)); }))
            return -1;
        const int v = QByteArrayView(p, 4).toInt(nullptr, 16); // four hex digits: nothing else
        p += 4;
        return v;
    }

    bool escape() {
        ++p; // the backslash
        if (p == m_end)
            return false;
        const char c = *p++;
        switch (c) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
            return true;
        case 'u':
            break;
        default:
            return false;
        }
        const int unit = hex4();
        if (unit <= 0 || (unit >= 0xdc00 && unit <= 0xdfff))
            return false; // \u0000 and a lone low surrogate: left to the full parse
        if (unit < 0xd800 || unit > 0xdbff)
            return true;
        // A high surrogate must be followed by its low half.
        if (m_end - p < 2 || p[0] != '\\' || p[1] != 'u')
            return false;
        p += 2;
        const int low = hex4();
        return low >= 0xdc00 && low <= 0xdfff;
    }

    // One multi-byte UTF-8 sequence at p: well-formed (no overlong form, no surrogate, not
    // past U+10FFFF) and not a noncharacter.
    bool utf8() {
        const auto at = [this](qsizetype i) { return static_cast<unsigned char>(p[i]); };
        const unsigned char c = at(0);
        qsizetype n = 0;
        unsigned char low = 0x80, high = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) {
            n = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 3;
            if (c == 0xe0)
                low = 0xa0;
            else if (c == 0xed)
                high = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 4;
            if (c == 0xf0)
                low = 0x90;
            else if (c == 0xf4)
                high = 0x8f;
        } else {
            return false;
        }
        if (m_end - p < n || at(1) < low || at(1) > high)
            return false;
        char32_t cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        cp = (cp << 6) | (at(1) & 0x3f);
        for (qsizetype i = 2; i < n; ++i) {
            if (at(i) < 0x80 || at(i) > 0xbf)
                return false;
            cp = (cp << 6) | (at(i) & 0x3f);
        }
        if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
            return false;
        p += n;
        return true;
    }

    const char *m_end;
};

} // namespace

std::optional<RequestBodyScan> RequestBodyScan::scan(QByteArrayView body) {
    Scanner s(body.data(), body.data() + body.size());
    RequestBodyScan result;
    s.skipSpace();
    if (s.atEnd() || *s.p != '{')
        return std::nullopt;
    const bool whole = s.sequence(1, '}', [&] {
        QByteArrayView key;
        bool escaped = false;
        const char *valueStart = nullptr;
        if (!s.member(1, &key, &escaped, &valueStart) || escaped)
            return false;
        for (const Member &m : std::as_const(result.m_members))
            if (m.key == key)
                return false; // which one wins is the parser's business
        result.m_members.append({key, QByteArrayView(valueStart, s.p - valueStart)});
        return result.m_members.size() <= kMaxMembers;
    });
    s.skipSpace();
    if (!whole || !s.atEnd())
        return std::nullopt;
    return result;
}

QByteArrayView RequestBodyScan::value(QByteArrayView key) const {
    for (const Member &m : m_members)
        if (m.key == key)
            return m.value;
    return {};
}

QString RequestBodyScan::plainString(QByteArrayView key) const {
    const QByteArrayView v = value(key);
    if (v.size() < 2 || v.front() != '"' || v.contains('\\'))
        return {};
    return QString::fromUtf8(v.sliced(1, v.size() - 2));
}

std::optional<QJsonObject>
RequestBodyScan::objectWithout(const QList<QByteArrayView> &omitted) const {
    QByteArray json;
    json += '{';
    for (const Member &m : m_members) {
        if (omitted.contains(m.key))
            continue;
        if (json.size() > 1)
            json += ',';
        json += '"';
        json += m.key;
        json += "\":";
        json += m.value;
    }
    json += '}';
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return std::nullopt;
    return doc.object();
}

} // namespace loopscope
