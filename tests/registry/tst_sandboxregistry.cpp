#include "sandbox/sandboxregistry.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <memory>

using namespace loopscope;

namespace {

// A manual clock: tests move time instead of sleeping 15 minutes.
struct FakeClock {
    std::shared_ptr<qint64> ms = std::make_shared<qint64>(1'700'000'000'000);
    std::function<qint64()> fn() const {
        return [ms = ms] { return *ms; };
    }
    void advance(qint64 delta) { *ms += delta; }
    qint64 now() const { return *ms; }
};

SandboxParams e2bParams() {
    return {QStringLiteral("e2b"), QStringLiteral("e2b_secret_1234"),
            QStringLiteral("https://api.e2b.example")};
}

} // namespace

class TestSandboxRegistry : public QObject {
    Q_OBJECT

private slots:
    void init() {
        backend = std::make_unique<RecordingSandboxBackend>();
        backend->uniqueIds = true;
        registry = std::make_unique<SandboxRegistry>();
        clock = FakeClock{};
        registry->setClock(clock.fn());
    }
    void cleanup() {
        registry.reset();
        backend.reset();
    }

    void reuseByKeyCreatesOnce() {
        QSignalSpy created(registry.get(), &SandboxRegistry::sandboxCreated);
        QSignalSpy reused(registry.get(), &SandboxRegistry::sandboxReused);
        const auto first = awaitFuture(registry->getOrCreate(QStringLiteral("k1"), std::nullopt,
                                                             backend->factory(e2bParams())));
        QVERIFY2(first.ok(), qPrintable(first.error));
        clock.advance(5000);
        const auto second = awaitFuture(registry->getOrCreate(QStringLiteral("k1"), std::nullopt,
                                                              backend->factory(e2bParams())));
        QVERIFY2(second.ok(), qPrintable(second.error));
        QCOMPARE(backend->createCount(), 1);
        QCOMPARE(second.value.handle, first.value.handle);
        QCOMPARE(second.value.createdMs, first.value.createdMs);
        QCOMPARE(second.value.lastAccessedMs, clock.now());
        QCOMPARE(registry->entry(QStringLiteral("k1"))->lastAccessedMs, clock.now());
        QCOMPARE(created.count(), 1);
        QCOMPARE(reused.count(), 1);
        QCOMPARE(registry->size(), 1);
    }

    void reuseKeepsOriginalIdentity() {
        awaitFuture(registry->getOrCreate(QStringLiteral("alice:s1"), QStringLiteral("alice"),
                                          backend->factory(), QStringLiteral("s1")));
        const auto again = awaitFuture(registry->getOrCreate(
            QStringLiteral("alice:s1"), QStringLiteral("mallory"), backend->factory()));
        QVERIFY(again.ok());
        QCOMPARE(again.value.identity, std::optional<QString>(QStringLiteral("alice")));
        QCOMPARE(again.value.sessionId, QStringLiteral("s1"));
        QCOMPARE(backend->createCount(), 1);
    }

    void distinctKeysGetDistinctSandboxes() {
        const auto a = awaitFuture(
            registry->getOrCreate(QStringLiteral("a"), std::nullopt, backend->factory()));
        const auto b = awaitFuture(
            registry->getOrCreate(QStringLiteral("b"), std::nullopt, backend->factory()));
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(backend->createCount(), 2);
        QVERIFY(a.value.handle.id != b.value.handle.id);
        QCOMPARE(registry->size(), 2);
        QCOMPARE(registry->entry(QStringLiteral("a"))->handle, a.value.handle);
        QCOMPARE(registry->entry(QStringLiteral("b"))->handle, b.value.handle);
    }

    void emptyKeyIsNotCached() {
        QSignalSpy created(registry.get(), &SandboxRegistry::sandboxCreated);
        const auto one =
            awaitFuture(registry->getOrCreate(QString(), std::nullopt, backend->factory()));
        const auto two =
            awaitFuture(registry->getOrCreate(QString(), std::nullopt, backend->factory()));
        QVERIFY(one.ok() && two.ok());
        QVERIFY(one.value.handle.isValid());
        QCOMPARE(backend->createCount(), 2);
        QCOMPARE(registry->size(), 0);
        QVERIFY(!registry->contains(QString()));
        QCOMPARE(created.count(), 2);
        // The caller owns it: deleteSandbox reaches the backend.
        awaitFuture(registry->deleteSandbox(one.value, SandboxRemovalReason::Completed));
        QCOMPARE(backend->removeCount(), 1);
        QCOMPARE(backend->removeCalls.first().handle, one.value.handle);
        QVERIFY(!backend->liveIds.contains(one.value.handle.id));
    }

    // At the cap a creation waits in a bounded FIFO and is created when a slot frees, in
    // arrival order; past the queue's size it is refused at once, past its time it is refused
    // then; a waiter for a key another waiter already asked for shares that wait.
    void burstsWaitForAFreeSlot() {
        registry->setMaxLive(2);
        registry->setQueueMax(3);
        QList<QFuture<Outcome<SandboxEntry>>> futures;
        for (int i = 0; i < 2; ++i)
            futures << registry->getOrCreate(QString(), std::nullopt, backend->factory());
        for (int i = 0; i < 2; ++i)
            QVERIFY(awaitFuture(futures.at(i)).ok());
        QList<QFuture<Outcome<SandboxEntry>>> waiting;
        waiting << registry->getOrCreate(QString(), std::nullopt, backend->factory());
        waiting << registry->getOrCreate(QStringLiteral("id1:s"), QStringLiteral("id1"),
                                         backend->factory());
        waiting << registry->getOrCreate(QString(), std::nullopt, backend->factory());
        const auto shared = registry->getOrCreate(QStringLiteral("id1:s"), QStringLiteral("id1"),
                                                  backend->factory());
        QCOMPARE(registry->waitingCount(), 3);
        // The queue is full: refused at once, naming both limits.
        const auto refused =
            awaitFuture(registry->getOrCreate(QString(), std::nullopt, backend->factory()));
        QVERIFY(!refused.ok());
        QVERIFY2(SandboxRegistry::isCapReached(refused.error), qPrintable(refused.error));
        QVERIFY(refused.error.contains(QStringLiteral("sandbox.queue_max")));
        QCOMPARE(backend->createCount(), 2);
        QVERIFY(!waiting.first().isFinished());
        // Each freed slot admits the next waiter, first come first served.
        awaitFuture(
            registry->deleteSandbox(futures.at(0).result().value, SandboxRemovalReason::Completed));
        const auto first = awaitFuture(waiting.at(0));
        QVERIFY(first.ok());
        QVERIFY(!waiting.at(1).isFinished());
        QCOMPARE(registry->waitingCount(), 2);
        awaitFuture(
            registry->deleteSandbox(futures.at(1).result().value, SandboxRemovalReason::Completed));
        const auto second = awaitFuture(waiting.at(1));
        QVERIFY(second.ok());
        QCOMPARE(second.value.key, QStringLiteral("id1:s"));
        QCOMPARE(awaitFuture(shared).value.handle, second.value.handle); // one creation
        awaitFuture(registry->deleteSandbox(first.value, SandboxRemovalReason::Completed));
        QVERIFY(awaitFuture(waiting.at(2)).ok());
        QCOMPARE(registry->waitingCount(), 0);
        QCOMPARE(backend->createCount(), 5);
        // A waiter that no slot reaches in time is refused with the reason.
        registry->setQueueTimeoutMs(200);
        const auto late =
            awaitFuture(registry->getOrCreate(QString(), std::nullopt, backend->factory()));
        QVERIFY(!late.ok());
        QVERIFY2(late.error.contains(QStringLiteral("sandbox.queue_timeout_s")),
                 qPrintable(late.error));
        QCOMPARE(registry->waitingCount(), 0);
    }

    // A waiter whose request is cancelled (the client hung up) leaves the queue: told when it
    // started waiting, refused with kLeftQueue, nothing created for it, and the next waiter
    // gets the freed slot. Two requests sharing one key's wait leave one by one.
    void cancelledWaitersLeaveTheQueue() {
        registry->setMaxLive(1);
        registry->setQueueMax(4);
        const auto held =
            awaitFuture(registry->getOrCreate(QString(), std::nullopt, backend->factory()));
        QVERIFY(held.ok());
        int queued = 0;
        const auto admission = [&queued](const CancellationToken &cancel) {
            SandboxAdmission a;
            a.cancel = cancel;
            a.queued = [&queued] { ++queued; };
            return a;
        };
        const CancellationToken leaving = Cancellation::create();
        const auto left = registry->getOrCreate(QString(), std::nullopt, backend->factory(), {},
                                                admission(leaving));
        const CancellationToken sharerA = Cancellation::create();
        const CancellationToken sharerB = Cancellation::create();
        const auto sharedA = registry->getOrCreate(QStringLiteral("id1:s"), QStringLiteral("id1"),
                                                   backend->factory(), {}, admission(sharerA));
        const auto sharedB = registry->getOrCreate(QStringLiteral("id1:s"), QStringLiteral("id1"),
                                                   backend->factory(), {}, admission(sharerB));
        const auto staying = registry->getOrCreate(QString(), std::nullopt, backend->factory());
        QCOMPARE(queued, 3);
        QCOMPARE(registry->waitingCount(), 3); // the shared key waits once

        leaving->cancel();
        const auto refused = awaitFuture(left);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error, SandboxRegistry::kLeftQueue);
        QCOMPARE(registry->waitingCount(), 2);
        sharerA->cancel(); // B still waits for that key
        QCOMPARE(registry->waitingCount(), 2);
        QVERIFY(!sharedA.isFinished());
        sharerB->cancel();
        QCOMPARE(registry->waitingCount(), 1);
        QCOMPARE(awaitFuture(sharedB).error, SandboxRegistry::kLeftQueue);
        leaving->cancel(); // again: a no-op
        QCOMPARE(registry->waitingCount(), 1);

        awaitFuture(registry->deleteSandbox(held.value, SandboxRemovalReason::Completed));
        QVERIFY(awaitFuture(staying).ok());
        QCOMPARE(backend->createCount(), 2); // the held one and the one that stayed
        QVERIFY(!registry->contains(QStringLiteral("id1:s")));
    }

    // Issue 18: one cap over every live sandbox, whoever asked: ephemeral ones, session ones of
    // any number of identities (each new bearer string is a new identity without a master key).
    void globalCapCountsEveryLiveSandbox() {
        registry->setMaxLive(3);
        registry->setQueueMax(0); // refused at once: the queue is burstsWaitForAFreeSlot's
        const auto ephemeral =
            awaitFuture(registry->getOrCreate(QString(), std::nullopt, backend->factory()));
        const auto a = awaitFuture(registry->getOrCreate(
            QStringLiteral("id1:s"), QStringLiteral("id1"), backend->factory()));
        const auto b = awaitFuture(registry->getOrCreate(
            QStringLiteral("id2:s"), QStringLiteral("id2"), backend->factory()));
        QVERIFY(ephemeral.ok() && a.ok() && b.ok());
        QCOMPARE(registry->liveCount(), 3);
        const auto refused = awaitFuture(registry->getOrCreate(
            QStringLiteral("id3:s"), QStringLiteral("id3"), backend->factory()));
        QVERIFY(!refused.ok());
        QVERIFY2(SandboxRegistry::isCapReached(refused.error), qPrintable(refused.error));
        QVERIFY(refused.error.contains(QStringLiteral("sandbox.max_live")));
        QCOMPARE(backend->createCount(), 3);
        // A cached key is still served at the cap.
        QVERIFY(awaitFuture(registry->getOrCreate(QStringLiteral("id1:s"), QStringLiteral("id1"),
                                                  backend->factory()))
                    .ok());
        // Deleting the uncached one frees a slot.
        awaitFuture(registry->deleteSandbox(ephemeral.value, SandboxRemovalReason::Completed));
        QCOMPARE(registry->liveCount(), 2);
        QVERIFY(awaitFuture(registry->getOrCreate(QStringLiteral("id3:s"), QStringLiteral("id3"),
                                                  backend->factory()))
                    .ok());
        QCOMPARE(registry->liveCount(), 3);
    }

    // 40 long-lived containers under 4 made-up keys: sessions hold at most max_sessions of
    // the live slots, so a one-shot run from a fifth identity is still served; and once the
    // session slots are all taken, a newcomer below its fair share takes one from the
    // identity holding the most, so no identity keeps more than its share while others ask.
    void sessionsLeaveOneShotSlotsAndShareFairly() {
        registry->setMaxLive(32);
        registry->setMaxSessions(24);
        QHash<QString, int> refused;
        for (int key = 1; key <= 4; ++key) {
            const QString identity = QStringLiteral("sk-made-up-%1").arg(key);
            for (int i = 0; i < 10; ++i) {
                const auto made = awaitFuture(registry->getOrCreate(
                    identity + QStringLiteral(":c%1").arg(i), identity, backend->factory()));
                if (!made.ok()) {
                    QVERIFY2(SandboxRegistry::isCapReached(made.error), qPrintable(made.error));
                    QVERIFY(made.error.contains(QStringLiteral("sandbox.max_sessions")));
                    ++refused[identity];
                }
                QVERIFY(registry->sessionCount() <= 24);
            }
        }
        QTRY_VERIFY(registry->liveCount() <= 24); // evicted ones are deleted
        QHash<QString, int> held;
        for (const SandboxEntry &entry : registry->entries())
            ++held[*entry.identity];
        QCOMPARE(held.size(), 4);
        for (auto it = held.cbegin(); it != held.cend(); ++it)
            QVERIFY2(it.value() == 6, qPrintable(it.key() + u' ' + QString::number(it.value())));
        QVERIFY(refused.value(QStringLiteral("sk-made-up-4")) > 0);

        const auto oneShot = awaitFuture(registry->getOrCreate(QStringLiteral("minted-nonce"),
                                                               std::nullopt, backend->factory()));
        QVERIFY2(oneShot.ok(), qPrintable(oneShot.error));
        // One-shot work has the other 8 slots to itself.
        for (int i = 0; i < 7; ++i)
            QVERIFY(awaitFuture(registry->getOrCreate(QString(), std::nullopt, backend->factory()))
                        .ok());
        QCOMPARE(registry->liveCount(), 32);
    }

    // expires_after is capped: no session keeps its slot idle for longer than the config says.
    void idleTtlIsCapped() {
        registry->setMaxIdleTtlMs(60 * 60 * 1000);
        QVERIFY(awaitFuture(registry->getOrCreate(QStringLiteral("id:c"), QStringLiteral("id"),
                                                  backend->factory()))
                    .ok());
        QCOMPARE(registry->setIdleTtl(QStringLiteral("id:c"), 24LL * 60 * 60 * 1000),
                 qint64(60 * 60 * 1000));
        QCOMPARE(registry->entry(QStringLiteral("id:c"))->idleTtlMs, qint64(60 * 60 * 1000));
        clock.advance(60 * 60 * 1000 + 1);
        awaitFuture(registry->pruneExpired());
        QVERIFY(!registry->contains(QStringLiteral("id:c")));
    }

    void pruneDeletesExpiredSandbox_data() {
        QTest::addColumn<qint64>("idleMs");
        QTest::addColumn<bool>("expired");
        QTest::newRow("fresh") << qint64(0) << false;
        QTest::newRow("one minute") << qint64(60'000) << false;
        QTest::newRow("exactly ttl") << SandboxRegistry::kIdleTtlMs << false;
        QTest::newRow("ttl + 1 ms") << SandboxRegistry::kIdleTtlMs + 1 << true;
        QTest::newRow("one hour") << qint64(3'600'000) << true;
    }
    void pruneDeletesExpiredSandbox() {
        QFETCH(qint64, idleMs);
        QFETCH(bool, expired);
        QSignalSpy removed(registry.get(), &SandboxRegistry::sandboxRemoved);
        const auto made = awaitFuture(registry->getOrCreate(
            QStringLiteral("s"), QStringLiteral("alice"), backend->factory(e2bParams())));
        QVERIFY(made.ok());
        clock.advance(idleMs);
        awaitFuture(registry->pruneExpired());
        QCOMPARE(registry->contains(QStringLiteral("s")), !expired);
        QCOMPARE(backend->removeCount(), expired ? 1 : 0);
        QCOMPARE(removed.count(), expired ? 1 : 0);
        if (expired) {
            QCOMPARE(backend->removeCalls.first().handle, made.value.handle);
            QCOMPARE(backend->removeCalls.first().params, e2bParams());
            QCOMPARE(removed.first().at(1).value<SandboxRemovalReason>(),
                     SandboxRemovalReason::Expired);
            QVERIFY(backend->liveIds.isEmpty());
        }
    }

    void accessRefreshesTtl_data() {
        QTest::addColumn<bool>("viaRun");
        QTest::newRow("getOrCreate") << false;
        QTest::newRow("run") << true;
    }
    void accessRefreshesTtl() {
        QFETCH(bool, viaRun);
        awaitFuture(registry->getOrCreate(QStringLiteral("s"), std::nullopt, backend->factory()));
        clock.advance(SandboxRegistry::kIdleTtlMs - 1000);
        if (viaRun) {
            QVERIFY(awaitFuture(registry->run(QStringLiteral("s"), QStringLiteral("1"))).ok());
        } else {
            QVERIFY(awaitFuture(registry->getOrCreate(QStringLiteral("s"), std::nullopt,
                                                      backend->factory()))
                        .ok());
        }
        clock.advance(2000); // 1 s past the creation's TTL, 2 s after the access
        awaitFuture(registry->pruneExpired());
        QVERIFY(registry->contains(QStringLiteral("s")));
        QCOMPARE(backend->removeCount(), 0);
        clock.advance(SandboxRegistry::kIdleTtlMs);
        awaitFuture(registry->pruneExpired());
        QVERIFY(!registry->contains(QStringLiteral("s")));
        QCOMPARE(backend->removeCount(), 1);
    }

    void pruneOnlyTouchesExpiredEntries() {
        awaitFuture(registry->getOrCreate(QStringLiteral("old"), std::nullopt, backend->factory()));
        awaitFuture(registry->getOrCreate(QStringLiteral("new"), std::nullopt, backend->factory()));
        registry->setLastAccessed(QStringLiteral("old"),
                                  clock.now() - SandboxRegistry::kIdleTtlMs - 1);
        const QString oldId = registry->entry(QStringLiteral("old"))->handle.id;
        awaitFuture(registry->pruneExpired());
        QVERIFY(!registry->contains(QStringLiteral("old")));
        QVERIFY(registry->contains(QStringLiteral("new")));
        QCOMPARE(backend->removeCount(), 1);
        QCOMPARE(backend->removeCalls.first().handle.id, oldId);
    }

    void lruCapEvictsLeastRecentlyUsed() {
        QSignalSpy removed(registry.get(), &SandboxRegistry::sandboxRemoved);
        QStringList ids;
        for (int i = 0; i < SandboxRegistry::kSessionCapPerIdentity; ++i) {
            const auto made = awaitFuture(
                registry->getOrCreate(QStringLiteral("alice:s%1").arg(i), QStringLiteral("alice"),
                                      backend->factory(), QStringLiteral("s%1").arg(i)));
            QVERIFY(made.ok());
            ids.append(made.value.handle.id);
            clock.advance(1000);
        }
        QCOMPARE(backend->removeCount(), 0);
        // Touch s0 so s1 becomes the least recently used.
        QVERIFY(awaitFuture(registry->run(QStringLiteral("alice:s0"), QStringLiteral("x"))).ok());
        clock.advance(1000);
        const auto eleventh = awaitFuture(registry->getOrCreate(
            QStringLiteral("alice:s10"), QStringLiteral("alice"), backend->factory()));
        QVERIFY(eleventh.ok());
        QCOMPARE(registry->size(), SandboxRegistry::kSessionCapPerIdentity);
        QVERIFY(!registry->contains(QStringLiteral("alice:s1")));
        QVERIFY(registry->contains(QStringLiteral("alice:s0")));
        QVERIFY(registry->contains(QStringLiteral("alice:s10")));
        QCOMPARE(backend->removeCount(), 1);
        QCOMPARE(backend->removeCalls.first().handle.id, ids.at(1));
        QCOMPARE(removed.count(), 1);
        QCOMPARE(removed.first().at(1).value<SandboxRemovalReason>(),
                 SandboxRemovalReason::Evicted);
    }

    void sandboxesRunningCodeAreNeitherEvictedNorExpired() {
        // The oldest session is running code: the per-identity cap evicts the next oldest, and
        // expiry waits for the run to end.
        for (int i = 0; i < SandboxRegistry::kSessionCapPerIdentity; ++i) {
            QVERIFY(awaitFuture(registry->getOrCreate(QStringLiteral("alice:s%1").arg(i),
                                                      QStringLiteral("alice"), backend->factory()))
                        .ok());
            clock.advance(1000);
        }
        backend->deferRuns = true;
        const auto running = registry->run(QStringLiteral("alice:s0"), QStringLiteral("x"));
        registry->setLastAccessed(QStringLiteral("alice:s0"), 0); // the oldest by far
        QVERIFY(awaitFuture(registry->getOrCreate(QStringLiteral("alice:s10"),
                                                  QStringLiteral("alice"), backend->factory()))
                    .ok());
        QVERIFY(registry->contains(QStringLiteral("alice:s0")));
        QVERIFY(!registry->contains(QStringLiteral("alice:s1")));
        clock.advance(SandboxRegistry::kIdleTtlMs + 1);
        awaitFuture(registry->pruneExpired());
        QVERIFY(registry->contains(QStringLiteral("alice:s0"))); // still running
        QVERIFY(!registry->contains(QStringLiteral("alice:s2")));
        QCOMPARE(backend->completePendingRuns(), 1);
        QVERIFY(awaitFuture(running).ok());
        QTRY_VERIFY([this] {
            awaitFuture(registry->pruneExpired());
            return !registry->contains(QStringLiteral("alice:s0"));
        }()); // idle now, and long past its TTL
    }

    void lruTieBreakUsesAccessOrder() {
        // A frozen clock: equal timestamps still evict the least recently touched entry.
        for (int i = 0; i < SandboxRegistry::kSessionCapPerIdentity; ++i)
            awaitFuture(registry->getOrCreate(QStringLiteral("k%1").arg(i), QStringLiteral("alice"),
                                              backend->factory()));
        awaitFuture(registry->getOrCreate(QStringLiteral("k0"), QStringLiteral("alice"),
                                          backend->factory()));
        awaitFuture(registry->getOrCreate(QStringLiteral("k10"), QStringLiteral("alice"),
                                          backend->factory()));
        QVERIFY(registry->contains(QStringLiteral("k0")));
        QVERIFY(!registry->contains(QStringLiteral("k1")));
    }

    void nonSessionEntriesNeverCountTowardCap() {
        for (int i = 0; i < 15; ++i)
            awaitFuture(registry->getOrCreate(QStringLiteral("nonce%1").arg(i), std::nullopt,
                                              backend->factory()));
        for (int i = 0; i < SandboxRegistry::kSessionCapPerIdentity; ++i) {
            clock.advance(10);
            awaitFuture(registry->getOrCreate(QStringLiteral("alice:s%1").arg(i),
                                              QStringLiteral("alice"), backend->factory()));
        }
        QCOMPARE(backend->removeCount(), 0);
        QCOMPARE(registry->size(), 25);
        clock.advance(10);
        awaitFuture(registry->getOrCreate(QStringLiteral("alice:s10"), QStringLiteral("alice"),
                                          backend->factory()));
        QCOMPARE(backend->removeCount(), 1);
        QVERIFY(!registry->contains(QStringLiteral("alice:s0")));
        for (int i = 0; i < 15; ++i)
            QVERIFY(registry->contains(QStringLiteral("nonce%1").arg(i)));
    }

    void identitiesHaveSeparateCaps_data() {
        QTest::addColumn<QString>("other");
        QTest::newRow("bob") << QStringLiteral("bob");
        // No API key hash: identity "" still is an identity with its own cap.
        QTest::newRow("empty identity") << QString();
    }
    void identitiesHaveSeparateCaps() {
        QFETCH(QString, other);
        for (int i = 0; i < SandboxRegistry::kSessionCapPerIdentity; ++i) {
            clock.advance(10);
            awaitFuture(registry->getOrCreate(QStringLiteral("alice:%1").arg(i),
                                              QStringLiteral("alice"), backend->factory()));
            clock.advance(10);
            awaitFuture(registry->getOrCreate(QStringLiteral("other:%1").arg(i), other,
                                              backend->factory()));
        }
        QCOMPARE(backend->removeCount(), 0);
        QCOMPARE(registry->size(), 2 * SandboxRegistry::kSessionCapPerIdentity);
        clock.advance(10);
        awaitFuture(registry->getOrCreate(QStringLiteral("other:new"), other, backend->factory()));
        QCOMPARE(backend->removeCount(), 1);
        QVERIFY(!registry->contains(QStringLiteral("other:0")));
        for (int i = 0; i < SandboxRegistry::kSessionCapPerIdentity; ++i)
            QVERIFY(registry->contains(QStringLiteral("alice:%1").arg(i)));
    }

    void runUsesCapturedParamsAndCountsRuns() {
        const auto made = awaitFuture(registry->getOrCreate(QStringLiteral("k"), std::nullopt,
                                                            backend->factory(e2bParams())));
        QVERIFY(made.ok());
        QCOMPARE(backend->createCalls.first().params, e2bParams());
        backend->stdoutText = QStringLiteral("hello\n");
        const auto ran =
            awaitFuture(registry->run(QStringLiteral("k"), QStringLiteral("print(1)")));
        QVERIFY2(ran.ok(), qPrintable(ran.error));
        QCOMPARE(ran.value.stdoutText, QStringLiteral("hello\n"));
        QCOMPARE(ran.value.executionCount, 1);
        QCOMPARE(backend->runCount(), 1);
        QCOMPARE(backend->runCalls.first().code, QStringLiteral("print(1)"));
        QCOMPARE(backend->runCalls.first().handle, made.value.handle);
        QCOMPARE(backend->runCalls.first().params, e2bParams());
        awaitFuture(registry->run(QStringLiteral("k"), QStringLiteral("2")));
        QCOMPARE(registry->entry(QStringLiteral("k"))->runs, 2);
        awaitFuture(registry->remove(QStringLiteral("k"), SandboxRemovalReason::Completed));
        QCOMPARE(backend->removeCalls.first().params, e2bParams());
    }

    void runFailures_data() {
        QTest::addColumn<bool>("cached");
        QTest::addColumn<bool>("backendFails");
        QTest::addColumn<QString>("error");
        QTest::newRow("missing key")
            << false << false << QStringLiteral("no cached sandbox for this sandbox key");
        QTest::newRow("infrastructure failure")
            << true << true << QStringLiteral("sandbox interpreter crashed");
    }
    void runFailures() {
        QFETCH(bool, cached);
        QFETCH(bool, backendFails);
        QFETCH(QString, error);
        if (cached)
            awaitFuture(
                registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory()));
        backend->failRun = backendFails;
        const auto ran = awaitFuture(registry->run(QStringLiteral("k"), QStringLiteral("1")));
        QVERIFY(!ran.ok());
        QCOMPARE(ran.error, error);
        QCOMPARE(backend->runCount(), cached ? 1 : 0);
    }

    void executionErrorIsAResultNotAFailure() {
        awaitFuture(registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory()));
        backend->executionError =
            ExecutionError{QStringLiteral("ZeroDivisionError"), QStringLiteral("division by zero"),
                           QStringLiteral("Traceback ...")};
        const auto ran = awaitFuture(registry->run(QStringLiteral("k"), QStringLiteral("1/0")));
        QVERIFY(ran.ok());
        QVERIFY(ran.value.error.has_value());
        QCOMPARE(ran.value.error->name, QStringLiteral("ZeroDivisionError"));
    }

    void removeWhileRunInFlight() {
        // The cleanup hook may delete a sandbox while a run is outstanding: the entry leaves the
        // cache and is deleted at once, and the run's own future still completes.
        awaitFuture(registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory()));
        backend->deferRuns = true;
        const auto running = registry->run(QStringLiteral("k"), QStringLiteral("while True: pass"));
        QCOMPARE(backend->pendingRunCount(), 1);
        awaitFuture(registry->remove(QStringLiteral("k"), SandboxRemovalReason::Failed));
        QVERIFY(!registry->contains(QStringLiteral("k")));
        QCOMPARE(backend->removeCount(), 1);
        QVERIFY(!running.isFinished());
        backend->failRun = true;
        QCOMPARE(backend->completePendingRuns(), 1);
        const auto result = awaitFuture(running);
        QVERIFY(!result.ok());
        QCOMPARE(result.error, backend->runError);
    }

    void removeIsIdempotent() {
        QSignalSpy removed(registry.get(), &SandboxRegistry::sandboxRemoved);
        awaitFuture(registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory()));
        awaitFuture(registry->remove(QStringLiteral("k"), SandboxRemovalReason::Completed));
        awaitFuture(registry->remove(QStringLiteral("k"), SandboxRemovalReason::Completed));
        awaitFuture(registry->remove(QString(), SandboxRemovalReason::Completed));
        QCOMPARE(backend->removeCount(), 1);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(removed.first().at(1).value<SandboxRemovalReason>(),
                 SandboxRemovalReason::Completed);
        QVERIFY(!registry->contains(QStringLiteral("k")));
    }

    void deleteFailureIsSwallowedAndReported_data() {
        QTest::addColumn<QString>("path");
        QTest::newRow("remove") << QStringLiteral("remove");
        QTest::newRow("prune") << QStringLiteral("prune");
        QTest::newRow("evict") << QStringLiteral("evict");
        QTest::newRow("removeAll") << QStringLiteral("removeAll");
    }
    void deleteFailureIsSwallowedAndReported() {
        QFETCH(QString, path);
        QSignalSpy failed(registry.get(), &SandboxRegistry::sandboxRemoveFailed);
        QSignalSpy removed(registry.get(), &SandboxRegistry::sandboxRemoved);
        const auto victim = awaitFuture(registry->getOrCreate(
            QStringLiteral("victim"), QStringLiteral("alice"), backend->factory()));
        QVERIFY(victim.ok());
        backend->failRemove = true;
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression(QStringLiteral("delete failed.*e2b unreachable")));
        if (path == QLatin1String("remove")) {
            awaitFuture(registry->remove(QStringLiteral("victim"), SandboxRemovalReason::Deleted));
        } else if (path == QLatin1String("prune")) {
            clock.advance(SandboxRegistry::kIdleTtlMs + 1);
            awaitFuture(registry->pruneExpired());
        } else if (path == QLatin1String("evict")) {
            for (int i = 1; i <= SandboxRegistry::kSessionCapPerIdentity; ++i) {
                clock.advance(10);
                QVERIFY(
                    awaitFuture(registry->getOrCreate(QStringLiteral("s%1").arg(i),
                                                      QStringLiteral("alice"), backend->factory()))
                        .ok());
            }
        } else {
            awaitFuture(registry->removeAll());
        }
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(failed.first().at(0).value<SandboxEntry>().handle, victim.value.handle);
        QCOMPARE(failed.first().at(1).toString(), QStringLiteral("e2b unreachable"));
        QVERIFY(!registry->contains(QStringLiteral("victim")));
        QCOMPARE(backend->removeCount(), 1);
    }

    void concurrentGetOrCreateCreatesOnce() {
        backend->deferCreates = true;
        QSignalSpy created(registry.get(), &SandboxRegistry::sandboxCreated);
        const auto first = registry->getOrCreate(QStringLiteral("alice:s"), QStringLiteral("alice"),
                                                 backend->factory(), QStringLiteral("s"));
        const auto second =
            registry->getOrCreate(QStringLiteral("alice:s"), QStringLiteral("alice"),
                                  backend->factory(), QStringLiteral("s"));
        QVERIFY(!first.isFinished());
        QVERIFY(!second.isFinished());
        QCOMPARE(backend->createCount(), 1);
        QCOMPARE(backend->pendingCreateCount(), 1);
        QVERIFY(!registry->contains(QStringLiteral("alice:s")));
        QCOMPARE(backend->completePendingCreates(), 1);
        const auto a = awaitFuture(first);
        const auto b = awaitFuture(second);
        QVERIFY2(a.ok(), qPrintable(a.error));
        QVERIFY2(b.ok(), qPrintable(b.error));
        QCOMPARE(a.value.handle, b.value.handle);
        QCOMPARE(backend->createCount(), 1);
        QCOMPARE(registry->size(), 1);
        QCOMPARE(created.count(), 1);
        // And a third caller after completion reuses it.
        const auto c = awaitFuture(registry->getOrCreate(
            QStringLiteral("alice:s"), QStringLiteral("alice"), backend->factory()));
        QCOMPARE(c.value.handle, a.value.handle);
        QCOMPARE(backend->createCount(), 1);
    }

    void creationFinishingOnAnotherThread() {
        // A factory whose future finishes on a worker thread, as a networked backend's might.
        int factoryCalls = 0;
        const QPointer<SandboxBackend> owner = backend.get();
        const SandboxFactory factory = [&factoryCalls, owner] {
            ++factoryCalls;
            return QtConcurrent::run([owner] {
                QThread::msleep(20);
                SandboxEntry entry;
                entry.handle =
                    SandboxHandle{QStringLiteral("sbx_thread"), QStringLiteral("fake"), {}};
                entry.backend = owner;
                return Outcome<SandboxEntry>::success(entry);
            });
        };
        const auto first = registry->getOrCreate(QStringLiteral("k"), std::nullopt, factory);
        const auto second = registry->getOrCreate(QStringLiteral("k"), std::nullopt, factory);
        const auto a = awaitFuture(first);
        const auto b = awaitFuture(second);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(factoryCalls, 1);
        QCOMPARE(a.value.handle.id, QStringLiteral("sbx_thread"));
        QCOMPARE(b.value.handle, a.value.handle);
        QVERIFY(registry->contains(QStringLiteral("k")));
    }

    void concurrentDistinctKeysCreateEach() {
        backend->deferCreates = true;
        const auto first =
            registry->getOrCreate(QStringLiteral("a"), std::nullopt, backend->factory());
        const auto second =
            registry->getOrCreate(QStringLiteral("b"), std::nullopt, backend->factory());
        QCOMPARE(backend->pendingCreateCount(), 2);
        backend->completePendingCreates();
        QVERIFY(awaitFuture(first).ok());
        QVERIFY(awaitFuture(second).ok());
        QCOMPARE(registry->size(), 2);
    }

    void failedCreateCachesNothing_data() {
        QTest::addColumn<bool>("concurrent");
        QTest::newRow("sequential: each attempt creates") << false;
        QTest::newRow("concurrent: two waiters share one attempt") << true;
    }
    void failedCreateCachesNothing() {
        QFETCH(bool, concurrent);
        QSignalSpy created(registry.get(), &SandboxRegistry::sandboxCreated);
        backend->failCreate = true;
        backend->deferCreates = concurrent;
        const auto first =
            registry->getOrCreate(QStringLiteral("k"), QStringLiteral("alice"), backend->factory());
        if (!concurrent)
            QVERIFY(waitForFuture(first));
        const auto second =
            registry->getOrCreate(QStringLiteral("k"), QStringLiteral("alice"), backend->factory());
        if (concurrent) {
            QCOMPARE(backend->createCount(), 1);
            backend->completePendingCreates();
        }
        const auto a = awaitFuture(first);
        const auto b = awaitFuture(second);
        QVERIFY(!a.ok());
        QVERIFY(!b.ok());
        QCOMPARE(a.error, QStringLiteral("sandbox create failed"));
        QCOMPARE(b.error, QStringLiteral("sandbox create failed"));
        QCOMPARE(backend->createCount(), concurrent ? 1 : 2);
        QCOMPARE(registry->size(), 0);
        QCOMPARE(created.count(), 0);
        // Nothing poisoned: the next attempt creates again and succeeds.
        backend->failCreate = false;
        backend->deferCreates = false;
        const auto retry = awaitFuture(registry->getOrCreate(
            QStringLiteral("k"), QStringLiteral("alice"), backend->factory()));
        QVERIFY2(retry.ok(), qPrintable(retry.error));
        QVERIFY(registry->contains(QStringLiteral("k")));
        QCOMPARE(backend->createCount(), concurrent ? 2 : 3);
    }

    void missingFactoryFails() {
        const auto result =
            awaitFuture(registry->getOrCreate(QStringLiteral("k"), std::nullopt, SandboxFactory()));
        QVERIFY(!result.ok());
        QCOMPARE(registry->size(), 0);
    }

    void removeDuringCreationDeletesOnArrival() {
        backend->deferCreates = true;
        const auto pending =
            registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory());
        awaitFuture(registry->remove(QStringLiteral("k"), SandboxRemovalReason::Deleted));
        backend->completePendingCreates();
        const auto result = awaitFuture(pending);
        QVERIFY(!result.ok());
        QVERIFY(!registry->contains(QStringLiteral("k")));
        QTRY_COMPARE_WITH_TIMEOUT(backend->removeCount(), 1, 10000);
        QVERIFY(backend->liveIds.isEmpty());
    }

    void removeAllDeletesEverything() {
        QSignalSpy removed(registry.get(), &SandboxRegistry::sandboxRemoved);
        awaitFuture(registry->getOrCreate(QStringLiteral("a"), std::nullopt, backend->factory()));
        awaitFuture(registry->getOrCreate(QStringLiteral("b"), QStringLiteral("alice"),
                                          backend->factory()));
        awaitFuture(
            registry->getOrCreate(QStringLiteral("c"), QStringLiteral("bob"), backend->factory()));
        QCOMPARE(backend->liveIds.size(), 3);
        awaitFuture(registry->removeAll());
        QCOMPARE(registry->size(), 0);
        QCOMPARE(backend->removeCount(), 3);
        QVERIFY(backend->liveIds.isEmpty());
        QCOMPARE(removed.count(), 3);
        for (const auto &args : std::as_const(removed))
            QCOMPARE(args.at(1).value<SandboxRemovalReason>(), SandboxRemovalReason::Shutdown);
    }

    void removeAllDiscardsCreationsInFlight() {
        backend->deferCreates = true;
        const auto pending =
            registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory());
        awaitFuture(registry->removeAll());
        backend->completePendingCreates();
        QVERIFY(!awaitFuture(pending).ok());
        QCOMPARE(registry->size(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(backend->liveIds.isEmpty(), 10000);
    }

    void lookupByContainerId() {
        const auto a = awaitFuture(
            registry->getOrCreate(QStringLiteral("a"), std::nullopt, backend->factory()));
        awaitFuture(registry->getOrCreate(QStringLiteral("b"), std::nullopt, backend->factory()));
        const auto found = registry->entryByContainerId(a.value.handle.id);
        QVERIFY(found.has_value());
        QCOMPARE(found->key, QStringLiteral("a"));
        QVERIFY(!registry->entryByContainerId(QStringLiteral("sbx_nope")).has_value());
        QVERIFY(!registry->entryByContainerId(QString()).has_value());
        QCOMPARE(registry->entries().size(), 2);
    }

    void destroyingRegistryWithPendingCreationIsSafe() {
        backend->deferCreates = true;
        auto pending = registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory());
        registry.reset();
        const auto result = awaitFuture(pending);
        QVERIFY(!result.ok());
        // The sandbox arriving after the registry died is deleted, not leaked.
        backend->completePendingCreates();
        QTRY_COMPARE_WITH_TIMEOUT(backend->removeCount(), 1, 10000);
        QVERIFY(backend->liveIds.isEmpty());
    }

    void destroyingRegistryDeletesCachedSandboxes() {
        awaitFuture(registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory()));
        registry.reset();
        QTRY_COMPARE_WITH_TIMEOUT(backend->removeCount(), 1, 10000);
    }

    void backendDestroyedBeforeDelete() {
        awaitFuture(registry->getOrCreate(QStringLiteral("k"), std::nullopt, backend->factory()));
        QSignalSpy failed(registry.get(), &SandboxRegistry::sandboxRemoveFailed);
        backend.reset();
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("delete failed")));
        awaitFuture(registry->remove(QStringLiteral("k"), SandboxRemovalReason::Deleted));
        QCOMPARE(failed.count(), 1);
        QVERIFY(!awaitFuture(registry->run(QStringLiteral("k"), QStringLiteral("1"))).ok());
    }

private:
    std::unique_ptr<RecordingSandboxBackend> backend;
    std::unique_ptr<SandboxRegistry> registry;
    FakeClock clock;
};

QTEST_GUILESS_MAIN(TestSandboxRegistry)
#include "tst_sandboxregistry.moc"
