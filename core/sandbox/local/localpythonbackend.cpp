#include "sandbox/local/localpythonbackend.h"

#include "sandbox/local/localsandboxseccomp.h"

#include "sandbox/local/bubblewrapcommand.h"
#include "sandbox/local/localsandboxprocess.h"
#include "sandbox/local/localsandboxzygote.h"
#include "sandbox/sandboxoutputcoalescer.h"

#include "common/futurechain.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QProcess>
#include <QPromise>
#include <QRandomGenerator>
#include <QThreadPool>
#include <QTimer>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace loopscope {

Q_DECLARE_LOGGING_CATEGORY(lcLocalSandbox)

namespace {

using RunPromise = std::shared_ptr<QPromise<Outcome<ExecutionResult>>>;

QString readSysctl(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromLatin1(file.readAll()).trimmed();
}

bool isExecutable(const QString &path) {
    const QFileInfo info(path);
    return info.exists() && info.isFile() && info.isExecutable();
}

template<typename T> QFuture<Outcome<T>> readyFailure(const QString &message) {
    return QtFuture::makeReadyFuture(Outcome<T>::failure(message));
}

void finish(const RunPromise &promise, Outcome<ExecutionResult> outcome) {
    if (!promise || promise->future().isFinished())
        return; // shutdown() may have answered it already
    promise->addResult(std::move(outcome));
    promise->finish();
}

} // namespace

struct LocalPythonBackend::PendingRun {
    QString code;
    RunPromise promise;
    std::shared_ptr<SandboxOutputCoalescer> live; // null without a sink
    // Shared with the run's cancellation handler: set once cancelled, and `running` names the
    // interpreter while this run (and no later one) executes on it.
    struct Control {
        bool cancelled = false;
        QPointer<LocalSandboxProcess> running;
    };
    std::shared_ptr<Control> control = std::make_shared<Control>();
};

// A pooled interpreter started on the spawn thread, on its way here. Shared by the spawn job
// and this backend: the job fills it (the process already moved to this backend's thread),
// and whoever takes it here (adoptPooled, or shutdown after joining the job) deletes or adopts
// the process on this thread, so it never dies on the spawn thread or leaks.
struct LocalPythonBackend::PooledSpawn {
    std::unique_ptr<LocalSandboxProcess> process;
};

struct LocalPythonBackend::Sandbox {
    QString id;
    QPointer<LocalSandboxProcess> process;
    int runs = 0;
    bool busy = false;
    QString resetNotice; // shown once, in the stderr of the first run on a fresh interpreter
    QList<PendingRun> queue;
    RunPromise current; // the run in flight, answered by shutdown() if need be
    // The /mnt/data of the interpreter that stopped, until its files are in the next one.
    int carriedDataDir = -1;

    Sandbox() = default;
    Sandbox(const Sandbox &) = delete;
    Sandbox &operator=(const Sandbox &) = delete;
    ~Sandbox() {
        if (carriedDataDir >= 0)
            ::close(carriedDataDir);
    }
};

namespace {

struct CarriedFile {
    QString path; // "/mnt/data/..."
    QByteArray data;
};

struct CarryLimits {
    qint64 fileBytes = 0;  // per file (what one write to the driver may carry)
    qint64 totalBytes = 0; // all files together (the tmpfs's own size)
    int entries = 0;       // directory entries looked at (the tmpfs's inode cap)
};

struct CarryState {
    QList<CarriedFile> files;
    qint64 bytes = 0;
    int entries = 0;
    int skipped = 0;
};

// The regular files below `dirFd` (a stopped sandbox's /mnt/data, which its code wrote):
// nothing is followed (O_NOFOLLOW on every component), nothing but directories and regular
// files is read (O_NONBLOCK, so a FIFO cannot block), and within the limits; the rest counts as
// skipped.
void collectCarried(int dirFd, const QString &prefix, int depth, const CarryLimits &limits,
                    CarryState &state) {
    const int own = ::fcntl(dirFd, F_DUPFD_CLOEXEC, 0);
    DIR *dir = own >= 0 ? ::fdopendir(own) : nullptr;
    if (!dir) {
        if (own >= 0)
            ::close(own);
        ++state.skipped;
        return;
    }
    while (const dirent *entry = ::readdir(dir)) {
        const QByteArray name(entry->d_name);
        if (name == "." || name == "..")
            continue;
        if (++state.entries > limits.entries) {
            ++state.skipped;
            break;
        }
        const QString text = QString::fromUtf8(name);
        const int fd = text.toUtf8() == name
                           ? ::openat(::dirfd(dir), name.constData(),
                                      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                           : -1;
        struct stat info {};
        if (fd < 0 || ::fstat(fd, &info) != 0) {
            ++state.skipped;
        } else if (S_ISDIR(info.st_mode) && depth < 64) {
            collectCarried(fd, prefix + u'/' + text, depth + 1, limits, state);
        } else if (S_ISREG(info.st_mode) && info.st_size <= limits.fileBytes &&
                   state.bytes + info.st_size <= limits.totalBytes) {
            QByteArray data(qsizetype(info.st_size), Qt::Uninitialized);
            qsizetype got = 0;
            while (got < data.size()) {
                const ssize_t n = ::read(fd, data.data() + got, size_t(data.size() - got));
                if (n <= 0)
                    break;
                got += n;
            }
            if (got == data.size()) {
                state.bytes += got;
                state.files.append(CarriedFile{prefix + u'/' + text, data});
            } else {
                ++state.skipped;
            }
        } else {
            ++state.skipped;
        }
        if (fd >= 0)
            ::close(fd);
    }
    ::closedir(dir);
}

} // namespace

LocalPythonBackend::LocalPythonBackend(const LocalSandboxOptions &options, QObject *parent)
    : SandboxBackend(parent)
    , m_options(options) {
    const QStringList problems = staticProblems(m_options);
    const bool pythonMissing = !isExecutable(m_options.pythonPath);
    if (problems.isEmpty()) {
        m_available = true;
    } else if (m_options.allowUnisolated && !pythonMissing) {
        m_available = true;
        m_isolated = false;
        qCCritical(lcLocalSandbox).noquote()
            << "LOCAL SANDBOX ISOLATION IS DISABLED (allowUnisolated): model-written code runs "
               "directly on this machine with only resource limits."
            << problems.join(QStringLiteral("; "));
    } else {
        m_unavailableReason = QStringLiteral("the local Python sandbox is unavailable: ") +
                              problems.join(QStringLiteral("; "));
        qCWarning(lcLocalSandbox).noquote() << m_unavailableReason;
    }
    if (m_available && m_isolated && m_options.zygote)
        m_zygote = new LocalSandboxZygote(m_options, this); // starts with the first sandbox
    m_poolTarget = qMax(0, m_options.poolSize);
    // Refills one at a time, on a thread that lives as long as this backend: a bwrap forked
    // there gets SIGKILL when that thread ends (PR_SET_PDEATHSIG is per thread).
    m_spawnPool.setMaxThreadCount(1);
    m_spawnPool.setExpiryTimeout(-1);
    m_spawnPool.setObjectName(QStringLiteral("loopscope-sandbox-spawn"));
    m_poolShrinkTimer = new QTimer(this);
    m_poolShrinkTimer->setSingleShot(true);
    connect(m_poolShrinkTimer, &QTimer::timeout, this, &LocalPythonBackend::shrinkPool);
    if (m_available) {
        // Interpreters start from the compiled driver: compiled elsewhere, the pool fills
        // once it is in.
        m_driver =
            SandboxDriverPayload::prepare(m_options.pythonPath, m_options.beforeDriverCompile);
        whenFinished(m_driver, this, [this](const QFuture<SandboxDriverPayload> &) {
            if (m_poolTarget > 0)
                scheduleRefill();
            notePoolSettled(); // a pool that is off has settled now
        });
    } else {
        m_driver = QtFuture::makeReadyFuture(SandboxDriverPayload{});
    }
}

LocalPythonBackend::~LocalPythonBackend() {
    shutdown();
}

QString LocalPythonBackend::newSandboxId() {
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    QByteArray bytes(reinterpret_cast<const char *>(words), sizeof(words));
    return QStringLiteral("cntr_") + QString::fromLatin1(bytes.toHex());
}

QStringList LocalPythonBackend::staticProblems(const LocalSandboxOptions &options) {
    QStringList problems;
    if (!isExecutable(options.pythonPath))
        problems << QStringLiteral("no Python interpreter at %1: install the Debian package "
                                   "python3-minimal (apt-get install python3-minimal)")
                        .arg(options.pythonPath);
    if (!isExecutable(options.bwrapPath))
        problems << QStringLiteral("no bubblewrap at %1: install the Debian package bubblewrap "
                                   "(apt-get install bubblewrap)")
                        .arg(options.bwrapPath);
    if (readSysctl(QStringLiteral("/proc/sys/user/max_user_namespaces")) == QLatin1String("0"))
        problems << QStringLiteral("user namespaces are disabled (user.max_user_namespaces = 0): "
                                   "run sysctl -w user.max_user_namespaces=15000");
    if (readSysctl(QStringLiteral("/proc/sys/kernel/unprivileged_userns_clone")) ==
        QLatin1String("0"))
        problems << QStringLiteral("unprivileged user namespaces are disabled "
                                   "(kernel.unprivileged_userns_clone = 0): run sysctl -w "
                                   "kernel.unprivileged_userns_clone=1");
    return problems;
}

SandboxSelfTest LocalPythonBackend::selfTest() const {
    if (!m_selfTest)
        m_selfTest = runSelfTest(m_options, m_isolated, m_available);
    return *m_selfTest;
}

QFuture<SandboxSelfTest> LocalPythonBackend::selfTestInBackground() {
    if (m_selfTest)
        return QtFuture::makeReadyFuture(*m_selfTest);
    auto promise = startedPromise<SandboxSelfTest>();
    const QFuture<SandboxSelfTest> probed = promise->future();
    QThreadPool::globalInstance()->start(
        [promise, options = m_options, isolated = m_isolated, available = m_available] {
            finishPromise(promise, runSelfTest(options, isolated, available));
        });
    whenFinished(probed, this, [this](const QFuture<SandboxSelfTest> &f) {
        if (!m_selfTest && f.resultCount() > 0)
            m_selfTest = f.result();
    });
    return probed;
}

SandboxSelfTest LocalPythonBackend::runSelfTest(const LocalSandboxOptions &options, bool isolated,
                                                bool available) {
    if (options.beforeSelfTestProbe)
        options.beforeSelfTestProbe();
    SandboxSelfTest result;
    result.isolated = isolated;
    const QStringList problems = staticProblems(options);
    if (isolated)
        result.problems = problems;
    if (!isolated) {
        result.warnings << QStringLiteral(
                               "isolation disabled by configuration (allowUnisolated): code runs "
                               "directly on this machine with only resource limits, a cleared "
                               "environment and a private work dir. Fix: ") +
                               problems.join(QStringLiteral("; "));
    }
    if (isolated && options.seccompFilter && !LocalSandboxSeccomp::supported())
        result.warnings << QStringLiteral(
            "WARNING: no seccomp filter for this CPU architecture: sandboxes run WITHOUT the "
            "syscall filter (kernel keyring, bpf, io_uring, AF_VSOCK and other socket families "
            "stay reachable); only x86-64 and aarch64 are filtered");
    QStringList missingLibraries;
    result.libraries = probeLibraries(options.pythonPath, &missingLibraries);
    result.warnings << missingLibraries;
    if (::geteuid() == 0)
        result.warnings
            << QStringLiteral("running as root: sandboxes run as uid %1").arg(options.sandboxUid);
    if (available) {
        // A real interpreter, started exactly as sandboxes are, is the only reliable check
        // (containers often forbid user namespaces in ways no sysctl shows). Made, used and
        // deleted on this thread; it needs no event loop (waitForReady).
        LocalSandboxProcess probe(options, isolated);
        probe.start();
        if (!probe.waitForReady(options.startTimeoutMs)) {
            QString problem =
                QStringLiteral("a probe sandbox did not start: ") + probe.exitReason();
            if (isolated)
                problem += QStringLiteral(" (bubblewrap needs unprivileged user namespaces; "
                                          "check kernel.apparmor_restrict_unprivileged_userns "
                                          "and container seccomp policies)");
            result.problems << problem;
        }
    }
    result.available = result.problems.isEmpty();
    return result;
}

bool LocalPythonBackend::usesZygote() const {
    return m_zygote != nullptr;
}

qint64 LocalPythonBackend::zygoteProcessId() const {
    return m_zygote ? m_zygote->processId() : 0;
}

void LocalPythonBackend::noteForkedExit(LocalSandboxProcess *process) {
    if (process->becameReady()) {
        m_zygoteProven = true;
        return;
    }
    // A zygote that has never produced a working sandbox here (nested user namespaces refused
    // by a container or an LSM, ...) is given up for the life of the backend. Once it has
    // worked, a failed start is that sandbox's problem, not the zygote's.
    if (m_zygoteProven || !m_zygote || m_shutdown ||
        process->exitReason() == QLatin1String("the sandbox was shut down"))
        return;
    qCWarning(lcLocalSandbox).noquote()
        << QStringLiteral("the sandbox zygote does not work here (%1); starting one bubblewrap "
                          "per sandbox from now on")
               .arg(process->exitReason());
    delete std::exchange(m_zygote, nullptr);
}

LocalSandboxProcess *LocalPythonBackend::startProcess(int nice) {
    auto *process = new LocalSandboxProcess(m_options, m_isolated, m_zygote, this);
    if (m_zygote) {
        connect(process, &LocalSandboxProcess::exited, this,
                [this, process] { noteForkedExit(process); });
        // Proven as soon as one is ready, not only when it ends.
        process->whenReady().then(this, [this](const Outcome<bool> &ready) {
            if (ready.ok())
                m_zygoteProven = true;
        });
    }
    process->start(nice);
    if (!m_isolated)
        qCWarning(lcLocalSandbox) << "starting an UNISOLATED sandbox interpreter";
    return process;
}

void LocalPythonBackend::scheduleRefill(int delayMs) {
    if (m_refillScheduled || m_shutdown)
        return;
    m_refillScheduled = true;
    QTimer::singleShot(delayMs, this, [this] {
        m_refillScheduled = false;
        refillPool();
    });
}

void LocalPythonBackend::refillPool() {
    if (!driverReady())
        return; // the driver's compile schedules a refill when it is in
    // After repeated start failures, stop burning CPU in the background; create() still tries
    // (and reports the reason) every time.
    const auto wanted = [this] {
        return !m_shutdown && m_available &&
               m_pool.size() + m_spawns.size() < qsizetype(m_poolTarget) &&
               m_poolStartFailures < kMaxPoolStartFailures;
    };
    if (!m_zygote) {
        // A fork/exec each: on the spawn thread, so a request served meanwhile waits for none.
        while (wanted())
            spawnPooled();
    } else if (wanted()) {
        // One message to the zygote each, from here: one per event-loop turn, so a request that
        // arrives meanwhile waits for one, not for the whole refill.
        addToPool(startProcess(m_options.poolNice));
        if (wanted())
            scheduleRefill();
    }
    emit poolChanged();
}

void LocalPythonBackend::addToPool(LocalSandboxProcess *process) {
    m_pool.append(process);
    connect(process, &LocalSandboxProcess::exited, this, [this, process] {
        if (!m_pool.removeOne(process))
            return; // handed off already; the sandbox owns it now
        ++m_poolStartFailures;
        qCWarning(lcLocalSandbox).noquote()
            << "pooled sandbox interpreter exited:" << process->exitReason();
        process->deleteLater();
        emit poolChanged();
        scheduleRefill();
    });
    process->whenReady().then(this, [this](const Outcome<bool> &ready) {
        if (ready.ok()) {
            m_poolStartFailures = 0;
            emit poolChanged();
            notePoolSettled();
        }
    });
}

void LocalPythonBackend::spawnPooled() {
    auto spawn = std::make_shared<PooledSpawn>();
    m_spawns.append(spawn);
    auto done = startedPromise<bool>();
    // The job gets copies and the shared PooledSpawn, nothing of this object's; `home` is the
    // thread this backend lives on, which outlives the job (shutdown() joins it).
    QThread *home = thread();
    m_spawnPool.start([spawn, done, home, options = m_options, isolated = m_isolated] {
        auto process = std::make_unique<LocalSandboxProcess>(options, isolated);
        process->start(options.poolNice);
        if (options.afterPoolSpawn)
            options.afterPoolSpawn();
        process->moveToThread(home);
        spawn->process = std::move(process);
        finishPromise(done, true); // publishes spawn->process to adoptPooled()
    });
    whenFinished(done->future(), this,
                 [this, spawn](const QFuture<bool> &) { adoptPooled(spawn); });
}

void LocalPythonBackend::adoptPooled(const std::shared_ptr<PooledSpawn> &spawn) {
    m_spawns.removeOne(spawn);
    // Deleted here, on this thread, unless adopted below (killed and reaped as it goes).
    std::unique_ptr<LocalSandboxProcess> process = std::move(spawn->process);
    if (!process || m_shutdown)
        return;
    if (!process->isAlive()) { // could not even start (bwrap missing, no work dir)
        ++m_poolStartFailures;
        qCWarning(lcLocalSandbox).noquote()
            << "pooled sandbox interpreter did not start:" << process->exitReason();
        emit poolChanged();
        scheduleRefill();
        return;
    }
    if (!m_isolated)
        qCWarning(lcLocalSandbox) << "started an UNISOLATED sandbox interpreter";
    LocalSandboxProcess *adopted = process.release();
    adopted->setParent(this);
    if (m_pool.size() >= m_poolTarget) { // the pool shrank while it started
        connect(adopted, &LocalSandboxProcess::exited, adopted, &QObject::deleteLater);
        adopted->kill();
        return;
    }
    addToPool(adopted);
    emit poolChanged();
}

void LocalPythonBackend::notePoolSettled() {
    if (m_poolSettled || m_shutdown || !driverReady() ||
        readyPoolCount() < qMax(0, m_options.poolSize))
        return;
    m_poolSettled = true;
    // Once, at start-up: what the pool holds now that nothing of the start is pending (a
    // reader, a test, knows it will not change on its own).
    if (m_options.poolSize > 0)
        qCInfo(lcLocalSandbox).noquote()
            << QStringLiteral("sandbox pool: %1 ready").arg(readyPoolCount());
    else
        qCInfo(lcLocalSandbox).noquote() << QStringLiteral("sandbox pool: off");
    emit poolSettled();
}

LocalSandboxProcess *LocalPythonBackend::takeFromPool() {
    LocalSandboxProcess *chosen = nullptr;
    for (LocalSandboxProcess *process : std::as_const(m_pool)) {
        if (process->state() == LocalSandboxProcess::State::Ready) {
            chosen = process;
            break;
        }
    }
    if (!chosen) {
        for (LocalSandboxProcess *process : std::as_const(m_pool)) {
            if (process->state() == LocalSandboxProcess::State::Starting) {
                chosen = process;
                break;
            }
        }
    }
    if (!chosen || chosen->state() != LocalSandboxProcess::State::Ready)
        growPool(); // this create waits for an interpreter: demand exceeds the pool
    if (chosen) {
        // Leaving the pool list is what makes a hand-off happen exactly once.
        m_pool.removeOne(chosen);
        chosen->setNice(0); // a sandbox's own runs go at normal priority where allowed
        emit poolChanged();
    }
    // Starting the replacement right away (bwrap + python) competes for the CPU with the
    // handed-off sandbox's first run; a short delay (and its lower priority) lets that run go
    // first.
    if (m_poolTarget > 0)
        scheduleRefill(kRefillAfterHandOffMs);
    return chosen;
}

void LocalPythonBackend::growPool() {
    if (m_options.poolSize <= 0)
        return; // no pool at all
    if (m_poolTarget < m_options.poolMaxSize) {
        ++m_poolTarget;
        emit poolChanged();
    }
    m_poolShrinkTimer->start(qMax(0, m_options.poolIdleMs));
}

void LocalPythonBackend::shrinkPool() {
    if (m_poolTarget <= m_options.poolSize)
        return;
    m_poolTarget = m_options.poolSize;
    // Surplus interpreters go, the most recently started first.
    QList<LocalSandboxProcess *> surplus;
    for (qsizetype i = m_pool.size() - 1; i >= 0 && m_pool.size() - surplus.size() > m_poolTarget;
         --i)
        surplus << m_pool.at(i);
    for (LocalSandboxProcess *process : std::as_const(surplus)) {
        m_pool.removeOne(process);
        connect(process, &LocalSandboxProcess::exited, process, &QObject::deleteLater);
        process->kill();
    }
    emit poolChanged();
}

void LocalPythonBackend::attach(Sandbox &sandbox, LocalSandboxProcess *process) {
    sandbox.process = process;
    if (sandbox.carriedDataDir >= 0)
        carryFiles(sandbox, process);
    const QString id = sandbox.id;
    connect(process, &LocalSandboxProcess::exited, this, [this, id, process] {
        if (Sandbox *owner = find(id); owner && owner->process == process) {
            // Its tmpfs outlives it through this descriptor, so a timeout or crash does not
            // take the container's files (an upload, what earlier runs wrote) with it.
            if (owner->carriedDataDir >= 0)
                ::close(owner->carriedDataDir);
            owner->carriedDataDir = process->takeDataDir();
            owner->resetNotice =
                QStringLiteral("[loopscope] This sandbox's previous interpreter stopped (%1). "
                               "This run uses a fresh interpreter: variables and imports from "
                               "earlier runs are gone.")
                    .arg(process->exitReason());
            if (owner->carriedDataDir < 0)
                owner->resetNotice += QStringLiteral(" So are the files in /mnt/data.");
            owner->resetNotice += u'\n';
            owner->process = nullptr;
        }
        process->deleteLater();
    });
}

void LocalPythonBackend::carryFiles(Sandbox &sandbox, LocalSandboxProcess *process) {
    const int dirFd = std::exchange(sandbox.carriedDataDir, -1);
    CarryLimits limits;
    limits.fileBytes = m_options.fileTransferBytes;
    limits.totalBytes = m_options.workDirBytes;
    limits.entries = m_options.workDirInodes;
    CarryState state;
    collectCarried(dirFd, BubblewrapCommand::sandboxWorkDir(), 0, limits, state);
    ::close(dirFd); // the old tmpfs goes now
    // Queued before any run: the driver serves frames in order, so the next run sees them.
    for (const CarriedFile &file : std::as_const(state.files))
        process->fileRequest(QJsonObject{{QStringLiteral("action"), QStringLiteral("write")},
                                         {QStringLiteral("path"), file.path}},
                             file.data);
    sandbox.resetNotice.chop(1);
    sandbox.resetNotice +=
        QStringLiteral(" The %1 files in /mnt/data were carried over").arg(state.files.size());
    if (state.skipped > 0)
        sandbox.resetNotice +=
            QStringLiteral(" (%1 entries were not: links, special or oversized files)")
                .arg(state.skipped);
    sandbox.resetNotice += QStringLiteral(".\n");
}

LocalPythonBackend::Sandbox *LocalPythonBackend::find(const QString &sandboxId) const {
    const auto it = m_sandboxes.constFind(sandboxId);
    return it == m_sandboxes.constEnd() ? nullptr : it->get();
}

QFuture<Outcome<SandboxHandle>> LocalPythonBackend::create(const SandboxParams &) {
    if (m_shutdown)
        return readyFailure<SandboxHandle>(QStringLiteral("the local sandbox backend shut down"));
    if (!m_available)
        return readyFailure<SandboxHandle>(m_unavailableReason);
    if (driverReady())
        return createNow();
    // The first sandboxes wait for the driver's compile (their own need), on its future.
    auto promise = startedPromise<Outcome<SandboxHandle>>();
    whenFinished(m_driver, this, [this, promise](const QFuture<SandboxDriverPayload> &) {
        if (m_shutdown) {
            finishPromise(promise, Outcome<SandboxHandle>::failure(
                                       QStringLiteral("the local sandbox backend shut down")));
            return;
        }
        whenFinished(createNow(), this, [promise](const QFuture<Outcome<SandboxHandle>> &f) {
            finishPromise(promise, resultOr(f, Outcome<SandboxHandle>::failure(QStringLiteral(
                                                   "the local sandbox backend shut down"))));
        });
    });
    return promise->future();
}

QFuture<Outcome<SandboxHandle>> LocalPythonBackend::createNow() {
    LocalSandboxProcess *process = takeFromPool();
    if (!process)
        process = startProcess();
    auto sandbox = std::make_shared<Sandbox>();
    sandbox->id = newSandboxId();
    const QString id = sandbox->id;
    m_sandboxes.insert(id, sandbox);
    attach(*sandbox, process);

    QPointer<LocalSandboxProcess> guard(process);
    return process->whenReady().then(
        this, [this, id, guard](const Outcome<bool> &ready) -> Outcome<SandboxHandle> {
            Sandbox *sandbox = find(id);
            if (!ready.ok() || !sandbox || !guard) {
                if (sandbox) {
                    if (guard)
                        guard->kill();
                    m_sandboxes.remove(id);
                }
                return Outcome<SandboxHandle>::failure(
                    ready.ok() ? QStringLiteral("the local sandbox backend shut down")
                               : ready.error);
            }
            if (m_poolStartFailures > 0) {
                // Interpreters start again: let the pool retry.
                m_poolStartFailures = 0;
                scheduleRefill();
            }
            SandboxHandle handle;
            handle.id = id;
            handle.provider = provider();
            handle.details.insert(QStringLiteral("isolated"), m_isolated);
            handle.details.insert(QStringLiteral("pid"), guard->processId());
            return Outcome<SandboxHandle>::success(handle);
        });
}

QFuture<Outcome<ExecutionResult>>
LocalPythonBackend::run(const SandboxHandle &handle, const QString &code, const SandboxParams &,
                        const SandboxOutputSink &onOutput, const CancellationToken &cancel) {
    if (m_shutdown)
        return readyFailure<ExecutionResult>(QStringLiteral("the local sandbox backend shut down"));
    Sandbox *sandbox = find(handle.id);
    if (!sandbox)
        return readyFailure<ExecutionResult>(
            QStringLiteral("no local sandbox with id %1 (deleted or never created)")
                .arg(handle.id));
    auto promise = std::make_shared<QPromise<Outcome<ExecutionResult>>>();
    promise->start();
    std::shared_ptr<SandboxOutputCoalescer> live;
    if (onOutput && m_options.liveOutputCapBytes > 0) {
        // The driver coalesces and caps already; this bounds what reaches the sink even if the
        // sandbox ignores that (slack for the driver's own cap notice).
        SandboxOutputCoalescer::Limits limits;
        limits.intervalMs = m_options.liveOutputIntervalMs;
        limits.chunkBytes = m_options.liveOutputChunkBytes;
        limits.capBytes = m_options.liveOutputCapBytes + 1024;
        live = std::make_shared<SandboxOutputCoalescer>(onOutput, limits);
    }
    const PendingRun pending{code, promise, live};
    sandbox->queue.append(pending);
    if (cancel)
        cancel->onCancel([self = QPointer<LocalPythonBackend>(this), id = handle.id, pending] {
            if (self)
                self->cancelRun(id, pending);
        });
    pump(handle.id);
    return promise->future();
}

void LocalPythonBackend::cancelRun(const QString &sandboxId, const PendingRun &run) {
    run.control->cancelled = true;
    if (run.control->running) { // in flight: stop the code, keep the interpreter if it lets us
        run.control->running->interrupt(kInterruptGraceMs);
        return;
    }
    Sandbox *sandbox = find(sandboxId);
    if (!sandbox)
        return;
    for (qsizetype i = 0; i < sandbox->queue.size(); ++i) {
        if (sandbox->queue.at(i).promise != run.promise)
            continue;
        sandbox->queue.removeAt(i);
        finish(run.promise, Outcome<ExecutionResult>::failure(kRunCancelled));
        return;
    }
    // Taken from the queue and waiting for its interpreter: pump() sees the flag.
}

void LocalPythonBackend::pump(const QString &sandboxId) {
    Sandbox *sandbox = find(sandboxId);
    if (!sandbox || sandbox->busy || sandbox->queue.isEmpty())
        return;
    sandbox->busy = true;
    const PendingRun next = sandbox->queue.takeFirst();
    sandbox->current = next.promise;

    if (!sandbox->process || !sandbox->process->isAlive()) {
        LocalSandboxProcess *fresh = takeFromPool();
        if (!fresh)
            fresh = startProcess();
        attach(*sandbox, fresh);
    }
    QPointer<LocalSandboxProcess> process = sandbox->process;
    process->whenReady().then(this, [this, sandboxId, next, process](const Outcome<bool> &ready) {
        Sandbox *sandbox = find(sandboxId);
        if (!sandbox) {
            finish(next.promise,
                   Outcome<ExecutionResult>::failure(QStringLiteral("the sandbox was deleted")));
            return;
        }
        if (!ready.ok() || !process || sandbox->process != process) {
            sandbox->busy = false;
            sandbox->current.reset();
            finish(next.promise,
                   Outcome<ExecutionResult>::failure(
                       ready.ok() ? QStringLiteral("the sandbox interpreter went away")
                                  : ready.error));
            pump(sandboxId);
            return;
        }
        if (next.control->cancelled) {
            sandbox->busy = false;
            sandbox->current.reset();
            finish(next.promise, Outcome<ExecutionResult>::failure(kRunCancelled));
            pump(sandboxId);
            return;
        }
        const int count = ++sandbox->runs;
        const QString notice = std::exchange(sandbox->resetNotice, QString());
        SandboxOutputSink sink;
        if (next.live) {
            const std::weak_ptr<SandboxOutputCoalescer> live = next.live;
            sink = [live](const QString &stream, const QString &text) {
                if (const auto coalescer = live.lock())
                    coalescer->add(stream, text);
            };
            if (!notice.isEmpty())
                next.live->add(QStringLiteral("stderr"), notice);
        }
        next.control->running = process;
        process->execute(next.code, m_options.timeoutMs, sink)
            .then(this, [this, sandboxId, next, count, notice](Outcome<ExecutionResult> outcome) {
                next.control->running = nullptr;
                if (next.live)
                    next.live->finish(); // every chunk before the result
                if (outcome.ok()) {
                    outcome.value.executionCount = count;
                    if (!notice.isEmpty())
                        outcome.value.stderrText.prepend(notice);
                }
                finish(next.promise, std::move(outcome));
                if (Sandbox *sandbox = find(sandboxId)) {
                    sandbox->busy = false;
                    sandbox->current.reset();
                    pump(sandboxId);
                }
            });
    });
}

QFuture<Outcome<bool>> LocalPythonBackend::remove(const SandboxHandle &handle,
                                                  const SandboxParams &) {
    const auto it = m_sandboxes.find(handle.id);
    if (it == m_sandboxes.end())
        return QtFuture::makeReadyFuture(Outcome<bool>::success(false));
    const std::shared_ptr<Sandbox> sandbox = *it;
    m_sandboxes.erase(it);
    for (const PendingRun &pending : std::as_const(sandbox->queue))
        finish(pending.promise,
               Outcome<ExecutionResult>::failure(QStringLiteral("the sandbox was deleted")));
    sandbox->queue.clear();

    LocalSandboxProcess *process = sandbox->process;
    if (!process || !process->isAlive())
        return QtFuture::makeReadyFuture(Outcome<bool>::success(true));
    // Finishes once the process is reaped, so "deleted" means gone.
    auto promise = std::make_shared<QPromise<Outcome<bool>>>();
    promise->start();
    connect(process, &LocalSandboxProcess::exited, this, [promise] {
        promise->addResult(Outcome<bool>::success(true));
        promise->finish();
    });
    process->kill();
    return promise->future();
}

void LocalPythonBackend::shutdown() {
    if (m_shutdown)
        return;
    m_shutdown = true;
    const auto sandboxes = m_sandboxes;
    m_sandboxes.clear();
    for (const auto &sandbox : sandboxes) {
        finish(sandbox->current, Outcome<ExecutionResult>::failure(
                                     QStringLiteral("the local sandbox backend shut down")));
        for (const PendingRun &pending : std::as_const(sandbox->queue))
            finish(pending.promise, Outcome<ExecutionResult>::failure(
                                        QStringLiteral("the local sandbox backend shut down")));
        // Deleting the process kills and reaps a bwrap tree synchronously; a forked sandbox is
        // killed by the zygote when its lifeline closes (asynchronously, within moments).
        delete sandbox->process.data();
    }
    m_pool.clear();
    // A refill not started yet is dropped; one in flight finishes its start on the spawn thread
    // (bounded: a fork/exec) and its interpreter is deleted here, on this thread, which kills
    // and reaps it.
    m_spawnPool.clear();
    m_spawnPool.waitForDone();
    for (const auto &spawn : std::as_const(m_spawns)) {
        if (!spawn->process)
            continue;
        // Its move here queued the re-registration of its running timers on this thread;
        // deleted with that call still queued, Qt 6.4 leaks the list it carries.
        QList<QObject *> moved = spawn->process->findChildren<QObject *>();
        moved << spawn->process.get();
        for (QObject *object : std::as_const(moved))
            QCoreApplication::sendPostedEvents(object, QEvent::MetaCall);
        spawn->process.reset();
    }
    m_spawns.clear();
    // Every interpreter still around (pooled, or being deleted by remove()) goes now, while this
    // object is intact: their futures have continuations bound to it.
    qDeleteAll(findChildren<LocalSandboxProcess *>(Qt::FindDirectChildrenOnly));
    // Forked sandboxes die with the zygote (their inits have it as parent-death signal).
    delete std::exchange(m_zygote, nullptr);
}

template<typename T>
QFuture<Outcome<T>>
LocalPythonBackend::fileOp(const QString &sandboxId, const QJsonObject &request,
                           const QByteArray &payload,
                           std::function<Outcome<T>(const QJsonObject &, const QByteArray &)> map) {
    if (m_shutdown)
        return readyFailure<T>(QStringLiteral("the local sandbox backend shut down"));
    Sandbox *sandbox = find(sandboxId);
    if (!sandbox)
        return readyFailure<T>(
            QStringLiteral("no local sandbox with id %1 (deleted or never created)")
                .arg(sandboxId));
    if (!sandbox->process || !sandbox->process->isAlive()) {
        LocalSandboxProcess *fresh = takeFromPool();
        if (!fresh)
            fresh = startProcess();
        attach(*sandbox, fresh);
    }
    return sandbox->process->fileRequest(request, payload)
        .then(this, [map](const Outcome<LocalSandboxProcess::FileReply> &reply) -> Outcome<T> {
            if (!reply.ok())
                return Outcome<T>::failure(reply.error);
            return map(reply.value.header, reply.value.data);
        });
}

namespace {

SandboxFileInfo fileInfoFrom(const QJsonObject &file) {
    return SandboxFileInfo{file.value(QStringLiteral("path")).toString(),
                           file.value(QStringLiteral("bytes")).toInteger(),
                           file.value(QStringLiteral("mtime_ms")).toInteger()};
}

QJsonObject fsRequest(const QString &action, const QString &path = {}) {
    QJsonObject request{{QStringLiteral("action"), action}};
    if (!path.isNull())
        request.insert(QStringLiteral("path"), path);
    return request;
}

} // namespace

QFuture<Outcome<QList<SandboxFileInfo>>> LocalPythonBackend::listFiles(const SandboxHandle &handle,
                                                                       const SandboxParams &) {
    return fileOp<QList<SandboxFileInfo>>(
        handle.id, fsRequest(QStringLiteral("list")), {},
        [](const QJsonObject &header, const QByteArray &) {
            // A cut listing would make its reader forget the files past the cut.
            if (header.value(QStringLiteral("truncated")).toBool())
                return Outcome<QList<SandboxFileInfo>>::failure(
                    QStringLiteral("the listing of /mnt/data was cut short (too many entries, "
                                   "or too slow to walk)"));
            QList<SandboxFileInfo> files;
            for (const QJsonValue &file : header.value(QStringLiteral("files")).toArray())
                files.append(fileInfoFrom(file.toObject()));
            return Outcome<QList<SandboxFileInfo>>::success(files);
        });
}

QFuture<Outcome<QByteArray>> LocalPythonBackend::readFile(const SandboxHandle &handle,
                                                          const QString &path,
                                                          const SandboxParams &) {
    return fileOp<QByteArray>(handle.id, fsRequest(QStringLiteral("read"), path), {},
                              [](const QJsonObject &, const QByteArray &data) {
                                  return Outcome<QByteArray>::success(data);
                              });
}

QFuture<Outcome<SandboxFileInfo>> LocalPythonBackend::writeFile(const SandboxHandle &handle,
                                                                const QString &path,
                                                                const QByteArray &data,
                                                                const SandboxParams &) {
    if (data.size() > m_options.fileTransferBytes)
        return readyFailure<SandboxFileInfo>(
            QStringLiteral("the file has %1 bytes; the limit is %2 bytes")
                .arg(data.size())
                .arg(m_options.fileTransferBytes));
    return fileOp<SandboxFileInfo>(
        handle.id, fsRequest(QStringLiteral("write"), path), data,
        [](const QJsonObject &header, const QByteArray &) {
            return Outcome<SandboxFileInfo>::success(
                fileInfoFrom(header.value(QStringLiteral("files")).toArray().first().toObject()));
        });
}

QFuture<Outcome<bool>> LocalPythonBackend::deleteFile(const SandboxHandle &handle,
                                                      const QString &path, const SandboxParams &) {
    return fileOp<bool>(
        handle.id, fsRequest(QStringLiteral("delete"), path), {},
        [](const QJsonObject &, const QByteArray &) { return Outcome<bool>::success(true); });
}

QStringList LocalPythonBackend::probeLibraries(const QString &pythonPath, QStringList *missing) {
    // The sandbox sees the host's read-only /usr, so the host interpreter answers for it;
    // find_spec and package metadata, not imports (pandas takes a second to import).
    static const char kProbe[] =
        "import importlib.util, importlib.metadata as m\n"
        "for mod, dist in (('numpy','numpy'),('pandas','pandas'),('matplotlib','matplotlib'),"
        "('PIL','Pillow')):\n"
        "    if importlib.util.find_spec(mod) is None:\n"
        "        print(mod, '-'); continue\n"
        "    try: print(mod, m.version(dist))\n"
        "    except Exception: print(mod, '?')\n";
    static const QHash<QString, QString> packages{
        {QStringLiteral("numpy"), QStringLiteral("python3-numpy")},
        {QStringLiteral("pandas"), QStringLiteral("python3-pandas")},
        {QStringLiteral("matplotlib"), QStringLiteral("python3-matplotlib")},
        {QStringLiteral("PIL"), QStringLiteral("python3-pil")}};
    QProcess probe;
    probe.setProcessEnvironment(QProcessEnvironment());
    probe.start(pythonPath,
                {QStringLiteral("-I"), QStringLiteral("-c"), QString::fromLatin1(kProbe)});
    QStringList present;
    if (!probe.waitForFinished(15000)) {
        probe.kill();
        probe.waitForFinished(1000);
        return present;
    }
    const QStringList lines =
        QString::fromUtf8(probe.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
    for (const QString &line : lines) {
        const QString module = line.section(u' ', 0, 0);
        const QString version = line.section(u' ', 1);
        if (version == QLatin1String("-")) {
            if (missing)
                *missing << QStringLiteral("`import %1` fails in sandboxes: install the Debian "
                                           "package %2 (apt-get install %2)")
                                .arg(module, packages.value(module));
        } else {
            present << module + u' ' + version;
        }
    }
    return present;
}

QStringList LocalPythonBackend::sandboxIds() const {
    return m_sandboxes.keys();
}

int LocalPythonBackend::pooledCount() const {
    return static_cast<int>(m_pool.size());
}

int LocalPythonBackend::readyPoolCount() const {
    int ready = 0;
    for (const LocalSandboxProcess *process : m_pool)
        ready += process->state() == LocalSandboxProcess::State::Ready ? 1 : 0;
    return ready;
}

qint64 LocalPythonBackend::processId(const QString &sandboxId) const {
    const Sandbox *sandbox = find(sandboxId);
    return sandbox && sandbox->process && sandbox->process->isAlive()
               ? sandbox->process->processId()
               : 0;
}

QList<qint64> LocalPythonBackend::pooledProcessIds() const {
    QList<qint64> pids;
    for (const LocalSandboxProcess *process : m_pool)
        pids << process->processId();
    return pids;
}

} // namespace loopscope
