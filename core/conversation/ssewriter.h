#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>

namespace loopscope {

// The one server-sent-event writer: the relayed, the loop's, the demo's and HAR's streams all
// frame their events here, so they cannot disagree about the bytes.
class SseWriter {
public:
    // "event: <name>\n" (left out when the name is empty or the default "message"), then one
    // "data: " line per line of `data`, then the blank line.
    static QByteArray frame(QByteArrayView eventName, QByteArrayView data);
    // The same with compact JSON as data.
    static QByteArray frame(QByteArrayView eventName, const QJsonObject &data);
    // Chat Completions' end of stream, "data: [DONE]\n\n".
    static QByteArray done();
};

} // namespace loopscope
