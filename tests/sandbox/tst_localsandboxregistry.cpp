#include "sandbox/local/localpythonbackend.h"
#include "sandbox/sandboxregistry.h"
#include "support/futurewait.h"

#include "sandboxprocessscan.h"

#include <QPointer>
#include <QSignalSpy>
#include <QTest>

using namespace loopscope;
using loopscope::test::processExists;
using loopscope::test::sandboxLeftovers;

namespace {
constexpr int kWaitMs = 60000;
}

// The real SandboxRegistry over real local sandboxes, as the proxy runs them: one creation per
// key under races, state per key, LRU eviction and shutdown all end in dead processes.
class TestLocalSandboxRegistry : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();
    void racingRequestsShareOneSandbox();
    void evictionKillsTheLeastRecentlyUsedSandbox();
    void removeAllLeavesNoProcess();

private:
    SandboxFactory factory() {
        QPointer<SandboxBackend> backend = m_backend.get();
        return [backend]() -> QFuture<Outcome<SandboxEntry>> {
            return backend->create({}).then([backend](const Outcome<SandboxHandle> &created) {
                if (!created.ok())
                    return Outcome<SandboxEntry>::failure(created.error);
                SandboxEntry entry;
                entry.handle = created.value;
                entry.params = SandboxParams{QStringLiteral("local"), {}, {}};
                entry.backend = backend;
                return Outcome<SandboxEntry>::success(entry);
            });
        };
    }

    std::unique_ptr<LocalPythonBackend> m_backend;
    std::unique_ptr<SandboxRegistry> m_registry;
};

void TestLocalSandboxRegistry::init() {
    LocalSandboxOptions options;
    options.poolSize = 2;
    m_backend = std::make_unique<LocalPythonBackend>(options);
    m_registry = std::make_unique<SandboxRegistry>();
}

void TestLocalSandboxRegistry::cleanup() {
    m_registry.reset();
    m_backend.reset();
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
}

void TestLocalSandboxRegistry::racingRequestsShareOneSandbox() {
    const std::optional<QString> identity = QStringLiteral("key-hash-alice");
    QList<QFuture<Outcome<SandboxEntry>>> racing;
    for (int i = 0; i < 5; ++i)
        racing << m_registry->getOrCreate(QStringLiteral("alice:s1"), identity, factory(),
                                          QStringLiteral("s1"));
    QString id;
    for (const auto &future : racing) {
        const Outcome<SandboxEntry> entry = awaitFuture(future, kWaitMs);
        QVERIFY2(entry.ok(), qPrintable(entry.error));
        if (id.isEmpty())
            id = entry.value.handle.id;
        QCOMPARE(entry.value.handle.id, id);
    }
    QCOMPARE(m_backend->sandboxIds(), QStringList{id});

    Outcome<ExecutionResult> r =
        awaitFuture(m_registry->run(QStringLiteral("alice:s1"), QStringLiteral("n = 7")), kWaitMs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    r = awaitFuture(m_registry->run(QStringLiteral("alice:s1"), QStringLiteral("print(n * 6)")),
                    kWaitMs);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.value.stdoutText, QStringLiteral("42\n"));
    QCOMPARE(r.value.executionCount, 2);
}

void TestLocalSandboxRegistry::evictionKillsTheLeastRecentlyUsedSandbox() {
    const std::optional<QString> identity = QStringLiteral("key-hash-bob");
    qint64 now = 1000;
    m_registry->setClock([&now] { return now; });
    QString oldestId;
    qint64 oldestPid = 0;
    for (int i = 0; i < SandboxRegistry::kSessionCapPerIdentity; ++i) {
        now += 10;
        const Outcome<SandboxEntry> entry = awaitFuture(
            m_registry->getOrCreate(QStringLiteral("bob:%1").arg(i), identity, factory()), kWaitMs);
        QVERIFY2(entry.ok(), qPrintable(entry.error));
        if (i == 0) {
            oldestId = entry.value.handle.id;
            oldestPid = m_backend->processId(oldestId);
        }
    }
    QCOMPARE(m_backend->sandboxIds().size(), SandboxRegistry::kSessionCapPerIdentity);
    QVERIFY(processExists(oldestPid));
    QSignalSpy removed(m_registry.get(), &SandboxRegistry::sandboxRemoved);
    now += 10;
    QVERIFY(awaitFuture(m_registry->getOrCreate(QStringLiteral("bob:new"), identity, factory()),
                        kWaitMs)
                .ok());
    QTRY_VERIFY_WITH_TIMEOUT(!m_backend->sandboxIds().contains(oldestId), kWaitMs);
    QCOMPARE(m_backend->sandboxIds().size(), SandboxRegistry::kSessionCapPerIdentity);
    QTRY_VERIFY_WITH_TIMEOUT(!processExists(oldestPid), kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(removed.size(), 1, kWaitMs);
}

void TestLocalSandboxRegistry::removeAllLeavesNoProcess() {
    for (int i = 0; i < 4; ++i)
        QVERIFY(awaitFuture(
                    m_registry->getOrCreate(QStringLiteral("k%1").arg(i), std::nullopt, factory()),
                    kWaitMs)
                    .ok());
    QCOMPARE(m_backend->sandboxIds().size(), 4);
    awaitFuture(m_registry->removeAll(), kWaitMs);
    QCOMPARE(m_registry->size(), 0);
    QCOMPARE(m_backend->sandboxIds().size(), 0);
    // Only the warm pool is left until the backend shuts down.
    m_backend->shutdown();
    QTRY_VERIFY2_WITH_TIMEOUT(sandboxLeftovers().isEmpty(),
                              qPrintable(sandboxLeftovers().join(QLatin1Char('\n'))), 20000);
}

QTEST_GUILESS_MAIN(TestLocalSandboxRegistry)
#include "tst_localsandboxregistry.moc"
