#include "http/requesttarget.h"

#include <QUrl>

namespace loopscope {

namespace {

int hexValue(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// The byte %XY names, or -1 when `at` does not start a well-formed escape.
int escapeAt(QByteArrayView bytes, qsizetype at) {
    if (at + 2 >= bytes.size())
        return -1;
    const int high = hexValue(bytes[at + 1]);
    const int low = hexValue(bytes[at + 2]);
    return high < 0 || low < 0 ? -1 : high * 16 + low;
}

bool isUnreserved(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

// RFC 3986 pchar without pct-encoded (handled by the caller), plus "/".
bool isPathByte(char c) {
    return isUnreserved(c) || QByteArrayView("!$&'()*+,;=:@/").contains(c);
}

// Bytes that must not hide behind an escape in a path: they would change its segments.
bool isForbiddenEscape(int value) {
    return value == '/' || value == '.' || value == '\\' || value < 0x20 || value == 0x7f;
}

QString describeByte(unsigned char c) {
    if (c == ' ')
        return QStringLiteral("a space");
    if (c == '\\')
        return QStringLiteral("a backslash");
    if (c < 0x20 || c == 0x7f)
        return QStringLiteral("a control character (0x%1)").arg(c, 2, 16, QLatin1Char('0'));
    if (c >= 0x80)
        return QStringLiteral("a non-ASCII byte (0x%1; percent-encode it)").arg(c, 2, 16);
    return QStringLiteral("the character '%1' (percent-encode it)").arg(QLatin1Char(char(c)));
}

QString describeEscape(int value) {
    const QString escape = QStringLiteral("%%1").arg(value, 2, 16, QLatin1Char('0')).toUpper();
    if (value == '/')
        return QStringLiteral("an encoded slash (%1)").arg(escape);
    if (value == '.')
        return QStringLiteral("an encoded dot (%1)").arg(escape);
    if (value == '\\')
        return QStringLiteral("an encoded backslash (%1)").arg(escape);
    return QStringLiteral("an encoded control character (%1)").arg(escape);
}

QString refused(const QString &why) {
    return QStringLiteral("Invalid request target: %1").arg(why);
}

} // namespace

RequestTarget RequestTarget::parse(QByteArrayView raw) {
    RequestTarget target;
    if (raw.isEmpty()) {
        target.m_error = refused(QStringLiteral("it is empty"));
        return target;
    }
    if (raw[0] != '/') {
        if (raw == "*")
            target.m_error = refused(QStringLiteral(
                "the asterisk form (*) is for server-wide OPTIONS, which Loopscope does not "
                "serve"));
        else if (raw.contains("://"))
            target.m_error = refused(QStringLiteral(
                "an absolute URL is for forward proxies, and Loopscope is not one: send the path "
                "only (e.g. /v1/responses)"));
        else
            target.m_error = refused(QStringLiteral(
                "it must be a path starting with / (the authority form host:port is for CONNECT, "
                "which Loopscope does not serve)"));
        return target;
    }
    if (raw.contains('#')) {
        target.m_error = refused(QStringLiteral("a fragment (#) is never part of a request"));
        return target;
    }
    const qsizetype mark = raw.indexOf('?');
    const QByteArrayView rawPath = mark < 0 ? raw : raw.first(mark);
    const QByteArrayView rawQuery = mark < 0 ? QByteArrayView() : raw.sliced(mark + 1);

    for (qsizetype i = 0; i < rawQuery.size(); ++i) {
        const auto c = static_cast<unsigned char>(rawQuery[i]);
        if (c <= 0x20 || c == 0x7f || c >= 0x80 || c == '\\') {
            target.m_error = refused(QStringLiteral("the query holds %1").arg(describeByte(c)));
            return target;
        }
        if (c == '%' && escapeAt(rawQuery, i) < 0) {
            target.m_error = refused(QStringLiteral("the query holds a % that starts no %XX "
                                                    "escape"));
            return target;
        }
    }

    // Decode once, refusing what an escape must not carry.
    QByteArray decoded;
    decoded.reserve(rawPath.size());
    for (qsizetype i = 0; i < rawPath.size(); ++i) {
        const char c = rawPath[i];
        if (c == '%') {
            const int value = escapeAt(rawPath, i);
            if (value < 0) {
                target.m_error =
                    refused(QStringLiteral("the path holds a % that starts no %XX escape"));
                return target;
            }
            if (isForbiddenEscape(value)) {
                target.m_error =
                    refused(QStringLiteral("the path holds %1").arg(describeEscape(value)));
                return target;
            }
            decoded += char(value);
            i += 2;
        } else if (isPathByte(c)) {
            decoded += c;
        } else {
            target.m_error = refused(QStringLiteral("the path holds %1")
                                         .arg(describeByte(static_cast<unsigned char>(c))));
            return target;
        }
    }
    // What a second decoding downstream would make of the decoded path.
    for (qsizetype i = 0; i < decoded.size(); ++i) {
        if (decoded[i] != '%')
            continue;
        const int value = escapeAt(decoded, i);
        if (value >= 0 && (isForbiddenEscape(value) || value == '%')) {
            target.m_error = refused(
                QStringLiteral("the path holds a double-encoded escape (%25%1 decodes to %%1)")
                    .arg(QString::fromLatin1(decoded.mid(i + 1, 2))));
            return target;
        }
    }
    if (!decoded.isValidUtf8()) {
        target.m_error = refused(QStringLiteral("the decoded path is not UTF-8"));
        return target;
    }

    // Dot segments are literal dots here (encoded ones were refused), so removing them from the
    // encoded path removes the same segments as from the decoded one.
    bool climbed = false;
    const QByteArray normalised = removeDotSegments(rawPath, &climbed);
    if (climbed) {
        target.m_error = refused(QStringLiteral(
            "a '..' segment climbs out of the path's first segment (/v1/.. or above /)"));
        return target;
    }
    if (normalised.startsWith("//")) {
        target.m_error = refused(QStringLiteral(
            "the path starts with // (an empty first segment reads as a host name)"));
        return target;
    }
    target.m_encodedPath = normalised;
    target.m_path = QUrl::fromPercentEncoding(normalised);
    target.m_query = rawQuery.toByteArray();
    return target;
}

QByteArray RequestTarget::removeDotSegments(QByteArrayView path, bool *climbed) {
    // The RFC's two buffers; the input one is a read position into `path`.
    QByteArray out;
    out.reserve(path.size());
    bool up = false;
    auto popLastSegment = [&out, &up] {
        if (out.isEmpty()) {
            up = true;
            return;
        }
        const qsizetype slash = out.lastIndexOf('/');
        out.truncate(slash < 0 ? 0 : slash);
        up = up || out.isEmpty();
    };
    const qsizetype n = path.size();
    qsizetype i = 0;
    while (i < n) {
        const QByteArrayView in = path.sliced(i);
        if (in.startsWith("../")) { // A
            i += 3;
        } else if (in.startsWith("./")) {
            i += 2;
        } else if (in.startsWith("/./")) { // B
            i += 2;
        } else if (in == "/.") {
            out += '/';
            i = n;
        } else if (in.startsWith("/../")) { // C
            i += 3;
            popLastSegment();
        } else if (in == "/..") {
            popLastSegment();
            out += '/';
            i = n;
        } else if (in == "." || in == "..") { // D
            i = n;
        } else { // E: the first segment, with its leading "/" if any
            qsizetype end = i + 1;
            while (end < n && path[end] != '/')
                ++end;
            out.append(path.sliced(i, end - i));
            i = end;
        }
    }
    if (climbed)
        *climbed = up;
    return out;
}

QByteArray RequestTarget::encodePath(const QString &decodedPath) {
    return QUrl::toPercentEncoding(decodedPath, "/!$&'()*+,;=:@");
}

bool RequestTarget::staysUnder(QByteArrayView encodedPath, QByteArrayView basePath) {
    const RequestTarget target = parse(encodedPath);
    if (!target.isValid() || !target.query().isEmpty() || target.encodedPath() != encodedPath)
        return false;
    while (basePath.endsWith('/'))
        basePath.chop(1);
    if (basePath.isEmpty())
        return true;
    return encodedPath == basePath ||
           (encodedPath.startsWith(basePath) && encodedPath.size() > basePath.size() &&
            encodedPath[basePath.size()] == '/');
}

} // namespace loopscope
