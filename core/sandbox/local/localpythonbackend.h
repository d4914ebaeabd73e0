#pragma once

#include "sandbox/local/localsandboxoptions.h"
#include "sandbox/local/sandboxdriverpayload.h"
#include "sandbox/sandboxbackend.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QPointer>
#include <QThreadPool>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace loopscope {

class LocalSandboxProcess;
class LocalSandboxZygote;

// The default sandbox backend (provider "local"): one long-lived `/usr/bin/python3 -I` per
// sandbox, kept alive across runs so variables, imports and files persist; forked by the
// zygote (LocalSandboxZygote, the default) or started in a bubblewrap of its own.
//
// - Isolation: all namespaces unshared (only a private loopback), read-only minimal /usr, private
//   size-capped tmpfs work dir (/mnt/data), /tmp and /dev/shm, cleared environment, no /home,
//   /root, /run or host /proc, capabilities dropped, seccomp, new session, dies with its parent;
//   rlimits on memory, CPU, processes, file size and open files; an unprivileged uid when the
//   app runs as root. The same either way (tst_localpythonbackend checks both).
// - Timeouts: a run that exceeds LocalSandboxOptions::timeoutMs kills the interpreter's whole
//   tree and returns an ExecutionResult with timedOut, error TimeoutError and the output the run
//   printed until shortly before (the driver sends it a second before the kill, or at half of a
//   limit under two seconds; later output, and all of it if Python never got the GIL back, is
//   lost). The sandbox (same
//   id) stays usable: its next run gets a fresh interpreter, which means variables and imports
//   are gone; the regular files of its /mnt/data are carried over (read through a descriptor
//   of the old tmpfs, never following a link, within the tmpfs's own caps); that run's stderr
//   starts with a one-time notice saying so. The same holds when user code kills its own
//   interpreter (os._exit, a signal, the CPU limit): that run returns error InterpreterExited
//   naming the cause.
// - Cancel (run()'s token, the client went away): a queued run is dropped; a running one gets
//   SIGINT (LocalSandboxProcess::interrupt), so it returns KeyboardInterrupt with its output and
//   the interpreter keeps its state, or loses the interpreter after kInterruptGraceMs.
// - Warm pool: poolSize interpreters are started ahead (at nice poolNice) and handed out by
//   create(), each exactly once, and refilled in the background; it grows toward poolMaxSize
//   while creates have to wait and shrinks back after poolIdleMs without waiting.
// - remove() kills the tree (its tmpfs work dir goes with it); the destructor and shutdown()
//   remove every sandbox and pooled interpreter and reap them (no zombies, no orphans).
// - Without bubblewrap create() fails with selfTest()'s explanation, unless allowUnisolated is
//   set; then code runs directly on the host and logs and selfTest() warnings say so loudly.
//
// - Nothing slow on the backend's thread: the driver's compile (SandboxDriverPayload::prepare)
//   runs on a thread of its own from the constructor on; until it is in, create() waits for it
//   (a future, not a block) and the pool does not fill. The self-test runs on a worker
//   (selfTestInBackground). A pool refill without the zygote forks and execs its bwrap on the
//   backend's spawn thread (one long-lived thread: a sandbox gets SIGKILL when the thread that
//   forked it ends) and hands the started interpreter back here; with the zygote a refill is
//   one message to it, sent from here, one per event-loop turn. What stays here: the
//   fork/exec of an interpreter a create() or run() needs now (no pooled one was ready), and
//   the zygote's own start.
//
// Lives on one thread (the proxy thread); all futures finish there. Interpreters get SIGKILL if
// the thread that started them ends, so the backend must not outlive its thread.
class LocalPythonBackend : public SandboxBackend {
    Q_OBJECT
public:
    explicit LocalPythonBackend(const LocalSandboxOptions &options = {}, QObject *parent = nullptr);
    ~LocalPythonBackend() override;

    QString provider() const override { return QStringLiteral("local"); }

    QFuture<Outcome<SandboxHandle>> create(const SandboxParams &params) override;
    // Live output: see LocalSandboxOptions::liveOutput*.
    QFuture<Outcome<ExecutionResult>> run(const SandboxHandle &sandbox, const QString &code,
                                          const SandboxParams &params,
                                          const SandboxOutputSink &onOutput = {},
                                          const CancellationToken &cancel = {}) override;
    QFuture<Outcome<bool>> remove(const SandboxHandle &sandbox,
                                  const SandboxParams &params) override;

    // Static checks plus, once, a real probe sandbox; cached after the first call. Blocks for
    // as long as the probes take (seconds when bwrap hangs): never on the proxy thread, which
    // calls selfTestInBackground().
    SandboxSelfTest selfTest() const override;
    // The same on a worker thread: the future finishes there (attach with whenFinished); the
    // result is cached here too once it is in. Ready at once when already cached.
    QFuture<SandboxSelfTest> selfTestInBackground();

    // Served by the sandbox's driver between runs (see LocalSandboxProcess::fileRequest). A
    // sandbox without a live interpreter gets a fresh one, with the files of the one before.
    QFuture<Outcome<QList<SandboxFileInfo>>> listFiles(const SandboxHandle &sandbox,
                                                       const SandboxParams &params) override;
    QFuture<Outcome<QByteArray>> readFile(const SandboxHandle &sandbox, const QString &path,
                                          const SandboxParams &params) override;
    QFuture<Outcome<SandboxFileInfo>> writeFile(const SandboxHandle &sandbox, const QString &path,
                                                const QByteArray &data,
                                                const SandboxParams &params) override;
    QFuture<Outcome<bool>> deleteFile(const SandboxHandle &sandbox, const QString &path,
                                      const SandboxParams &params) override;

    // Which data-analysis libraries the sandbox's Python can import ("numpy 1.24.2"), and a
    // warning naming the Debian package of each missing one.
    static QStringList probeLibraries(const QString &pythonPath, QStringList *missing = nullptr);

    const LocalSandboxOptions &options() const { return m_options; }
    // False when the backend runs code without bubblewrap (allowUnisolated fallback).
    bool isIsolated() const { return m_isolated; }
    // True while new sandboxes are forked by the zygote (LocalSandboxOptions::zygote, and it
    // has not failed here); false: one bwrap per sandbox.
    bool usesZygote() const;
    // Host pid of the zygote's bwrap, 0 if none is running (tests, diagnostics).
    qint64 zygoteProcessId() const;

    // Kills every sandbox and pooled interpreter and waits until they are reaped; create() and
    // run() fail afterwards. Called by the destructor.
    void shutdown();

    // Introspection for the inspector and tests.
    QStringList sandboxIds() const;
    int pooledCount() const;    // pooled interpreters, starting or ready
    int readyPoolCount() const; // pooled interpreters ready for an instant hand-off
    int poolTarget() const { return m_poolTarget; } // current size the pool refills to
    // The pool stopped refilling after repeated start failures (create() still tries).
    bool poolGaveUp() const { return m_poolStartFailures >= kMaxPoolStartFailures; }
    // A refill is scheduled or in flight on the spawn thread (tests: with none pending and an
    // empty pool, none will appear).
    bool refillPending() const {
        return m_refillScheduled || !m_spawns.isEmpty() || (!driverReady() && m_poolTarget > 0);
    }
    // The pool has settled at start-up: the driver is in and poolSize interpreters are ready
    // (at once when the pool is off). Logged once ("sandbox pool: ..."), then poolSettled().
    bool isPoolSettled() const { return m_poolSettled; }
    // The driver's compile is in (interpreters can start without waiting for it).
    bool driverReady() const { return m_driver.isFinished(); }
    // Host pid of the process tree's top currently serving a sandbox (its bwrap, its init when
    // forked by the zygote, or the unisolated python), 0 if none; the same of pooled ones.
    qint64 processId(const QString &sandboxId) const;
    QList<qint64> pooledProcessIds() const;

    // "cntr_" + 32 lowercase hex digits from the system CSPRNG (doubles as an OpenAI container id).
    static QString newSandboxId();

signals:
    void poolChanged();
    void poolSettled();

private:
    // Delay before refilling the pool after a hand-off (see takeFromPool).
    static constexpr int kRefillAfterHandOffMs = 20;
    // Pooled starts that may fail in a row before the pool stops refilling.
    static constexpr int kMaxPoolStartFailures = 3;
    struct PendingRun;
    struct PooledSpawn;
    struct Sandbox;

    static QStringList staticProblems(const LocalSandboxOptions &options);
    // Everything selfTest() finds, from copies only: safe on any thread.
    static SandboxSelfTest runSelfTest(const LocalSandboxOptions &options, bool isolated,
                                       bool available);
    LocalSandboxProcess *startProcess(int nice = 0);
    QFuture<Outcome<SandboxHandle>> createNow();
    void noteForkedExit(LocalSandboxProcess *process);
    void growPool();
    void shrinkPool();
    LocalSandboxProcess *takeFromPool();
    void refillPool();
    void scheduleRefill(int delayMs = 0);
    void addToPool(LocalSandboxProcess *process);
    // Starts a pooled interpreter on the spawn thread; adoptPooled() takes it in here.
    void spawnPooled();
    void adoptPooled(const std::shared_ptr<PooledSpawn> &spawn);
    void notePoolSettled();
    void attach(Sandbox &sandbox, LocalSandboxProcess *process);
    void carryFiles(Sandbox &sandbox, LocalSandboxProcess *process);
    void pump(const QString &sandboxId);
    // A run's cancellation: dropped while queued, interrupted while in flight.
    void cancelRun(const QString &sandboxId, const PendingRun &run);
    Sandbox *find(const QString &sandboxId) const;
    template<typename T>
    QFuture<Outcome<T>>
    fileOp(const QString &sandboxId, const QJsonObject &request, const QByteArray &payload,
           std::function<Outcome<T>(const QJsonObject &, const QByteArray &)> map);

    LocalSandboxOptions m_options;
    bool m_available = false;
    bool m_isolated = true;
    QString m_unavailableReason;
    bool m_shutdown = false;
    bool m_refillScheduled = false;
    QFuture<SandboxDriverPayload> m_driver; // its compile; finished (or never started) when usable
    int m_poolStartFailures = 0;
    int m_poolTarget = 0;
    QTimer *m_poolShrinkTimer = nullptr;
    QList<LocalSandboxProcess *> m_pool; // children of this
    bool m_poolSettled = false;
    // Refills in flight on m_spawnPool, each owned by its PooledSpawn until adoptPooled() (or
    // shutdown(), after joining the spawn thread) takes it.
    QList<std::shared_ptr<PooledSpawn>> m_spawns;
    QThreadPool m_spawnPool;                // one thread, never expiring (see the class comment)
    LocalSandboxZygote *m_zygote = nullptr; // child of this; null: one bwrap per sandbox
    bool m_zygoteProven = false;            // a forked sandbox has been ready
    QHash<QString, std::shared_ptr<Sandbox>> m_sandboxes;
    mutable std::optional<SandboxSelfTest> m_selfTest;
};

} // namespace loopscope
