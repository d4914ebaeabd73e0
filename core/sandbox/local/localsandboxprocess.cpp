#include "sandbox/local/localsandboxprocess.h"

#include "sandbox/local/bubblewrapcommand.h"
#include "sandbox/local/localsandboxseccomp.h"
#include "sandbox/local/localsandboxzygote.h"
#include "sandbox/local/sandboxchildsetup.h"
#include "sandbox/local/sandboxdriverpayload.h"
#include "sandbox/sandboxoutputcoalescer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QPointer>
#include <QProcess>
#include <QScopedValueRollback>
#include <QSet>
#include <QSocketNotifier>
#include <QTemporaryDir>

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace loopscope {

Q_LOGGING_CATEGORY(lcLocalSandbox, "loopscope.sandbox.local")

namespace {

constexpr qsizetype kStderrTailBytes = 8192;
constexpr qsizetype kFrameOverheadBytes = 1024 * 1024;
constexpr qsizetype kDriverWriteChunk = 256 * 1024;

const char *signalName(int sig) {
    switch (sig) {
    case SIGKILL:
        return "SIGKILL";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    case SIGXCPU:
        return "SIGXCPU";
    case SIGXFSZ:
        return "SIGXFSZ";
    case SIGTERM:
        return "SIGTERM";
    case SIGBUS:
        return "SIGBUS";
    default:
        return "signal";
    }
}

} // namespace

LocalSandboxProcess::LocalSandboxProcess(const LocalSandboxOptions &options, bool isolated,
                                         LocalSandboxZygote *zygote, QObject *parent)
    : QObject(parent)
    , m_options(options)
    , m_isolated(isolated)
    , m_zygote(isolated ? zygote : nullptr)
    , m_forked(isolated && zygote)
    // Output frames are raw bytes (cap + marker); the JSON header holds at most a capped
    // traceback and value. So this proxy never holds more than one such frame per sandbox.
    , m_codec(qMax(qMax(options.stdoutCapBytes, options.stderrCapBytes),
                   qMax(options.imageMaxBytes, options.fileTransferBytes)) +
              kFrameOverheadBytes) {
    m_startTimer.setSingleShot(true);
    m_runTimer.setSingleShot(true);
    m_fileTimer.setSingleShot(true);
    connect(&m_fileTimer, &QTimer::timeout, this, [this] { killTree(KillReason::FileTimeout); });
    connect(&m_startTimer, &QTimer::timeout, this, [this] { killTree(KillReason::StartTimeout); });
    connect(&m_runTimer, &QTimer::timeout, this, [this] { killTree(KillReason::Timeout); });
    m_interruptTimer.setSingleShot(true);
    connect(&m_interruptTimer, &QTimer::timeout, this, [this] {
        if (m_state != State::Running)
            return;
        // Halfway, once more: a SIGINT that landed just before the driver armed it for the
        // user's code (it is ignored between runs) is not the end of the interpreter.
        if (m_interruptRetry > 0 && signalInterpreter(SIGINT)) {
            m_interruptTimer.start(std::exchange(m_interruptRetry, 0));
            return;
        }
        killTree(KillReason::Interrupted);
    });
    m_reapTimer.setSingleShot(true);
    connect(&m_reapTimer, &QTimer::timeout, this, [this] {
        if (m_process && m_process->state() != QProcess::NotRunning) {
            if (m_pid > 0)
                ::kill(-static_cast<pid_t>(m_pid), SIGKILL);
            m_process->kill();
        }
    });
}

LocalSandboxProcess::~LocalSandboxProcess() {
    if (m_dataDirFd >= 0)
        ::close(m_dataDirFd);
    if (m_channel)
        m_channel->disconnect(this);
    if (m_lifelineFd >= 0) {
        delete m_lifeline;
        m_lifeline = nullptr;
        ::close(m_lifelineFd); // the zygote kills the sandbox when its lifeline closes
        m_lifelineFd = -1;
    }
    if (m_process) {
        // No signals into a half-destroyed owner: finish everything by hand.
        m_process->disconnect(this);
        if (m_process->state() != QProcess::NotRunning) {
            // The namespace init first, so the outer bwrap (our child) reaps it and exits; killing
            // the outer one first would orphan the init as a zombie nobody reaps.
            if (const qint64 init = namespaceInitPid();
                init > 0 && ::kill(static_cast<pid_t>(init), SIGKILL) == 0)
                m_process->waitForFinished(2000);
            if (m_process->state() != QProcess::NotRunning) {
                if (m_pid > 0)
                    ::kill(-static_cast<pid_t>(m_pid), SIGKILL);
                m_process->kill();
                m_process->waitForFinished(5000);
            }
        }
    }
    if (m_infoFd >= 0)
        ::close(m_infoFd);
    if (m_killReason == KillReason::None)
        m_killReason = KillReason::Requested;
    if (m_state != State::Exited)
        markExited(QStringLiteral("the sandbox was shut down"), false);
}

bool LocalSandboxProcess::markInheritedCloseOnExec(int keepFd, int fdLimit, bool useCloseRange) {
    // close_range(CLOSE_RANGE_CLOEXEC) needs Linux 5.11; on an older kernel it fails and every
    // descriptor without FD_CLOEXEC would pass into the sandbox, so mark them one by one.
    // Only async-signal-safe calls: this runs between fork and exec.
    bool usedFallback = false;
    if (!useCloseRange || ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        usedFallback = true;
        for (int fd = 3; fd < fdLimit; ++fd) {
            const int flags = ::fcntl(fd, F_GETFD);
            if (flags >= 0 && (flags & FD_CLOEXEC) == 0)
                ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        }
    }
    if (keepFd >= 0)
        ::fcntl(keepFd, F_SETFD, 0);
    return usedFallback;
}

qint64 LocalSandboxProcess::processId() const {
    return m_pid;
}

void LocalSandboxProcess::start(int nice) {
    Q_ASSERT(m_state == State::NotStarted);
    m_state = State::Starting;
    m_ready.start();
    if (m_forked) {
        startForked(nice);
        return;
    }

    const bool dropPrivileges = ::geteuid() == 0;
    LocalSandboxLaunch launch;
    int infoWriteFd = -1;
    if (m_isolated) {
        int info[2];
        if (::pipe2(info, O_CLOEXEC | O_NONBLOCK) == 0) {
            m_infoFd = info[0];
            infoWriteFd = info[1];
            // bwrap's own write must not fail on a full pipe or block: it is tiny, and blocking
            // writes are what bwrap expects.
            ::fcntl(infoWriteFd, F_SETFL, ::fcntl(infoWriteFd, F_GETFL) & ~O_NONBLOCK);
        }
        launch = BubblewrapCommand::isolated(m_options, infoWriteFd);
    } else {
        m_hostWorkDir = std::make_unique<QTemporaryDir>(
            QDir::tempPath() + QStringLiteral("/loopscope-sandbox-XXXXXX"));
        if (!m_hostWorkDir->isValid()) {
            failEarly(QStringLiteral("could not create a work dir: ") +
                      m_hostWorkDir->errorString());
            return;
        }
        if (dropPrivileges) {
            const QByteArray path = QFile::encodeName(m_hostWorkDir->path());
            if (::chown(path.constData(), m_options.sandboxUid, m_options.sandboxGid) != 0) {
                failEarly(QStringLiteral("could not hand the work dir to the sandbox uid"));
                return;
            }
        }
        launch = BubblewrapCommand::unisolated(m_options, m_hostWorkDir->path());
    }

    m_process = new QProcess(this);
    m_process->setProgram(launch.program);
    m_process->setArguments(launch.arguments);
    QProcessEnvironment env;
    for (const QString &entry : std::as_const(launch.environment)) {
        const qsizetype eq = entry.indexOf(QLatin1Char('='));
        env.insert(entry.left(eq), entry.mid(eq + 1));
    }
    m_process->setProcessEnvironment(env);
    if (!launch.workingDirectory.isEmpty())
        m_process->setWorkingDirectory(launch.workingDirectory);

    const SandboxChildSetup setup = SandboxChildSetup::fromOptions(m_options, nice);
    // Runs in the forked child before exec, so only async-signal-safe system calls. RLIMIT_NPROC
    // is set by the driver instead: set here it would be counted per uid across all sandboxes;
    // set inside bwrap's user namespace it is counted per sandbox.
    m_process->setChildProcessModifier([=] {
        setup.apply();
        // Nothing of the app's beyond stdin/stdout/stderr (and bwrap's info pipe) crosses exec.
        markInheritedCloseOnExec(-1, setup.fdLimit, true);
        if (infoWriteFd >= 0)
            ::fcntl(infoWriteFd, F_SETFD, 0);
    });

    connect(m_process, &QProcess::readyReadStandardOutput, this, &LocalSandboxProcess::onStdout);
    connect(m_process, &QProcess::bytesWritten, this, &LocalSandboxProcess::flushToDriver);
    connect(m_process, &QProcess::readyReadStandardError, this, &LocalSandboxProcess::onStderr);
    connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        onFinished(code, status == QProcess::CrashExit);
    });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            onFailedToStart();
    });
    connect(m_process, &QProcess::started, this, [this] { m_pid = m_process->processId(); });

    m_startTimer.start(m_options.startTimeoutMs);
    m_process->start(QIODevice::ReadWrite);
    m_pid = m_process->processId(); // known once start() returns; 0 if it failed
    if (infoWriteFd >= 0)
        ::close(infoWriteFd);
    // Queued in QProcess's write buffer until the pipe accepts it.
    const SandboxDriverPayload driver = SandboxDriverPayload::forPython(m_options.pythonPath);
    m_process->write(LocalSandboxFrameCodec::encodeRaw(driver.frame));
    m_process->write(
        LocalSandboxFrameCodec::encode(driverConfig(launch.sandboxWorkDir, driver.sitePackages)));
}

QJsonObject LocalSandboxProcess::driverConfig(const QString &workDir,
                                              const QJsonArray &sitePackages) const {
    QJsonObject config{
        {QStringLiteral("op"), QStringLiteral("config")},
        {QStringLiteral("nproc"), m_options.maxProcesses},
        {QStringLiteral("stdout_cap"), m_options.stdoutCapBytes},
        {QStringLiteral("stderr_cap"), m_options.stderrCapBytes},
        {QStringLiteral("traceback_cap"), 65536},
        {QStringLiteral("workdir"), workDir},
        // Where /mnt/data lives for the driver (the host work dir when unisolated).
        {QStringLiteral("datadir"), workDir},
        {QStringLiteral("image_max_bytes"), m_options.imageMaxBytes},
        {QStringLiteral("image_max_count"), m_options.maxImagesPerRun},
        {QStringLiteral("file_max_bytes"), m_options.fileTransferBytes},
        {QStringLiteral("file_list_max"), m_options.fileListMaxEntries},
        {QStringLiteral("file_list_ms"), m_options.fileListMs},
        // Without a user namespace of its own the process count is per uid, machine-wide.
        {QStringLiteral("shared_uid"), !m_isolated},
        {QStringLiteral("site_packages"), sitePackages},
        {QStringLiteral("live_interval_ms"), m_options.liveOutputIntervalMs},
        {QStringLiteral("live_chunk_bytes"), m_options.liveOutputChunkBytes},
        {QStringLiteral("live_cap_bytes"), liveCapBytes()},
    };
    if (m_isolated && !m_forked) {
        // A bwrap of its own: the driver's first step (see BubblewrapCommand::bwrapArguments).
        const auto tmpfs = [](const QString &path, qint64 bytes, int inodes) {
            return QJsonArray{path, bytes, inodes};
        };
        config.insert(QStringLiteral("confine"),
                      QJsonObject{{QStringLiteral("tmpfs"),
                                   QJsonArray{tmpfs(QStringLiteral("/tmp"), m_options.tmpDirBytes,
                                                    m_options.tmpDirInodes),
                                              tmpfs(QStringLiteral("/dev/shm"),
                                                    m_options.tmpDirBytes, m_options.tmpDirInodes),
                                              tmpfs(workDir, m_options.workDirBytes,
                                                    m_options.workDirInodes)}},
                                  {QStringLiteral("seccomp"),
                                   m_options.seccompFilter && LocalSandboxSeccomp::supported()
                                       ? QString::fromLatin1(LocalSandboxSeccomp::program().toHex())
                                       : QString()}});
    }
    return config;
}

void LocalSandboxProcess::startForked(int nice) {
    const Outcome<LocalSandboxZygote::Spawned> spawned =
        m_zygote ? m_zygote->spawn(nice)
                 : Outcome<LocalSandboxZygote::Spawned>::failure(
                       QStringLiteral("the sandbox zygote is gone"));
    if (!spawned.ok()) {
        failEarly(spawned.error);
        return;
    }
    m_lifelineFd = spawned.value.lifelineFd;
    m_lifeline = new QSocketNotifier(m_lifelineFd, QSocketNotifier::Read, this);
    connect(m_lifeline, &QSocketNotifier::activated, this, &LocalSandboxProcess::onLifeline);
    m_channel = new QLocalSocket(this);
    if (!m_channel->setSocketDescriptor(spawned.value.channelFd)) {
        ::close(spawned.value.channelFd);
        killTree(KillReason::Protocol);
        return;
    }
    connect(m_channel, &QLocalSocket::readyRead, this, &LocalSandboxProcess::onStdout);
    connect(m_channel, &QLocalSocket::bytesWritten, this, &LocalSandboxProcess::flushToDriver);
    m_startTimer.start(m_options.startTimeoutMs);
    // The zygote holds the driver already; only this sandbox's configuration goes over.
    sendToDriver(LocalSandboxFrameCodec::encode(
        driverConfig(BubblewrapCommand::sandboxWorkDir(),
                     SandboxDriverPayload::forPython(m_options.pythonPath).sitePackages)));
}

void LocalSandboxProcess::sendToDriver(const QByteArray &bytes) {
    if (bytes.isEmpty() || !hasTransport())
        return;
    m_outgoing.append(bytes);
    flushToDriver();
}

void LocalSandboxProcess::flushToDriver() {
    QIODevice *device = m_process ? static_cast<QIODevice *>(m_process) : m_channel;
    if (!device || m_state == State::Exited) {
        m_outgoing.clear();
        m_outgoingOffset = 0;
        return;
    }
    if (m_flushing) // a transport that reports bytesWritten from inside write()
        return;
    const QScopedValueRollback<bool> flushing(m_flushing, true);
    // At most one chunk waits in the transport's buffer; the next goes when it has drained.
    while (!m_outgoing.isEmpty() && device->bytesToWrite() < kDriverWriteChunk) {
        const QByteArray front = m_outgoing.first(); // a reference count, not a copy
        const qsizetype n = std::min(kDriverWriteChunk, front.size() - m_outgoingOffset);
        if (device->write(front.constData() + m_outgoingOffset, n) != n) {
            m_outgoing.clear(); // the transport is failing; its end is handled elsewhere
            m_outgoingOffset = 0;
            return;
        }
        m_outgoingOffset += n;
        if (m_outgoingOffset == front.size()) {
            m_outgoing.removeFirst();
            m_outgoingOffset = 0;
        }
    }
}

bool LocalSandboxProcess::readLifeline() {
    const LocalSandboxZygote::LifelineRead read = LocalSandboxZygote::readLifeline(m_lifelineFd);
    if (read.initPid > 0)
        m_pid = read.initPid;
    m_lifelineData += read.data;
    return read.closed;
}

void LocalSandboxProcess::onLifeline() {
    if (m_lifelineFd < 0 || !readLifeline())
        return;
    // The zygote closed it: it reported the interpreter's end (or the sandbox could not be set
    // up).
    delete m_lifeline;
    m_lifeline = nullptr;
    ::close(m_lifelineFd);
    m_lifelineFd = -1;
    finishForked();
}

void LocalSandboxProcess::finishForked() {
    // A zygote that reported has reaped the namespace's init, so the interpreter is gone and
    // everything it wrote is in the channel's buffer: read it now (waitForReadyRead(0) reads
    // what is there and emits readyRead). A zygote that died took the sandbox with it.
    while (m_channel && m_state != State::Exited && m_channel->waitForReadyRead(0)) {
    }
    if (m_state == State::Exited)
        return;
    const qsizetype x = m_lifelineData.indexOf('X');
    if (x < 0) {
        const QString why = m_zygote ? m_zygote->lastError() : QString();
        markExited(QStringLiteral("the sandbox could not be set up") +
                   (why.isEmpty() ? QString() : QStringLiteral(": ") + why));
        return;
    }
    const int status = m_lifelineData.mid(x + 1).trimmed().toInt();
    // As bwrap reports it: a signal N as exit status 128 + N.
    onFinished(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status), false);
}

void LocalSandboxProcess::failEarly(const QString &reason) {
    // Queued, so that whoever called start() has connected to exited() before it fires.
    m_earlyFailure = reason;
    QMetaObject::invokeMethod(
        this, [this, reason] { markExited(reason); }, Qt::QueuedConnection);
}

qint64 LocalSandboxProcess::liveCapBytes() const {
    // A live-output frame must fit the decoder's frame cap like every other frame.
    return qBound<qint64>(0, m_options.liveOutputCapBytes,
                          qMax(m_options.stdoutCapBytes, m_options.stderrCapBytes));
}

QFuture<Outcome<ExecutionResult>> LocalSandboxProcess::execute(const QString &code, int timeoutMs,
                                                               const SandboxOutputSink &onOutput) {
    if (m_state != State::Ready) {
        return QtFuture::makeReadyFuture(Outcome<ExecutionResult>::failure(
            m_state == State::Running
                ? QStringLiteral("internal error: the interpreter is already running code")
                : QStringLiteral("the sandbox interpreter is not ready")));
    }
    m_state = State::Running;
    m_partial.reset();
    m_run = std::make_unique<QPromise<Outcome<ExecutionResult>>>();
    m_run->start();
    ++m_runId;
    m_liveSink = onOutput;
    for (QStringDecoder &decoder : m_liveDecoders)
        decoder = QStringDecoder(QStringDecoder::Utf8);
    m_runTimeoutMs = timeoutMs;
    m_runClock.start();
    sendToDriver(LocalSandboxFrameCodec::encode({
        {QStringLiteral("op"), QStringLiteral("run")},
        {QStringLiteral("id"), m_runId},
        {QStringLiteral("code"), code},
        // Shortly before the kill (a second, or half of a short limit, so it arrives even on a
        // loaded machine): a timed-out run still returns what it printed until then.
        {QStringLiteral("partial_after_ms"),
         timeoutMs > 0 ? timeoutMs - qMin(1000, timeoutMs / 2) : 0},
    }));
    if (timeoutMs > 0)
        m_runTimer.start(timeoutMs);
    return m_run->future();
}

bool LocalSandboxProcess::waitForReady(int timeoutMs) {
    if (!hasTransport() && m_state == State::Starting) {
        markExited(m_earlyFailure); // failed before there was a process to wait for
        return false;
    }
    QElapsedTimer clock;
    clock.start();
    // waitFor* emit QProcess's signals synchronously, so the normal handlers run.
    while (m_state == State::Starting && m_process && clock.elapsed() < timeoutMs) {
        const int remaining = static_cast<int>(qMax<qint64>(1, timeoutMs - clock.elapsed()));
        if (m_process->bytesToWrite() > 0)
            m_process->waitForBytesWritten(remaining);
        else if (!m_process->waitForReadyRead(remaining) &&
                 m_process->state() == QProcess::NotRunning)
            break;
    }
    if (m_state == State::Starting && clock.elapsed() >= timeoutMs)
        killTree(KillReason::StartTimeout);
    if (m_state == State::Starting && m_process)
        m_process->waitForFinished(5000);
    return m_state == State::Ready;
}

void LocalSandboxProcess::kill() {
    killTree(KillReason::Requested);
}

qint64 LocalSandboxProcess::interpreterPid() {
    if (!isAlive())
        return 0;
    if (!m_isolated)
        return m_pid; // python itself
    // The interpreter is the only child of the sandbox's PID-namespace init (the zygote's init,
    // or bwrap's inner one), which ignores signals from outside its namespace.
    const qint64 init = m_forked ? m_pid : namespaceInitPid();
    if (init <= 0)
        return 0;
    QFile children(QStringLiteral("/proc/%1/task/%1/children").arg(init));
    if (!children.open(QIODevice::ReadOnly))
        return 0;
    return children.readAll().split(' ').value(0).trimmed().toLongLong();
}

bool LocalSandboxProcess::signalInterpreter(int sig) {
    const qint64 pid = interpreterPid();
    return pid > 0 && ::kill(static_cast<pid_t>(pid), sig) == 0;
}

void LocalSandboxProcess::interrupt(int graceMs) {
    if (m_state != State::Running || m_interruptTimer.isActive() ||
        m_killReason != KillReason::None)
        return;
    if (!signalInterpreter(SIGINT)) {
        killTree(KillReason::Interrupted); // cannot reach it: it must not keep running
        return;
    }
    const int grace = qMax(0, graceMs);
    m_interruptRetry = grace - grace / 2;
    m_interruptTimer.start(grace / 2);
}

void LocalSandboxProcess::killTree(KillReason reason) {
    if (!isAlive() || !hasTransport())
        return;
    if (m_killReason == KillReason::None)
        m_killReason = reason;
    m_startTimer.stop();
    m_runTimer.stop();
    m_interruptTimer.stop();
    m_fileTimer.stop();
    if (!m_process) {
        // Forked: the zygote kills the sandbox's PID namespace and reports on the lifeline (open
        // for as long as the channel is).
        ::send(m_lifelineFd, "k", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        return;
    }
    // Killing the PID-namespace init kills every process in the sandbox at once, and its parent,
    // the outer bwrap, reaps it and exits. Killing the outer bwrap first would leave the init
    // orphaned for a moment, a `[bwrap] <defunct>` whenever the reaper of orphans is slow or
    // absent. The outer one gets SIGKILL too if it has not gone shortly after.
    if (const qint64 init = namespaceInitPid();
        init > 0 && ::kill(static_cast<pid_t>(init), SIGKILL) == 0) {
        if (!m_reapTimer.isActive())
            m_reapTimer.start(2000);
        return;
    }
    if (m_pid > 0)
        ::kill(-static_cast<pid_t>(m_pid), SIGKILL);
    m_process->kill();
}

void LocalSandboxProcess::readInfo() {
    if (m_infoFd < 0 || m_nsInitPid > 0)
        return;
    char buffer[512];
    ssize_t n = 0;
    while ((n = ::read(m_infoFd, buffer, sizeof buffer)) > 0 && m_info.size() < 4096)
        m_info.append(buffer, n);
    const QJsonObject info = QJsonDocument::fromJson(m_info).object();
    const qint64 pid = info.value(QStringLiteral("child-pid")).toInteger();
    if (pid > 1 && pid != m_pid) {
        m_nsInitPid = pid;
        ::close(m_infoFd);
        m_infoFd = -1;
    }
}

qint64 LocalSandboxProcess::namespaceInitPid() {
    readInfo();
    if (m_nsInitPid <= 0)
        return 0;
    // Still the outer bwrap's child? Once reaped, its pid could belong to anyone.
    QFile stat(QStringLiteral("/proc/%1/stat").arg(m_nsInitPid));
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray line = stat.readAll();
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 1 && fields.at(1).toLongLong() == m_pid ? m_nsInitPid : 0;
}

bool LocalSandboxProcess::setNice(int nice) {
    // The init's "P" may still wait behind the channel's ready frame; an end stays for
    // onLifeline() (a closed socket stays readable).
    if (m_forked && m_pid <= 0 && m_lifelineFd >= 0)
        readLifeline();
    if (m_pid <= 0 || !isAlive())
        return false;
    if (m_forked) {
        // The init made the sandbox its own process group (setsid): one call reaches every
        // thread of every process in it, where walking /proc cost more than the fork.
        return ::setpriority(PRIO_PGRP, static_cast<id_t>(m_pid), nice) == 0;
    }
    // Every task of every process below the outer bwrap (or the unisolated python).
    bool all = true;
    QList<qint64> pending{m_pid};
    QSet<qint64> seen;
    while (!pending.isEmpty() && seen.size() < 4096) {
        const qint64 pid = pending.takeFirst();
        if (seen.contains(pid))
            continue;
        seen.insert(pid);
        const QStringList tasks = QDir(QStringLiteral("/proc/%1/task").arg(pid))
                                      .entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        for (const QString &task : tasks) {
            if (::setpriority(PRIO_PROCESS, static_cast<id_t>(task.toLongLong()), nice) != 0)
                all = false;
            QFile children(QStringLiteral("/proc/%1/task/%2/children").arg(pid).arg(task));
            if (children.open(QIODevice::ReadOnly)) {
                for (const QByteArray &child : children.readAll().split(' ')) {
                    if (const qint64 c = child.trimmed().toLongLong(); c > 0)
                        pending << c;
                }
            }
        }
    }
    return all;
}

void LocalSandboxProcess::onStdout() {
    const QByteArray bytes = m_process ? m_process->readAllStandardOutput() : m_channel->readAll();
    if (m_killReason != KillReason::None)
        return;
    m_codec.feed(bytes);
    while (auto frame = m_codec.next()) {
        handleFrame(*frame);
        if (m_killReason != KillReason::None)
            return;
    }
    if (m_codec.failed()) {
        qCWarning(lcLocalSandbox) << "sandbox protocol error:" << m_codec.error();
        killTree(KillReason::Protocol);
    }
}

void LocalSandboxProcess::onStderr() {
    // Only bwrap's and the driver's own start-up messages land here (user output is captured
    // inside); keep a short tail for error reports.
    m_stderrTail.append(m_process->readAllStandardError());
    if (m_stderrTail.size() > kStderrTailBytes)
        m_stderrTail = m_stderrTail.right(kStderrTailBytes);
}

void LocalSandboxProcess::handleFrame(const QByteArray &payload) {
    if (m_pendingHeader) {
        m_pendingStreams << payload;
        if (m_pendingStreams.size() < expectedRawFrames(*m_pendingHeader))
            return;
        const QJsonObject header = *std::exchange(m_pendingHeader, std::nullopt);
        const QString op = header.value(QStringLiteral("op")).toString();
        if (op == QLatin1String("fs_result")) {
            finishFileRequest(header, m_pendingStreams.value(0));
        } else if (op == QLatin1String("result")) {
            finishRun(header);
        } else if (op == QLatin1String("output")) {
            deliverLiveOutput(header);
        } else if (m_state == State::Running &&
                   header.value(QStringLiteral("id")).toInteger() == m_runId) {
            ExecutionResult partial;
            applyOutput(header, partial);
            m_partial = std::move(partial);
        }
        m_pendingStreams.clear();
        return;
    }
    const std::optional<QJsonObject> frame = m_codec.parseObject(payload);
    if (!frame) {
        qCWarning(lcLocalSandbox) << "sandbox protocol error:" << m_codec.error();
        killTree(KillReason::Protocol);
        return;
    }
    const QString op = frame->value(QStringLiteral("op")).toString();
    if (op == QLatin1String("ready") && m_state == State::Starting) {
        m_startTimer.stop();
        readInfo(); // bwrap wrote it before starting the interpreter
        if (m_lifelineFd >= 0 && m_pid == 0) {
            onLifeline(); // the init's pid came before it made the sandbox
            if (m_state == State::Exited)
                return;
        }
        m_state = State::Ready;
        m_becameReady = true;
        openDataDir();
        m_ready.addResult(Outcome<bool>::success(true));
        m_ready.finish();
        armFileTimer(); // requests sent while it started
        return;
    }
    const bool currentRun = m_state == State::Running && m_run &&
                            frame->value(QStringLiteral("id")).toInteger() == m_runId;
    // A partial (or live output) may also arrive just after its run finished, e.g. after a
    // timeout; its output frames are then dropped.
    if ((op == QLatin1String("result") && currentRun) || op == QLatin1String("partial") ||
        op == QLatin1String("output") || op == QLatin1String("fs_result")) {
        m_pendingHeader = frame;
        m_pendingStreams.clear();
        return;
    }
    qCWarning(lcLocalSandbox) << "unexpected sandbox frame" << op;
    killTree(KillReason::Protocol);
}

qsizetype LocalSandboxProcess::expectedRawFrames(const QJsonObject &header) {
    const QString op = header.value(QStringLiteral("op")).toString();
    if (op == QLatin1String("fs_result"))
        return 1;
    // A result: stdout, stderr, then one frame per image.
    return 2 + header.value(QStringLiteral("images")).toArray().size();
}

QFuture<Outcome<LocalSandboxProcess::FileReply>>
LocalSandboxProcess::fileRequest(const QJsonObject &request, const QByteArray &payload) {
    if (!isAlive() || !hasTransport() || m_killReason != KillReason::None)
        return QtFuture::makeReadyFuture(
            Outcome<FileReply>::failure(QStringLiteral("the sandbox interpreter is not running")));
    auto promise = std::make_shared<QPromise<Outcome<FileReply>>>();
    promise->start();
    const qint64 id = ++m_fileRequestId;
    m_fileRequests.append({id, promise});
    QJsonObject frame = request;
    frame.insert(QStringLiteral("op"), QStringLiteral("fs"));
    frame.insert(QStringLiteral("id"), id);
    // Header, length and payload as three pieces: the payload (an upload, sharing the request's
    // body) is never copied whole, see flushToDriver().
    sendToDriver(LocalSandboxFrameCodec::encode(frame));
    sendToDriver(LocalSandboxFrameCodec::frameHeader(payload.size()));
    sendToDriver(payload);
    armFileTimer();
    return promise->future();
}

void LocalSandboxProcess::openDataDir() {
    if (!m_isolated || m_dataDirFd >= 0)
        return;
    // The sandbox's init sees the sandbox's mounts; its /proc root leads into its /mnt/data.
    const qint64 init = m_forked ? m_pid : namespaceInitPid();
    if (init <= 0)
        return;
    const QByteArray path = "/proc/" + QByteArray::number(init) + "/root" +
                            QFile::encodeName(BubblewrapCommand::sandboxWorkDir());
    m_dataDirFd = ::open(path.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

void LocalSandboxProcess::armFileTimer() {
    // Behind a run, a request waits for it (the run has its own limit); the clock starts when
    // the driver is free to answer. One clock for the oldest: answers come in order.
    if (m_fileRequests.isEmpty() || m_state != State::Ready || m_fileTimer.isActive() ||
        m_options.fileTimeoutMs <= 0)
        return;
    m_fileTimer.start(m_options.fileTimeoutMs);
}

void LocalSandboxProcess::finishFileRequest(const QJsonObject &header, const QByteArray &data) {
    const qint64 id = header.value(QStringLiteral("id")).toInteger();
    if (m_fileRequests.isEmpty() || m_fileRequests.first().first != id) {
        qCWarning(lcLocalSandbox) << "unexpected file reply" << id;
        killTree(KillReason::Protocol);
        return;
    }
    const auto promise = m_fileRequests.takeFirst().second;
    m_fileTimer.stop();
    armFileTimer(); // the next one's turn
    if (header.value(QStringLiteral("ok")).toBool())
        promise->addResult(Outcome<FileReply>::success(FileReply{header, data}));
    else
        promise->addResult(
            Outcome<FileReply>::failure(header.value(QStringLiteral("error")).toString()));
    promise->finish();
}

void LocalSandboxProcess::applyOutput(const QJsonObject &header, ExecutionResult &result) {
    result.stdoutText = QString::fromUtf8(m_pendingStreams.at(0));
    result.stderrText = QString::fromUtf8(m_pendingStreams.at(1));
    result.stdoutTruncated = header.value(QStringLiteral("stdout_truncated")).toBool();
    result.stderrTruncated = header.value(QStringLiteral("stderr_truncated")).toBool();
    // The cut is the model's to know, not part of what the program wrote (the client's logs).
    for (const char *stream : {"stdout", "stderr"}) {
        const QString name = QLatin1String(stream);
        const qint64 dropped = header.value(name + QStringLiteral("_dropped")).toInteger();
        if (dropped > 0)
            result.notes.append(
                QStringLiteral("[loopscope] %1 truncated: %2 more bytes not shown; the limit is "
                               "%3 bytes")
                    .arg(name)
                    .arg(dropped)
                    .arg(header.value(name + QStringLiteral("_cap")).toInteger()));
    }
}

void LocalSandboxProcess::deliverLiveOutput(const QJsonObject &header) {
    if (m_state != State::Running || !m_liveSink ||
        header.value(QStringLiteral("id")).toInteger() != m_runId)
        return;
    const bool capped = header.value(QStringLiteral("capped")).toBool();
    const QString streams[2] = {QStringLiteral("stdout"), QStringLiteral("stderr")};
    QString texts[2];
    for (int i = 0; i < 2; ++i)
        texts[i] = m_liveDecoders[i].decode(m_pendingStreams.at(i));
    if (capped) {
        // The driver stopped streaming this run: say so where the output ended.
        texts[texts[1].isEmpty() ? 0 : 1] += SandboxOutputCoalescer::capNotice(liveCapBytes());
    }
    // The sink may reach far (events, the window); it must not find this object gone after.
    const QPointer<LocalSandboxProcess> self(this);
    const SandboxOutputSink sink = m_liveSink;
    for (int i = 0; i < 2 && self; ++i) {
        if (!texts[i].isEmpty())
            sink(streams[i], texts[i]);
    }
}

void LocalSandboxProcess::finishRun(const QJsonObject &header) {
    m_runTimer.stop();
    m_interruptTimer.stop();
    ExecutionResult result;
    applyOutput(header, result);
    const QJsonValue error = header.value(QStringLiteral("error"));
    if (error.isObject()) {
        const QJsonObject e = error.toObject();
        result.error = ExecutionError{e.value(QStringLiteral("name")).toString(),
                                      e.value(QStringLiteral("value")).toString(),
                                      e.value(QStringLiteral("traceback")).toString()};
    }
    result.durationMs = static_cast<double>(m_runClock.nsecsElapsed()) / 1e6;
    const QJsonArray images = header.value(QStringLiteral("images")).toArray();
    for (qsizetype i = 0; i < images.size() && i + 2 < m_pendingStreams.size(); ++i) {
        const QJsonObject image = images.at(i).toObject();
        result.images.append(SandboxImage{image.value(QStringLiteral("name")).toString(),
                                          image.value(QStringLiteral("mime")).toString(),
                                          m_pendingStreams.at(i + 2)});
    }
    for (const QJsonValue &note : header.value(QStringLiteral("notes")).toArray())
        result.notes.append(note.toString());
    m_partial.reset();
    m_liveSink = {};
    m_state = State::Ready;
    armFileTimer(); // requests that waited behind this run
    auto run = std::move(m_run);
    run->addResult(Outcome<ExecutionResult>::success(std::move(result)));
    run->finish();
}

QString LocalSandboxProcess::describeExit(int exitCode, bool crashed) const {
    QString text;
    if (m_killReason == KillReason::Requested)
        text = QStringLiteral("the sandbox was deleted");
    else if (m_killReason == KillReason::Timeout)
        text = QStringLiteral("the run timed out after %1 s").arg(m_runTimeoutMs / 1000.0);
    else if (m_killReason == KillReason::Interrupted)
        text = QStringLiteral("the run was interrupted and did not stop");
    else if (m_killReason == KillReason::FileTimeout)
        text = QStringLiteral("the sandbox did not answer a file request within %1 s")
                   .arg(m_options.fileTimeoutMs / 1000.0);
    else if (m_killReason == KillReason::StartTimeout)
        text = QStringLiteral("the interpreter was not ready within %1 ms")
                   .arg(m_options.startTimeoutMs);
    else if (m_killReason == KillReason::Protocol)
        text = QStringLiteral("the interpreter broke the sandbox protocol (%1)")
                   .arg(m_codec.failed() ? m_codec.error() : QStringLiteral("unexpected frame"));
    else if (crashed)
        text = QStringLiteral("the interpreter was killed");
    else if (exitCode > 128) {
        // bwrap reports a child killed by signal N as exit status 128 + N.
        const int sig = exitCode - 128;
        text = QStringLiteral("the interpreter was killed by signal %1 (%2)")
                   .arg(sig)
                   .arg(QLatin1String(signalName(sig)));
        if (sig == SIGXCPU || sig == SIGKILL)
            text += QStringLiteral("; the CPU time limit is %1 s and the memory limit %2 MiB")
                        .arg(m_options.cpuLimitSeconds)
                        .arg(m_options.memoryLimitBytes / LocalSandboxOptions::kMiB);
    } else {
        text = QStringLiteral("the interpreter exited with status %1").arg(exitCode);
    }
    const QString tail = QString::fromUtf8(m_stderrTail).trimmed();
    if (!tail.isEmpty() && m_killReason == KillReason::None)
        text += QStringLiteral(": ") + tail;
    return text;
}

void LocalSandboxProcess::onFinished(int exitCode, bool crashed) {
    markExited(describeExit(exitCode, crashed));
}

void LocalSandboxProcess::onFailedToStart() {
    markExited(QStringLiteral("could not start %1: %2")
                   .arg(m_process->program(), m_process->errorString()));
}

void LocalSandboxProcess::markExited(const QString &reason, bool notify) {
    if (m_state == State::Exited)
        return;
    const State previous = m_state;
    m_state = State::Exited;
    m_exitReason = reason;
    m_startTimer.stop();
    m_runTimer.stop();
    m_interruptTimer.stop();
    m_fileTimer.stop();
    m_reapTimer.stop();
    m_hostWorkDir.reset(); // unisolated mode: remove the work dir with the interpreter
    m_pendingHeader.reset();
    m_pendingStreams.clear();
    m_outgoing.clear(); // an upload's body among them
    m_outgoingOffset = 0;
    for (const auto &[id, promise] : std::exchange(m_fileRequests, {})) {
        promise->addResult(Outcome<FileReply>::failure(
            QStringLiteral("the sandbox interpreter stopped: ") + reason));
        promise->finish();
    }

    if (previous == State::Starting || previous == State::NotStarted) {
        if (previous == State::NotStarted)
            m_ready.start();
        m_ready.addResult(Outcome<bool>::failure(
            QStringLiteral("the sandbox interpreter failed to start: ") + reason));
        m_ready.finish();
    }
    m_liveSink = {};
    if (m_run) {
        auto run = std::move(m_run);
        if (m_killReason == KillReason::Requested) {
            run->addResult(Outcome<ExecutionResult>::failure(
                QStringLiteral("the sandbox was deleted while code was running")));
        } else {
            // What the run printed until shortly before its end, when the driver could say.
            ExecutionResult result =
                std::exchange(m_partial, std::nullopt).value_or(ExecutionResult{});
            result.durationMs = static_cast<double>(m_runClock.nsecsElapsed()) / 1e6;
            if (m_killReason == KillReason::Interrupted) {
                result.error = ExecutionError{
                    QStringLiteral("KeyboardInterrupt"),
                    QStringLiteral("The run was interrupted and did not stop, so the interpreter "
                                   "was stopped. The next run starts a fresh interpreter; "
                                   "variables and imports from earlier runs are gone, the files "
                                   "in /mnt/data are carried over."),
                    {}};
            } else if (m_killReason == KillReason::Timeout) {
                result.timedOut = true;
                result.error = ExecutionError{
                    QStringLiteral("TimeoutError"),
                    QStringLiteral("Execution timed out after %1 s: the interpreter was stopped. "
                                   "The next run starts a fresh interpreter; variables and "
                                   "imports from earlier runs are gone, the files in /mnt/data "
                                   "are carried over.")
                        .arg(m_runTimeoutMs / 1000.0),
                    {}};
            } else {
                result.error = ExecutionError{
                    QStringLiteral("InterpreterExited"),
                    reason + QStringLiteral(". The next run starts a fresh interpreter; "
                                            "variables and imports from earlier runs are "
                                            "gone, the files in /mnt/data are carried over."),
                    {}};
            }
            run->addResult(Outcome<ExecutionResult>::success(std::move(result)));
        }
        run->finish();
    }
    if (notify && previous != State::NotStarted)
        emit exited();
}

} // namespace loopscope
