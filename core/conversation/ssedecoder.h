#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>

namespace loopscope {

// Server-sent-event framing, incrementally: bytes in (any split, CRLF or LF), complete events out
// as {"event": name (default "message"), "data": JSON when it parses, else the text}. Comments
// (": paused") and retry/id fields are skipped. One per stream; the recorder and HAR import
// read every stream with it.
class SseDecoder {
public:
    // Appends the events completed by `bytes` to `out`; returns how many were added.
    int feed(const QByteArray &bytes, QJsonArray &out);
    // A stream that ended without its final blank line still yields its last event.
    int finish(QJsonArray &out);

private:
    int takeLines(QJsonArray &out);
    bool dispatch(QJsonArray &out);

    QByteArray m_buffer;
    QByteArray m_event;
    QByteArray m_data;
    bool m_hasData = false;
};

} // namespace loopscope
