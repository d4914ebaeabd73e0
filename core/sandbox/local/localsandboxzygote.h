#pragma once

#include "common/outcome.h"
#include "sandbox/local/localsandboxoptions.h"

#include <QByteArray>
#include <QObject>
#include <QString>

class QProcess;

namespace loopscope {

// One pre-initialised interpreter inside one bubblewrap (resources/sandbox_zygote.py, forking in
// C through its extension core/sandbox/local/zygote) that forks a sandbox per spawn(), far cheaper
// than a bwrap and interpreter of its own (docs/benchmarks.md, "The native zygote"). Each
// sandbox makes its own user, mount, PID, network, IPC, UTS and cgroup namespaces, size-capped
// tmpfs, capabilities, no_new_privs and seccomp filter, as bwrap does for a sandbox started on
// its own (the escape suite runs on both). The zygote never runs user code. It starts on the
// first spawn() and again after it died; it dies with this object and with the app (bwrap
// --die-with-parent), its sandboxes with it. Lives on the backend's thread.
class LocalSandboxZygote : public QObject {
    Q_OBJECT
public:
    // A forked sandbox as the proxy holds it: the driver's frames go over `channelFd`. On
    // `lifelineFd` the sandbox's init says b"P" (its pid comes in SCM_CREDENTIALS) and the
    // zygote b"X<wait status>\n" at the end; the zygote kills the sandbox when anything is
    // written to it or it closes. Both are connected Unix stream sockets, close-on-exec, owned
    // by the caller.
    struct Spawned {
        int channelFd = -1;
        int lifelineFd = -1;
    };

    explicit LocalSandboxZygote(const LocalSandboxOptions &options, QObject *parent = nullptr);
    ~LocalSandboxZygote() override;

    // Asks the zygote for a sandbox whose processes start at `nice`; starts the zygote first if
    // it is not running. Fails when the zygote cannot be started or has gone.
    Outcome<Spawned> spawn(int nice = 0);
    bool isRunning() const;
    // Host pid of the bwrap the zygote runs in (0 if not running); tests and diagnostics.
    qint64 processId() const;
    // The zygote's last line on stderr (a sandbox that could not be set up says why there).
    QString lastError() const { return m_lastError; }

    // What one non-blocking read of a lifeline found: the bytes, the sandbox init's host pid
    // when its b"P" came with them (SCM_CREDENTIALS, translated by the kernel into our PID
    // namespace), and whether the zygote has closed it (the sandbox is gone).
    struct LifelineRead {
        QByteArray data;
        qint64 initPid = 0;
        bool closed = false;
    };
    static LifelineRead readLifeline(int lifelineFd);

    // The zygote's C extension (LocalSandboxOptions::zygoteModulePath, else beside the app's
    // binary, else in ../lib/<triplet>/loopscope from it as installed, else, for a binary of this
    // build tree, where this build put it).
    static QString modulePath(const LocalSandboxOptions &options);

private:
    bool start();
    int openModule();
    void stop();
    void onStderr();

    LocalSandboxOptions m_options;
    QProcess *m_process = nullptr; // child of this
    int m_controlFd = -1;          // our end of the zygote's fd 0
    QByteArray m_stderr;
    QString m_lastError;
};

} // namespace loopscope
