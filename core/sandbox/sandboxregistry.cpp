#include "sandbox/sandboxregistry.h"

#include "common/futurechain.h"

#include <QDateTime>
#include <QFutureWatcher>
#include <QPointer>
#include <QPromise>
#include <QSet>
#include <QTimer>

#include <algorithm>
#include <memory>

namespace loopscope {

namespace {

// Finishes when the last of `futures` does (finished or cancelled), counted on `context`'s
// thread. If `context` goes first, the count goes with it and the join's future is cancelled
// (its promise is destroyed unfinished), so a waiter is never left hanging.
QFuture<void> joinAll(const QList<QFuture<void>> &futures, QObject *context) {
    if (futures.isEmpty())
        return QtFuture::makeReadyFuture();
    struct Join {
        QPromise<void> promise;
        int remaining = 0;
    };
    auto join = std::make_shared<Join>();
    join->remaining = int(futures.size());
    join->promise.start();
    const QFuture<void> done = join->promise.future();
    for (const QFuture<void> &future : futures)
        whenFinished(future, context, [join](const QFuture<void> &) {
            if (--join->remaining == 0)
                join->promise.finish();
        });
    return done;
}

QFuture<Outcome<SandboxEntry>> readyFailure(const QString &message) {
    return QtFuture::makeReadyFuture(Outcome<SandboxEntry>::failure(message));
}

} // namespace

struct SandboxRegistry::Private {
    // One creation in flight. Waiters share `promise`'s future, so a key is created once.
    struct Inflight {
        QString key;
        std::optional<QString> identity;
        QString sessionId;
        QFuture<Outcome<SandboxEntry>> factoryFuture;
        std::shared_ptr<QPromise<Outcome<SandboxEntry>>> promise;
        QFutureWatcherBase *watcher = nullptr;
        bool discard = false; // removed/shut down meanwhile: delete the sandbox on arrival
    };

    QHash<QString, SandboxEntry> entries;
    // Container ids of every sandbox handed out (cached or not) until its delete finishes.
    QSet<QString> live;
    QHash<QString, int> pins;          // breakpoints holding a sandbox (never expired/evicted)
    QHash<QString, int> running;       // runs in progress per key (never expired/evicted either)
    QHash<QString, quint64> accessSeq; // LRU tie-break when clocks report equal times
    quint64 nextAccessSeq = 0;
    QHash<quint64, Inflight> inflight;
    QHash<QString, quint64> inflightByKey; // non-empty keys only
    quint64 nextInflightId = 0;
    // A creation waiting for a live slot, first come first served.
    struct Waiter {
        quint64 id = 0;
        QString key;
        std::optional<QString> identity;
        QString sessionId;
        SandboxFactory factory;
        std::shared_ptr<QPromise<Outcome<SandboxEntry>>> promise;
        QTimer *timeout = nullptr;
        int callers = 0; // requests sharing this wait that have not left it
    };
    QList<Waiter> waiting;
    quint64 nextWaiterId = 0;
    std::function<qint64()> clock;

    void touch(const QString &key) { accessSeq.insert(key, ++nextAccessSeq); }
};

SandboxRegistry::SandboxRegistry(QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>()) {
    d->clock = [] { return QDateTime::currentMSecsSinceEpoch(); };
}

SandboxRegistry::~SandboxRegistry() {
    for (const Private::Waiter &w : std::as_const(d->waiting)) {
        w.promise->addResult(
            Outcome<SandboxEntry>::failure(QStringLiteral("sandbox registry shut down")));
        w.promise->finish();
    }
    // Creations still in flight: stop watching, fail the waiters, and make sure a sandbox that
    // arrives later is deleted rather than leaked.
    for (auto &in : d->inflight) {
        delete in.watcher;
        in.factoryFuture.then([](const Outcome<SandboxEntry> &created) {
            if (!created.ok() || !created.value.backend)
                return;
            const QPointer<SandboxBackend> backend = created.value.backend;
            const SandboxEntry entry = created.value;
            QMetaObject::invokeMethod(backend.data(), [backend, entry] {
                if (backend)
                    backend->remove(entry.handle, entry.params.value_or(SandboxParams{}));
            });
        });
        in.promise->addResult(
            Outcome<SandboxEntry>::failure(QStringLiteral("sandbox registry shut down")));
        in.promise->finish();
    }
    // Cached sandboxes whose backend still exists are deleted fire-and-forget; the app calls
    // removeAll() first to wait for them, this only guards against leaks.
    for (const SandboxEntry &entry : std::as_const(d->entries)) {
        if (entry.backend)
            entry.backend->remove(entry.handle, entry.params.value_or(SandboxParams{}));
    }
}

void SandboxRegistry::setClock(std::function<qint64()> nowMs) {
    d->clock = nowMs ? std::move(nowMs) : [] { return QDateTime::currentMSecsSinceEpoch(); };
}

qint64 SandboxRegistry::now() const {
    return d->clock();
}

QFuture<Outcome<SandboxEntry>> SandboxRegistry::getOrCreate(const QString &key,
                                                            const std::optional<QString> &identity,
                                                            const SandboxFactory &factory,
                                                            const QString &sessionId,
                                                            const SandboxAdmission &admission) {
    if (!key.isEmpty()) {
        auto it = d->entries.find(key);
        if (it != d->entries.end()) {
            it->lastAccessedMs = now();
            d->touch(key);
            const SandboxEntry entry = *it;
            emit sandboxReused(entry);
            return QtFuture::makeReadyFuture(Outcome<SandboxEntry>::success(entry));
        }
        // Same key already being created: share that creation instead of racing it.
        const auto pending = d->inflightByKey.constFind(key);
        if (pending != d->inflightByKey.constEnd())
            return d->inflight.value(*pending).promise->future();
    }
    if (!factory)
        return readyFailure(QStringLiteral("no sandbox factory configured"));
    // Same key already waiting for a slot: share that wait.
    if (!key.isEmpty())
        for (const Private::Waiter &w : std::as_const(d->waiting))
            if (w.key == key) {
                const QFuture<Outcome<SandboxEntry>> shared = w.promise->future();
                joinWait(w.id, admission);
                return shared;
            }
    // Earlier waiters go first: a new creation never overtakes the queue.
    if (liveCount() >= m_maxLive || !d->waiting.isEmpty())
        return wait(key, identity, factory, sessionId, admission);
    return startCreation(key, identity, factory, sessionId);
}

void SandboxRegistry::joinWait(quint64 id, const SandboxAdmission &admission) {
    for (Private::Waiter &w : d->waiting)
        if (w.id == id)
            ++w.callers;
    if (admission.queued)
        admission.queued();
    if (admission.cancel) {
        // Each caller leaves once, and only while the wait lasts (ids are never reused).
        auto left = std::make_shared<bool>(false);
        admission.cancel->onCancel([self = QPointer<SandboxRegistry>(this), id, left] {
            if (self && !std::exchange(*left, true))
                self->leaveWait(id);
        });
    }
}

void SandboxRegistry::leaveWait(quint64 id) {
    for (qsizetype i = 0; i < d->waiting.size(); ++i) {
        Private::Waiter &w = d->waiting[i];
        if (w.id != id)
            continue;
        if (--w.callers > 0)
            return; // others still wait for this key
        const Private::Waiter gone = d->waiting.takeAt(i);
        delete gone.timeout;
        gone.promise->addResult(Outcome<SandboxEntry>::failure(kLeftQueue));
        gone.promise->finish();
        return;
    }
}

QFuture<Outcome<SandboxEntry>> SandboxRegistry::wait(const QString &key,
                                                     const std::optional<QString> &identity,
                                                     const SandboxFactory &factory,
                                                     const QString &sessionId,
                                                     const SandboxAdmission &admission) {
    if (d->waiting.size() >= m_queueMax || m_queueTimeoutMs <= 0) {
        qWarning("loopscope: sandbox refused: %d live sandboxes (sandbox.max_live is %d) and %d "
                 "requests waiting (sandbox.queue_max is %d)",
                 liveCount(), m_maxLive, int(d->waiting.size()), m_queueMax);
        return readyFailure(
            QStringLiteral("%1: %2 are running, the limit is %3 (sandbox.max_live), and %4 "
                           "requests already wait for one (sandbox.queue_max is %5); retry when "
                           "one finishes or delete idle ones (DELETE /v1/containers/{id})")
                .arg(kCapReachedPrefix)
                .arg(liveCount())
                .arg(m_maxLive)
                .arg(d->waiting.size())
                .arg(m_queueMax));
    }
    Private::Waiter w;
    w.id = ++d->nextWaiterId;
    w.key = key;
    w.identity = identity;
    w.sessionId = sessionId;
    w.factory = factory;
    w.promise = std::make_shared<QPromise<Outcome<SandboxEntry>>>();
    w.promise->start();
    w.timeout = new QTimer(this);
    w.timeout->setSingleShot(true);
    const quint64 id = w.id;
    connect(w.timeout, &QTimer::timeout, this, [this, id] {
        for (qsizetype i = 0; i < d->waiting.size(); ++i) {
            if (d->waiting.at(i).id != id)
                continue;
            const Private::Waiter expired = d->waiting.takeAt(i);
            expired.timeout->deleteLater();
            qWarning("loopscope: sandbox refused: waited %d s for a live slot "
                     "(sandbox.queue_timeout_s)",
                     m_queueTimeoutMs / 1000);
            expired.promise->addResult(Outcome<SandboxEntry>::failure(
                QStringLiteral("%1: no sandbox came free within %2 s (sandbox.max_live is %3, "
                               "sandbox.queue_timeout_s); retry later")
                    .arg(kCapReachedPrefix)
                    .arg(m_queueTimeoutMs / 1000.0)
                    .arg(m_maxLive)));
            expired.promise->finish();
            return;
        }
    });
    w.timeout->start(m_queueTimeoutMs);
    const QFuture<Outcome<SandboxEntry>> result = w.promise->future();
    d->waiting.append(w);
    joinWait(id, admission);
    // Session sandboxes idle past their TTL leave first; their slots then admit waiters.
    pruneExpired();
    scheduleAdmission();
    return result;
}

int SandboxRegistry::waitingCount() const {
    return int(d->waiting.size());
}

void SandboxRegistry::scheduleAdmission() {
    if (m_admissionScheduled || d->waiting.isEmpty())
        return;
    m_admissionScheduled = true;
    QMetaObject::invokeMethod(this, &SandboxRegistry::admitWaiting, Qt::QueuedConnection);
}

void SandboxRegistry::admitWaiting() {
    m_admissionScheduled = false;
    while (!d->waiting.isEmpty() && liveCount() < m_maxLive) {
        const Private::Waiter w = d->waiting.takeFirst();
        delete w.timeout;
        // Created for another request meanwhile: shared, as without the wait.
        QFuture<Outcome<SandboxEntry>> started;
        const auto cached = w.key.isEmpty() ? d->entries.end() : d->entries.find(w.key);
        if (cached != d->entries.end()) {
            cached->lastAccessedMs = now();
            d->touch(w.key);
            emit sandboxReused(*cached);
            started = QtFuture::makeReadyFuture(Outcome<SandboxEntry>::success(*cached));
        } else if (const auto pending = d->inflightByKey.constFind(w.key);
                   !w.key.isEmpty() && pending != d->inflightByKey.constEnd()) {
            started = d->inflight.value(*pending).promise->future();
        } else {
            started = startCreation(w.key, w.identity, w.factory, w.sessionId);
        }
        const auto promise = w.promise;
        whenFinished(started, this, [promise](const QFuture<Outcome<SandboxEntry>> &f) {
            promise->addResult((f.isCanceled() || f.resultCount() == 0)
                                   ? Outcome<SandboxEntry>::failure(
                                         QStringLiteral("sandbox creation was cancelled"))
                                   : f.result());
            promise->finish();
        });
    }
}

QFuture<Outcome<SandboxEntry>>
SandboxRegistry::startCreation(const QString &key, const std::optional<QString> &identity,
                               const SandboxFactory &factory, const QString &sessionId) {
    if (identity && sessionCount() >= maxSessions() && !evictForFairShare(*identity)) {
        qWarning("loopscope: session sandbox refused: %d sessions and containers (sandbox."
                 "max_sessions is %d)",
                 sessionCount(), maxSessions());
        return readyFailure(
            QStringLiteral("%1: %2 sessions and containers are running, the limit for them is "
                           "%3 (sandbox.max_sessions; the other sandbox.max_live slots are kept "
                           "for one-shot runs); retry when one expires or delete idle ones "
                           "(DELETE /v1/containers/{id})")
                .arg(kCapReachedPrefix)
                .arg(sessionCount())
                .arg(maxSessions()));
    }

    const quint64 id = ++d->nextInflightId;
    Private::Inflight in;
    in.key = key;
    in.identity = identity;
    in.sessionId = sessionId;
    in.promise = std::make_shared<QPromise<Outcome<SandboxEntry>>>();
    in.promise->start();
    const QFuture<Outcome<SandboxEntry>> result = in.promise->future();
    // Registered before the factory runs so a re-entrant getOrCreate for this key joins it.
    d->inflight.insert(id, in);
    if (!key.isEmpty())
        d->inflightByKey.insert(key, id);

    const QFuture<Outcome<SandboxEntry>> created = factory();
    auto it = d->inflight.find(id);
    if (it == d->inflight.end()) // cannot happen: only finishCreation erases, from the watcher
        return result;
    it->factoryFuture = created;
    it->watcher = whenFinished(created, this, [this, id](const QFuture<Outcome<SandboxEntry>> &f) {
        Private::Inflight done = d->inflight.take(id);
        if (!done.key.isEmpty() && d->inflightByKey.value(done.key) == id)
            d->inflightByKey.remove(done.key);

        Outcome<SandboxEntry> outcome =
            (f.isCanceled() || f.resultCount() == 0)
                ? Outcome<SandboxEntry>::failure(QStringLiteral("sandbox creation was cancelled"))
                : f.result();
        if (outcome.ok()) {
            SandboxEntry &entry = outcome.value;
            entry.key = done.key;
            entry.identity = done.identity;
            entry.sessionId = done.sessionId;
            entry.createdMs = entry.lastAccessedMs = now();
            entry.runs = 0;
            if (done.discard) {
                // Removed (or shut down) while being created: never hand it out.
                deleteSandbox(entry, SandboxRemovalReason::Deleted);
                outcome = Outcome<SandboxEntry>::failure(
                    QStringLiteral("sandbox was removed before its creation finished"));
            } else {
                d->live.insert(entry.handle.id);
                if (!entry.key.isEmpty()) {
                    if (entry.identity)
                        enforceCap(*entry.identity);
                    d->entries.insert(entry.key, entry);
                    d->touch(entry.key);
                }
                emit sandboxCreated(entry);
            }
        }
        if (!outcome.ok())
            scheduleAdmission(); // a failed creation held a slot until now
        done.promise->addResult(outcome);
        done.promise->finish();
    });
    return result;
}

int SandboxRegistry::sessionCount() const {
    int count = 0;
    for (const SandboxEntry &entry : std::as_const(d->entries))
        count += entry.identity ? 1 : 0;
    for (const Private::Inflight &in : std::as_const(d->inflight))
        count += in.identity && !in.discard ? 1 : 0;
    return count;
}

QString SandboxRegistry::leastRecentlyUsed(const QString &identity) const {
    QString oldestKey;
    qint64 oldestMs = 0;
    quint64 oldestSeq = 0;
    for (auto it = d->entries.cbegin(); it != d->entries.cend(); ++it) {
        if (it->identity != identity || d->pins.contains(it.key()) || d->running.contains(it.key()))
            continue;
        const quint64 seq = d->accessSeq.value(it.key());
        if (oldestKey.isEmpty() || it->lastAccessedMs < oldestMs ||
            (it->lastAccessedMs == oldestMs && seq < oldestSeq)) {
            oldestKey = it.key();
            oldestMs = it->lastAccessedMs;
            oldestSeq = seq;
        }
    }
    return oldestKey;
}

bool SandboxRegistry::evictForFairShare(const QString &identity) {
    QHash<QString, int> held;
    for (const SandboxEntry &entry : std::as_const(d->entries)) {
        if (entry.identity)
            ++held[*entry.identity];
    }
    for (const Private::Inflight &in : std::as_const(d->inflight)) {
        if (in.identity && !in.discard)
            ++held[*in.identity];
    }
    const int mine = held.value(identity);
    if (!held.contains(identity))
        held.insert(identity, 0);
    const int share = qMax(1, maxSessions() / int(held.size()));
    if (mine >= share)
        return false; // at its share already: wait for a slot like everyone else
    QString greediest;
    for (auto it = held.cbegin(); it != held.cend(); ++it) {
        if (it.key() != identity && it.value() > share &&
            (greediest.isEmpty() || it.value() > held.value(greediest)) &&
            !leastRecentlyUsed(it.key()).isEmpty())
            greediest = it.key();
    }
    if (greediest.isEmpty())
        return false;
    remove(leastRecentlyUsed(greediest), SandboxRemovalReason::Evicted);
    return true;
}

void SandboxRegistry::enforceCap(const QString &identity) {
    // LiteLLM's per-identity LRU: only session-scoped entries of this identity count.
    for (;;) {
        const auto count = std::count_if(
            d->entries.cbegin(), d->entries.cend(),
            [&identity](const SandboxEntry &entry) { return entry.identity == identity; });
        const QString oldestKey = leastRecentlyUsed(identity);
        if (count < kSessionCapPerIdentity || oldestKey.isEmpty())
            return;
        remove(oldestKey, SandboxRemovalReason::Evicted);
    }
}

QFuture<Outcome<ExecutionResult>> SandboxRegistry::run(const QString &key, const QString &code,
                                                       const SandboxOutputSink &onOutput,
                                                       const CancellationToken &cancel) {
    auto it = d->entries.find(key);
    if (key.isEmpty() || it == d->entries.end())
        return QtFuture::makeReadyFuture(Outcome<ExecutionResult>::failure(
            QStringLiteral("no cached sandbox for this sandbox key")));
    if (!it->backend)
        return QtFuture::makeReadyFuture(Outcome<ExecutionResult>::failure(
            QStringLiteral("the backend of this sandbox no longer exists")));
    ++it->runs;
    it->lastAccessedMs = now();
    d->touch(key);
    // Captured params only: a reloaded sandbox_tools registry never re-targets a live sandbox.
    const QFuture<Outcome<ExecutionResult>> ran =
        it->backend->run(it->handle, code, it->params.value_or(SandboxParams{}), onOutput, cancel);
    // A sandbox running code is not the least recently used one, nor idle: neither the
    // per-identity LRU cap nor expiry may delete it under its run (a burst of new sessions
    // used to fail runs with "the sandbox was deleted while code was running").
    ++d->running[key];
    whenFinished(ran, this, [this, key](const QFuture<Outcome<ExecutionResult>> &) {
        auto busy = d->running.find(key);
        if (busy != d->running.end() && --*busy <= 0)
            d->running.erase(busy);
    });
    return ran;
}

QFuture<void> SandboxRegistry::remove(const QString &key, SandboxRemovalReason reason) {
    if (key.isEmpty())
        return QtFuture::makeReadyFuture();
    const auto pending = d->inflightByKey.constFind(key);
    if (pending != d->inflightByKey.constEnd()) {
        // Still being created: its waiters get an error and the sandbox is deleted on arrival;
        // a later getOrCreate for this key starts afresh.
        d->inflight[*pending].discard = true;
        d->inflightByKey.erase(pending);
    }
    auto it = d->entries.find(key);
    if (it == d->entries.end())
        return QtFuture::makeReadyFuture();
    const SandboxEntry entry = *it;
    d->entries.erase(it);
    d->accessSeq.remove(key);
    return deleteSandbox(entry, reason);
}

QFuture<void> SandboxRegistry::deleteSandbox(const SandboxEntry &entry,
                                             SandboxRemovalReason reason) {
    const auto reportFailure = [this, entry](const QString &error) {
        qWarning("sandbox %s: delete failed (ignored): %s", qUtf8Printable(entry.handle.id),
                 qUtf8Printable(error));
        emit sandboxRemoveFailed(entry, error);
    };
    if (!entry.backend) {
        d->live.remove(entry.handle.id);
        scheduleAdmission();
        reportFailure(QStringLiteral("the backend of this sandbox no longer exists"));
        return QtFuture::makeReadyFuture();
    }
    auto promise = std::make_shared<QPromise<void>>();
    promise->start();
    const QFuture<void> done = promise->future();
    const QFuture<Outcome<bool>> removal =
        entry.backend->remove(entry.handle, entry.params.value_or(SandboxParams{}));
    whenFinished(removal, this,
                 [this, entry, reason, reportFailure, promise](const QFuture<Outcome<bool>> &f) {
                     if (f.isCanceled() || f.resultCount() == 0)
                         reportFailure(QStringLiteral("sandbox delete was cancelled"));
                     else if (const Outcome<bool> outcome = f.result(); !outcome.ok())
                         reportFailure(outcome.error);
                     else
                         emit sandboxRemoved(entry, reason);
                     // Counted until here: a slow remote delete still holds its slot.
                     d->live.remove(entry.handle.id);
                     scheduleAdmission();
                     promise->finish();
                 });
    return done;
}

QFuture<void> SandboxRegistry::pruneExpired() {
    const qint64 current = now();
    QStringList expired;
    for (auto it = d->entries.cbegin(); it != d->entries.cend(); ++it) {
        if (current - it->lastAccessedMs > idleTtlOf(*it) && !d->pins.contains(it.key()) &&
            !d->running.contains(it.key()))
            expired.append(it.key());
    }
    QList<QFuture<void>> deletions;
    for (const QString &key : std::as_const(expired))
        deletions.append(remove(key, SandboxRemovalReason::Expired));
    return joinAll(deletions, this);
}

QFuture<void> SandboxRegistry::removeAll(SandboxRemovalReason reason) {
    for (const Private::Waiter &w : std::exchange(d->waiting, {})) {
        delete w.timeout;
        w.promise->addResult(
            Outcome<SandboxEntry>::failure(QStringLiteral("sandbox registry is shutting down")));
        w.promise->finish();
    }
    for (auto &in : d->inflight)
        in.discard = true;
    d->inflightByKey.clear();
    const QStringList keys = d->entries.keys();
    QList<QFuture<void>> deletions;
    for (const QString &key : keys)
        deletions.append(remove(key, reason));
    return joinAll(deletions, this);
}

bool SandboxRegistry::contains(const QString &key) const {
    return d->entries.contains(key);
}

std::optional<SandboxEntry> SandboxRegistry::entry(const QString &key) const {
    const auto it = d->entries.constFind(key);
    if (it == d->entries.constEnd())
        return std::nullopt;
    return *it;
}

std::optional<SandboxEntry> SandboxRegistry::entryByContainerId(const QString &containerId) const {
    if (containerId.isEmpty())
        return std::nullopt;
    for (const SandboxEntry &entry : std::as_const(d->entries)) {
        if (entry.handle.id == containerId)
            return entry;
    }
    return std::nullopt;
}

QList<SandboxEntry> SandboxRegistry::entries() const {
    QList<SandboxEntry> list = d->entries.values();
    std::sort(list.begin(), list.end(), [](const SandboxEntry &a, const SandboxEntry &b) {
        return a.createdMs != b.createdMs ? a.createdMs < b.createdMs : a.key < b.key;
    });
    return list;
}

int SandboxRegistry::liveCount() const {
    return int(d->live.size() + d->inflight.size());
}

int SandboxRegistry::size() const {
    return int(d->entries.size());
}

void SandboxRegistry::pin(const QString &key) {
    if (!key.isEmpty())
        ++d->pins[key];
}

void SandboxRegistry::unpin(const QString &key) {
    auto it = d->pins.find(key);
    if (it == d->pins.end())
        return;
    if (--it.value() > 0)
        return;
    d->pins.erase(it);
    if (auto entry = d->entries.find(key); entry != d->entries.end()) {
        entry->lastAccessedMs = now();
        d->touch(key);
    }
}

bool SandboxRegistry::isPinned(const QString &key) const {
    return d->pins.contains(key);
}

qint64 SandboxRegistry::setIdleTtl(const QString &key, qint64 ms) {
    auto it = d->entries.find(key);
    if (it == d->entries.end())
        return 0;
    it->idleTtlMs = qBound<qint64>(0, ms, m_maxIdleTtlMs);
    return idleTtlOf(*it);
}

void SandboxRegistry::setLastAccessed(const QString &key, qint64 ms) {
    auto it = d->entries.find(key);
    if (it != d->entries.end())
        it->lastAccessedMs = ms;
}

} // namespace loopscope
