#include "sandbox/local/bubblewrapcommand.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace loopscope {

namespace {

// Reads a 4-byte big-endian length and that many bytes of driver, then runs it in a namespace of
// its own: "M" + the driver compiled and marshalled once by the same interpreter outside the
// sandbox (SandboxDriverPayload::forPython; compiling the source costs every start several
// ms), or "S" + its source. Kept tiny: it is visible in `ps`.
const char kBootstrap[] = "import os,marshal\n"
                          "def r(n):\n"
                          " b=b''\n"
                          " while len(b)<n:\n"
                          "  c=os.read(0,n-len(b))\n"
                          "  if not c:raise SystemExit(3)\n"
                          "  b+=c\n"
                          " return b\n"
                          "d=r(int.from_bytes(r(4),'big'))\n"
                          "exec(marshal.loads(d[1:]) if d[:1]==b'M' else "
                          "compile(d[1:],'<loopscope-driver>','exec'),"
                          "{'__name__':'__loopscope_driver__'})";

} // namespace

QString BubblewrapCommand::processMarker() {
    return QStringLiteral("loopscope-sandbox:") +
           QString::number(QCoreApplication::applicationPid());
}

QStringList BubblewrapCommand::sandboxEnvironment(const QString &home, const QString &tmpDir) {
    return {
        QStringLiteral("PATH=/usr/local/bin:/usr/bin:/bin"),
        QStringLiteral("HOME=") + home,
        QStringLiteral("LANG=C.UTF-8"),
        QStringLiteral("TMPDIR=") + tmpDir,
        // Plotting libraries must not look for a display or write config into the work dir.
        QStringLiteral("MPLBACKEND=Agg"),
        QStringLiteral("MPLCONFIGDIR=") + tmpDir + QStringLiteral("/.matplotlib"),
        QStringLiteral("XDG_CACHE_HOME=") + tmpDir + QStringLiteral("/.cache"),
        // BLAS would start one thread per core; threads count against RLIMIT_NPROC.
        QStringLiteral("OPENBLAS_NUM_THREADS=4"),
        QStringLiteral("OMP_NUM_THREADS=4"),
    };
}

QStringList BubblewrapCommand::pythonArguments(const LocalSandboxOptions &options) {
    // -S: no site module at start-up (its .pth files cost every start several ms); the driver
    // puts the site-packages directories on sys.path itself and adds exit/quit/help.
    return {options.pythonPath,
            QStringLiteral("-I"),
            QStringLiteral("-S"),
            QStringLiteral("-c"),
            QString::fromLatin1(kBootstrap),
            processMarker()};
}

QStringList BubblewrapCommand::bwrapArguments(const LocalSandboxOptions &options, int infoFd) {
    return arguments(options, Kind::Sandbox, infoFd);
}

QStringList BubblewrapCommand::zygoteArguments(const LocalSandboxOptions &options) {
    return arguments(options, Kind::Zygote, -1);
}

QStringList BubblewrapCommand::arguments(const LocalSandboxOptions &options, Kind kind,
                                         int infoFd) {
    const bool zygote = kind == Kind::Zygote;
    QStringList args{
        // Every namespace, including the network: only the sandbox's own loopback remains.
        QStringLiteral("--unshare-all"),
        QStringLiteral("--unshare-user"),
    };
    // No --disable-userns for either: the zygote's sandboxes make user namespaces of their own,
    // and a sandbox of its own keeps the capabilities below until its driver has put nr_inodes on
    // its tmpfs (bwrap 0.8.0 gives a tmpfs only a size, and --disable-userns would move the
    // program into a nested user namespace without them); the driver then forbids user
    // namespaces below its own, drops every capability and loads the seccomp filter before any
    // code runs (resources/sandbox_driver.py, _confine).
    args << QStringList{
        QStringLiteral("--die-with-parent"),
        QStringLiteral("--new-session"),
        QStringLiteral("--cap-drop"),
        QStringLiteral("ALL"),
    };
    if (!zygote)
        for (const char *cap : kDriverConfineCaps)
            args << QStringLiteral("--cap-add") << QString::fromLatin1(cap);
    args << QStringList{
        QStringLiteral("--hostname"),
        QStringLiteral("sandbox"),
        // A read-only minimal system tree: /usr and the few /etc files the loader and Python
        // need. No /home, /root, /run, /var or host /proc.
        QStringLiteral("--ro-bind"),
        QStringLiteral("/usr"),
        QStringLiteral("/usr"),
        QStringLiteral("--symlink"),
        QStringLiteral("usr/lib"),
        QStringLiteral("/lib"),
        QStringLiteral("--symlink"),
        QStringLiteral("usr/lib64"),
        QStringLiteral("/lib64"),
        QStringLiteral("--symlink"),
        QStringLiteral("usr/bin"),
        QStringLiteral("/bin"),
        QStringLiteral("--symlink"),
        QStringLiteral("usr/sbin"),
        QStringLiteral("/sbin"),
    };
    const QStringList etcFiles{QStringLiteral("/etc/alternatives"),
                               QStringLiteral("/etc/ld.so.cache"), QStringLiteral("/etc/localtime"),
                               QStringLiteral("/etc/fonts"),
                               // Debian's matplotlib reads its defaults from here.
                               QStringLiteral("/etc/matplotlibrc")};
    for (const QString &path : etcFiles)
        args << QStringLiteral("--ro-bind-try") << path << path;
    args << QStringLiteral("--proc") << QStringLiteral("/proc");
    if (zygote) {
        args << QStringLiteral("--dev") << QStringLiteral("/dev");
    } else {
        // What --dev makes, without its devpts (so no pseudo-terminals): for a devpts bwrap maps
        // root in a first user namespace and runs the program in a second, nested one, where the
        // driver's remounts are refused.
        args << QStringLiteral("--tmpfs") << QStringLiteral("/dev");
        for (const char *node : {"null", "zero", "full", "random", "urandom", "tty"}) {
            const QString path = QStringLiteral("/dev/") + QLatin1String(node);
            args << QStringLiteral("--dev-bind") << path << path;
        }
        args << QStringLiteral("--symlink") << QStringLiteral("/proc/self/fd")
             << QStringLiteral("/dev/fd");
        int fd = 0;
        for (const char *stream : {"stdin", "stdout", "stderr"})
            args << QStringLiteral("--symlink") << QStringLiteral("/proc/self/fd/%1").arg(fd++)
                 << QStringLiteral("/dev/") + QLatin1String(stream);
    }
    if (zygote) {
        // Each sandbox mounts its own capped tmpfs on these (core/sandbox/local/zygote).
        args << QStringLiteral("--remount-ro") << QStringLiteral("/dev");
        args << QStringLiteral("--dir") << QStringLiteral("/tmp");
        args << QStringLiteral("--dir") << sandboxWorkDir();
        // The zygote's C extension, copied by bwrap from a descriptor (no host path inside),
        // under /tmp: every sandbox's own tmpfs on /tmp covers it.
        args << QStringLiteral("--perms") << QStringLiteral("0444")
             << QStringLiteral("--ro-bind-data") << QString::number(kZygoteModuleFd)
             << QString::fromLatin1(kZygoteModulePath);
    } else {
        // bwrap's /dev is a writable, unbounded tmpfs: give shared memory (multiprocessing needs
        // it) its own capped tmpfs and seal the rest.
        args << QStringLiteral("--size") << QString::number(options.tmpDirBytes)
             << QStringLiteral("--tmpfs") << QStringLiteral("/dev/shm");
        args << QStringLiteral("--remount-ro") << QStringLiteral("/dev");
        // Size-capped private tmpfs for /tmp and the work dir; both vanish with the sandbox.
        args << QStringLiteral("--size") << QString::number(options.tmpDirBytes)
             << QStringLiteral("--tmpfs") << QStringLiteral("/tmp");
        args << QStringLiteral("--size") << QString::number(options.workDirBytes)
             << QStringLiteral("--tmpfs") << sandboxWorkDir();
    }
    // bwrap's root is a writable, unbounded tmpfs: seal it so only /mnt/data and /tmp take writes.
    args << QStringLiteral("--remount-ro") << QStringLiteral("/");
    args << QStringLiteral("--chdir") << sandboxWorkDir();
    if (infoFd >= 0)
        args << QStringLiteral("--info-fd") << QString::number(infoFd);
    args << QStringLiteral("--clearenv");
    // HOME in /tmp: dotfiles that tools write must not turn up as container files in /mnt/data.
    for (const QString &entry :
         sandboxEnvironment(QStringLiteral("/tmp"), QStringLiteral("/tmp"))) {
        const qsizetype eq = entry.indexOf(QLatin1Char('='));
        args << QStringLiteral("--setenv") << entry.left(eq) << entry.mid(eq + 1);
    }
    args << QStringLiteral("--");
    args << pythonArguments(options);
    return args;
}

LocalSandboxLaunch BubblewrapCommand::isolated(const LocalSandboxOptions &options, int infoFd) {
    LocalSandboxLaunch launch;
    launch.program = options.bwrapPath;
    launch.arguments = bwrapArguments(options, infoFd);
    // bwrap clears the environment for the sandbox itself; bwrap needs nothing from ours either.
    launch.environment = {QStringLiteral("PATH=/usr/bin:/bin")};
    launch.sandboxWorkDir = sandboxWorkDir();
    return launch;
}

LocalSandboxLaunch BubblewrapCommand::unisolated(const LocalSandboxOptions &options,
                                                 const QString &hostWorkDir) {
    LocalSandboxLaunch launch;
    QStringList python = pythonArguments(options);
    launch.program = python.takeFirst();
    launch.arguments = python;
    launch.environment = sandboxEnvironment(hostWorkDir, hostWorkDir);
    launch.workingDirectory = hostWorkDir;
    launch.sandboxWorkDir = hostWorkDir;
    return launch;
}

} // namespace loopscope
