#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonArray>
#include <QJsonObject>

#include <functional>

namespace loopscope {

// Server-sent-event framing, incrementally: bytes in (any split, CRLF or LF), complete events out
// as {"event": name (default "message"), "data": JSON when it parses, else the text}. Comments
// (": paused") and retry/id fields are skipped. One per stream; the recorder and HAR import
// read every stream with it.
class SseDecoder {
public:
    // Told each added event's data as it came (before parsing), while it is at hand: the
    // recorder's first look before masking, without keeping a copy of every event's data.
    using DataSeen = std::function<void(QByteArrayView data)>;

    // Appends the events completed by `bytes` to `out`; returns how many were added.
    int feed(const QByteArray &bytes, QJsonArray &out, const DataSeen &seen = {});
    // A stream that ended without its final blank line still yields its last event.
    int finish(QJsonArray &out, const DataSeen &seen = {});

private:
    // The complete lines of `text`; `consumed` is set to where the last one ended.
    int takeLines(QByteArrayView text, qsizetype &consumed, QJsonArray &out, const DataSeen &seen);
    bool dispatch(QJsonArray &out, const DataSeen &seen);

    QByteArray m_partial; // a line not ended yet
    QByteArray m_event;
    QByteArray m_data; // keeps its memory from event to event
    bool m_hasData = false;
};

} // namespace loopscope
