#include "upstream/anthropicbridge.h"

#include "common/futurechain.h"
#include "common/openaierror.h"
#include "conversation/chatovermessages.h"
#include "conversation/chatstreamwriter.h"
#include "conversation/messagescodec.h"
#include "conversation/messagestochatstream.h"
#include "http/responsesink.h"
#include "inspect/eventbus.h"
#include "upstream/responsesbridge.h"
#include "upstream/sserelay.h"
#include "upstream/upstreamclient.h"

#include <QJsonDocument>
#include <QNetworkReply>
#include <QPointer>

#include <memory>

namespace loopscope {

namespace {

using Kind = InspectorEvent::Kind;

const QString kMessagesPath = QStringLiteral("/messages");
const QString kMessagesDialect = QStringLiteral("messages");

QByteArray compact(const QJsonObject &o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

const HttpHeaders &jsonHeaders() {
    static const HttpHeaders h{
        {QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")}};
    return h;
}

} // namespace

AnthropicBridge::AnthropicBridge(UpstreamClient *client, QObject *parent)
    : QObject(parent)
    , m_client(client) {}

AnthropicBridge::Prepared AnthropicBridge::prepare(const UpstreamRoute &route,
                                                   const QJsonObject &chat) {
    Prepared p;
    const ChatOverMessages::MessagesRequest request = ChatOverMessages::messagesRequest(chat);
    if (!request.ok()) {
        p.errorStatus = 400;
        p.error =
            OpenAiError::object(request.error, QStringLiteral("invalid_request_error"),
                                QStringLiteral("unsupported_over_anthropic"), request.errorParam);
        return p;
    }
    // Not silently: the log (and the window's log pane) says what did not go upstream.
    if (!request.ignored.isEmpty())
        qInfo("loopscope: %s has no equivalent in Anthropic's Messages API; not sent to the "
              "upstream of route %s",
              qUtf8Printable(request.ignored.join(QStringLiteral(", "))),
              qUtf8Printable(route.modelName.isEmpty() ? route.upstreamModel : route.modelName));
    p.body = request.body;
    if (!route.upstreamModel.isEmpty())
        p.body.insert(QStringLiteral("model"), route.upstreamModel);
    return p;
}

UpstreamRoute AnthropicBridge::wireRoute(const UpstreamRoute &route) {
    UpstreamRoute wire = route;
    bool versioned = false;
    for (const auto &h : std::as_const(wire.forwardHeaders))
        versioned = versioned || h.first.toLower() == "anthropic-version";
    if (!versioned)
        wire.forwardHeaders.append({QByteArrayLiteral("anthropic-version"), kVersion});
    // An OpenAI SDK sends its key as a Bearer token; Anthropic reads x-api-key.
    for (auto &h : wire.clientCredentials)
        if (h.first.toLower() == "authorization" && h.second.startsWith("Bearer "))
            h = {QByteArrayLiteral("x-api-key"), h.second.mid(7)};
    return wire;
}

UpstreamReply AnthropicBridge::chatReply(const UpstreamRoute &route, const QJsonObject &wireRequest,
                                         const UpstreamReply &messages) {
    UpstreamReply out = messages;
    if (messages.ok() && messages.isJson &&
        messages.json.value(QStringLiteral("type")).toString() == QLatin1String("message")) {
        out.json = ChatOverMessages::completionFromMessage(messages.json);
    } else if (messages.ok()) {
        out.status = 502;
        out.json = OpenAiError::object(
            QStringLiteral("Upstream answered /v1/messages with a body that is not a message."),
            QStringLiteral("api_error"), QStringLiteral("invalid_upstream_response"));
    } else if (messages.status > 0) {
        out.status = ChatOverMessages::clientStatus(messages.status);
        out.json = ChatOverMessages::openAiError(messages.status, messages.body);
    }
    if (out.status > 0) {
        out.isJson = true;
        out.body = compact(out.json);
        out.headers = jsonHeaders();
    }
    out.bridged = true;
    out.dialect = kMessagesDialect;
    out.wireUrl = route.urlFor(kMessagesPath).toString();
    out.wireRequest = wireRequest;
    out.wireResponse = messages.json;
    return out;
}

QJsonObject AnthropicBridge::hopData(const UpstreamRoute &route, const QJsonObject &wireRequest,
                                     const UpstreamReply &reply, const QJsonObject &message) {
    return ResponsesBridge::hopData(route.urlFor(kMessagesPath).toString(), kMessagesDialect,
                                    wireRequest, reply, message);
}

QFuture<UpstreamReply> AnthropicBridge::postChat(const UpstreamRoute &route,
                                                 const QJsonObject &chat,
                                                 const CancellationToken &cancel) {
    const Prepared prepared = prepare(route, chat);
    if (prepared.errorStatus) {
        UpstreamReply refused;
        refused.status = prepared.errorStatus;
        refused.json = prepared.error;
        refused.isJson = true;
        refused.body = compact(prepared.error);
        refused.headers = jsonHeaders();
        refused.bridged = true;
        refused.dialect = kMessagesDialect;
        return QtFuture::makeReadyFuture(refused);
    }
    QJsonObject body = prepared.body;
    body.remove(QStringLiteral("stream")); // this call reads one JSON answer
    auto promise = startedPromise<UpstreamReply>();
    QFuture<UpstreamReply> future = promise->future();
    whenFinished(m_client->postJsonDirect(wireRoute(route), kMessagesPath, body, cancel), this,
                 [route, body, promise](const QFuture<UpstreamReply> &f) {
                     UpstreamReply cancelled;
                     cancelled.errorString = QStringLiteral("the upstream call was cancelled");
                     finishPromise(promise, chatReply(route, body, resultOr(f, cancelled)));
                 });
    return future;
}

void AnthropicBridge::serve(const UpstreamRoute &route, const QJsonObject &chat, ResponseSink *sink,
                            EventBus *events, int iteration) {
    const Prepared prepared = prepare(route, chat);
    if (prepared.errorStatus) {
        sink->sendJson(prepared.errorStatus, prepared.error);
        return;
    }
    QPointer<EventBus> bus = events;
    const QString requestId = sink->requestId();
    if (bus)
        bus->publish(Kind::UpstreamCallStarted, requestId, iteration,
                     {{QStringLiteral("request"), prepared.body},
                      {QStringLiteral("url"), route.urlFor(kMessagesPath).toString()},
                      {QStringLiteral("dialect"), kMessagesDialect},
                      {QStringLiteral("bridged"), true}});
    const auto published = [bus, requestId, iteration](const QJsonObject &data) {
        if (bus)
            bus->publish(Kind::UpstreamCall, requestId, iteration, data);
    };
    const QJsonObject wireRequest = prepared.body;

    if (!chat.value(QStringLiteral("stream")).toBool()) {
        QPointer<ResponseSink> target = sink;
        whenFinished(m_client->postJsonDirect(wireRoute(route), kMessagesPath, wireRequest), sink,
                     [route, wireRequest, target, published](const QFuture<UpstreamReply> &f) {
                         UpstreamReply cancelled;
                         cancelled.errorString = QStringLiteral("the upstream call was cancelled");
                         const UpstreamReply messages = resultOr(f, cancelled);
                         published(hopData(route, wireRequest, messages,
                                           messages.isJson ? messages.json : QJsonObject()));
                         if (!target || target->isClientGone())
                             return;
                         target->addExternalTime(qint64(messages.latencyMs * 1e6));
                         const UpstreamReply out = chatReply(route, wireRequest, messages);
                         if (out.status == 0)
                             target->send(out.clientStatus(), jsonHeaders(),
                                          out.transportErrorBody());
                         else
                             target->send(out.status, jsonHeaders(), out.body);
                     });
        return;
    }

    // Streaming: Anthropic's events are read as they arrive and each written at once as the
    // chat chunks it means.
    auto encoder = std::make_shared<MessagesToChatStream>(
        ChatStreamWriter::includeUsage(chat.value(QStringLiteral("stream_options"))));
    SseRelay::Steps steps;
    steps.translate = [encoder](const QJsonValue &data, bool &failed) {
        QByteArray out;
        for (const QJsonObject &chunk : encoder->feed(data.toObject()))
            out += ChatStreamWriter::dataFrame(chunk);
        failed = encoder->failed();
        return out;
    };
    steps.streamed = [route, wireRequest, published](const UpstreamReply &messages,
                                                     const QJsonArray &events) {
        published(hopData(route, wireRequest, messages, MessagesCodec::responseFromEvents(events)));
    };
    steps.finish = [] { return ChatStreamWriter::doneFrame(); };
    QPointer<ResponseSink> target = sink;
    steps.whole = [route, wireRequest, chat, target, published](UpstreamReply &messages,
                                                                qint64 elapsedNs) {
        published(
            hopData(route, wireRequest, messages, messages.isJson ? messages.json : QJsonObject()));
        if (!target || target->isClientGone())
            return;
        target->addExternalTime(elapsedNs);
        const UpstreamReply out = chatReply(route, wireRequest, messages);
        if (out.status == 0) {
            target->send(out.clientStatus(), jsonHeaders(), out.transportErrorBody());
        } else if (out.ok()) {
            target->beginSse(200);
            target->writeChunk(
                ChatStreamWriter::replay(out.json, chat.value(QStringLiteral("stream_options"))));
            target->endStream();
        } else {
            target->send(out.status, jsonHeaders(), out.body);
        }
    };
    SseRelay::relay(m_client->send(wireRoute(route), "POST", kMessagesPath, compact(wireRequest)),
                    sink, std::move(steps));
}

} // namespace loopscope
