#include "http/headscanner.h"

namespace loopscope {

namespace {

// RFC 9110 5.6.2 tchar.
bool isTokenByte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           QByteArrayView("!#$%&'*+-.^_`|~").contains(c);
}

QString hexByte(char c) {
    return QStringLiteral("0x%1").arg(uint(static_cast<unsigned char>(c)), 2, 16, QLatin1Char('0'));
}

} // namespace

void HeadScanner::fail(const QString &code, const QString &why) {
    m_state = State::Invalid;
    m_code = code;
    m_error = QStringLiteral("Malformed HTTP request: %1").arg(why);
}

qsizetype HeadScanner::feed(QByteArrayView bytes) {
    qsizetype taken = 0;
    while (m_state == State::Scanning && taken < bytes.size()) {
        const char c = bytes[taken++];
        const auto bareLf = [this] {
            fail(QStringLiteral("invalid_line_ending"),
                 QStringLiteral("a line ends with a bare LF; HTTP lines end with CRLF"));
        };
        const auto bareCr = [this] {
            fail(QStringLiteral("invalid_line_ending"),
                 QStringLiteral("a CR is not followed by LF; HTTP lines end with CRLF"));
        };
        switch (m_step) {
        case Step::BeforeRequestLine:
            if (c == '\r')
                m_step = Step::BeforeRequestLineCr;
            else if (c == '\n')
                bareLf();
            else
                m_step = Step::RequestLine;
            break;
        case Step::BeforeRequestLineCr:
            if (c == '\n')
                m_step = Step::BeforeRequestLine;
            else
                bareCr();
            break;
        case Step::RequestLine:
        case Step::Value:
            if (c == '\r') {
                m_step = Step::LineCr;
            } else if (c == '\n') {
                bareLf();
            } else if (m_step == Step::Value && c != '\t' &&
                       (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)) {
                fail(QStringLiteral("invalid_header"),
                     QStringLiteral("a header value holds a control character (%1)")
                         .arg(hexByte(c)));
            }
            break;
        case Step::LineCr:
            if (c == '\n')
                m_step = Step::LineStart;
            else
                bareCr();
            break;
        case Step::LineStart:
            if (c == '\r')
                m_step = Step::EndCr;
            else if (c == '\n')
                bareLf();
            else if (c == ' ' || c == '\t')
                fail(QStringLiteral("obsolete_line_folding"),
                     QStringLiteral("a header line starts with whitespace (obsolete line "
                                    "folding is not accepted; send each header on one line)"));
            else if (isTokenByte(c))
                m_step = Step::Name;
            else
                fail(QStringLiteral("invalid_header"),
                     QStringLiteral("a header name starts with a byte that is not allowed in "
                                    "a name (%1)")
                         .arg(hexByte(c)));
            break;
        case Step::Name:
            if (c == ':')
                m_step = Step::Value;
            else if (c == ' ' || c == '\t')
                fail(QStringLiteral("invalid_header"),
                     QStringLiteral("whitespace between a header name and its colon"));
            else if (c == '\r' || c == '\n')
                fail(QStringLiteral("invalid_header"),
                     QStringLiteral("a header line has no colon"));
            else if (!isTokenByte(c))
                fail(QStringLiteral("invalid_header"),
                     QStringLiteral("a header name holds a byte that is not allowed in a name "
                                    "(%1)")
                         .arg(hexByte(c)));
            break;
        case Step::EndCr:
            if (c == '\n')
                m_state = State::Complete;
            else
                bareCr();
            break;
        }
    }
    return taken;
}

} // namespace loopscope
