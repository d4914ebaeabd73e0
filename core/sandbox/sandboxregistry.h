#pragma once

#include "sandbox/sandboxbackend.h"

#include <QFuture>
#include <QHash>
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>
#include <optional>

namespace loopscope {

// One cached sandbox (LiteLLM's `_container_cache` value, plus what the inspector shows).
struct SandboxEntry {
    QString key; // sandbox key: server-minted nonce or "<identity>:<session>"
    SandboxHandle handle;
    std::optional<SandboxParams> params; // captured at creation; nullopt for injected backends
    QPointer<SandboxBackend> backend;    // who deletes it
    std::optional<QString> identity;     // set only for session-scoped sandboxes
    QString sessionId;                   // informational (inspector); empty when ephemeral
    qint64 createdMs = 0;
    qint64 lastAccessedMs = 0;
    int runs = 0;
    qint64 idleTtlMs = 0; // 0: SandboxRegistry::kIdleTtlMs; a container's expires_after sets it

    bool isSessionScoped() const { return identity.has_value(); }
};

enum class SandboxRemovalReason { Completed, Failed, Expired, Evicted, Deleted, Shutdown };

// Produces a fresh sandbox: handle, params and backend filled in; the registry sets the rest.
using SandboxFactory = std::function<QFuture<Outcome<SandboxEntry>>()>;

// What the caller of one getOrCreate() hears and can do while its creation waits for a live
// slot (both may be empty): `queued` is called once when it starts waiting, `cancel` takes it
// out of the queue (the client went away): its future then fails with kLeftQueue and nothing is
// created for it. Sharers of one key's wait leave one by one; the wait ends with the last.
struct SandboxAdmission {
    CancellationToken cancel;
    std::function<void()> queued;
};

// Sandboxes by key: 15-minute idle TTL refreshed on access, per-identity cap of 10 session
// sandboxes with LRU eviction, a global cap on live sandboxes (sandbox.max_live), exactly one
// creation per key even when requests race, and idempotent deletes whose failures are reported but
// never propagated. Lives on the proxy thread.
class SandboxRegistry : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 kIdleTtlMs = 15 * 60 * 1000;
    static constexpr int kSessionCapPerIdentity = 10;
    // The global cap on live sandboxes (sandbox.max_live): every backend, every identity,
    // ephemeral and session-scoped, creations in flight included. Without a master key every
    // bearer string is a new identity, so the per-identity cap alone bounds nothing.
    static constexpr int kDefaultMaxLive = 32;
    // Session and container sandboxes (those with an identity) may hold at most this many of
    // the live slots (sandbox.max_sessions, below max_live): the rest stay for one-shot work,
    // so long-lived containers cannot starve every other client. When they are all taken, a
    // create by an identity below its fair share (max_sessions / identities holding sessions)
    // evicts the least recently used session of the identity holding the most, if that one
    // holds more than its share; otherwise it is refused like the global cap.
    static constexpr int kDefaultMaxSessions = 24;
    // The longest idle TTL a session may be given (sandbox.max_expires_after_minutes).
    static constexpr qint64 kDefaultMaxIdleTtlMs = 60 * 60 * 1000;
    // A creation refused by the global cap fails with a message starting with this; the HTTP
    // layer answers it 429 with Retry-After.
    static constexpr QLatin1String kCapReachedPrefix{"too many live sandboxes"};
    static constexpr int kCapRetryAfterSeconds = 5;
    static bool isCapReached(const QString &error) { return error.startsWith(kCapReachedPrefix); }
    // A creation that finds every live slot taken waits in a FIFO of at most this many
    // (sandbox.queue_max) for at most kDefaultQueueTimeoutMs (sandbox.queue_timeout_s), and is
    // created when a slot frees; only past those bounds is it refused (kCapReachedPrefix). An
    // eval batch of 200 one-shot requests then runs through max_live sandboxes instead of
    // mostly failing.
    static constexpr int kDefaultQueueMax = 256;
    static constexpr int kDefaultQueueTimeoutMs = 60 * 1000;
    // How long `entry` may stay idle before pruneExpired() deletes it.
    static qint64 idleTtlOf(const SandboxEntry &entry) {
        return entry.idleTtlMs > 0 ? entry.idleTtlMs : kIdleTtlMs;
    }

    explicit SandboxRegistry(QObject *parent = nullptr);
    // Safe with work pending: waiters of unfinished creations get an error, sandboxes that
    // arrive later are deleted, and cached ones are deleted fire-and-forget (call removeAll()
    // first to wait for that). Not thread-safe: use it from the thread it lives in.
    ~SandboxRegistry() override;

    // Test seam: milliseconds since the epoch. Defaults to the wall clock.
    void setClock(std::function<qint64()> nowMs);
    qint64 now() const;

    // Cached sandbox for `key` (refreshing its last access), or a new one from `factory`.
    // An empty key creates an uncached sandbox the caller must delete. When `identity` is set
    // the per-identity cap applies before the new entry is stored. A call for a key whose
    // creation is still pending shares that creation (same result, no second factory call); a
    // failed creation caches nothing. The future finishes through the event loop of the
    // registry's thread, even when the factory's future is already finished.
    QFuture<Outcome<SandboxEntry>> getOrCreate(const QString &key,
                                               const std::optional<QString> &identity,
                                               const SandboxFactory &factory,
                                               const QString &sessionId = {},
                                               const SandboxAdmission &admission = {});
    static inline const QString kLeftQueue =
        QStringLiteral("left the queue for a sandbox: the request was cancelled");

    // Runs code in the cached sandbox for `key` with its captured params; refreshes last access.
    // `onOutput` gets the run's live output and `cancel` stops it (SandboxBackend::run).
    QFuture<Outcome<ExecutionResult>> run(const QString &key, const QString &code,
                                          const SandboxOutputSink &onOutput = {},
                                          const CancellationToken &cancel = {});

    // Pops and deletes the entry for `key`; a missing key is a no-op (idempotent). A key still
    // being created is dropped: its waiters get an error and the sandbox is deleted on arrival.
    QFuture<void> remove(const QString &key, SandboxRemovalReason reason);
    // Deletes a sandbox that is not (or no longer) cached; errors are reported, never raised.
    QFuture<void> deleteSandbox(const SandboxEntry &entry, SandboxRemovalReason reason);
    // Gives the cached sandbox for `key` its own idle TTL (a container's expires_after), at
    // most maxIdleTtlMs(); returns the TTL it got (0: no such entry).
    qint64 setIdleTtl(const QString &key, qint64 ms);
    // Pops and deletes every entry idle for longer than its TTL.
    QFuture<void> pruneExpired();
    // Deletes everything (app shutdown); creations in flight are deleted when they arrive.
    QFuture<void> removeAll(SandboxRemovalReason reason = SandboxRemovalReason::Shutdown);

    void setMaxLive(int count) { m_maxLive = qMax(1, count); }
    int maxLive() const { return m_maxLive; }
    void setMaxSessions(int count) { m_maxSessions = qMax(1, count); }
    int maxSessions() const { return qMin(m_maxSessions, m_maxLive); }
    void setMaxIdleTtlMs(qint64 ms) { m_maxIdleTtlMs = qMax<qint64>(60000, ms); }
    // 0 = no queue: a creation at the cap is refused at once.
    void setQueueMax(int count) { m_queueMax = qMax(0, count); }
    int queueMax() const { return m_queueMax; }
    void setQueueTimeoutMs(int ms) { m_queueTimeoutMs = qMax(0, ms); }
    // Creations waiting for a live slot.
    int waitingCount() const;
    qint64 maxIdleTtlMs() const { return m_maxIdleTtlMs; }
    // Session sandboxes cached or being created (what maxSessions() counts).
    int sessionCount() const;
    // Sandboxes this registry created and has not yet finished deleting, plus creations in
    // flight: what the global cap counts.
    int liveCount() const;

    bool contains(const QString &key) const;
    std::optional<SandboxEntry> entry(const QString &key) const;
    std::optional<SandboxEntry> entryByContainerId(const QString &containerId) const;
    QList<SandboxEntry> entries() const;
    int size() const;
    // A pinned sandbox (a breakpoint holds its flow) is never expired or evicted; pins nest.
    // Unpinning the last pin refreshes its last access, so the idle TTL starts again.
    void pin(const QString &key);
    void unpin(const QString &key);
    bool isPinned(const QString &key) const;
    // Test seam mirroring LiteLLM tests that age cache entries by hand.
    void setLastAccessed(const QString &key, qint64 ms);

    // Signals. Every deletion ends in exactly one of sandboxRemoved / sandboxRemoveFailed (the
    // entry has left the cache either way). A creation that a second caller joined while it was
    // pending emits sandboxCreated once and no sandboxReused.
signals:
    void sandboxCreated(const loopscope::SandboxEntry &entry);
    void sandboxReused(const loopscope::SandboxEntry &entry);
    void sandboxRemoved(const loopscope::SandboxEntry &entry,
                        loopscope::SandboxRemovalReason reason);
    void sandboxRemoveFailed(const loopscope::SandboxEntry &entry, const QString &error);

private:
    // The creation itself, once a live slot is free (the session cap is checked here).
    QFuture<Outcome<SandboxEntry>> startCreation(const QString &key,
                                                 const std::optional<QString> &identity,
                                                 const SandboxFactory &factory,
                                                 const QString &sessionId);
    // Queues a creation that found every live slot taken, or refuses it past the queue's bounds.
    QFuture<Outcome<SandboxEntry>> wait(const QString &key, const std::optional<QString> &identity,
                                        const SandboxFactory &factory, const QString &sessionId,
                                        const SandboxAdmission &admission);
    // One more caller of waiter `id` (the first, or one sharing its key) with its hooks.
    void joinWait(quint64 id, const SandboxAdmission &admission);
    // A caller of waiter `id` leaves; the last one takes the waiter out of the queue.
    void leaveWait(quint64 id);
    // Starts waiting creations while live slots are free (queued after a slot frees, so a
    // deletion's own continuation finishes first).
    void admitWaiting();
    void scheduleAdmission();
    // Evicts the least recently used session sandboxes of `identity` until one more fits.
    void enforceCap(const QString &identity);
    // With every session slot taken: frees one for `identity` if another identity holds more
    // than its fair share (see kDefaultMaxSessions). True if a slot was freed.
    bool evictForFairShare(const QString &identity);
    // The unpinned least recently used session sandbox of `identity`, or an empty key.
    QString leastRecentlyUsed(const QString &identity) const;

    // Implementation owns: entries by key, pending creations by key (shared future), clock.
    struct Private;
    std::unique_ptr<Private> d;
    int m_maxLive = kDefaultMaxLive;
    int m_maxSessions = kDefaultMaxSessions;
    qint64 m_maxIdleTtlMs = kDefaultMaxIdleTtlMs;
    int m_queueMax = kDefaultQueueMax;
    int m_queueTimeoutMs = kDefaultQueueTimeoutMs;
    bool m_admissionScheduled = false;
};

} // namespace loopscope

Q_DECLARE_METATYPE(loopscope::SandboxEntry)
Q_DECLARE_METATYPE(loopscope::SandboxRemovalReason)
