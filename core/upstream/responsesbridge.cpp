#include "upstream/responsesbridge.h"

#include "common/futurechain.h"
#include "common/openaierror.h"
#include "conversation/chatcompletionscodec.h"
#include "conversation/chattoresponsesstream.h"
#include "conversation/messagescodec.h"
#include "conversation/messagestochatstream.h"
#include "conversation/responsescodec.h"
#include "conversation/ssedecoder.h"
#include "http/responsesink.h"
#include "inspect/eventbus.h"
#include "upstream/anthropicbridge.h"
#include "upstream/sserelay.h"
#include "upstream/upstreamclient.h"

#include <QJsonDocument>
#include <QNetworkReply>

#include <memory>

namespace loopscope {

namespace {

using Kind = InspectorEvent::Kind;

const QString kChatPath = QStringLiteral("/chat/completions");
const QString kChatDialect = QStringLiteral("chat_completions");

QByteArray compact(const QJsonObject &o) {
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QString conversationIdOf(const QJsonObject &request) {
    const QJsonValue c = request.value(QStringLiteral("conversation"));
    return c.isObject() ? c.toObject().value(QStringLiteral("id")).toString() : c.toString();
}

UpstreamReply jsonReply(int status, const QJsonObject &json) {
    UpstreamReply reply;
    reply.status = status;
    reply.json = json;
    reply.isJson = true;
    reply.body = compact(json);
    reply.headers = {{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")}};
    return reply;
}

// The UpstreamCall payload of one hop over chat: the chat request and answer as they travelled.
QJsonObject chatHopData(const UpstreamRoute &route, const QJsonObject &chat,
                        const UpstreamReply &reply, const QJsonObject &answer,
                        const QString &note) {
    return ResponsesBridge::hopData(route.urlFor(kChatPath).toString(), kChatDialect, chat, reply,
                                    answer, note);
}

// `then` with the finished future: at once when it is ready (a chain the in-memory store had),
// else on `owner`'s thread once the history answered.
template<class T, class F> void whenReady(const QFuture<T> &future, QObject *owner, F then) {
    if (future.isFinished())
        then(future);
    else
        whenFinished(future, owner, std::move(then));
}

// What a request whose chain lookup never answered (the proxy is stopping) gets.
ResponsesBridge::Expanded stopped() {
    ResponsesBridge::Expanded e;
    e.errorStatus = 503;
    e.error = OpenAiError::object(
        QStringLiteral("The proxy stopped while this request's previous response was looked up."),
        QStringLiteral("api_error"), QStringLiteral("service_unavailable"));
    return e;
}

} // namespace

QJsonObject ResponsesBridge::hopData(const QString &url, const QString &dialect,
                                     const QJsonObject &request, const UpstreamReply &reply,
                                     const QJsonObject &answer, const QString &note) {
    QJsonObject data{
        {QStringLiteral("request"), request},           {QStringLiteral("status"), reply.status},
        {QStringLiteral("latencyMs"), reply.latencyMs}, {QStringLiteral("url"), url},
        {QStringLiteral("dialect"), dialect},           {QStringLiteral("bridged"), true}};
    if (!note.isEmpty())
        data.insert(QStringLiteral("bridgeNote"), note);
    if (!answer.isEmpty()) {
        data.insert(QStringLiteral("response"), answer);
        data.insert(QStringLiteral("usage"), answer.value(QStringLiteral("usage")));
    } else if (reply.status == 0) {
        data.insert(QStringLiteral("error"), reply.errorString);
    } else {
        data.insert(QStringLiteral("error"), QString::fromUtf8(reply.body.left(4096)));
    }
    return data;
}

ResponsesBridge::ResponsesBridge(UpstreamClient *client)
    : QObject(client)
    , m_client(client)
    , m_anthropic(new AnthropicBridge(client, this)) {}

bool ResponsesBridge::bridges(const UpstreamRoute &route) const {
    if (route.isAnthropic())
        return true; // Anthropic has no Responses API: over chat, the chat hop over Messages
    if (route.isDemo() || route.responsesApi == UpstreamRoute::ResponsesApi::Native)
        return false;
    return route.responsesApi == UpstreamRoute::ResponsesApi::ChatOnly ||
           m_chatOnly.contains(route.baseUrl.toString());
}

bool ResponsesBridge::detects(const UpstreamRoute &route) const {
    return !route.isDemo() && !route.isAnthropic() &&
           (route.responsesApi == UpstreamRoute::ResponsesApi::Auto ||
            route.responsesApi == UpstreamRoute::ResponsesApi::Stateless) &&
           !m_chatOnly.contains(route.baseUrl.toString());
}

bool ResponsesBridge::keepsState(const UpstreamRoute &route) const {
    return route.responsesApi == UpstreamRoute::ResponsesApi::Stateless && detects(route);
}

ResponsesBridge::Expanded ResponsesBridge::expand(const QJsonObject &request) const {
    Expanded e;
    e.previous = request.value(QStringLiteral("previous_response_id")).toString();
    e.conversation = conversationIdOf(request);
    if (e.previous.isEmpty() && !e.conversation.isEmpty()) {
        e.previous = m_chains->conversationHead(e.conversation);
        e.headUnknown = e.previous.isEmpty();
    }
    e.body = request;
    e.body.remove(QStringLiteral("previous_response_id"));
    e.body.remove(QStringLiteral("conversation"));
    if (e.previous.isEmpty())
        return e;
    QString missing;
    const std::optional<QJsonArray> chain = m_chains->chain(e.previous, &missing);
    if (!chain) {
        e.errorStatus = 404;
        e.error = previousNotFound(missing);
        e.missing = missing;
        return e;
    }
    QJsonArray input = *chain;
    for (const QJsonValue &item : ResponsesOverChat::chainItems(request))
        input.append(item);
    e.body.insert(QStringLiteral("input"), input);
    return e;
}

QFuture<ResponsesBridge::Expanded> ResponsesBridge::expandAsync(const QJsonObject &request) {
    const Expanded e = expand(request);
    if (!(e.headUnknown && m_headLookup) && !(!e.missing.isEmpty() && m_chainLookup))
        return QtFuture::makeReadyFuture(e);
    auto promise = startedPromise<Expanded>();
    QFuture<Expanded> future = promise->future();
    recall(request, e, false, promise);
    return future;
}

void ResponsesBridge::recall(const QJsonObject &request, const Expanded &expanded, bool headAsked,
                             const std::shared_ptr<QPromise<Expanded>> &promise) {
    if (!headAsked && expanded.headUnknown && m_headLookup) {
        const QString conversation = expanded.conversation;
        whenFinished(m_headLookup(conversation), this,
                     [this, request, conversation, promise](const QFuture<QString> &f) {
                         const QString head = resultOr(f, QString());
                         if (!head.isEmpty() && m_chains->conversationHead(conversation).isEmpty())
                             m_chains->setConversationHead(conversation, head);
                         recall(request, expand(request), true, promise);
                     });
        return;
    }
    if (!expanded.missing.isEmpty() && m_chainLookup) {
        const QString id = expanded.missing;
        whenFinished(m_chainLookup(id), this,
                     [this, request, id, promise](const QFuture<std::optional<QJsonArray>> &f) {
                         // The whole chain up to `id` as one turn: what chain() needs of it.
                         if (const auto items = resultOr(f, std::optional<QJsonArray>()))
                             m_chains->add(id, {}, *items);
                         finishPromise(promise, expand(request));
                     });
        return;
    }
    finishPromise(promise, expanded);
}

void ResponsesBridge::rememberAnswer(const QJsonObject &request, const Expanded &expanded,
                                     const QJsonObject &response) {
    Prepared p;
    p.previous = expanded.previous;
    p.conversation = expanded.conversation;
    remember(request, p, response);
}

bool ResponsesBridge::notServed(int status, const QByteArray &body) {
    if (status != 404 && status != 405 && status != 501)
        return false;
    // An answer about something the request named — the model (OpenAI's model_not_found,
    // Ollama's and vLLM's messages), a previous response or conversation, any parameter — comes
    // from a Responses API that exists: only a bare "no such route" means there is none.
    const QByteArray lower = body.toLower();
    for (const char *word : {"model", "previous_response", "response with id", "conversation"})
        if (lower.contains(word))
            return false;
    const QJsonValue param = QJsonDocument::fromJson(body)
                                 .object()
                                 .value(QStringLiteral("error"))
                                 .toObject()
                                 .value(QStringLiteral("param"));
    return !(param.isString() && !param.toString().isEmpty());
}

void ResponsesBridge::rememberChatOnly(const UpstreamRoute &route, int status) {
    const QString key = route.baseUrl.toString();
    if (m_chatOnly.contains(key))
        return;
    m_chatOnly.insert(key, QStringLiteral("%1 answered %2")
                               .arg(route.urlFor(QStringLiteral("/responses")).toString())
                               .arg(status));
    qInfo("loopscope: %s answered /responses with %d: Responses requests on this route go over "
          "/chat/completions from now on (set litellm_params.upstream_api to say so up front)",
          qPrintable(key), status);
}

QString ResponsesBridge::noteFor(const UpstreamRoute &route) const {
    return m_chatOnly.value(route.baseUrl.toString());
}

QJsonObject ResponsesBridge::previousNotFound(const QString &id) {
    return OpenAiError::object(QStringLiteral("Previous response with id '%1' not found.").arg(id),
                               QStringLiteral("invalid_request_error"),
                               QStringLiteral("previous_response_not_found"),
                               QStringLiteral("previous_response_id"));
}

ResponsesBridge::Prepared ResponsesBridge::prepare(const UpstreamRoute &route,
                                                   const Expanded &expanded) const {
    // The chain resolved as for a stateless route: the whole input, then into chat.
    Prepared p;
    p.previous = expanded.previous;
    p.conversation = expanded.conversation;
    if (expanded.errorStatus) {
        p.errorStatus = expanded.errorStatus;
        p.error = expanded.error;
        return p;
    }
    p.chat = ResponsesOverChat::chatRequest(expanded.body, {}, route.isAnthropic());
    if (!p.chat.ok()) {
        p.errorStatus = 400;
        p.error = OpenAiError::object(p.chat.error, QStringLiteral("invalid_request_error"),
                                      QStringLiteral("unsupported_over_chat_completions"),
                                      p.chat.errorParam);
        return p;
    }
    if (!route.upstreamModel.isEmpty())
        p.chat.body.insert(QStringLiteral("model"), route.upstreamModel);
    if (route.isAnthropic()) {
        const AnthropicBridge::Prepared wire = AnthropicBridge::prepare(route, p.chat.body);
        p.errorStatus = wire.errorStatus;
        p.error = wire.error;
        p.wire = wire.body;
    }
    return p;
}

QFuture<UpstreamReply> ResponsesBridge::chatCall(const UpstreamRoute &route,
                                                 const Prepared &prepared,
                                                 const CancellationToken &cancel) {
    if (route.isAnthropic())
        return m_anthropic->postChat(route, prepared.chat.body, cancel);
    return m_client->postJsonDirect(route, kChatPath, prepared.chat.body, cancel);
}

void ResponsesBridge::remember(const QJsonObject &request, const Prepared &prepared,
                               const QJsonObject &response) {
    if (request.value(QStringLiteral("store")) == QJsonValue(false))
        return; // OpenAI keeps nothing of store:false either
    QJsonArray turn = ResponsesOverChat::chainItems(request);
    for (const QJsonValue &item : response.value(QStringLiteral("output")).toArray())
        turn.append(item);
    const QString id = response.value(QStringLiteral("id")).toString();
    m_chains->add(id, prepared.previous, turn);
    if (!prepared.conversation.isEmpty())
        m_chains->setConversationHead(prepared.conversation, id);
}

UpstreamReply ResponsesBridge::answer(const UpstreamRoute &route, const QJsonObject &request,
                                      const Prepared &prepared, const UpstreamReply &chat,
                                      const QString &note, bool keep) {
    UpstreamReply out = chat;
    if (!chat.bridged && chat.status == 404 && notServed(chat.status, chat.body)) {
        const QString why =
            note.isEmpty() ? QStringLiteral("the route is configured as chat-only") : note;
        const QString message =
            QStringLiteral("The upstream %1 serves neither the Responses API (%2) nor Chat "
                           "Completions (%3 answered 404): check the route's api_base")
                .arg(route.baseUrl.toString(), why, route.urlFor(kChatPath).toString());
        out = jsonReply(502, OpenAiError::object(message, QStringLiteral("api_error"),
                                                 QStringLiteral("upstream_route_not_found")));
    } else if (chat.ok() && !chat.isJson) {
        out = jsonReply(502, OpenAiError::object(
                                 QStringLiteral("Upstream answered /chat/completions with a body "
                                                "that is not a JSON object."),
                                 QStringLiteral("api_error"),
                                 QStringLiteral("invalid_upstream_response")));
    } else if (chat.ok()) {
        const int calls = chat.json.value(QStringLiteral("choices"))
                              .toArray()
                              .first()
                              .toObject()
                              .value(QStringLiteral("message"))
                              .toObject()
                              .value(QStringLiteral("tool_calls"))
                              .toArray()
                              .size();
        const QJsonObject response = ResponsesOverChat::responseFromChat(
            chat.json, request, ResponsesOverChat::mintIds(calls));
        if (keep)
            remember(request, prepared, response);
        out = jsonReply(chat.status, response);
        out.latencyMs = chat.latencyMs;
    }
    out.bridged = true;
    out.bridgeNote = note;
    if (chat.bridged) { // the chat hop itself was translated (Anthropic): its wire is the one
        out.dialect = chat.dialect;
        out.wireUrl = chat.wireUrl;
        out.wireRequest = chat.wireRequest;
        out.wireResponse = chat.wireResponse;
        return out;
    }
    out.dialect = kChatDialect;
    out.wireUrl = route.urlFor(kChatPath).toString();
    out.wireRequest = prepared.chat.body;
    out.wireResponse = chat.json;
    return out;
}

QFuture<UpstreamReply> ResponsesBridge::postStateless(const UpstreamRoute &route,
                                                      const QJsonObject &request,
                                                      const CancellationToken &cancel) {
    auto promise = startedPromise<UpstreamReply>();
    QFuture<UpstreamReply> future = promise->future();
    whenReady(expandAsync(request), this,
              [this, route, request, promise, cancel](const QFuture<Expanded> &resolved) {
                  const Expanded expanded = resultOr(resolved, stopped());
                  if (expanded.errorStatus) {
                      finishPromise(promise, jsonReply(expanded.errorStatus, expanded.error));
                      return;
                  }
                  sendStateless(route, request, expanded, promise, cancel);
              });
    return future;
}

void ResponsesBridge::sendStateless(const UpstreamRoute &route, const QJsonObject &request,
                                    const Expanded &expanded,
                                    const std::shared_ptr<QPromise<UpstreamReply>> &promise,
                                    const CancellationToken &cancel) {
    whenFinished(
        m_client->postJsonDirect(route, QStringLiteral("/responses"), expanded.body, cancel), this,
        [this, route, request, expanded, promise, cancel](const QFuture<UpstreamReply> &f) {
            UpstreamReply cancelled;
            cancelled.errorString = QStringLiteral("the upstream call was cancelled");
            UpstreamReply reply = resultOr(f, cancelled);
            if (notServed(reply.status, reply.body)) {
                rememberChatOnly(route, reply.status);
                whenFinished(postJson(route, request, {}, cancel), this,
                             [promise, reply](const QFuture<UpstreamReply> &bridged) {
                                 finishPromise(promise, resultOr(bridged, reply));
                             });
                return;
            }
            if (reply.ok() && reply.isJson) {
                rememberAnswer(request, expanded, reply.json);
                if (!expanded.previous.isEmpty()) { // the client's chain, as OpenAI echoes it
                    reply.json.insert(QStringLiteral("previous_response_id"),
                                      request.value(QStringLiteral("previous_response_id")));
                    reply.body = compact(reply.json);
                }
            }
            finishPromise(promise, reply);
        });
}

ResponsesBridge::RelayObserver ResponsesBridge::keeper(const QJsonObject &request,
                                                       const Expanded &expanded) {
    struct State {
        SseDecoder decoder;
        QJsonArray events;
        QByteArray body;
    };
    auto state = std::make_shared<State>();
    QPointer<ResponsesBridge> self = this;
    return [self, state, request, expanded](int status, const QByteArray &bytes, bool streaming,
                                            bool end) {
        if (streaming)
            state->decoder.feed(bytes, state->events);
        else
            state->body += bytes;
        if (!end || !self || status < 200 || status >= 300)
            return;
        QJsonObject response;
        if (streaming) {
            state->decoder.finish(state->events);
            response = ResponsesCodec::responseFromEvents(state->events);
        } else {
            response = QJsonDocument::fromJson(state->body).object();
        }
        if (response.value(QStringLiteral("status")).toString() == QLatin1String("completed"))
            self->rememberAnswer(request, expanded, response);
    };
}

QFuture<UpstreamReply> ResponsesBridge::postJson(const UpstreamRoute &route,
                                                 const QJsonObject &request,
                                                 const QString &givenNote,
                                                 const CancellationToken &cancel) {
    const QString note = givenNote.isEmpty() ? noteFor(route) : givenNote;
    auto promise = startedPromise<UpstreamReply>();
    QFuture<UpstreamReply> future = promise->future();
    whenReady(expandAsync(request), this,
              [this, route, request, note, promise, cancel](const QFuture<Expanded> &resolved) {
                  const Prepared prepared = prepare(route, resultOr(resolved, stopped()));
                  if (prepared.errorStatus) {
                      UpstreamReply refused = jsonReply(prepared.errorStatus, prepared.error);
                      refused.bridged = true;
                      refused.dialect = kChatDialect;
                      refused.bridgeNote = note;
                      finishPromise(promise, refused);
                      return;
                  }
                  whenFinished(chatCall(route, prepared, cancel), this,
                               [this, route, request, prepared, note,
                                promise](const QFuture<UpstreamReply> &f) {
                                   UpstreamReply cancelled;
                                   cancelled.errorString =
                                       QStringLiteral("the upstream call was cancelled");
                                   finishPromise(promise, answer(route, request, prepared,
                                                                 resultOr(f, cancelled), note));
                               });
              });
    return future;
}

void ResponsesBridge::serve(const UpstreamRoute &route, const QJsonObject &request,
                            ResponseSink *sink, EventBus *events, int iteration,
                            const QString &givenNote) {
    const QString note = givenNote.isEmpty() ? noteFor(route) : givenNote;
    QPointer<ResponseSink> target = sink;
    QPointer<EventBus> bus = events;
    QPointer<ResponsesBridge> self = this;
    whenReady(expandAsync(request), sink,
              [self, route, request, target, bus, iteration, note](const QFuture<Expanded> &f) {
                  if (self && target && !target->isClientGone())
                      self->serveExpanded(route, request, resultOr(f, stopped()), target, bus,
                                          iteration, note);
              });
}

void ResponsesBridge::serveExpanded(const UpstreamRoute &route, const QJsonObject &request,
                                    const Expanded &expanded, ResponseSink *sink, EventBus *events,
                                    int iteration, const QString &note) {
    const Prepared prepared = prepare(route, expanded);
    if (prepared.errorStatus) {
        sink->sendJson(prepared.errorStatus, prepared.error);
        return;
    }
    QPointer<EventBus> bus = events;
    const QString requestId = sink->requestId();
    const bool anthropic = route.isAnthropic();
    const QString wirePath = anthropic ? QStringLiteral("/messages") : kChatPath;
    const QJsonObject wireRequest = anthropic ? prepared.wire : prepared.chat.body;
    if (bus)
        bus->publish(
            Kind::UpstreamCallStarted, requestId, iteration,
            {{QStringLiteral("request"), wireRequest},
             {QStringLiteral("url"), route.urlFor(wirePath).toString()},
             {QStringLiteral("dialect"), anthropic ? QStringLiteral("messages") : kChatDialect},
             {QStringLiteral("bridged"), true}});
    const auto published = [bus, requestId, iteration](const QJsonObject &data) {
        if (bus)
            bus->publish(Kind::UpstreamCall, requestId, iteration, data);
    };

    if (!request.value(QStringLiteral("stream")).toBool()) {
        QPointer<ResponseSink> target = sink;
        whenFinished(chatCall(route, prepared), sink,
                     [this, route, request, prepared, note, target,
                      published](const QFuture<UpstreamReply> &f) {
                         UpstreamReply cancelled;
                         cancelled.errorString = QStringLiteral("the upstream call was cancelled");
                         const UpstreamReply chat = resultOr(f, cancelled);
                         const UpstreamReply out = answer(route, request, prepared, chat, note);
                         if (chat.bridged)
                             published(AnthropicBridge::hopData(route, chat.wireRequest, chat,
                                                                chat.wireResponse));
                         else
                             published(chatHopData(route, prepared.chat.body, chat,
                                                   chat.isJson ? chat.json : QJsonObject(), note));
                         if (!target || target->isClientGone())
                             return;
                         target->addExternalTime(qint64(chat.latencyMs * 1e6));
                         if (out.status == 0)
                             target->send(out.clientStatus(),
                                          {{QByteArrayLiteral("Content-Type"),
                                            QByteArrayLiteral("application/json")}},
                                          out.transportErrorBody());
                         else
                             target->send(out.status,
                                          {{QByteArrayLiteral("Content-Type"),
                                            QByteArrayLiteral("application/json")}},
                                          out.body);
                     });
        return;
    }

    // Streaming: the chat stream is read as it arrives and each chunk written at once as the
    // Responses events it means.
    auto writer = std::make_shared<ChatToResponsesStream>(request);
    std::shared_ptr<MessagesToChatStream> fromMessages; // an Anthropic route's stream
    if (anthropic)
        fromMessages = std::make_shared<MessagesToChatStream>(true);
    SseRelay::Steps steps;
    steps.begin = [writer] { return writer->begin(); };
    steps.translate = [writer, fromMessages](const QJsonValue &data, bool &failed) {
        QByteArray out;
        if (!data.isObject())
            return out; // "[DONE]"
        const QList<QJsonObject> chunks = fromMessages ? fromMessages->feed(data.toObject())
                                                       : QList<QJsonObject>{data.toObject()};
        for (const QJsonObject &chunk : chunks) {
            if (chunk.value(QStringLiteral("error")).isObject()) {
                failed = true;
                const QJsonObject error = chunk.value(QStringLiteral("error")).toObject();
                out += writer->fail(
                    error.value(QStringLiteral("code")).toString(QStringLiteral("upstream_error")),
                    error.value(QStringLiteral("message")).toString());
                break;
            }
            out += writer->feed(chunk);
        }
        return out;
    };
    steps.streamed = [route, prepared, note, published, anthropic](const UpstreamReply &reply,
                                                                   const QJsonArray &events) {
        if (anthropic) {
            published(AnthropicBridge::hopData(route, prepared.wire, reply,
                                               MessagesCodec::responseFromEvents(events)));
            return;
        }
        UpstreamReply chat = reply;
        const QJsonObject completion = ChatCompletionsCodec::responseFromEvents(events);
        chat.isJson = true;
        chat.json = completion;
        published(chatHopData(route, prepared.chat.body, chat, completion, note));
    };
    QPointer<ResponsesBridge> self = this;
    steps.finish = [self, writer, request, prepared] {
        const QByteArray tail = writer->finish();
        if (self)
            self->remember(request, prepared, writer->finalResponse());
        return tail;
    };
    QPointer<ResponseSink> target = sink;
    steps.whole = [self, route, request, prepared, note, target, published,
                   anthropic](UpstreamReply &chat, qint64 elapsedNs) {
        // Not a stream: an error (or a server that ignored stream:true) answered whole.
        if (anthropic) {
            published(AnthropicBridge::hopData(route, prepared.wire, chat,
                                               chat.isJson ? chat.json : QJsonObject()));
            chat = AnthropicBridge::chatReply(route, prepared.wire, chat); // chat-shaped
        } else {
            published(chatHopData(route, prepared.chat.body, chat,
                                  chat.isJson ? chat.json : QJsonObject(), note));
        }
        if (!self || !target || target->isClientGone())
            return;
        target->addExternalTime(elapsedNs);
        // Kept only as streamed below (its ids are the stream's).
        const UpstreamReply out = self->answer(route, request, prepared, chat, note, false);
        const HttpHeaders json{
            {QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")}};
        if (out.status == 0) {
            target->send(out.clientStatus(), json, out.transportErrorBody());
        } else if (out.ok()) {
            // A JSON completion to a streaming request: streamed as Responses events.
            ChatToResponsesStream replay(request);
            QByteArray bytes = replay.begin();
            const QJsonObject message = chat.json.value(QStringLiteral("choices"))
                                            .toArray()
                                            .first()
                                            .toObject()
                                            .value(QStringLiteral("message"))
                                            .toObject();
            QJsonObject chunk = chat.json;
            QJsonObject choice{
                {QStringLiteral("index"), 0},
                {QStringLiteral("delta"), message},
                {QStringLiteral("finish_reason"), chat.json.value(QStringLiteral("choices"))
                                                      .toArray()
                                                      .first()
                                                      .toObject()
                                                      .value(QStringLiteral("finish_reason"))}};
            QJsonArray calls;
            const QJsonArray sent = message.value(QStringLiteral("tool_calls")).toArray();
            for (int i = 0; i < sent.size(); ++i) {
                QJsonObject c = sent.at(i).toObject();
                c.insert(QStringLiteral("index"), i);
                calls.append(c);
            }
            QJsonObject delta = message;
            delta.insert(QStringLiteral("tool_calls"), calls);
            choice.insert(QStringLiteral("delta"), delta);
            chunk.insert(QStringLiteral("choices"), QJsonArray{choice});
            bytes += replay.feed(chunk);
            bytes += replay.finish();
            self->remember(request, prepared, replay.finalResponse());
            target->beginSse(200);
            target->writeChunk(bytes);
            target->endStream();
        } else {
            target->send(out.status, json, out.body);
        }
    };
    SseRelay::relay(anthropic
                        ? m_client->send(AnthropicBridge::wireRoute(route), "POST", wirePath,
                                         compact(prepared.wire))
                        : m_client->send(route, "POST", kChatPath, compact(prepared.chat.body)),
                    sink, std::move(steps));
}

} // namespace loopscope
