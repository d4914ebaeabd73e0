#include "conversation/ssedecoder.h"

#include <QJsonDocument>

namespace loopscope {

int SseDecoder::feed(const QByteArray &bytes, QJsonArray &out) {
    m_buffer += bytes;
    return takeLines(out);
}

int SseDecoder::finish(QJsonArray &out) {
    int added = 0;
    if (!m_buffer.isEmpty()) {
        m_buffer += '\n';
        added += takeLines(out);
    }
    if (dispatch(out))
        ++added;
    return added;
}

int SseDecoder::takeLines(QJsonArray &out) {
    int added = 0;
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = m_buffer.indexOf('\n', start);
        if (nl < 0)
            break;
        qsizetype end = nl;
        if (end > start && m_buffer.at(end - 1) == '\r')
            --end;
        const QByteArray line = m_buffer.mid(start, end - start);
        start = nl + 1;
        if (line.isEmpty()) {
            if (dispatch(out))
                ++added;
            continue;
        }
        if (line.startsWith(':'))
            continue;
        const qsizetype colon = line.indexOf(':');
        const QByteArray field = colon < 0 ? line : line.left(colon);
        QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
        if (value.startsWith(' '))
            value.remove(0, 1);
        if (field == "event") {
            m_event = value;
        } else if (field == "data") {
            if (m_hasData)
                m_data += '\n';
            m_data += value;
            m_hasData = true;
        }
    }
    m_buffer.remove(0, start);
    return added;
}

bool SseDecoder::dispatch(QJsonArray &out) {
    if (!m_hasData) {
        m_event.clear();
        return false;
    }
    QJsonObject event{{QStringLiteral("event"),
                       m_event.isEmpty() ? QStringLiteral("message") : QString::fromUtf8(m_event)}};
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(m_data, &error);
    if (error.error == QJsonParseError::NoError && (doc.isObject() || doc.isArray()))
        event.insert(QStringLiteral("data"),
                     doc.isObject() ? QJsonValue(doc.object()) : QJsonValue(doc.array()));
    else
        event.insert(QStringLiteral("data"), QString::fromUtf8(m_data));
    out.append(event);
    m_event.clear();
    m_data.clear();
    m_hasData = false;
    return true;
}

} // namespace loopscope
