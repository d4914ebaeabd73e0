#pragma once

#include "common/cancellation.h"

#include "conversation/responsesoverchat.h"
#include "upstream/responsechainstore.h"
#include "upstream/upstreamreply.h"
#include "upstream/upstreamroute.h"

#include <QFuture>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QPromise>
#include <functional>
#include <memory>

class QNetworkReply;

namespace loopscope {

class AnthropicBridge;
class EventBus;
class ResponseSink;
class UpstreamClient;

// The Responses API over a chat-only upstream (dialects.md §5), as a translating hop below the
// loop and the pass-through: a Responses body bound for such a route goes out as a Chat
// Completions request (ResponsesOverChat), and the completion — JSON or stream — comes back as
// a Responses response or Responses SSE (ChatToResponsesStream). `previous_response_id`,
// `store` and `conversation` are served here from the turns this bridge produced
// (ResponseChainStore), available as soon as a response is complete. Which routes it takes:
// UpstreamRoute::responsesApi, plus the routes whose /responses answered 404/405/501 without
// naming the model (remembered for the process, logged once), and every Anthropic route, whose
// chat hop is the AnthropicBridge (Responses ⇄ Chat ⇄ Messages; reasoning items keep Anthropic's
// thinking signatures as encrypted_content, so nothing the model produced is lost). Owned by
// UpstreamClient; proxy thread.
class ResponsesBridge : public QObject {
    Q_OBJECT
public:
    explicit ResponsesBridge(UpstreamClient *client);

    // A Responses call on this route goes over Chat Completions at once.
    bool bridges(const UpstreamRoute &route) const;
    // A Responses call on this route is tried natively first, bridged if that says "no route".
    bool detects(const UpstreamRoute &route) const;
    // An answer to /responses that means "this server has no Responses API": 404, 405 or 501
    // whose body speaks of no model, previous response, conversation or parameter (those come
    // from a Responses API that exists: a model-not-found 404 is the model's problem).
    static bool notServed(int status, const QByteArray &body);
    // Marks the route chat-only for this process; logs it the first time.
    void rememberChatOnly(const UpstreamRoute &route, int status);
    // What made the route chat-only when it was detected ("…/responses answered 404"), else "".
    QString noteFor(const UpstreamRoute &route) const;

    // A route that speaks Responses but keeps no state: Loopscope keeps it (see expand()).
    bool keepsState(const UpstreamRoute &route) const;
    // A request for such a route as it must go upstream: previous_response_id and conversation
    // resolved into the whole input (and removed), or the not-found error.
    struct Expanded {
        QJsonObject body;
        QString previous;
        QString conversation;
        int errorStatus = 0;
        QJsonObject error;
        QString missing;          // the response id the in-memory store did not have
        bool headUnknown = false; // a conversation the in-memory store knows no head of
    };
    Expanded expand(const QJsonObject &request) const;
    // expand(), asking the history (setHistory) first for what the in-memory store does not
    // have, and putting what it found back there. Ready at once when nothing is missing; else
    // finishes on this bridge's (the proxy) thread.
    QFuture<Expanded> expandAsync(const QJsonObject &request);

    // Where chains the in-memory store misses are looked up (the flow history, so a chain
    // resolves after a restart or after the store evicted its turns): the items before a
    // request continuing a response id (nullopt: not stored), and a conversation's latest
    // response id ("" : none). Set by the composition root (core/upstream cannot see the
    // store); called on the proxy thread, the futures may finish on any thread.
    using ChainLookup = std::function<QFuture<std::optional<QJsonArray>>(const QString &)>;
    using HeadLookup = std::function<QFuture<QString>(const QString &)>;
    void setHistory(ChainLookup chain, HeadLookup head) {
        m_chainLookup = std::move(chain);
        m_headLookup = std::move(head);
    }
    // Keeps a stateless route's answer to `request` for the next previous_response_id.
    void rememberAnswer(const QJsonObject &request, const Expanded &expanded,
                        const QJsonObject &response);

    // The loop's Responses call on such a route: expanded, sent to /responses, its answer kept
    // (and bridged over chat if /responses turns out not to be served).
    QFuture<UpstreamReply> postStateless(const UpstreamRoute &route, const QJsonObject &request,
                                         const CancellationToken &cancel = {});
    // What a relayed (pass-through) answer on such a route is fed to, chunk by chunk (`end` on
    // the last call): it keeps the response the bytes add up to.
    using RelayObserver =
        std::function<void(int status, const QByteArray &bytes, bool streaming, bool end)>;
    RelayObserver keeper(const QJsonObject &request, const Expanded &expanded);

    // The loop's (and any JSON caller's) Responses call over chat: resolves to the Responses
    // answer, with the wire it really used (UpstreamReply::bridged…). `note`: why it is bridged
    // when a native attempt came first (then a 404 on chat too is a 502 naming both).
    QFuture<UpstreamReply> postJson(const UpstreamRoute &route, const QJsonObject &request,
                                    const QString &note = {}, const CancellationToken &cancel = {});
    // A pass-through Responses request answered on `sink` (JSON, or SSE when it asked to
    // stream), publishing its hop as UpstreamCallStarted / UpstreamCall at `iteration`.
    void serve(const UpstreamRoute &route, const QJsonObject &request, ResponseSink *sink,
               EventBus *events, int iteration, const QString &note = {});

    ResponseChainStore &chains() { return *m_chains; }
    // The chat hop on Anthropic routes (Chat Completions over Messages).
    AnthropicBridge *anthropic() const { return m_anthropic; }
    // Shares a store that outlives this bridge (ProxyService keeps one across proxy restarts,
    // as it keeps the flow history); used on the proxy thread only, by one server at a time.
    void setChains(std::shared_ptr<ResponseChainStore> chains) {
        if (chains)
            m_chains = std::move(chains);
    }

    // The UpstreamCall payload of one translated hop: the request and answer as they travelled
    // (`url` and `dialect` of the wire), else the error.
    static QJsonObject hopData(const QString &url, const QString &dialect,
                               const QJsonObject &request, const UpstreamReply &reply,
                               const QJsonObject &answer, const QString &note = {});

    // The error OpenAI answers for an unknown previous_response_id (404).
    static QJsonObject previousNotFound(const QString &id);

private:
    struct Prepared {
        QString previous;     // the response this one continues (for the chain)
        QString conversation; // the conversation it belongs to
        ResponsesOverChat::ChatRequest chat;
        QJsonObject wire; // on an Anthropic route: chat as the Messages request that goes out
        int errorStatus = 0;
        QJsonObject error;
    };
    Prepared prepare(const UpstreamRoute &route, const Expanded &expanded) const;
    // The streaming or JSON answer of serve() once the chain is resolved.
    void serveExpanded(const UpstreamRoute &route, const QJsonObject &request,
                       const Expanded &expanded, ResponseSink *sink, EventBus *events,
                       int iteration, const QString &note);
    // postStateless() once the chain is resolved.
    void sendStateless(const UpstreamRoute &route, const QJsonObject &request,
                       const Expanded &expanded,
                       const std::shared_ptr<QPromise<UpstreamReply>> &promise,
                       const CancellationToken &cancel);
    // expandAsync()'s steps: at most one history lookup of each kind.
    void recall(const QJsonObject &request, const Expanded &expanded, bool headAsked,
                const std::shared_ptr<QPromise<Expanded>> &promise);
    UpstreamReply answer(const UpstreamRoute &route, const QJsonObject &request,
                         const Prepared &prepared, const UpstreamReply &chat, const QString &note,
                         bool keep = true);
    void remember(const QJsonObject &request, const Prepared &prepared,
                  const QJsonObject &response);
    // The chat hop: /chat/completions, or /messages through the AnthropicBridge.
    QFuture<UpstreamReply> chatCall(const UpstreamRoute &route, const Prepared &prepared,
                                    const CancellationToken &cancel = {});

    UpstreamClient *m_client;
    AnthropicBridge *m_anthropic;
    std::shared_ptr<ResponseChainStore> m_chains = std::make_shared<ResponseChainStore>();
    ChainLookup m_chainLookup;
    HeadLookup m_headLookup;
    QHash<QString, QString> m_chatOnly; // base URL whose /responses is not served → what it said
};

} // namespace loopscope
