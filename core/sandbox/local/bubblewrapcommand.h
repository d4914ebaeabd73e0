#pragma once

#include "sandbox/local/localsandboxoptions.h"
#include "sandbox/sandboxtypes.h"

#include <QString>
#include <QStringList>

namespace loopscope {

// How to start one sandbox interpreter: the program QProcess runs, its arguments and environment.
struct LocalSandboxLaunch {
    QString program;
    QStringList arguments;
    QStringList environment;  // KEY=VALUE for the started program (bwrap or python)
    QString workingDirectory; // host directory to start in (unisolated only)
    QString sandboxWorkDir;   // the work dir as user code sees it
};

// Builds the bubblewrap command line of a local sandbox (or, when isolation is explicitly
// disabled, the bare interpreter command line). Pure functions, so the policy is testable as data.
class BubblewrapCommand {
public:
    // The work dir inside the sandbox, OpenAI's /mnt/data: a private tmpfs of
    // LocalSandboxOptions::workDirBytes and the code's current directory.
    static QString sandboxWorkDir() { return sandboxDataDir(); }

    // Tag put on every sandbox command line ("loopscope-sandbox:<app pid>") so leftovers of
    // this process can be found in /proc (tests, diagnostics).
    static QString processMarker();

    // The environment user code sees: nothing from the proxy's own environment.
    static QStringList sandboxEnvironment(const QString &home, const QString &tmpDir);

    // `python3 -I -S -c <bootstrap> <marker>`; the bootstrap reads the driver (marshalled code or
    // source), length-prefixed, from stdin and runs it, so the command line stays short and the
    // driver ships in the binary.
    static QStringList pythonArguments(const LocalSandboxOptions &options);

    // bwrap arguments up to and including the interpreter command line. bwrap writes
    // {"child-pid": N}, the host pid of the sandbox's PID-namespace init, to `infoFd` (if >= 0).
    // The program keeps kDriverConfineCaps (in its own user namespace only) for its driver's
    // first step, which drops them before any code runs; the seccomp filter goes in the driver's
    // config, not to bwrap, whose filter would refuse the driver's mounts.
    static QStringList bwrapArguments(const LocalSandboxOptions &options, int infoFd = -1);
    // Remount the tmpfs with nr_inodes; write user.max_user_namespaces; drop the bounding set.
    static constexpr const char *kDriverConfineCaps[] = {"CAP_SYS_ADMIN", "CAP_SYS_RESOURCE",
                                                         "CAP_SETPCAP"};

    // bwrap arguments for the sandbox zygote (LocalSandboxZygote): the same tree, but no
    // --disable-userns, no filter and no tmpfs of its own (each sandbox it forks makes its user
    // namespace, tmpfs mounts and filter itself), and the zygote's C extension, which bwrap
    // copies from descriptor kZygoteModuleFd to kZygoteModulePath; then the interpreter.
    static QStringList zygoteArguments(const LocalSandboxOptions &options);
    static constexpr int kZygoteModuleFd = 3;
    static constexpr const char *kZygoteModulePath = "/tmp/_loopscope_zygote.abi3.so";

    static LocalSandboxLaunch isolated(const LocalSandboxOptions &options, int infoFd = -1);
    static LocalSandboxLaunch unisolated(const LocalSandboxOptions &options,
                                         const QString &hostWorkDir);

private:
    enum class Kind { Sandbox, Zygote };
    static QStringList arguments(const LocalSandboxOptions &options, Kind kind, int infoFd);
};

} // namespace loopscope
