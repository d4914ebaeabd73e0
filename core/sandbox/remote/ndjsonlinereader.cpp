#include "sandbox/remote/ndjsonlinereader.h"

namespace loopscope {

namespace {
QByteArray withoutCarriageReturn(QByteArray line) {
    if (line.endsWith('\r'))
        line.chop(1);
    return line;
}
} // namespace

NdjsonLineReader::NdjsonLineReader(qint64 capBytes)
    : m_capBytes(capBytes) {}

bool NdjsonLineReader::account(qint64 lineBytes) {
    if (m_total + lineBytes > m_capBytes) {
        m_capExceeded = true;
        m_pending.clear();
        return false;
    }
    m_total += lineBytes;
    return true;
}

QList<QByteArray> NdjsonLineReader::feed(const QByteArray &bytes) {
    QList<QByteArray> lines;
    if (m_capExceeded)
        return lines;
    m_pending.append(bytes);
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = m_pending.indexOf('\n', start);
        if (nl < 0)
            break;
        QByteArray line = withoutCarriageReturn(m_pending.mid(start, nl - start));
        start = nl + 1;
        if (!account(line.size()))
            return {};
        lines.append(std::move(line));
    }
    m_pending.remove(0, start);
    // The unfinished line will count in full once complete; if it already breaks the cap, stop
    // buffering now rather than after the sender finally ends it. A trailing '\r' may be the
    // first half of "\r\n" and is not counted (fuzzing found a line of exactly the cap refused
    // only when the read ended between '\r' and '\n').
    const qsizetype pendingBytes = m_pending.size() - (m_pending.endsWith('\r') ? 1 : 0);
    if (m_total + pendingBytes > m_capBytes) {
        m_capExceeded = true;
        m_pending.clear();
        return {};
    }
    return lines;
}

QList<QByteArray> NdjsonLineReader::finish() {
    if (m_capExceeded || m_pending.isEmpty())
        return {};
    QByteArray line = withoutCarriageReturn(std::exchange(m_pending, {}));
    if (!account(line.size()))
        return {};
    return {line};
}

QString NdjsonLineReader::capExceededMessage() const {
    return QStringLiteral(
               "Sandbox output exceeded %1 bytes; aborting to avoid unbounded memory use.")
        .arg(m_capBytes);
}

} // namespace loopscope
