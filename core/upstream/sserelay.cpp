#include "upstream/sserelay.h"

#include "conversation/ssedecoder.h"
#include "http/responsesink.h"
#include "upstream/upstreamclient.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>

#include <memory>

namespace loopscope {

void SseRelay::readWhole(QNetworkReply *reply, UpstreamReply &out) {
    out.body = UpstreamClient::takeAll(reply);
    out.timedOut = UpstreamClient::timedOut(reply);
    if (out.status == 0) {
        out.networkError = reply->error();
        out.errorString = out.timedOut ? QStringLiteral("timed out") : reply->errorString();
    }
    const QJsonDocument doc = QJsonDocument::fromJson(out.body);
    out.isJson = doc.isObject();
    out.json = doc.object();
}

void SseRelay::relay(QNetworkReply *reply, ResponseSink *sink, Steps steps) {
    struct State {
        QElapsedTimer clock;
        bool decided = false;
        bool sse = false;
        bool failed = false;
        SseDecoder decoder;
        QJsonArray events;
        Steps steps;
    };
    auto state = std::make_shared<State>();
    state->clock.start();
    state->steps = std::move(steps);
    QObject::connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
    QObject::connect(sink, &ResponseSink::clientGone, reply, &QNetworkReply::abort);

    const auto pump = [state, sink, reply] {
        const qsizetype first = state->events.size();
        state->decoder.feed(UpstreamClient::takeAll(reply), state->events);
        QByteArray out;
        for (qsizetype i = first; i < state->events.size() && !state->failed; ++i)
            out += state->steps.translate(
                state->events.at(i).toObject().value(QStringLiteral("data")), state->failed);
        if (!out.isEmpty() && !sink->isClientGone())
            sink->writeChunk(out);
    };
    // Decided once, on the first bytes with a status (or at the end when all came at once).
    const auto decide = [state, sink, reply] {
        if (state->decided)
            return;
        state->decided = true;
        const int status = UpstreamClient::httpStatus(reply);
        state->sse = status >= 200 && status < 300 &&
                     reply->rawHeader("Content-Type").toLower().startsWith("text/event-stream");
        if (state->sse) {
            sink->addExternalTime(state->clock.nsecsElapsed());
            sink->beginSse(200);
            if (state->steps.begin)
                sink->writeChunk(state->steps.begin());
        }
    };
    QObject::connect(reply, &QNetworkReply::readyRead, sink, [state, reply, pump, decide] {
        if (UpstreamClient::httpStatus(reply) > 0)
            decide();
        if (state->sse)
            pump();
    });
    QObject::connect(reply, &QNetworkReply::finished, sink, [state, sink, reply, pump, decide] {
        UpstreamReply answer;
        answer.status = UpstreamClient::httpStatus(reply);
        answer.latencyMs = double(state->clock.nsecsElapsed()) / 1e6;
        if (answer.status > 0)
            decide();
        if (!state->sse) {
            readWhole(reply, answer);
            state->steps.whole(answer, state->clock.nsecsElapsed());
            return;
        }
        pump();
        state->decoder.finish(state->events);
        state->steps.streamed(answer, state->events);
        if (sink->isClientGone())
            return;
        if (reply->error() != QNetworkReply::NoError && !state->failed) {
            sink->abortConnection(); // cut mid-stream: do not fake a clean end
            return;
        }
        if (!state->failed && state->steps.finish)
            sink->writeChunk(state->steps.finish());
        sink->endStream();
    });
}

} // namespace loopscope
