// What reading a recorded stream costs the recorder's thread: bench_passthrough's 1 MB SSE answer
// (~1,000 events of ~1 KB) fed to SseDecoder in 64 KB chunks with the recorder's first look at
// each event's data, beside the floor its JSON parse sets (QJsonDocument::fromJson of each
// event's data alone). Best of 7 rounds of 20 streams. Run by hand; numbers go to
// docs/benchmarks.md.
#include "conversation/ssedecoder.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QList>

#include <algorithm>
#include <cstdio>
#include <functional>

using namespace loopscope;

namespace {

double bestMsPerStream(const std::function<qsizetype()> &stream) {
    double best = 1e18;
    for (int round = 0; round < 7; ++round) {
        QElapsedTimer clock;
        clock.start();
        qsizetype events = 0;
        for (int i = 0; i < 20; ++i)
            events += stream();
        if (events == 0)
            return -1;
        best = std::min(best, double(clock.nsecsElapsed()) / 1e6 / 20);
    }
    return best;
}

} // namespace

int main() {
    const QByteArray event = "data: {\"type\":\"response.output_text.delta\",\"delta\":\"" +
                             QByteArray(1000, 'x') + "\"}\n\n";
    QByteArray sse;
    QList<QByteArray> data;
    while (sse.size() < 1024 * 1024) {
        sse += event;
        data << event.sliced(6, event.size() - 8);
    }
    QList<QByteArray> chunks;
    for (qsizetype at = 0; at < sse.size(); at += 64 * 1024)
        chunks << sse.mid(at, 64 * 1024);

    const double decoder = bestMsPerStream([&chunks] {
        SseDecoder decoder;
        qsizetype events = 0;
        for (const QByteArray &chunk : chunks) {
            QJsonArray out;
            QList<bool> looked;
            decoder.feed(chunk, out, [&looked](QByteArrayView d) { looked.append(d.size() > 0); });
            events += out.size();
        }
        return events;
    });
    const double parseOnly = bestMsPerStream([&data] {
        qsizetype events = 0;
        for (const QByteArray &d : data)
            events += QJsonDocument::fromJson(d).isObject() ? 1 : 0;
        return events;
    });
    std::printf("bench_ssedecoder: 1 MB stream of %lld events in %lld chunks of 64 KB\n",
                qint64(data.size()), qint64(chunks.size()));
    std::printf("SseDecoder::feed (events decoded, data looked at): %.3f ms per stream\n", decoder);
    std::printf("QJsonDocument::fromJson of each event's data alone: %.3f ms per stream\n",
                parseOnly);
    return decoder < 0 || parseOnly < 0 ? 1 : 0;
}
