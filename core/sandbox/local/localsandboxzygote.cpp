#include "sandbox/local/localsandboxzygote.h"

#include "sandbox/local/bubblewrapcommand.h"
#include "sandbox/local/localsandboxframecodec.h"
#include "sandbox/local/localsandboxprocess.h"
#include "sandbox/local/localsandboxseccomp.h"
#include "sandbox/local/sandboxchildsetup.h"
#include "sandbox/local/sandboxdriverpayload.h"
#include "sandbox/sandboxtypes.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QProcess>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace loopscope {

Q_DECLARE_LOGGING_CATEGORY(lcLocalSandbox)

namespace {

constexpr qsizetype kStderrKeepBytes = 4096;

bool writeAll(int fd, const QByteArray &bytes) {
    qsizetype done = 0;
    while (done < bytes.size()) {
        const ssize_t n =
            ::send(fd, bytes.constData() + done, size_t(bytes.size() - done), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += n;
    }
    return true;
}

void closeBoth(int fds[2]) {
    ::close(fds[0]);
    ::close(fds[1]);
}

} // namespace

LocalSandboxZygote::LocalSandboxZygote(const LocalSandboxOptions &options, QObject *parent)
    : QObject(parent)
    , m_options(options) {}

LocalSandboxZygote::~LocalSandboxZygote() {
    stop();
}

bool LocalSandboxZygote::isRunning() const {
    return m_process && m_process->state() != QProcess::NotRunning && m_controlFd >= 0;
}

qint64 LocalSandboxZygote::processId() const {
    return isRunning() ? m_process->processId() : 0;
}

QString LocalSandboxZygote::modulePath(const LocalSandboxOptions &options) {
    if (!options.zygoteModulePath.isEmpty())
        return options.zygoteModulePath;
    const QString appDir = QCoreApplication::applicationDirPath();
    const QString name = QStringLiteral("/_loopscope_zygote.abi3.so");
    const QString beside = appDir + name;
    if (QFileInfo::exists(beside))
        return beside;
    // Installed: <prefix>/bin/loopscope and the module in <prefix>/lib/<triplet>/loopscope
    // (relative, so a package unpacked anywhere finds its own).
    const QString installed =
        QDir::cleanPath(appDir + QStringLiteral("/" LOOPSCOPE_ZYGOTE_MODULE_INSTALL_DIR) + name);
    if (QFileInfo::exists(installed))
        return installed;
    // Only a binary of this build tree (the tests) takes the build's own copy; an installed one
    // must find its package's.
    if (appDir.startsWith(QStringLiteral(LOOPSCOPE_BUILD_DIR "/")))
        return QStringLiteral(LOOPSCOPE_ZYGOTE_MODULE_BUILD_PATH);
    return installed;
}

int LocalSandboxZygote::openModule() {
    const QString path = modulePath(m_options);
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        m_lastError =
            QStringLiteral("cannot read %1: %2").arg(path, QString::fromLocal8Bit(strerror(errno)));
    return fd;
}

bool LocalSandboxZygote::start() {
    stop();
    const int module = openModule();
    if (module < 0)
        return false;
    int control[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0) {
        m_lastError = QStringLiteral("socketpair: ") + QString::fromLocal8Bit(strerror(errno));
        ::close(module);
        return false;
    }
    m_controlFd = control[0];
    const int childEnd = control[1];
    m_process = new QProcess(this);
    m_process->setProgram(m_options.bwrapPath);
    m_process->setArguments(BubblewrapCommand::zygoteArguments(m_options));
    QProcessEnvironment env;
    env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
    m_process->setProcessEnvironment(env);
    m_process->setStandardOutputFile(QProcess::nullDevice());
    const SandboxChildSetup setup = SandboxChildSetup::fromOptions(m_options, 0, false);
    m_process->setChildProcessModifier([=] {
        setup.apply();
        ::dup2(childEnd, 0); // the zygote's fd 0 is the control socket (dup2 clears CLOEXEC)
        ::dup2(module, BubblewrapCommand::kZygoteModuleFd); // bwrap copies it in
        LocalSandboxProcess::markInheritedCloseOnExec(BubblewrapCommand::kZygoteModuleFd,
                                                      setup.fdLimit, true);
    });
    connect(m_process, &QProcess::readyReadStandardError, this, &LocalSandboxZygote::onStderr);
    connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        qCInfo(lcLocalSandbox).noquote()
            << QStringLiteral("sandbox zygote exited (%1 %2)%3")
                   .arg(status == QProcess::CrashExit ? QStringLiteral("signal")
                                                      : QStringLiteral("status"))
                   .arg(code)
                   .arg(m_lastError.isEmpty() ? QString() : QStringLiteral(": ") + m_lastError);
        if (m_controlFd >= 0) {
            ::close(m_controlFd);
            m_controlFd = -1;
        }
    });
    m_process->start(QIODevice::ReadOnly);
    ::close(childEnd);
    ::close(module);
    if (!m_process->waitForStarted(m_options.startTimeoutMs)) {
        m_lastError = QStringLiteral("could not start %1: %2")
                          .arg(m_options.bwrapPath, m_process->errorString());
        stop();
        return false;
    }
    // The bootstrap runs the first frame (the zygote); the zygote reads the other three.
    const QJsonObject config{
        {QStringLiteral("module"), QString::fromLatin1(BubblewrapCommand::kZygoteModulePath)},
        {QStringLiteral("tmp_bytes"), m_options.tmpDirBytes},
        {QStringLiteral("workdir_bytes"), m_options.workDirBytes},
        {QStringLiteral("tmp_inodes"), qMax(1, m_options.tmpDirInodes)},
        {QStringLiteral("workdir_inodes"), qMax(1, m_options.workDirInodes)},
        {QStringLiteral("workdir"), BubblewrapCommand::sandboxWorkDir()},
        {QStringLiteral("cpu_seconds"), m_options.cpuLimitSeconds},
    };
    const QByteArray seccomp = m_options.seccompFilter && LocalSandboxSeccomp::supported()
                                   ? LocalSandboxSeccomp::program()
                                   : QByteArray();
    const QByteArray frames =
        LocalSandboxFrameCodec::encodeRaw("S" + SandboxDriverPayload::zygoteSource()) +
        LocalSandboxFrameCodec::encode(config) +
        LocalSandboxFrameCodec::encodeRaw(
            SandboxDriverPayload::forPython(m_options.pythonPath).frame) +
        LocalSandboxFrameCodec::encodeRaw(seccomp);
    if (!writeAll(m_controlFd, frames)) {
        m_lastError = QStringLiteral("the zygote went away while starting");
        stop();
        return false;
    }
    qCInfo(lcLocalSandbox) << "sandbox zygote started, pid" << m_process->processId();
    return true;
}

void LocalSandboxZygote::stop() {
    if (m_controlFd >= 0) {
        ::close(m_controlFd); // the zygote exits on EOF; its sandboxes follow
        m_controlFd = -1;
    }
    if (!m_process)
        return;
    m_process->disconnect(this);
    if (m_process->state() != QProcess::NotRunning) {
        // The outer bwrap leads its own process group; the rest dies with it (die-with-parent).
        if (const qint64 pid = m_process->processId(); pid > 0)
            ::kill(-static_cast<pid_t>(pid), SIGKILL);
        m_process->kill();
        m_process->waitForFinished(5000);
    }
    delete m_process;
    m_process = nullptr;
}

void LocalSandboxZygote::onStderr() {
    m_stderr.append(m_process->readAllStandardError());
    qsizetype newline = -1;
    while ((newline = m_stderr.indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(m_stderr.left(newline)).trimmed();
        m_stderr.remove(0, newline + 1);
        if (line.isEmpty())
            continue;
        m_lastError = line;
        qCWarning(lcLocalSandbox).noquote() << line;
    }
    if (m_stderr.size() > kStderrKeepBytes)
        m_stderr = m_stderr.right(kStderrKeepBytes);
}

Outcome<LocalSandboxZygote::Spawned> LocalSandboxZygote::spawn(int nice) {
    // Twice at most: a zygote that died since the last spawn is noticed by the send failing.
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (!isRunning() && !start())
            return Outcome<Spawned>::failure(QStringLiteral("the sandbox zygote did not start: ") +
                                             m_lastError);
        int channel[2];
        int lifeline[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0)
            return Outcome<Spawned>::failure(QStringLiteral("socketpair failed"));
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, lifeline) != 0) {
            closeBoth(channel);
            return Outcome<Spawned>::failure(QStringLiteral("socketpair failed"));
        }
        // Before the sandbox's init exists: credentials are attached only while this is set.
        const int one = 1;
        ::setsockopt(lifeline[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
        ::fcntl(lifeline[0], F_SETFL, ::fcntl(lifeline[0], F_GETFL) | O_NONBLOCK);

        const QByteArray message = "S" + QByteArray::number(qMax(0, nice));
        iovec iov{const_cast<char *>(message.constData()), size_t(message.size())};
        alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(2 * sizeof(int));
        const int passed[2] = {channel[1], lifeline[1]};
        std::memcpy(CMSG_DATA(cmsg), passed, sizeof passed);
        ssize_t sent = -1;
        do {
            sent = ::sendmsg(m_controlFd, &msg, MSG_NOSIGNAL);
        } while (sent < 0 && errno == EINTR);
        ::close(channel[1]);
        ::close(lifeline[1]);
        if (sent == message.size())
            return Outcome<Spawned>::success(Spawned{channel[0], lifeline[0]});
        ::close(channel[0]);
        ::close(lifeline[0]);
        m_lastError = QStringLiteral("the zygote stopped taking requests");
        stop();
    }
    return Outcome<Spawned>::failure(QStringLiteral("the sandbox zygote: ") + m_lastError);
}

LocalSandboxZygote::LifelineRead LocalSandboxZygote::readLifeline(int lifelineFd) {
    LifelineRead read;
    for (;;) {
        char buffer[256];
        iovec iov{buffer, sizeof buffer};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(lifelineFd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            // EAGAIN: nothing more now; anything else: the socket is unusable, as good as closed.
            read.closed = errno != EAGAIN && errno != EWOULDBLOCK;
            return read;
        }
        if (n == 0) {
            read.closed = true;
            return read;
        }
        const bool fromInit = n >= 1 && buffer[0] == 'P';
        for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (fromInit && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                ucred cred{};
                std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
                read.initPid = cred.pid;
            }
        }
        read.data.append(buffer, n);
    }
}

} // namespace loopscope
