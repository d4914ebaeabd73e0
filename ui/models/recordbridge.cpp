#include "models/recordbridge.h"

#include <QJsonArray>

#include <algorithm>
#include <tuple>

namespace loopscope {

QJsonObject RecordBridge::codeRunHopOf(const CodeRunRecord &run) {
    QJsonValue error = QJsonValue::Null;
    if (run.hasError())
        error = QJsonObject{{QStringLiteral("name"), run.errorName},
                            {QStringLiteral("value"), run.errorValue},
                            {QStringLiteral("traceback"), run.traceback}};
    QJsonArray images;
    for (const CodeRunImage &image : run.images) {
        const QString mime =
            image.mimeType.isEmpty() ? QStringLiteral("image/png") : image.mimeType;
        const QString url = QStringLiteral("data:") + mime + QStringLiteral(";base64,") +
                            QString::fromLatin1(image.data.toBase64());
        images.append(QJsonObject{{QStringLiteral("name"), image.name},
                                  {QStringLiteral("mime"), image.mimeType},
                                  {QStringLiteral("url"), url}});
    }
    QJsonArray files;
    for (const CodeRunFile &file : run.files)
        files.append(QJsonObject{{QStringLiteral("id"), file.id},
                                 {QStringLiteral("path"), file.path},
                                 {QStringLiteral("bytes"), file.bytes},
                                 {QStringLiteral("source"), file.source}});
    return {{QStringLiteral("kind"), QStringLiteral("code_run")},
            {QStringLiteral("at"), run.timestampMs - qint64(run.durationMs)},
            {QStringLiteral("iteration"), run.iteration},
            {QStringLiteral("call_id"), run.callId},
            {QStringLiteral("container_id"), run.containerId},
            {QStringLiteral("session_id"), run.sessionId},
            {QStringLiteral("code"), run.code},
            {QStringLiteral("stdout"), run.stdoutText},
            {QStringLiteral("stderr"), run.stderrText},
            {QStringLiteral("error"), error},
            {QStringLiteral("output"), run.output},
            {QStringLiteral("images"), images},
            {QStringLiteral("files"), files},
            {QStringLiteral("duration_ms"), run.durationMs},
            {QStringLiteral("timed_out"), run.timedOut},
            {QStringLiteral("truncated"), run.truncated},
            {QStringLiteral("executed"), run.executed}};
}

QJsonObject RecordBridge::flowOf(const RequestRecord &record) {
    struct Timed {
        qint64 at;
        int order;
        QJsonObject hop;
    };
    QList<Timed> timed;
    int order = 0;
    for (const UpstreamCallRecord &c : record.upstreamCalls) {
        const qint64 start = c.timestampMs - c.latencyMs;
        timed.append({start,
                      order++,
                      {{QStringLiteral("kind"), QStringLiteral("upstream_request")},
                       {QStringLiteral("at"), start},
                       {QStringLiteral("iteration"), c.iteration},
                       {QStringLiteral("body"), c.request}}});
        QJsonObject response{{QStringLiteral("kind"), QStringLiteral("upstream_response")},
                             {QStringLiteral("at"), c.timestampMs},
                             {QStringLiteral("iteration"), c.iteration},
                             {QStringLiteral("status"), c.status},
                             {QStringLiteral("body"), c.response},
                             {QStringLiteral("latency_ms"), double(c.latencyMs)},
                             {QStringLiteral("usage"),
                              QJsonObject{{QStringLiteral("input_tokens"), c.usage.input},
                                          {QStringLiteral("output_tokens"), c.usage.output},
                                          {QStringLiteral("total_tokens"), c.usage.total}}}};
        if (!c.error.isEmpty())
            response.insert(QStringLiteral("error"), c.error);
        timed.append({start, order++, response});
    }
    for (const CodeRunRecord &r : record.codeRuns) {
        const QJsonObject hop = codeRunHopOf(r);
        timed.append({qint64(hop.value(QStringLiteral("at")).toDouble()), order++, hop});
    }
    // Loop order: iteration first (a call, then the code it asked for), then time.
    std::stable_sort(timed.begin(), timed.end(), [](const Timed &a, const Timed &b) {
        const int ia = a.hop.value(QStringLiteral("iteration")).toInt();
        const int ib = b.hop.value(QStringLiteral("iteration")).toInt();
        const bool ca = a.hop.value(QStringLiteral("kind")).toString() == QLatin1String("code_run");
        const bool cb = b.hop.value(QStringLiteral("kind")).toString() == QLatin1String("code_run");
        return std::tuple(ia, ca, a.order) < std::tuple(ib, cb, b.order);
    });
    QJsonArray hops;
    for (const Timed &t : std::as_const(timed))
        hops.append(t.hop);
    const QString state = record.state == RequestState::Running     ? QStringLiteral("running")
                          : record.state == RequestState::Completed ? QStringLiteral("completed")
                                                                    : QStringLiteral("failed");
    return {
        {QStringLiteral("id"), record.id},
        {QStringLiteral("started_at"), record.startedMs},
        {QStringLiteral("state"), state},
        {QStringLiteral("status"), record.httpStatus},
        {QStringLiteral("duration_ms"), record.durationMs >= 0 ? double(record.durationMs) : 0.0},
        {QStringLiteral("hops"), hops}};
}

} // namespace loopscope
