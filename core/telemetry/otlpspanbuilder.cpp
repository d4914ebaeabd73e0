#include "telemetry/otlpspanbuilder.h"

#include "conversation/dialect.h"
#include "conversation/usage.h"
#include "inspect/credentialpolicy.h"

#include <QCryptographicHash>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

#include <cmath>

namespace loopscope {

namespace {

QString S(const char *text) {
    return QString::fromLatin1(text);
}

// Epoch milliseconds are beyond a double's exact range once in nanoseconds: whole
// milliseconds and the fraction are converted apart.
qint64 nanos(double ms) {
    const double whole = std::floor(ms);
    return qint64(whole) * 1000000 + qint64(std::llround((ms - whole) * 1e6));
}

QString operationFor(const QString &api) {
    if (api == S("completions"))
        return S("text_completion");
    if (api == S("embeddings"))
        return S("embeddings");
    return S("chat");
}

QString apiFor(const QString &path) {
    if (path.endsWith(S("/responses")))
        return S("responses");
    if (path.endsWith(S("/chat/completions")))
        return S("chat_completions");
    if (path.endsWith(S("/completions")))
        return S("completions");
    if (path.endsWith(S("/embeddings")))
        return S("embeddings");
    if (path.endsWith(S("/messages")))
        return S("messages");
    return {};
}

// GenAI semantic conventions name the provider; `openai.api.type` is OpenAI's own attribute.
QString providerFor(const QString &api) {
    return api == S("messages") ? S("anthropic") : S("openai");
}

QString json(const QJsonValue &v) {
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    if (v.isArray())
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    return v.toString();
}

// Bodies are recorded masked already; masking again keeps a configured secret that slipped
// into a body out of the export too.
QJsonValue masked(const QJsonValue &v) {
    if (v.isObject())
        return CredentialPolicy::formatsOnly().maskObject(v.toObject());
    return v;
}

void add(QList<OtlpAttribute> &attrs, const char *key, const QVariant &value) {
    if (!value.isValid() || (value.typeId() == QMetaType::QString && value.toString().isEmpty()))
        return;
    attrs.append({S(key), value});
}

// The response body of a model call: the body, or what a streamed one adds up to by its
// dialect's codec (the recorder's own rule).
QJsonObject responseBody(const QJsonObject &hop, const QString &api) {
    const QJsonObject body = hop.value(S("body")).toObject();
    if (!body.isEmpty())
        return body;
    return responseFromEvents(dialectOfApi(api), hop.value(S("events")).toArray());
}

void addUsage(QList<OtlpAttribute> &attrs, const Usage &u) {
    if (u.hasInput)
        add(attrs, "gen_ai.usage.input_tokens", u.input);
    if (u.hasOutput)
        add(attrs, "gen_ai.usage.output_tokens", u.output);
}

QJsonArray finishReasons(const QJsonObject &body) {
    QJsonArray reasons;
    for (const QJsonValue &c : body.value(S("choices")).toArray())
        if (c.toObject().value(S("finish_reason")).isString())
            reasons.append(c.toObject().value(S("finish_reason")));
    if (reasons.isEmpty() && body.value(S("status")).isString())
        reasons.append(body.value(S("status")));
    if (reasons.isEmpty() && body.value(S("stop_reason")).isString()) // Messages
        reasons.append(body.value(S("stop_reason")));
    return reasons;
}

QVariant stringList(const QJsonArray &a) {
    QStringList list;
    for (const QJsonValue &v : a)
        list << v.toString();
    return list.isEmpty() ? QVariant() : QVariant(list);
}

} // namespace

QByteArray OtlpSpanBuilder::traceIdFor(const QString &runOrFlowId) {
    return QCryptographicHash::hash(QByteArray("loopscope-trace:" + runOrFlowId.toUtf8()),
                                    QCryptographicHash::Sha256)
        .left(16);
}

QByteArray OtlpSpanBuilder::spanIdFor(const QString &flowId, const QString &part) {
    return QCryptographicHash::hash(
               QByteArray("loopscope-span:" + flowId.toUtf8() + ':' + part.toUtf8()),
               QCryptographicHash::Sha256)
        .left(8);
}

bool OtlpSpanBuilder::exports(const QJsonObject &flow) {
    const QString api = flow.value(S("api")).toString();
    return api == S("responses") || api == S("chat_completions") || api == S("messages") ||
           !apiFor(flow.value(S("path")).toString()).isEmpty();
}

QList<OtlpSpan> OtlpSpanBuilder::build(const QJsonObject &flow, bool captureContent,
                                       const QList<OtlpEvent> &extraEvents) {
    QList<OtlpSpan> spans;
    const QString flowId = flow.value(S("id")).toString();
    if (flowId.isEmpty() || !exports(flow))
        return spans;
    const QString runId = flow.value(S("run_id")).toString();
    const QByteArray traceId = traceIdFor(runId.isEmpty() ? flowId : runId);
    QString api = flow.value(S("api")).toString();
    if (api != S("responses") && api != S("chat_completions") && api != S("messages"))
        api = apiFor(flow.value(S("path")).toString());
    const QString provider = providerFor(api);
    const bool openAi = provider == S("openai");
    // The tool each code run answered, by call id: OpenAI's intercepted calls all are the
    // code interpreter; a Messages loop calls the code-execution sub-tools by name.
    QHash<QString, QString> toolOfCall;
    const QString operation = operationFor(api);
    const QString model = flow.value(S("model")).toString();
    const QJsonArray hops = flow.value(S("hops")).toArray();

    OtlpSpan root;
    root.traceId = traceId;
    root.spanId = spanIdFor(flowId, S("root"));
    root.kind = OtlpSpan::Server;
    root.name = model.isEmpty() ? operation : operation + u' ' + model;
    const double started = flow.value(S("started_at")).toDouble();
    root.startTimeUnixNano = nanos(started);
    root.endTimeUnixNano =
        root.startTimeUnixNano + nanos(qMax(0.0, flow.value(S("duration_ms")).toDouble()));
    QList<OtlpAttribute> &ra = root.attributes;
    add(ra, "gen_ai.operation.name", operation);
    add(ra, "gen_ai.provider.name", provider);
    add(ra, "gen_ai.request.model", model);
    if (openAi)
        add(ra, "openai.api.type", api);
    add(ra, "gen_ai.conversation.id", flow.value(S("session_id")).toString());
    addUsage(ra, Usage::fromWire(flow.value(S("usage")).toObject()));
    add(ra, "http.request.method", flow.value(S("method")).toString());
    add(ra, "url.path", flow.value(S("path")).toString());
    if (flow.value(S("status")).isDouble())
        add(ra, "http.response.status_code", qint64(flow.value(S("status")).toInt()));
    add(ra, "loopscope.flow.id", flowId);
    add(ra, "loopscope.run.id", runId);
    add(ra, "loopscope.replay_of", flow.value(S("replay_of")).toString());
    add(ra, "loopscope.intercepted", flow.value(S("intercepted")).toBool());
    add(ra, "loopscope.stream", flow.value(S("stream")).toBool());
    add(ra, "loopscope.iterations", qint64(flow.value(S("iterations")).toInt()));
    add(ra, "loopscope.code_runs", qint64(flow.value(S("code_runs")).toInt()));
    if (flow.value(S("cost_usd")).isDouble())
        add(ra, "loopscope.cost_usd", flow.value(S("cost_usd")).toDouble());
    const int status = flow.value(S("status")).toInt();
    const QString incomplete = flow.value(S("incomplete_reason")).toString();
    if (flow.value(S("state")).toString() == S("failed") || status >= 500) {
        root.status = OtlpSpan::Error;
        add(ra, "error.type", status > 0 ? QString::number(status) : S("_OTHER"));
        root.statusMessage = incomplete;
    } else if (!incomplete.isEmpty()) {
        add(ra, "loopscope.incomplete_reason", incomplete);
    }

    int call = 0;
    QJsonObject pendingRequest;
    for (const QJsonValue &h : hops) {
        const QJsonObject hop = h.toObject();
        const QString kind = hop.value(S("kind")).toString();
        if (kind == S("client_request")) {
            if (captureContent) {
                const QJsonObject body = masked(hop.value(S("body"))).toObject();
                if (body.value(S("instructions")).isString())
                    add(ra, "gen_ai.system_instructions", body.value(S("instructions")).toString());
                const QJsonValue input =
                    body.contains(S("input")) ? body.value(S("input")) : body.value(S("messages"));
                add(ra, "gen_ai.input.messages", json(input));
            }
        } else if (kind == S("upstream_request")) {
            pendingRequest = hop;
        } else if (kind == S("upstream_response")) {
            ++call;
            OtlpSpan span;
            span.traceId = traceId;
            span.spanId = spanIdFor(flowId, S("call:%1").arg(call));
            span.parentSpanId = root.spanId;
            span.kind = OtlpSpan::Client;
            const QJsonObject request = pendingRequest.value(S("body")).toObject();
            const QJsonObject body = responseBody(hop, api);
            QString requestModel = request.value(S("model")).toString();
            if (requestModel.isEmpty())
                requestModel = model;
            span.name = requestModel.isEmpty() ? operation : operation + u' ' + requestModel;
            const double end = hop.value(S("at")).toDouble();
            const double start = pendingRequest.isEmpty()
                                     ? end - hop.value(S("latency_ms")).toDouble()
                                     : pendingRequest.value(S("at")).toDouble();
            span.startTimeUnixNano = nanos(start);
            span.endTimeUnixNano = span.startTimeUnixNano + nanos(qMax(0.0, end - start));
            QList<OtlpAttribute> &a = span.attributes;
            add(a, "gen_ai.operation.name", operation);
            add(a, "gen_ai.provider.name", provider);
            add(a, "gen_ai.request.model", requestModel);
            add(a, "gen_ai.response.model", body.value(S("model")).toString());
            add(a, "gen_ai.response.id", body.value(S("id")).toString());
            add(a, "gen_ai.response.finish_reasons", stringList(finishReasons(body)));
            if (openAi)
                add(a, "openai.api.type", api);
            else
                for (const ConversationItem &item : decodeResponse(Dialect::Messages, body).items)
                    if (item.kind == ConversationItem::Kind::ToolCall)
                        toolOfCall.insert(item.callId, item.name);
            Usage usage = Usage::fromWire(hop.value(S("usage")).toObject());
            if (!usage.hasInput && !usage.hasOutput)
                usage = Usage::fromWire(body.value(S("usage")).toObject());
            addUsage(a, usage);
            add(a, "loopscope.iteration", qint64(hop.value(S("iteration")).toInt()));
            const QUrl url(pendingRequest.value(S("url")).toString());
            if (url.isValid() && !url.host().isEmpty()) {
                add(a, "server.address", url.host());
                add(a, "server.port", qint64(url.port(url.scheme() == S("https") ? 443 : 80)));
            }
            const int code = hop.value(S("status")).toInt();
            if (code > 0)
                add(a, "http.response.status_code", qint64(code));
            if (code >= 400 || code == 0 || hop.value(S("timed_out")).toBool()) {
                span.status = OtlpSpan::Error;
                add(a, "error.type",
                    hop.value(S("timed_out")).toBool() ? S("timeout")
                    : code > 0                         ? QString::number(code)
                                                       : S("_OTHER"));
                span.statusMessage = hop.value(S("error")).toString();
            }
            if (captureContent) {
                const QJsonObject req = masked(request).toObject();
                add(a, "gen_ai.input.messages",
                    json(req.contains(S("input")) ? req.value(S("input"))
                                                  : req.value(S("messages"))));
                const QJsonObject out = masked(body).toObject();
                add(a, "gen_ai.output.messages",
                    json(out.contains(S("output"))    ? out.value(S("output"))
                         : out.contains(S("content")) ? out.value(S("content"))
                                                      : out.value(S("choices"))));
            }
            spans.append(span);
            pendingRequest = {};
        } else if (kind == S("code_run")) {
            const QString callId = hop.value(S("call_id")).toString();
            OtlpSpan span;
            span.traceId = traceId;
            span.spanId = spanIdFor(flowId, S("code:") + callId);
            span.parentSpanId = root.spanId;
            span.kind = OtlpSpan::Internal;
            const QString tool =
                openAi ? S("code_interpreter") : toolOfCall.value(callId, S("code_execution"));
            span.name = S("execute_tool ") + tool;
            const double start = hop.value(S("at")).toDouble();
            span.startTimeUnixNano = nanos(start);
            span.endTimeUnixNano =
                span.startTimeUnixNano + nanos(qMax(0.0, hop.value(S("duration_ms")).toDouble()));
            QList<OtlpAttribute> &a = span.attributes;
            add(a, "gen_ai.operation.name", S("execute_tool"));
            add(a, "gen_ai.tool.name", tool);
            add(a, "gen_ai.tool.call.id", callId);
            add(a, "loopscope.container.id", hop.value(S("container_id")).toString());
            add(a, "loopscope.iteration", qint64(hop.value(S("iteration")).toInt()));
            add(a, "loopscope.code.duration_ms", hop.value(S("duration_ms")).toDouble());
            add(a, "loopscope.code.truncated", hop.value(S("truncated")).toBool());
            const bool timedOut = hop.value(S("timed_out")).toBool();
            // "error" is a string or an object ({name, value, traceback}); null when none.
            const QJsonValue errorValue = hop.value(S("error"));
            const QString error = errorValue.isString() ? errorValue.toString() : json(errorValue);
            if (timedOut || !error.isEmpty()) {
                span.status = OtlpSpan::Error;
                add(a, "error.type", timedOut ? S("timeout") : S("code_error"));
                // The error text quotes the program's output: content.
                span.statusMessage = captureContent ? error.left(1000)
                                     : timedOut     ? S("code run timed out")
                                                    : S("code run failed");
            }
            if (!hop.value(S("decision")).toString().isEmpty())
                span.events.append(
                    {span.startTimeUnixNano,
                     S("loopscope.breakpoint"),
                     {{S("loopscope.breakpoint.decision"), hop.value(S("decision")).toString()}}});
            if (captureContent) {
                add(a, "gen_ai.tool.call.arguments",
                    json(QJsonObject{{S("code"), hop.value(S("code"))}}));
                add(a, "gen_ai.tool.call.result", json(hop.value(S("output"))));
            }
            // Sandbox events of this container belong to the code run that used it.
            const QString container = hop.value(S("container_id")).toString();
            for (const OtlpEvent &e : extraEvents) {
                const QVariant c = [&e] {
                    for (const OtlpAttribute &x : e.attributes)
                        if (x.key == S("loopscope.container.id"))
                            return x.value;
                    return QVariant();
                }();
                if (!container.isEmpty() && c.toString() == container)
                    span.events.append(e);
            }
            spans.append(span);
        }
    }
    // Sandbox events not tied to a code run of this flow stay on the root.
    for (const OtlpEvent &e : extraEvents) {
        bool placed = false;
        for (const OtlpSpan &s : std::as_const(spans))
            for (const OtlpEvent &x : s.events)
                placed |= x.name == e.name && x.timeUnixNano == e.timeUnixNano;
        if (!placed)
            root.events.append(e);
    }
    if (captureContent) {
        for (auto it = hops.end(); it != hops.begin();) {
            const QJsonObject hop = (--it)->toObject();
            if (hop.value(S("kind")).toString() == S("client_response")) {
                const QJsonObject body = masked(responseBody(hop, api)).toObject();
                add(ra, "gen_ai.output.messages",
                    json(body.contains(S("output")) ? body.value(S("output"))
                                                    : body.value(S("choices"))));
                break;
            }
        }
    }
    // Final response id/model on the root, as the client saw them.
    for (auto it = hops.end(); it != hops.begin();) {
        const QJsonObject hop = (--it)->toObject();
        if (hop.value(S("kind")).toString() == S("client_response")) {
            const QJsonObject body = responseBody(hop, api);
            add(ra, "gen_ai.response.id", body.value(S("id")).toString());
            add(ra, "gen_ai.response.model", body.value(S("model")).toString());
            break;
        }
    }
    spans.prepend(root);
    return spans;
}

} // namespace loopscope
