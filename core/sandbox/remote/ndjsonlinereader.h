#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace loopscope {

// Splits a byte stream into lines as it arrives (a read may end mid-line or mid UTF-8
// sequence) and enforces LiteLLM's output cap: the running sum of the UTF-8 byte length of
// every line (terminators excluded) must not exceed `capBytes`. Hand-written because no Debian
// library frames NDJSON over a QNetworkReply incrementally.
class NdjsonLineReader {
public:
    static constexpr qint64 kDefaultCapBytes = 10 * 1024 * 1024; // SANDBOX_MAX_OUTPUT_BYTES

    explicit NdjsonLineReader(qint64 capBytes = kDefaultCapBytes);

    // Appends bytes and returns the lines completed by them (without "\n" / "\r\n"). Once the
    // cap is exceeded it returns nothing more and capExceeded() is true: the partial line is
    // counted too, so one endless line cannot grow the buffer past the cap.
    QList<QByteArray> feed(const QByteArray &bytes);
    // End of stream: the unterminated last line, if any (also counted against the cap).
    QList<QByteArray> finish();

    bool capExceeded() const { return m_capExceeded; }
    qint64 capBytes() const { return m_capBytes; }
    qint64 totalLineBytes() const { return m_total; }
    // LiteLLM's exact message for an exceeded cap.
    QString capExceededMessage() const;

private:
    bool account(qint64 lineBytes);

    QByteArray m_pending;
    qint64 m_capBytes;
    qint64 m_total = 0;
    bool m_capExceeded = false;
};

} // namespace loopscope
