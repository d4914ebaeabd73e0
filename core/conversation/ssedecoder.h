#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>

namespace loopscope {

// Server-sent-event framing, incrementally: bytes in (any split, CRLF or LF), complete events out
// as {"event": name (default "message"), "data": JSON when it parses, else the text}. Comments
// (": paused") and retry/id fields are skipped. One per stream; the recorder and HAR import
// read every stream with it.
class SseDecoder {
public:
    // Appends the events completed by `bytes` to `out`; returns how many were added. With
    // `rawData`, each added event's data as it came (before parsing) is appended there too.
    int feed(const QByteArray &bytes, QJsonArray &out, QList<QByteArray> *rawData = nullptr);
    // A stream that ended without its final blank line still yields its last event.
    int finish(QJsonArray &out, QList<QByteArray> *rawData = nullptr);

private:
    int takeLines(QJsonArray &out, QList<QByteArray> *rawData);
    bool dispatch(QJsonArray &out, QList<QByteArray> *rawData);

    QByteArray m_buffer;
    QByteArray m_event;
    QByteArray m_data;
    bool m_hasData = false;
};

} // namespace loopscope
