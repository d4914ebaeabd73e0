#include "control/harcodec.h"

#include "conversation/dialect.h"
#include "conversation/ssedecoder.h"
#include "conversation/ssewriter.h"
#include "conversation/usage.h"
#include "inspect/credentialpolicy.h"

#include <QDateTime>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStringDecoder>
#include <QUrl>
#include <QUrlQuery>

namespace loopscope {

namespace {

QString S(const char *text) {
    return QString::fromLatin1(text);
}

QString freshId(const char *prefix) {
    return QString::fromLatin1(prefix) +
           QString::number(QRandomGenerator::global()->generate64(), 16).rightJustified(16, u'0');
}

// ---- export ---------------------------------------------------------------------------------

QJsonObject findHop(const QJsonArray &hops, const QString &kind, bool last) {
    QJsonObject found;
    for (const QJsonValue &hop : hops) {
        if (hop.toObject().value(S("kind")).toString() == kind) {
            found = hop.toObject();
            if (!last)
                break;
        }
    }
    return found;
}

QString headerText(const QJsonValue &value) {
    if (value.isArray()) {
        QStringList parts;
        for (const QJsonValue &v : value.toArray())
            parts << v.toVariant().toString();
        return parts.join(S(", "));
    }
    return value.toVariant().toString();
}

QJsonArray harHeaders(const QJsonObject &headers, QString *contentType) {
    QJsonArray out;
    for (auto it = headers.begin(); it != headers.end(); ++it) {
        const QString value = headerText(it.value());
        if (contentType && it.key().compare(S("content-type"), Qt::CaseInsensitive) == 0)
            *contentType = value;
        out.append(QJsonObject{{S("name"), it.key()}, {S("value"), value}});
    }
    return out;
}

// A hop body as the bytes a client saw: JSON compact, strings as they are.
QString bodyText(const QJsonValue &body) {
    if (body.isObject())
        return QString::fromUtf8(QJsonDocument(body.toObject()).toJson(QJsonDocument::Compact));
    if (body.isArray())
        return QString::fromUtf8(QJsonDocument(body.toArray()).toJson(QJsonDocument::Compact));
    if (body.isString())
        return body.toString();
    return {};
}

QString sseText(const QJsonArray &events) {
    QByteArray text;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        text += SseWriter::frame(e.value(S("event")).toString().toUtf8(),
                                 bodyText(e.value(S("data"))).toUtf8());
    }
    return QString::fromUtf8(text);
}

constexpr double kMaxEntryMs = 365.0 * 24 * 3600 * 1000;

double number(const QJsonValue &v, double fallback = 0) {
    return v.isDouble() ? v.toDouble() : fallback;
}

QJsonObject harEntry(const QJsonObject &flow, const QString &baseUrl) {
    const QJsonArray hops = flow.value(S("hops")).toArray();
    const QJsonObject request = findHop(hops, S("client_request"), false);
    const QJsonObject response = findHop(hops, S("client_response"), true);

    const QString method = request.value(S("method")).toString(flow.value(S("method")).toString());
    const QString path = request.value(S("path")).toString(flow.value(S("path")).toString());
    const QString query = request.value(S("query")).toString();
    QString url = baseUrl + path;
    if (!query.isEmpty())
        url += u'?' + query;
    QJsonArray queryString;
    for (const auto &item : QUrlQuery(query).queryItems(QUrl::FullyDecoded))
        queryString.append(QJsonObject{{S("name"), item.first}, {S("value"), item.second}});

    QString requestType;
    QJsonObject harRequest{
        {S("method"), method.isEmpty() ? S("GET") : method},
        {S("url"), url},
        {S("httpVersion"), S("HTTP/1.1")},
        {S("cookies"), QJsonArray()},
        {S("headers"), harHeaders(request.value(S("headers")).toObject(), &requestType)},
        {S("queryString"), queryString},
        {S("headersSize"), -1}};
    const QString requestBody = bodyText(request.value(S("body")));
    harRequest.insert(S("bodySize"), requestBody.toUtf8().size());
    if (!requestBody.isEmpty())
        harRequest.insert(S("postData"),
                          QJsonObject{{S("mimeType"),
                                       requestType.isEmpty() ? S("application/json") : requestType},
                                      {S("text"), requestBody}});

    QString responseType;
    const QJsonArray responseHeaders =
        harHeaders(response.value(S("headers")).toObject(), &responseType);
    const QJsonArray events = response.value(S("events")).toArray();
    const QString responseBody =
        !events.isEmpty() ? sseText(events) : bodyText(response.value(S("body")));
    if (responseType.isEmpty())
        responseType = !events.isEmpty() ? S("text/event-stream") : S("application/json");
    const int status = response.value(S("status")).toInt(flow.value(S("status")).toInt(0));
    const qsizetype responseSize = responseBody.toUtf8().size();
    const QJsonObject harResponse{{S("status"), status},
                                  {S("statusText"), QString()},
                                  {S("httpVersion"), S("HTTP/1.1")},
                                  {S("cookies"), QJsonArray()},
                                  {S("headers"), responseHeaders},
                                  {S("content"), QJsonObject{{S("size"), responseSize},
                                                             {S("mimeType"), responseType},
                                                             {S("text"), responseBody}}},
                                  {S("redirectURL"), QString()},
                                  {S("headersSize"), -1},
                                  {S("bodySize"), responseSize}};

    const double total = qMax(0.0, number(flow.value(S("duration_ms"))));
    double wait = number(flow.value(S("ttfb_ms")), total);
    wait = qBound(0.0, wait, total);
    const qint64 started = qint64(number(flow.value(S("started_at"))));
    return {{S("startedDateTime"),
             QDateTime::fromMSecsSinceEpoch(started, Qt::UTC).toString(Qt::ISODateWithMs)},
            {S("time"), total},
            {S("request"), harRequest},
            {S("response"), harResponse},
            {S("cache"), QJsonObject()},
            {S("timings"),
             QJsonObject{{S("send"), 0}, {S("wait"), wait}, {S("receive"), total - wait}}},
            {S("_loopscope"), QJsonObject{{S("flow"), flow}}}};
}

// ---- import ---------------------------------------------------------------------------------

// Imported headers get the live rules: secret headers masked whole (unless already in the
// masked shape Loopscope writes), every other value searched for key formats.
QJsonObject maskHeaderObject(const QJsonObject &headers) {
    const CredentialPolicy &policy = CredentialPolicy::formatsOnly();
    QJsonObject out;
    for (auto it = headers.begin(); it != headers.end(); ++it)
        out.insert(it.key(),
                   it.value().isString()
                       ? QJsonValue(policy.maskHeaderValue(it.key().toLower(), it->toString()))
                       : it.value());
    return out;
}

// HAR header lists → {lower-case name: value}; repeated names joined with ", ".
QJsonObject headerObject(const QJsonArray &list) {
    QJsonObject out;
    for (const QJsonValue &v : list) {
        const QJsonObject h = v.toObject();
        const QString name = h.value(S("name")).toString().toLower();
        if (name.isEmpty() || name.startsWith(u':')) // HTTP/2 pseudo-headers
            continue;
        const QString value = h.value(S("value")).toString();
        out.insert(name, out.contains(name) ? out.value(name).toString() + S(", ") + value : value);
    }
    return maskHeaderObject(out);
}

QJsonValue bodyValue(const QString &text) {
    if (text.isEmpty())
        return QJsonValue::Null;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error == QJsonParseError::NoError) {
        if (doc.isObject())
            return CredentialPolicy::formatsOnly().maskObject(doc.object());
        if (doc.isArray())
            return doc.array();
    }
    return text;
}

// The events of an SSE answer's text, framed by the one reader the recorder uses; secrets in
// their JSON masked like a body's.
QJsonArray sseEvents(const QString &text) {
    SseDecoder decoder;
    QJsonArray events;
    decoder.feed(text.toUtf8(), events);
    decoder.finish(events);
    for (qsizetype i = 0; i < events.size(); ++i) {
        QJsonObject e = events.at(i).toObject();
        if (e.value(S("data")).isObject()) {
            e.insert(S("data"),
                     CredentialPolicy::formatsOnly().maskObject(e.value(S("data")).toObject()));
            events.replace(i, e);
        }
    }
    return events;
}

QString contentText(const QJsonObject &content) {
    const QString text = content.value(S("text")).toString();
    if (content.value(S("encoding")).toString() != S("base64"))
        return text;
    const QByteArray bytes = QByteArray::fromBase64(text.toLatin1());
    auto decoder = QStringDecoder(QStringDecoder::Utf8);
    const QString decoded = decoder.decode(bytes);
    if (decoder.hasError())
        return S("[binary body, %1 bytes]").arg(bytes.size());
    return decoded;
}

QJsonObject usageOf(const QJsonValue &body) {
    return Usage::fromWire(body.toObject().value(S("usage")).toObject()).toJson();
}

Outcome<QJsonObject> flowFromEntry(const QJsonObject &entry, int index) {
    const QString at = S("log.entries[%1]").arg(index);
    const QJsonObject request = entry.value(S("request")).toObject();
    const QString method = request.value(S("method")).toString();
    const QString rawUrl = request.value(S("url")).toString();
    const QUrl url(rawUrl);
    if (method.isEmpty() || rawUrl.isEmpty() || !url.isValid())
        return Outcome<QJsonObject>::failure(
            at + S(".request: \"method\" and a valid \"url\" are required"));
    const QJsonObject response = entry.value(S("response")).toObject();
    if (!entry.value(S("response")).isObject())
        return Outcome<QJsonObject>::failure(at + S(".response: missing"));

    QDateTime started =
        QDateTime::fromString(entry.value(S("startedDateTime")).toString(), Qt::ISODateWithMs);
    if (!started.isValid())
        started = QDateTime::fromString(entry.value(S("startedDateTime")).toString(), Qt::ISODate);
    const qint64 startedMs = started.isValid() ? started.toMSecsSinceEpoch() : 0;
    // "time" is any JSON number: bounded (a year) so the hop times stay representable — a
    // 6.7e70 made the cast to qint64 undefined (fuzz_har, crash-huge-entry-time).
    const double duration = qBound(0.0, number(entry.value(S("time"))), kMaxEntryMs);
    const QJsonObject timings = entry.value(S("timings")).toObject();
    const QJsonValue ttfb =
        timings.value(S("wait")).isDouble() && timings.value(S("wait")).toDouble() >= 0
            ? timings.value(S("wait"))
            : QJsonValue();

    const QString path =
        url.path(QUrl::FullyDecoded).isEmpty() ? S("/") : url.path(QUrl::FullyDecoded);
    const QJsonObject post = request.value(S("postData")).toObject();
    const QJsonValue requestBody = bodyValue(post.value(S("text")).toString());
    const QJsonObject content = response.value(S("content")).toObject();
    const QString responseText = contentText(content);
    const bool sse = content.value(S("mimeType")).toString().startsWith(S("text/event-stream"));
    const QJsonValue responseBody = sse ? QJsonValue() : bodyValue(responseText);
    const int status = response.value(S("status")).toInt(0);

    QJsonObject clientRequest{{S("kind"), S("client_request")},
                              {S("at"), startedMs},
                              {S("method"), method},
                              {S("path"), path},
                              {S("query"), url.query(QUrl::FullyEncoded)},
                              {S("url"), url.toString(QUrl::RemoveUserInfo)},
                              {S("headers"), headerObject(request.value(S("headers")).toArray())},
                              {S("body"), requestBody}};
    QJsonObject clientResponse{{S("kind"), S("client_response")},
                               {S("at"), startedMs + qint64(duration)},
                               {S("status"), status},
                               {S("headers"), headerObject(response.value(S("headers")).toArray())},
                               {S("body"), responseBody},
                               {S("events"), sse ? sseEvents(responseText) : QJsonArray()}};
    const QJsonObject body = requestBody.toObject();
    const QJsonValue model =
        body.value(S("model")).isString() ? body.value(S("model")) : QJsonValue();
    QJsonObject usage = usageOf(responseBody);
    if (sse) {
        // Streams report usage in their last event (response.completed or the final chunk).
        for (const QJsonValue &e : clientResponse.value(S("events")).toArray()) {
            const QJsonObject data = e.toObject().value(S("data")).toObject();
            const QJsonObject u = usageOf(data.contains(S("response")) ? data.value(S("response"))
                                                                       : QJsonValue(data));
            if (u.value(S("total_tokens")).toInt() > 0)
                usage = u;
        }
    }
    QJsonObject flow{{S("object"), S("loopscope.flow")},
                     {S("started_at"), startedMs},
                     {S("method"), method},
                     {S("path"), path},
                     {S("api"), apiOfPath(path)},
                     {S("model"), model},
                     {S("stream"), body.value(S("stream")).toBool(false)},
                     {S("intercepted"), false},
                     {S("state"), status > 0 && status < 400 ? S("completed") : S("failed")},
                     {S("status"), status},
                     {S("iterations"), 0},
                     {S("code_runs"), 0},
                     {S("code_errors"), 0},
                     {S("incomplete_reason"), QJsonValue()},
                     {S("duration_ms"), duration},
                     {S("ttfb_ms"), ttfb},
                     {S("overhead_ms"), QJsonValue()},
                     {S("usage"), usage},
                     {S("cost_usd"), QJsonValue()},
                     {S("run_id"), QJsonValue()},
                     {S("session_id"), QJsonValue()},
                     {S("container_id"), QJsonValue()},
                     {S("host"), url.host()},
                     {S("hops"), QJsonArray{clientRequest, clientResponse}}};
    return Outcome<QJsonObject>::success(flow);
}

// A flow exported by Loopscope: taken whole, with its secret headers masked again in case the
// file was written (or edited) by hand.
QJsonObject loopscopeFlow(QJsonObject flow) {
    QJsonArray hops;
    for (const QJsonValue &v : flow.value(S("hops")).toArray()) {
        QJsonObject hop = v.toObject();
        if (hop.value(S("headers")).isObject())
            hop.insert(S("headers"), maskHeaderObject(hop.value(S("headers")).toObject()));
        hops.append(hop);
    }
    flow.insert(S("hops"), hops);
    const QString state = flow.value(S("state")).toString();
    if (state != S("completed") && state != S("failed")) // a snapshot never finishes
        flow.insert(S("state"), S("failed"));
    return flow;
}

} // namespace

QJsonObject HarCodec::exportHar(const QList<QJsonObject> &fullFlows, const QString &baseUrl,
                                const QString &creatorVersion) {
    QJsonArray entries;
    for (const QJsonObject &flow : fullFlows)
        entries.append(harEntry(flow, baseUrl));
    return {{S("log"), QJsonObject{{S("version"), S("1.2")},
                                   {S("creator"), QJsonObject{{S("name"), S("Loopscope")},
                                                              {S("version"), creatorVersion}}},
                                   {S("entries"), entries}}}};
}

Outcome<QList<QJsonObject>> HarCodec::importHar(const QByteArray &document) {
    using Result = Outcome<QList<QJsonObject>>;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(document, &error);
    if (error.error != QJsonParseError::NoError)
        return Result::failure(S("The body is not a HAR file: invalid JSON (%1 at offset %2)")
                                   .arg(error.errorString())
                                   .arg(error.offset));
    const QJsonValue log = doc.object().value(S("log"));
    if (!doc.isObject() || !log.isObject() || !log.toObject().value(S("entries")).isArray())
        return Result::failure(
            S("The body is not a HAR file: expected {\"log\":{\"entries\":[...]}}"));
    const QJsonArray entries = log.toObject().value(S("entries")).toArray();
    if (entries.size() > kMaxEntries)
        return Result::failure(S("The HAR file has %1 entries; at most %2 are imported at once")
                                   .arg(entries.size())
                                   .arg(kMaxEntries));
    QList<QJsonObject> flows;
    QHash<QString, QString> runIds; // exported run id → fresh one, so runs stay together
    for (int i = 0; i < entries.size(); ++i) {
        if (!entries.at(i).isObject())
            return Result::failure(S("log.entries[%1]: must be an object").arg(i));
        const QJsonObject entry = entries.at(i).toObject();
        const QJsonObject own = entry.value(S("_loopscope")).toObject().value(S("flow")).toObject();
        QJsonObject flow;
        QJsonValue importedFrom;
        if (own.value(S("id")).isString() && own.value(S("hops")).isArray()) {
            flow = loopscopeFlow(own);
            importedFrom = own.value(S("id"));
            const QString run = own.value(S("run_id")).toString();
            if (!run.isEmpty()) {
                if (!runIds.contains(run))
                    runIds.insert(run, freshId("run_"));
                flow.insert(S("run_id"), runIds.value(run));
            }
        } else {
            const Outcome<QJsonObject> converted = flowFromEntry(entry, i);
            if (!converted.ok())
                return Result::failure(converted.error);
            flow = converted.value;
        }
        flow.insert(S("id"), freshId("req_"));
        flow.insert(S("imported"), true);
        flow.insert(S("imported_from"), importedFrom);
        flows.append(flow);
    }
    return Result::success(flows);
}

} // namespace loopscope
