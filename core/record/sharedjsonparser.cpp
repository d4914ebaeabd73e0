#include "record/sharedjsonparser.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cstring>

namespace loopscope {

namespace {

// A structural skip over JSON, not a parser: it only finds where a value ends, so the parts
// nobody asked for (or already parsed) are never built. Qt's parser does the parsing.

bool isSpace(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

const char *skipSpace(const char *p, const char *end) {
    while (p < end && isSpace(*p))
        ++p;
    return p;
}

// `p` at an opening quote → just past its closing quote; nullptr when unterminated. Strings are
// most of an agent's request: memchr jumps to the next quote, an escaped one (odd backslashes
// before it) is stepped over.
const char *skipString(const char *p, const char *end) {
    ++p;
    while (p < end) {
        const auto *q = static_cast<const char *>(std::memchr(p, '"', size_t(end - p)));
        if (!q)
            return nullptr;
        const char *b = q;
        while (b > p && b[-1] == '\\')
            --b;
        if (((q - b) & 1) == 0)
            return q + 1;
        p = q + 1;
    }
    return nullptr;
}

const char *skipValue(const char *p, const char *end) {
    if (p >= end)
        return nullptr;
    if (*p == '"')
        return skipString(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            const char c = *p;
            if (c == '"') {
                p = skipString(p, end);
                if (!p)
                    return nullptr;
                continue;
            }
            if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            ++p;
        }
        return nullptr;
    }
    const char *start = p; // a number, true, false or null
    while (p < end && *p != ',' && *p != '}' && *p != ']' && !isSpace(*p))
        ++p;
    return p > start ? p : nullptr;
}

QByteArrayView trimmed(QByteArrayView json) {
    const char *b = json.data();
    const char *e = b + json.size();
    b = skipSpace(b, e);
    while (e > b && isSpace(e[-1]))
        --e;
    return {b, e - b};
}

// What `t` (trimmed) holds, parsed by Qt; a scalar is parsed as the one element of an array
// (QJsonDocument holds only objects and arrays).
QJsonValue parseDirect(QByteArrayView t) {
    if (t.isEmpty())
        return QJsonValue::Undefined;
    QJsonParseError error{};
    if (t.front() == '{' || t.front() == '[') {
        const QJsonDocument doc =
            QJsonDocument::fromJson(QByteArray::fromRawData(t.data(), t.size()), &error);
        if (error.error != QJsonParseError::NoError)
            return QJsonValue::Undefined;
        return doc.isObject() ? QJsonValue(doc.object()) : QJsonValue(doc.array());
    }
    QByteArray wrapped;
    wrapped.reserve(t.size() + 2);
    wrapped.append('[').append(t).append(']');
    const QJsonDocument doc = QJsonDocument::fromJson(wrapped, &error);
    if (error.error != QJsonParseError::NoError || doc.array().size() != 1)
        return QJsonValue::Undefined;
    return doc.array().at(0);
}

bool isLarge(QByteArrayView json) {
    return json.size() >= SharedJsonParser::kSplitBytes;
}

// The members of the object at `p` into `out`; just past its closing brace, nullptr when it is
// not a well-formed object.
const char *scanObject(const char *p, const char *end, QList<SharedJsonParser::Member> &out) {
    if (p == end || *p != '{')
        return nullptr;
    p = skipSpace(p + 1, end);
    if (p < end && *p == '}')
        return p + 1;
    while (p < end && *p == '"') {
        const char *keyEnd = skipString(p, end);
        if (!keyEnd)
            return nullptr;
        const QByteArrayView key(p + 1, keyEnd - 1 - (p + 1));
        p = skipSpace(keyEnd, end);
        if (p == end || *p != ':')
            return nullptr;
        p = skipSpace(p + 1, end);
        const char *valueEnd = skipValue(p, end);
        if (!valueEnd)
            return nullptr;
        out.append({key, QByteArrayView(p, valueEnd - p)});
        p = skipSpace(valueEnd, end);
        if (p < end && *p == '}')
            return p + 1;
        if (p == end || *p != ',')
            return nullptr;
        p = skipSpace(p + 1, end);
    }
    return nullptr;
}

// Calls `element(p, end)` at each element of the array `json` (it returns where that element
// ends, nullptr when malformed); false when `json` is not a well-formed array.
template<class Element> bool scanArray(QByteArrayView json, Element element) {
    const char *end = json.data() + json.size();
    const char *p = skipSpace(json.data(), end);
    if (p == end || *p != '[')
        return false;
    p = skipSpace(p + 1, end);
    if (p < end && *p == ']')
        return true;
    while (p < end) {
        p = element(p, end);
        if (!p)
            return false;
        p = skipSpace(p, end);
        if (p < end && *p == ']')
            return true;
        if (p == end || *p != ',')
            return false;
        p = skipSpace(p + 1, end);
    }
    return false;
}

} // namespace

QList<SharedJsonParser::Member> SharedJsonParser::members(QByteArrayView json) {
    const char *end = json.data() + json.size();
    QList<Member> out;
    if (!scanObject(skipSpace(json.data(), end), end, out))
        return {};
    return out;
}

QList<QList<SharedJsonParser::Member>> SharedJsonParser::objects(QByteArrayView json) {
    QList<QList<Member>> out;
    const bool ok = scanArray(json, [&out](const char *p, const char *end) {
        return scanObject(p, end, out.emplace_back());
    });
    return ok ? out : QList<QList<Member>>();
}

QList<QByteArrayView> SharedJsonParser::elements(QByteArrayView json) {
    QList<QByteArrayView> out;
    const bool ok = scanArray(json, [&out](const char *p, const char *end) {
        const char *valueEnd = skipValue(p, end);
        if (valueEnd)
            out.append(QByteArrayView(p, valueEnd - p));
        return valueEnd;
    });
    return ok ? out : QList<QByteArrayView>();
}

QString SharedJsonParser::keyText(QByteArrayView key) {
    if (!key.contains('\\'))
        return QString::fromUtf8(key);
    QByteArray quoted;
    quoted.reserve(key.size() + 2);
    quoted.append('"').append(key).append('"');
    return parseDirect(quoted).toString();
}

QJsonValue SharedJsonParser::parseOnce(QByteArrayView json) {
    return parseDirect(trimmed(json));
}

QJsonValue SharedJsonParser::parse(QByteArrayView json) {
    return parseValue(json, false);
}

void SharedJsonParser::nextGeneration() {
    ++m_generation;
    if (m_generation <= quint64(kKeepGenerations))
        return;
    const quint64 oldest = m_generation - quint64(kKeepGenerations);
    m_cache.removeIf([oldest](const auto &it) { return it.value().used < oldest; });
}

QJsonValue SharedJsonParser::parseValue(QByteArrayView json, bool keep) {
    const QByteArrayView t = trimmed(json);
    if (t.size() < kShareBytes)
        return parseDirect(t);
    if (keep) {
        const auto it = m_cache.find(QByteArray::fromRawData(t.data(), t.size()));
        if (it != m_cache.end()) {
            it->used = m_generation;
            ++m_reused;
            return it->value;
        }
    }
    // An array is split when large (a history: its messages repeat one by one); an object only
    // when a member is large (a request: its prompt and tools repeat, its small fields parse
    // faster in one go).
    QJsonValue value = QJsonValue::Undefined;
    if (isLarge(t) && t.front() == '{') {
        const QList<Member> parts = members(t);
        if (std::any_of(parts.cbegin(), parts.cend(),
                        [](const Member &m) { return isLarge(m.value); })) {
            QJsonObject object;
            for (const Member &m : parts) {
                const QJsonValue v = parseValue(m.value, true);
                if (v.isUndefined())
                    return QJsonValue::Undefined;
                object.insert(keyText(m.key), v);
            }
            value = object;
        }
    } else if (isLarge(t) && t.front() == '[') {
        const QList<QByteArrayView> parts = elements(t);
        if (!parts.isEmpty()) {
            QJsonArray array;
            for (const QByteArrayView &e : parts) {
                const QJsonValue v = parseValue(e, true);
                if (v.isUndefined())
                    return QJsonValue::Undefined;
                array.append(v);
            }
            value = array;
        }
    }
    // A split container is not kept itself: it is put together again from its kept parts, and
    // a history's array is one message longer every turn.
    if (!value.isUndefined())
        return value;
    value = parseDirect(t);
    if (keep && !value.isUndefined())
        m_cache.insert(QByteArray(t.data(), t.size()), {value, m_generation});
    return value;
}

} // namespace loopscope
