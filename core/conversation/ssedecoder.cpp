#include "conversation/ssedecoder.h"

#include <QJsonDocument>

namespace loopscope {

int SseDecoder::feed(const QByteArray &bytes, QJsonArray &out, const DataSeen &seen) {
    int added = 0;
    QByteArrayView rest(bytes);
    if (!m_partial.isEmpty()) {
        // Only the line left over is completed from this chunk: the rest is read where it lies
        // (appending every chunk to what was left copied a whole stream once more).
        const qsizetype nl = rest.indexOf('\n');
        if (nl < 0) {
            m_partial.append(rest);
            return 0;
        }
        m_partial.append(rest.first(nl + 1));
        qsizetype consumed = 0;
        added += takeLines(m_partial, consumed, out, seen);
        m_partial.clear();
        rest = rest.sliced(nl + 1);
    }
    qsizetype consumed = 0;
    added += takeLines(rest, consumed, out, seen);
    if (consumed < rest.size())
        m_partial = rest.sliced(consumed).toByteArray();
    return added;
}

int SseDecoder::finish(QJsonArray &out, const DataSeen &seen) {
    int added = 0;
    if (!m_partial.isEmpty()) {
        m_partial += '\n';
        qsizetype consumed = 0;
        added += takeLines(m_partial, consumed, out, seen);
        m_partial.clear();
    }
    if (dispatch(out, seen))
        ++added;
    return added;
}

int SseDecoder::takeLines(QByteArrayView text, qsizetype &consumed, QJsonArray &out,
                          const DataSeen &seen) {
    int added = 0;
    qsizetype start = 0;
    for (;;) {
        const qsizetype nl = text.indexOf('\n', start);
        if (nl < 0)
            break;
        qsizetype end = nl;
        if (end > start && text.at(end - 1) == '\r')
            --end;
        const QByteArrayView line = text.sliced(start, end - start); // a view: no copy per line
        start = nl + 1;
        if (line.isEmpty()) {
            if (dispatch(out, seen))
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
    consumed = start;
    return added;
}

bool SseDecoder::dispatch(QJsonArray &out, const DataSeen &seen) {
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
    if (seen)
        seen(m_data);
    m_event.clear();
    m_data.resize(0); // its memory serves the next event
    m_hasData = false;
    return true;
}

} // namespace loopscope
