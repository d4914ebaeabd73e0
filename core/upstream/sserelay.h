#pragma once

#include "upstream/upstreamreply.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonValue>

#include <functional>

class QNetworkReply;

namespace loopscope {

class ResponseSink;

// Relays one upstream reply that was asked to stream to a client as it arrives, translating
// each SSE event on the way: the bridges' streaming half (Chat Completions chunks as Responses
// events, Messages events as chat chunks). On the first bytes it decides whether the upstream
// streams (2xx with text/event-stream); if so it opens the client's SSE, hands every event's
// `data` to `translate` and writes what comes back at once, and at the end either writes
// `finish`'s tail or, when the upstream was cut mid-stream, aborts the client's connection
// (no faked clean end). An upstream that answered whole (an error, or a server that ignored
// `stream: true`) goes to `whole` read into an UpstreamReply. Proxy thread; the relay lives as
// long as the reply.
class SseRelay {
public:
    struct Steps {
        // Written right after the SSE head (may be empty).
        std::function<QByteArray()> begin;
        // The client bytes one upstream event means; sets `failed` when the event is an error
        // the client has now been told of (nothing more is translated after it).
        std::function<QByteArray(const QJsonValue &data, bool &failed)> translate;
        // The stream ended: `reply` has the status and latency, `events` every event read (for
        // the hop's record). Called even when the client has gone.
        std::function<void(const UpstreamReply &reply, const QJsonArray &events)> streamed;
        // The tail written after a clean, unfailed end (may be empty).
        std::function<QByteArray()> finish;
        // The upstream did not stream: its whole answer (status, body, JSON, transport error).
        std::function<void(UpstreamReply &reply, qint64 elapsedNs)> whole;
    };

    static void relay(QNetworkReply *reply, ResponseSink *sink, Steps steps);

    // A finished reply read whole into `out` (whose status is already set).
    static void readWhole(QNetworkReply *reply, UpstreamReply &out);
};

} // namespace loopscope
