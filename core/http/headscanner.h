#pragma once

#include <QByteArrayView>
#include <QString>

namespace loopscope {

// Checks the framing of one request head (request line and header lines, up to the empty line)
// byte by byte, ahead of libhttp-parser: Debian builds that library without
// HTTP_PARSER_STRICT, and even strict it takes bare LF line ends and obsolete line folding,
// which other parsers on the path read differently (request smuggling, header injection).
// Refused: a bare LF or CR (every line ends CRLF), a header line that starts with SP or HTAB
// (obs-fold, RFC 9112 5.2), a header name that is not a token or is followed by whitespace
// before its colon (RFC 9112 5.1), a line without a colon, and control bytes in a value.
// Empty lines before the request line are skipped, as RFC 9112 2.2 allows.
class HeadScanner {
public:
    enum class State { Scanning, Complete, Invalid };

    // Scans `bytes`, the next bytes of the stream, and returns how many it took: all of them
    // while Scanning, up to and including the head's last LF once Complete, up to and
    // including the offending byte once Invalid. Takes nothing once no longer Scanning.
    qsizetype feed(QByteArrayView bytes);
    // For the next request on the connection.
    void reset() { *this = HeadScanner(); }

    State state() const { return m_state; }
    // Why the head was refused, a sentence for the client and the log; empty unless Invalid.
    QString error() const { return m_error; }
    // Short machine-readable reason for the error's `code`: "invalid_line_ending",
    // "obsolete_line_folding" or "invalid_header".
    QString code() const { return m_code; }

private:
    enum class Step {
        BeforeRequestLine,
        BeforeRequestLineCr,
        RequestLine,
        LineCr,
        LineStart,
        Name,
        Value,
        EndCr
    };
    void fail(const QString &code, const QString &why);

    State m_state = State::Scanning;
    Step m_step = Step::BeforeRequestLine;
    QString m_error;
    QString m_code;
};

} // namespace loopscope
