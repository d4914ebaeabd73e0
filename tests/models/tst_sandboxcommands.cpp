#include "models/sandboxcommands.h"

#include "sandbox/sandboxregistry.h"
#include "support/futurewait.h"
#include "support/recordingsandboxbackend.h"

#include <QPointer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

using namespace loopscope;

// The window's Delete must be the registry removal DELETE /v1/containers/{id} makes, called on the
// registry's own (proxy) thread. A real SandboxRegistry runs on a worker thread here.
class TestSandboxCommands : public QObject {
    Q_OBJECT

private:
    struct Removal {
        QString key;
        QString containerId;
        SandboxRemovalReason reason;
    };

    QThread m_thread;
    SandboxRegistry *m_registry = nullptr;
    RecordingSandboxBackend *m_backend = nullptr;
    QList<Removal> m_removals;
    QList<QThread *> m_removalThreads;

private slots:
    void init() {
        m_removals.clear();
        m_removalThreads.clear();
        m_registry = new SandboxRegistry;
        m_backend = new RecordingSandboxBackend(m_registry);
        m_backend->uniqueIds = true;
        const auto factory = m_backend->factory();
        const QString identity = QStringLiteral("identity-hash");
        for (const QString &session :
             {QStringLiteral("s1"), QStringLiteral("s2"), QStringLiteral("s3")}) {
            const auto outcome = awaitFuture(
                m_registry->getOrCreate(identity + u':' + session, identity, factory, session));
            QVERIFY(outcome.ok());
        }
        QCOMPARE(m_registry->size(), 3);
        // Which thread ran the removal; connected first so it is recorded before the queued
        // copy below is posted.
        connect(
            m_registry, &SandboxRegistry::sandboxRemoved, m_registry,
            [this] { m_removalThreads.append(QThread::currentThread()); }, Qt::DirectConnection);
        // Recorded on this thread through a queued connection, so no data races.
        connect(m_registry, &SandboxRegistry::sandboxRemoved, this,
                [this](const SandboxEntry &entry, SandboxRemovalReason reason) {
                    m_removals.append({entry.key, entry.handle.id, reason});
                });
        m_thread.start();
        m_registry->moveToThread(&m_thread);
    }

    void cleanup() {
        // Bring the registry home before its thread stops, then delete it here.
        QThread *home = thread();
        SandboxRegistry *registry = m_registry;
        QMetaObject::invokeMethod(
            registry, [registry, home] { registry->moveToThread(home); },
            Qt::BlockingQueuedConnection);
        m_thread.quit();
        QVERIFY(m_thread.wait(10'000));
        delete m_registry;
        m_registry = nullptr;
    }

    void deleteRemovesThatSandboxOnTheRegistryThread() {
        SandboxCommands commands(m_registry);
        QVERIFY(commands.isAvailable());
        QVERIFY(commands.deleteSandbox(QStringLiteral("sbx_fake_2")));
        QTRY_COMPARE_WITH_TIMEOUT(m_removals.size(), 1, 10'000);
        QCOMPARE(m_removals.at(0).containerId, QStringLiteral("sbx_fake_2"));
        QCOMPARE(m_removals.at(0).key, QStringLiteral("identity-hash:s2"));
        QVERIFY(m_removals.at(0).reason == SandboxRemovalReason::Deleted);
        QCOMPARE(m_removalThreads.value(0), &m_thread);

        // Unknown ids are a no-op, like DELETE of a container that is already gone.
        QVERIFY(commands.deleteSandbox(QStringLiteral("sbx_nope")));
        QVERIFY(commands.deleteSandbox(QStringLiteral("sbx_fake_2")));
        QVERIFY(!commands.deleteSandbox(QString()));
        // A blocking call queued after the commands returns once they have run; a removal
        // takes its entry out at once (the backend's delete and the signal follow), so the
        // count is final here.
        int left = -1;
        QMetaObject::invokeMethod(
            m_registry, [this, &left] { left = m_registry->size(); }, Qt::BlockingQueuedConnection);
        QCOMPARE(left, 2);
        QCOMPARE(m_removals.size(), 1);
    }

    void deleteAllRemovesEverySandbox() {
        SandboxCommands commands(m_registry);
        QVERIFY(commands.deleteAll());
        QTRY_COMPARE_WITH_TIMEOUT(m_removals.size(), 3, 10'000);
        QStringList ids;
        for (const Removal &r : std::as_const(m_removals)) {
            ids.append(r.containerId);
            QVERIFY(r.reason == SandboxRemovalReason::Deleted);
        }
        ids.sort();
        QCOMPARE(ids, (QStringList{QStringLiteral("sbx_fake_1"), QStringLiteral("sbx_fake_2"),
                                   QStringLiteral("sbx_fake_3")}));
    }

    // Issues 18 and 30: the window holds no pointer to the proxy thread's registry. With a
    // dispatcher (the app's: ProxyService::withRegistry, which checks on the proxy thread
    // whether the registry still exists) every command goes through it, and only while a
    // proxy runs (setAvailable).
    void dispatcherCarriesEveryCommand() {
        SandboxCommands commands;
        QObject context;
        context.moveToThread(&m_thread);
        QPointer<SandboxRegistry> guard; // made and read on the registry's thread only
        QMetaObject::invokeMethod(
            &context, [&guard, this] { guard = m_registry; }, Qt::BlockingQueuedConnection);
        int dispatched = 0;
        commands.setDispatcher([&](std::function<void(SandboxRegistry *)> work) {
            ++dispatched;
            QMetaObject::invokeMethod(&context, [&guard, work] {
                if (SandboxRegistry *registry = guard.data())
                    work(registry);
            });
            return true;
        });
        QVERIFY(!commands.isAvailable()); // no proxy yet: nothing goes out
        QVERIFY(!commands.deleteSandbox(QStringLiteral("sbx_fake_3")));
        QCOMPARE(dispatched, 0);
        QSignalSpy availability(&commands, &SandboxCommands::availabilityChanged);
        commands.setAvailable(true);
        QCOMPARE(availability.count(), 1);
        QVERIFY(commands.isAvailable());
        QVERIFY(commands.deleteSandbox(QStringLiteral("sbx_fake_3")));
        QTRY_COMPARE_WITH_TIMEOUT(m_removals.size(), 1, 10'000);
        QCOMPARE(m_removals.at(0).containerId, QStringLiteral("sbx_fake_3"));
        QCOMPARE(m_removalThreads.value(0), &m_thread);
        QVERIFY(commands.deleteAll());
        QTRY_COMPARE_WITH_TIMEOUT(m_removals.size(), 3, 10'000);
        QCOMPARE(dispatched, 2);
        commands.setAvailable(false); // stopped
        QVERIFY(!commands.deleteAll());
        QCOMPARE(dispatched, 2);
        QMetaObject::invokeMethod(
            &context, [&context, this] { context.moveToThread(thread()); },
            Qt::BlockingQueuedConnection);
    }

    void withoutRegistryNothingIsSent() {
        SandboxCommands commands(nullptr);
        QVERIFY(!commands.isAvailable());
        QVERIFY(!commands.deleteSandbox(QStringLiteral("sbx_fake_1")));
        QVERIFY(!commands.deleteAll());

        // Handing a registry over (a restarted proxy) switches deleting on, and off again.
        QSignalSpy availability(&commands, &SandboxCommands::availabilityChanged);
        commands.setRegistry(m_registry);
        QVERIFY(commands.isAvailable());
        QVERIFY(commands.deleteSandbox(QStringLiteral("sbx_fake_1")));
        QTRY_COMPARE_WITH_TIMEOUT(m_removals.size(), 1, 10'000);
        commands.setRegistry(nullptr);
        QVERIFY(!commands.isAvailable());
        QCOMPARE(availability.count(), 2);
        QCOMPARE(availability.at(0).at(0).toBool(), true);
        QCOMPARE(availability.at(1).at(0).toBool(), false);
    }
};

QTEST_GUILESS_MAIN(TestSandboxCommands)
#include "tst_sandboxcommands.moc"
