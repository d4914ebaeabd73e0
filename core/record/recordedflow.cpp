#include "record/recordedflow.h"

#include "conversation/dialect.h"
#include "conversation/usage.h"

#include <QJsonDocument>

#include <algorithm>

namespace loopscope {

namespace {

void collectText(const QJsonValue &value, QString &out) {
    if (value.isString()) {
        out += value.toString();
        out += u'\n';
    } else if (value.isObject()) {
        const QJsonObject o = value.toObject();
        for (auto it = o.constBegin(); it != o.constEnd(); ++it)
            collectText(it.value(), out);
    } else if (value.isArray()) {
        for (const QJsonValue &v : value.toArray())
            collectText(v, out);
    }
}

// Enough for any real body; a multi-megabyte blob is not what q= is for.
constexpr qsizetype kMaxSearchText = 4 * 1024 * 1024;

} // namespace

void RecordedFlow::addUsage(const QJsonObject &usage) {
    if (usage.isEmpty())
        return;
    const Usage u = Usage::fromWire(usage);
    inputTokens += u.input;
    outputTokens += u.output;
    totalTokens += u.total;
    if (u.hasCache) {
        cacheReadTokens += u.cacheRead;
        cacheWriteTokens += u.cacheWrite;
        cacheSeen = true;
    }
    usageSeen = true;
}

QJsonObject RecordedFlow::usageJson() const {
    Usage sum;
    sum.input = inputTokens;
    sum.output = outputTokens;
    sum.total = totalTokens;
    sum.cacheRead = cacheReadTokens;
    sum.cacheWrite = cacheWriteTokens;
    sum.hasCache = cacheSeen;
    return sum.toJson();
}

QJsonObject RecordedFlow::summary() const {
    const auto orNull = [](const QString &s) {
        return s.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(s);
    };
    QJsonObject s = extra;
    s.insert(QStringLiteral("id"), id);
    s.insert(QStringLiteral("object"), QStringLiteral("loopscope.flow"));
    s.insert(QStringLiteral("started_at"), startedAt);
    s.insert(QStringLiteral("method"), method);
    s.insert(QStringLiteral("path"), path);
    s.insert(QStringLiteral("api"), api);
    s.insert(QStringLiteral("model"), orNull(model));
    s.insert(QStringLiteral("stream"), stream);
    s.insert(QStringLiteral("intercepted"), intercepted);
    s.insert(QStringLiteral("state"), state);
    if (waitingForSandbox) // only while it waits: a running flow queued for a sandbox
        s.insert(QStringLiteral("waiting_for_sandbox"), true);
    s.insert(QStringLiteral("status"), status);
    s.insert(QStringLiteral("iterations"), iterations);
    s.insert(QStringLiteral("code_runs"), codeRuns);
    s.insert(QStringLiteral("code_errors"), codeErrors);
    s.insert(QStringLiteral("incomplete_reason"), incompleteReason);
    s.insert(QStringLiteral("duration_ms"), durationMs);
    s.insert(QStringLiteral("ttfb_ms"), ttfbMs);
    s.insert(QStringLiteral("overhead_ms"), overheadMs);
    s.insert(QStringLiteral("usage"), usageJson());
    s.insert(QStringLiteral("cost_usd"), costUsd);
    s.insert(QStringLiteral("run_id"), orNull(runId));
    s.insert(QStringLiteral("session_id"), orNull(sessionId));
    s.insert(QStringLiteral("container_id"), orNull(containerId));
    s.insert(QStringLiteral("tool_calls"), toolCalls);
    if (imported)
        s.insert(QStringLiteral("imported"), true);
    return s;
}

QJsonArray RecordedFlow::hopsJson() const {
    QJsonArray out;
    for (size_t i = 0; i < hops.size(); ++i) {
        QJsonObject hop = hops[i];
        const bool streamedHere =
            clientSseStream && (int(i) == clientResponseHop || int(i) == upstreamResponseHop);
        if (streamedHere)
            hop.insert(QStringLiteral("events"), clientEventsJson());
        if (streamedHere && clientEventsDropped > 0)
            hop.insert(QStringLiteral("events_dropped"), double(clientEventsDropped));
        else if (int(i) == clientResponseHop && !clientStreamText.isEmpty())
            hop.insert(QStringLiteral("body"), QString::fromUtf8(clientStreamText));
        out.append(hop);
    }
    return out;
}

QList<std::pair<qsizetype, QByteArray>> RecordedFlow::verbatimBodies() const {
    QList<std::pair<qsizetype, QByteArray>> out;
    if (!requestBodyText.isEmpty() && !hops.empty())
        out.append({0, requestBodyText}); // the client_request hop is the first
    // (a body hopsJson() replaces, a non-SSE stream's text, has none)
    if (!responseBodyText.isEmpty() && clientResponseHop >= 0 && clientStreamText.isEmpty() &&
        !clientSseStream)
        out.append({clientResponseHop, responseBodyText});
    return out;
}

QJsonArray RecordedFlow::clientEventsJson() const {
    if (clientEventsTail.isEmpty())
        return clientEvents;
    QJsonArray all = clientEvents;
    for (const QJsonValue &e : clientEventsTail)
        all.append(e);
    return all;
}

QJsonObject RecordedFlow::toJson() const {
    QJsonObject flow = summary();
    flow.insert(QStringLiteral("hops"), hopsJson());
    return flow;
}

QString RecordedFlow::searchText(const QStringList &head, const QJsonArray &hops) {
    QString text;
    text.reserve(4096);
    for (const QString &s : head) {
        text += s;
        text += u'\n';
    }
    // A pass-through flow holds the client's body twice (its request and the upstream request),
    // and a streamed one its events twice (the upstream's and the client's): each indexed once,
    // as a search only asks whether a flow holds a word. Half the full-text work of a large
    // request or stream. (Equal values the recorder shares compare in constant time.)
    QList<QJsonValue> seen;
    for (const QJsonValue &hop : hops) {
        const QJsonObject o = hop.toObject();
        for (auto it = o.constBegin(); it != o.constEnd(); ++it) {
            const QJsonValue value = it.value();
            const bool large =
                (it.key() == QLatin1String("body") && (value.isObject() || value.isArray())) ||
                (it.key() == QLatin1String("events") && value.isArray() &&
                 !value.toArray().isEmpty());
            if (large) {
                if (std::find(seen.cbegin(), seen.cend(), value) != seen.cend())
                    continue;
                seen.append(value);
            }
            collectText(value, text);
        }
    }
    if (text.size() > kMaxSearchText)
        text.truncate(kMaxSearchText);
    return text;
}

QString RecordedFlow::searchTextOfStored(const QJsonObject &summary, const QJsonArray &storedHops) {
    QStringList head;
    for (const char *key : {"id", "path", "model", "run_id", "session_id", "container_id"})
        head << summary.value(QLatin1String(key)).toString(); // null: empty, as when recorded
    return searchText(head, storedHops);
}

namespace {

const QLatin1String kBodyFrom("body_from");
const QLatin1String kEventsFrom("events_from");

// The client hop an upstream hop of a pass-through mirrors.
QLatin1String mirroredKind(const QJsonObject &hop) {
    const QString kind = hop.value(QStringLiteral("kind")).toString();
    if (kind == QLatin1String("upstream_request"))
        return QLatin1String("client_request");
    if (kind == QLatin1String("upstream_response"))
        return QLatin1String("client_response");
    return QLatin1String();
}

// The first hop of `kind`, or an empty object.
QJsonObject firstHop(const QJsonArray &hops, QLatin1String kind) {
    for (const QJsonValue &v : hops) {
        const QJsonObject hop = v.toObject();
        if (hop.value(QStringLiteral("kind")).toString() == kind)
            return hop;
    }
    return {};
}

} // namespace

QJsonArray RecordedFlow::storedHops(const QJsonArray &hops) {
    QJsonArray out = hops;
    for (qsizetype i = 0; i < out.size(); ++i) {
        QJsonObject hop = out.at(i).toObject();
        const QLatin1String mirrored = mirroredKind(hop);
        if (mirrored.isEmpty())
            continue;
        const QJsonObject client = firstHop(hops, mirrored);
        bool changed = false;
        for (const QLatin1String key : {QLatin1String("body"), QLatin1String("events")}) {
            const QJsonValue value = hop.value(key);
            const bool worth = (value.isObject() && !value.toObject().isEmpty()) ||
                               (value.isArray() && !value.toArray().isEmpty()) ||
                               (value.isString() && value.toString().size() > 256);
            if (!worth || client.value(key) != value)
                continue;
            hop.remove(key);
            hop.insert(key == QLatin1String("body") ? kBodyFrom : kEventsFrom, mirrored);
            changed = true;
        }
        if (changed)
            out.replace(i, hop);
    }
    return out;
}

QJsonArray RecordedFlow::loadedHops(const QJsonArray &stored) {
    QJsonArray out = stored;
    for (qsizetype i = 0; i < out.size(); ++i) {
        QJsonObject hop = out.at(i).toObject();
        if (!hop.contains(kBodyFrom) && !hop.contains(kEventsFrom))
            continue;
        for (const auto &[ref, key] : {std::pair{kBodyFrom, QLatin1String("body")},
                                       std::pair{kEventsFrom, QLatin1String("events")}}) {
            const QString from = hop.value(ref).toString();
            if (from != QLatin1String("client_request") && from != QLatin1String("client_response"))
                continue; // not a reference this store writes: left as it is
            hop.remove(ref);
            hop.insert(key, firstHop(stored, from == QLatin1String("client_request")
                                                 ? QLatin1String("client_request")
                                                 : QLatin1String("client_response"))
                                .value(key));
        }
        out.replace(i, hop);
    }
    return out;
}

RecordedFlow RecordedFlow::fromJson(const QJsonObject &flow) {
    RecordedFlow f;
    f.id = flow.value(QStringLiteral("id")).toString();
    f.startedAt = qint64(flow.value(QStringLiteral("started_at")).toDouble());
    f.method = flow.value(QStringLiteral("method")).toString();
    f.path = flow.value(QStringLiteral("path")).toString();
    f.api = flow.value(QStringLiteral("api")).toString(apiOfPath(f.path));
    f.model = flow.value(QStringLiteral("model")).toString();
    f.stream = flow.value(QStringLiteral("stream")).toBool();
    f.intercepted = flow.value(QStringLiteral("intercepted")).toBool();
    f.state = flow.value(QStringLiteral("state")).toString(QStringLiteral("completed"));
    f.status = flow.value(QStringLiteral("status")).toInt();
    f.iterations = flow.value(QStringLiteral("iterations")).toInt();
    f.codeRuns = flow.value(QStringLiteral("code_runs")).toInt();
    f.codeErrors = flow.value(QStringLiteral("code_errors")).toInt();
    f.toolCalls = flow.value(QStringLiteral("tool_calls")).toInt();
    f.incompleteReason = flow.value(QStringLiteral("incomplete_reason"));
    if (f.incompleteReason.isUndefined())
        f.incompleteReason = QJsonValue::Null;
    f.durationMs = flow.value(QStringLiteral("duration_ms")).toDouble();
    f.ttfbMs = flow.value(QStringLiteral("ttfb_ms")).toDouble();
    f.overheadMs = flow.value(QStringLiteral("overhead_ms")).toDouble();
    f.addUsage(flow.value(QStringLiteral("usage")).toObject());
    f.costUsd = flow.value(QStringLiteral("cost_usd"));
    if (!f.costUsd.isDouble())
        f.costUsd = QJsonValue::Null;
    f.runId = flow.value(QStringLiteral("run_id")).toString();
    f.sessionId = flow.value(QStringLiteral("session_id")).toString();
    f.containerId = flow.value(QStringLiteral("container_id")).toString();
    for (const QJsonValue &hop : flow.value(QStringLiteral("hops")).toArray())
        f.hops.push_back(hop.toObject());
    static const QStringList known{
        QStringLiteral("id"),          QStringLiteral("object"),
        QStringLiteral("started_at"),  QStringLiteral("method"),
        QStringLiteral("path"),        QStringLiteral("api"),
        QStringLiteral("model"),       QStringLiteral("stream"),
        QStringLiteral("intercepted"), QStringLiteral("state"),
        QStringLiteral("status"),      QStringLiteral("iterations"),
        QStringLiteral("code_runs"),   QStringLiteral("code_errors"),
        QStringLiteral("tool_calls"),  QStringLiteral("incomplete_reason"),
        QStringLiteral("duration_ms"), QStringLiteral("ttfb_ms"),
        QStringLiteral("overhead_ms"), QStringLiteral("usage"),
        QStringLiteral("cost_usd"),    QStringLiteral("run_id"),
        QStringLiteral("session_id"),  QStringLiteral("container_id"),
        QStringLiteral("hops"),        QStringLiteral("imported")};
    for (auto it = flow.constBegin(); it != flow.constEnd(); ++it)
        if (!known.contains(it.key()))
            f.extra.insert(it.key(), it.value());
    return f;
}

} // namespace loopscope
