#pragma once

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace loopscope {

// Groups flows into agent runs (spec: GET /runs). A flow joins the run of an earlier flow when
// they share a key, looked up in this order:
//   session:<metadata.session_id>        the caller's own session
//   resp:<id>                            previous_response_id → the flow that produced <id>
//   conv:<id>                            the Responses `conversation`
//   call:<call_id>                       a function_call_output / role:"tool" answer → the flow
//                                        whose model asked for that call (client-side tools)
//   prefix:<hash>                        Chat `messages` (or a stateless Responses `input`) that
//                                        extend an earlier flow's messages plus its reply
// Keys are plain strings so the store can persist them (table run_keys) and reload them; in
// memory each is kept as a 64-bit keyed hash (SipHash with a per-process seed), and a run id
// newRunId() made as its 64-bit number: ~20 bytes per key instead of ~230 for the strings and
// their node (a soak's keys were its one growing structure). A collision between two of the
// ≤ 50,000 keys held is a one-in-10^10 event that would at worst join two flows into one run.
class RunGrouper {
public:
    // Keys of a request that point at earlier flows, strongest first.
    static QStringList lookupKeys(const QString &api, const QJsonObject &request);
    // Keys a request establishes for later flows (session, conversation).
    static QStringList requestKeys(const QJsonObject &request);
    // Keys a finished flow establishes: its response id, the function calls its model asked
    // for, the prefix hash of its messages plus reply.
    static QStringList responseKeys(const QString &api, const QJsonObject &request,
                                    const QJsonObject &response);
    // Client-side function calls the model asked for in `response` (Responses or Chat shape).
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
