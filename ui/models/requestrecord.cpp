#include "models/requestrecord.h"

#include <QJsonArray>

#include <algorithm>

namespace loopscope {

namespace {

// Counts may arrive as JSON numbers of either type; never trust them to be integral.
qint64 toInt64(const QJsonValue &value) {
    return value.isDouble() ? qint64(value.toDouble()) : 0;
}

} // namespace

TokenUsage TokenUsage::fromJson(const QJsonObject &usage) {
    TokenUsage u;
    u.input = toInt64(usage.value(QLatin1String("input_tokens")));
    if (u.input == 0)
        u.input = toInt64(usage.value(QLatin1String("prompt_tokens")));
    u.output = toInt64(usage.value(QLatin1String("output_tokens")));
    if (u.output == 0)
        u.output = toInt64(usage.value(QLatin1String("completion_tokens")));
    u.total = toInt64(usage.value(QLatin1String("total_tokens")));
    if (u.total == 0)
        u.total = u.input + u.output;
    return u;
}

TokenUsage &TokenUsage::operator+=(const TokenUsage &other) {
    input += other.input;
    output += other.output;
    total += other.total;
    return *this;
}

RequestRecord RequestRecord::fromStarted(const InspectorEvent &event) {
    const QJsonObject &d = event.data;
    RequestRecord r;
    r.id = event.requestId;
    r.startedMs = event.timestampMs;
    r.lastEventMs = event.timestampMs;
    r.method = d.value(QLatin1String("method")).toString();
    r.path = d.value(QLatin1String("path")).toString();
    r.api = d.value(QLatin1String("api")).toString();
    r.model = d.value(QLatin1String("model")).toString();
    r.stream = d.value(QLatin1String("stream")).toBool();
    r.intercepted = d.value(QLatin1String("intercepted")).toBool();
    r.identity = d.value(QLatin1String("identity")).toString();
    r.sessionId = d.value(QLatin1String("sessionId")).toString();
    r.clientRequest = d.value(QLatin1String("request")).toObject();
    if (r.model.isEmpty())
        r.model = r.clientRequest.value(QLatin1String("model")).toString();
    return r;
}

bool RequestRecord::apply(const InspectorEvent &event) {
    using Kind = InspectorEvent::Kind;
    const QJsonObject &d = event.data;
    switch (event.kind) {
    case Kind::UpstreamCall: {
        UpstreamCallRecord call;
        call.iteration = event.iteration;
        call.timestampMs = event.timestampMs;
        call.request = d.value(QLatin1String("request")).toObject();
        call.response = d.value(QLatin1String("response")).toObject();
        call.status = d.value(QLatin1String("status")).toInt();
        call.latencyMs = toInt64(d.value(QLatin1String("latencyMs")));
        call.usage = TokenUsage::fromJson(d.value(QLatin1String("usage")).toObject());
        call.error = d.value(QLatin1String("error")).toString();
        usage += call.usage;
        iterations = std::max(iterations, std::max(event.iteration + 1, 1));
        upstreamCalls.append(call);
        break;
    }
    case Kind::CodeExecuted: {
        CodeRunRecord run;
        run.iteration = event.iteration;
        run.timestampMs = event.timestampMs;
        run.callId = d.value(QLatin1String("callId")).toString();
        run.code = d.value(QLatin1String("code")).toString();
        run.stdoutText = d.value(QLatin1String("stdout")).toString();
        run.stderrText = d.value(QLatin1String("stderr")).toString();
        const QJsonValue error = d.value(QLatin1String("error"));
        if (error.isObject()) {
            const QJsonObject e = error.toObject();
            run.errorName = e.value(QLatin1String("name")).toString();
            run.errorValue = e.value(QLatin1String("value")).toString();
            run.traceback = e.value(QLatin1String("traceback")).toString();
        } else if (error.isString()) {
            run.errorValue = error.toString();
        }
        run.output = d.value(QLatin1String("output")).toString();
        run.durationMs = d.value(QLatin1String("durationMs")).toDouble();
        run.containerId = d.value(QLatin1String("containerId")).toString();
        run.sessionId = d.value(QLatin1String("sessionId")).toString();
        run.truncated = d.value(QLatin1String("truncated")).toBool();
        run.timedOut = d.value(QLatin1String("timedOut")).toBool();
        run.executed = d.value(QLatin1String("executed")).toBool(true);
        for (const QJsonValue &v : d.value(QLatin1String("images")).toArray()) {
            const QJsonObject image = v.toObject();
            const QString url = image.value(QLatin1String("url")).toString();
            const qsizetype comma = url.indexOf(u',');
            if (!url.startsWith(QLatin1String("data:")) || comma < 0)
                continue;
            run.images.append({image.value(QLatin1String("name")).toString(),
                               image.value(QLatin1String("mime")).toString(),
                               QByteArray::fromBase64(url.mid(comma + 1).toLatin1())});
        }
        for (const QJsonValue &v : d.value(QLatin1String("files")).toArray()) {
            const QJsonObject file = v.toObject();
            run.files.append({file.value(QLatin1String("id")).toString(),
                              file.value(QLatin1String("path")).toString(),
                              file.value(QLatin1String("bytes")).toInteger(),
                              file.value(QLatin1String("source")).toString()});
        }
        codeRuns.append(run);
        codeRunCount = std::max(codeRunCount, int(codeRuns.size()));
        if (sessionId.isEmpty())
            sessionId = run.sessionId;
        break;
    }
    case Kind::OutputsInjected:
        injectedItems = d.value(QLatin1String("items")).toArray();
        break;
    case Kind::RequestFinished: {
        state = RequestState::Completed;
        httpStatus = d.value(QLatin1String("status")).toInt(200);
        durationMs = d.contains(QLatin1String("durationMs"))
                         ? toInt64(d.value(QLatin1String("durationMs")))
                         : event.timestampMs - startedMs;
        // The final counts are authoritative: they include work not reported step by step.
        if (d.contains(QLatin1String("iterations")))
            iterations = d.value(QLatin1String("iterations")).toInt();
        if (d.contains(QLatin1String("codeRuns")))
            codeRunCount = d.value(QLatin1String("codeRuns")).toInt();
        // An empty usage (e.g. a model that reports none) keeps the per-call sum.
        if (const TokenUsage final =
                TokenUsage::fromJson(d.value(QLatin1String("usage")).toObject());
            !final.isEmpty())
            usage = final;
        finalResponse = d.value(QLatin1String("response")).toObject();
        incompleteReason = d.value(QLatin1String("incompleteReason")).toString();
        break;
    }
    case Kind::Paused:
        ++openPauses;
        break;
    case Kind::Resumed:
        openPauses = std::max(0, openPauses - 1);
        break;
    case Kind::RequestFailed:
        openPauses = 0;
        state = RequestState::Failed;
        httpStatus = d.value(QLatin1String("status")).toInt();
        failureMessage = d.value(QLatin1String("message")).toString();
        durationMs = d.contains(QLatin1String("durationMs"))
                         ? toInt64(d.value(QLatin1String("durationMs")))
                         : event.timestampMs - startedMs;
        if (d.contains(QLatin1String("iterations")))
            iterations = d.value(QLatin1String("iterations")).toInt();
        break;
    default:
        return false;
    }
    lastEventMs = std::max(lastEventMs, event.timestampMs);
    return true;
}

void RequestRecord::dropPayloads() {
    const auto shorten = [](QString &text) {
        if (text.size() > kKeptTextChars) {
            text.truncate(kKeptTextChars);
            text.append(QStringLiteral("\n… (dropped)"));
        }
        text.squeeze();
    };
    clientRequest = {};
    finalResponse = {};
    injectedItems = {};
    for (UpstreamCallRecord &call : upstreamCalls) {
        call.request = {};
        call.response = {};
    }
    for (CodeRunRecord &run : codeRuns) {
        shorten(run.code);
        shorten(run.stdoutText);
        shorten(run.stderrText);
        shorten(run.traceback);
        shorten(run.output);
        run.images.clear(); // pictures are the bulkiest part of a run
    }
    payloadsDropped = true;
}

QString RequestRecord::statusText() const {
    switch (state) {
    case RequestState::Running:
        return openPauses > 0 ? QStringLiteral("paused") : QStringLiteral("running");
    case RequestState::Completed:
        if (!incompleteReason.isEmpty())
            return QString::number(httpStatus) + QStringLiteral(" incomplete");
        return QString::number(httpStatus);
    case RequestState::Failed:
        return httpStatus > 0 ? QStringLiteral("failed ") + QString::number(httpStatus)
                              : QStringLiteral("failed");
    }
    return {};
}

qint64 RequestRecord::elapsedMs() const {
    if (durationMs >= 0)
        return durationMs;
    return std::max<qint64>(0, lastEventMs - startedMs);
}

} // namespace loopscope
