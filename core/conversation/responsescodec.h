#pragma once

#include <QJsonArray>
#include <QJsonObject>

namespace loopscope {

// OpenAI Responses on the wire.
class ResponsesCodec {
public:
    // The response a stream of decoded events ({"event","data"}) adds up to: the terminal
    // event's (response.completed, .incomplete or .failed) response. A stream cut short gives
    // what arrived — the finished output items, else the text deltas as one message — so a broken
    // stream still shows its text; nothing at all gives {}.
    static QJsonObject responseFromEvents(const QJsonArray &events);
};

} // namespace loopscope
