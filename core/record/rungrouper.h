#pragma once

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace loopscope {

// Groups flows into agent runs (spec: GET /runs). A flow joins the run of an earlier flow when
// they share a key, looked up in this order:
//   session:<id>                         the client's own session (clientSessionId: Loopscope's
//                                        metadata.session_id, Claude Code's and Codex's headers)
//   resp:<id>                            previous_response_id → the flow that produced <id>
//   conv:<id>                            the Responses `conversation`
//   call:<call_id>                       a function_call_output / role:"tool" answer / Anthropic
//                                        tool_result → the flow whose model asked for that call
//   prefix:<hash>                        Chat or Messages `messages` (or a stateless Responses
//                                        `input`) that extend an earlier flow's messages + reply
// Keys are plain strings so the store can persist them (table run_keys) and reload them; in
// memory each is kept as a 64-bit keyed hash (SipHash with a per-process seed), and a run id
// newRunId() made as its 64-bit number: ~20 bytes per key instead of ~230 for the strings and
// their node (a soak's keys were its one growing structure). A collision between two of the
// ≤ 50,000 keys held is a one-in-10^10 event that would at worst join two flows into one run.
class RunGrouper {
public:
    // The session a client says a request belongs to (dialects.md §6), first match wins:
    // metadata.session_id, x-claude-code-session-id, session-id, thread-id,
    // x-codex-turn-metadata's session_id, prompt_cache_key, Anthropic metadata.user_id when it
    // is JSON holding session_id. `headers` as a flow's hop keeps them (lower-case names).
    static QString clientSessionId(const QJsonObject &request, const QJsonObject &headers);
    // Keys of a request that point at earlier flows, strongest first. `sessionId` empty:
    // the request's metadata.session_id.
    // Where lookupKeys left the prefix hash of a request's conversation: after its last reply,
    // the items past it not hashed yet (no lookup key needs them; responseKeys goes on from
    // here, so each item is normalised once per flow, and none while the exchange is in flight
    // unless a reply follows it: a request's newest items are often its largest).
    struct ConversationChain {
        QByteArray hash;
        qsizetype items = 0; // conversation items the hash covers
    };
    static QStringList lookupKeys(const QString &api, const QJsonObject &request,
                                  const QString &sessionId = {},
                                  ConversationChain *chain = nullptr);
    // Keys a request establishes for later flows (session, conversation).
    static QStringList requestKeys(const QJsonObject &request, const QString &sessionId = {});
    // Keys a finished flow establishes: its response id, the function calls its model asked
    // for, the prefix hash of its messages plus reply.
    // `chain`: lookupKeys' for the same request, else the conversation is hashed from its start.
    static QStringList responseKeys(const QString &api, const QJsonObject &request,
                                    const QJsonObject &response, const ConversationChain &chain);
    static QStringList responseKeys(const QString &api, const QJsonObject &request,
                                    const QJsonObject &response);
    // Tool calls the model asked for in `response` (Responses, Chat or Messages shape; in
    // Messages also the server tools it used).
    static int toolCallCount(const QString &api, const QJsonObject &response);
    static QString newRunId();

    // Keys are kept in two generations of at most keysPerGeneration each: when the newer one
    // is full, the older one is dropped and the newer one takes its place. Memory stays bounded
    // (it levels off once both are full, instead of growing until a wholesale clear) and the
    // most recent keysPerGeneration keys are always known.
    static constexpr int kKeysPerGeneration = 25000;
    explicit RunGrouper(int keysPerGeneration = kKeysPerGeneration);

    // The run of the first known key, or empty.
    QString find(const QStringList &keys) const;
    void remember(const QStringList &keys, const QString &runId);
    void clear() {
        m_newer.clear();
        m_older.clear();
    }
    int size() const { return int(m_newer.size() + m_older.size()); }

private:
    // Hash of a key → its run. Run ids of newRunId()'s form ("run_" and 16 lowercase hex
    // digits) are held as that number; any other (a run imported with the history) as itself.
    struct Generation {
        QHash<quint64, quint64> numbered;
        QHash<quint64, QString> named;
        qsizetype size() const { return numbered.size() + named.size(); }
        void clear() {
            numbered.clear();
            named.clear();
        }
        QString find(quint64 keyHash) const;
        void insert(quint64 keyHash, const QString &runId);
    };
    quint64 hashOf(const QString &key) const;

    int m_keysPerGeneration;
    size_t m_seed;
    Generation m_newer; // newest generation
    Generation m_older; // the one before
};

} // namespace loopscope
