#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace loopscope {

// The request target of one HTTP request, checked and normalised in one place, before anything
// routes on it or forwards it. An upstream, a URL library or a later decoding step must never
// see a path that means something other than what was checked here: paths are joined to a
// route's base URL and sent with a configured provider key, so `/v1/../../admin/keys` that some
// later step resolves is a key leak (docs/security.md, "Request targets").
//
// Rules (anything else is refused with error() and becomes a 400):
//  - origin-form only: the target starts with "/". Absolute-form (`http://host/x`: Loopscope is
//    not a forward proxy), authority-form (`host:port`, CONNECT) and asterisk-form (`*`) are
//    refused, as is a path starting with "//" (an empty first segment reads as a host name to
//    many URL parsers) and a fragment ("#", never part of a request).
//  - the path holds only RFC 3986 pchar and "/" bytes and well-formed %XX escapes: no controls,
//    spaces, backslashes, non-ASCII bytes.
//  - the path is percent-decoded exactly once. An escape of "/", ".", "\" or a control byte
//    (NUL included) is refused: such bytes have a meaning the path's segments must not hide. So
//    is a decoded path that still holds such an escape (`%252e` decodes to `%2e`): a second
//    decoding downstream would turn it into a dot segment. The decoded bytes must be UTF-8.
//  - dot segments are removed (RFC 3986 5.2.4). A ".." that would remove the first segment
//    (`/v1/..`) or climb above the root (`/..`) is refused: a client names the API it calls.
//  - the query is kept as sent and never decoded; only controls, "#", "\", non-ASCII bytes and
//    malformed escapes are refused there ("%2F" in a query is data and passes untouched).
class RequestTarget {
public:
    static RequestTarget parse(QByteArrayView raw);

    bool isValid() const { return m_error.isEmpty(); }
    // Why the target was refused, one sentence for the client and the log; empty when valid.
    QString error() const { return m_error; }
    // Decoded once, dot segments removed; empty when invalid.
    QString path() const { return m_path; }
    // The same path still percent-encoded as the client sent it.
    QByteArray encodedPath() const { return m_encodedPath; }
    // As sent, without the "?"; empty when there is none.
    QByteArray query() const { return m_query; }

    // RFC 3986 5.2.4 remove_dot_segments, exactly (so relative inputs work too). `climbed` is
    // set when a ".." removed the first segment of the output or found the output empty.
    static QByteArray removeDotSegments(QByteArrayView path, bool *climbed = nullptr);
    // Percent-encodes a decoded path for a URL again: what parse() decoded, a later decoding
    // gets back byte for byte ("%" becomes "%25", "?" becomes "%3F").
    static QByteArray encodePath(const QString &decodedPath);
    // Defence in depth before a request leaves: `encodedPath` (a URL's path as it will be sent)
    // is a valid target path without dot segments, and it is `basePath` or lies below it.
    static bool staysUnder(QByteArrayView encodedPath, QByteArrayView basePath);

private:
    QString m_error;
    QString m_path;
    QByteArray m_encodedPath;
    QByteArray m_query;
};

} // namespace loopscope
