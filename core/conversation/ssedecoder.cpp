#include "conversation/ssedecoder.h"

#include <QJsonDocument>

#include <utility>

namespace loopscope {

int SseDecoder::feed(const QByteArray &bytes, QJsonArray &out, QList<QByteArray> *rawData) {
    m_buffer += bytes; // shares `bytes` when nothing was left over
    return takeLines(out, rawData);
}

int SseDecoder::finish(QJsonArray &out, QList<QByteArray> *rawData) {
    int added = 0;
    if (!m_buffer.isEmpty()) {
        m_buffer += '\n';
        added += takeLines(out, rawData);
    }
    if (dispatch(out, rawData))
        ++added;
    return added;
}

int SseDecoder::takeLines(QJsonArray &out, QList<QByteArray> *rawData) {
    int added = 0;
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = m_buffer.indexOf('\n', start);
        if (nl < 0)
            break;
        qsizetype end = nl;
        if (end > start && m_buffer.at(end - 1) == '\r')
            --end;
        // Views into the buffer (read before it changes below): no copy per line.
        const QByteArrayView line = QByteArrayView(m_buffer).sliced(start, end - start);
        start = nl + 1;
        if (line.isEmpty()) {
            if (dispatch(out, rawData))
                ++added;
            continue;
        }
        if (line.startsWith(':'))
            continue;
        const qsizetype colon = line.indexOf(':');
        const QByteArrayView field = colon < 0 ? line : line.first(colon);
        QByteArrayView value = colon < 0 ? QByteArrayView() : line.sliced(colon + 1);
        if (value.startsWith(' '))
            value = value.sliced(1);
        if (field == "event") {
            m_event = value.toByteArray();
        } else if (field == "data") {
            if (m_hasData)
                m_data += '\n';
            m_data.append(value);
            m_hasData = true;
        }
    }
    m_buffer.remove(0, start);
    return added;
}

bool SseDecoder::dispatch(QJsonArray &out, QList<QByteArray> *rawData) {
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
    if (rawData)
        rawData->append(std::exchange(m_data, {}));
    m_event.clear();
    m_data.clear();
    m_hasData = false;
    return true;
}

} // namespace loopscope
