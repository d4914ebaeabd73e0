#pragma once

#include <QString>
#include <QtGlobal>

#include <functional>

namespace loopscope {

// Configuration of LocalPythonBackend, set once at construction (the proxy's config file and the
// CLI's --exec-timeout feed it). Defaults are safe for a developer machine running ~20 sandboxes.
struct LocalSandboxOptions {
    static constexpr qint64 kMiB = 1024 * 1024;

    // Absolute paths on purpose: a python3 found first on PATH may be a slow shim (platform.md).
    QString pythonPath = QStringLiteral("/usr/bin/python3");
    QString bwrapPath = QStringLiteral("/usr/bin/bwrap");

    int timeoutMs = 30000; // wall clock per run; the interpreter is killed when it passes (0: none)
    // Wall clock per file operation (list / read / write / delete), counted from when the driver
    // can serve it (after the run ahead of it): a driver that has not answered by then is
    // killed like a timed-out run. Code can tamper with its own interpreter; this bound holds
    // anyway.
    int fileTimeoutMs = 15000;
    // The driver's own bounds on a listing of /mnt/data (entries, wall clock); well inside
    // fileTimeoutMs. The entry cap is above the work dir's inode cap, so a listing that is not
    // cut by time names every file.
    int fileListMaxEntries = 10000;
    int fileListMs = 5000;
    int startTimeoutMs = 15000; // an interpreter that is not ready by then counts as failed

    qint64 stdoutCapBytes = 1 * kMiB; // enforced inside the sandbox; the cut is a note
    qint64 stderrCapBytes = 1 * kMiB;

    // Live output of a run (SandboxBackend::run's sink): the driver sends what the code prints
    // once the oldest unsent byte is liveOutputIntervalMs old or liveOutputChunkBytes piled up,
    // and stops after liveOutputCapBytes per run (0: no live output); the result keeps it all.
    int liveOutputIntervalMs = 50;
    int liveOutputChunkBytes = 4096;
    qint64 liveOutputCapBytes = 256 * 1024;

    // Resource limits (setrlimit) of every process in the sandbox.
    qint64 memoryLimitBytes = 1024 * kMiB; // RLIMIT_AS: allocations beyond it raise MemoryError
    int cpuLimitSeconds = 600;             // RLIMIT_CPU per process, cumulative over all runs
    int maxProcesses = 64;                 // RLIMIT_NPROC (threads count), per sandbox
    qint64 maxFileBytes = 256 * kMiB;      // RLIMIT_FSIZE
    int maxOpenFiles = 256;                // RLIMIT_NOFILE
    qint64 workDirBytes = 256 * kMiB;      // size of the /mnt/data tmpfs
    qint64 tmpDirBytes = 64 * kMiB;        // size of the /tmp tmpfs (and of /dev/shm)
    // Inodes (files, directories, symlinks) per tmpfs: `size=` does not bound empty files, and
    // every inode is unreclaimable kernel memory (~1 KiB with its dentry) charged to no one.
    int workDirInodes = 8192;
    int tmpDirInodes = 4096; // /tmp and /dev/shm each

    // Pictures a run returns (figures shown or left open, PIL show()); beyond: a note in stdout.
    qint64 imageMaxBytes = 4 * kMiB;
    int maxImagesPerRun = 8;
    // Largest container file read from or written to /mnt/data in one piece.
    qint64 fileTransferBytes = 32 * kMiB;

    // Install LocalSandboxSeccomp's filter (bubblewrap --seccomp) in isolated sandboxes.
    bool seccompFilter = true;

    // Isolated sandboxes are forked by one pre-initialised interpreter (LocalSandboxZygote: ~7-8
    // ms of CPU per sandbox instead of ~17 for a bwrap and interpreter of its own). Where a forked
    // sandbox cannot be set up (nested user namespaces refused, the zygote's extension missing),
    // the backend goes back to one bwrap per sandbox by itself.
    bool zygote = true;
    // The zygote's C extension (core/sandbox/local/zygote); empty: beside the app's binary, else
    // where it is installed, else where this build put it (LocalSandboxZygote::modulePath).
    QString zygoteModulePath;

    int poolSize = 2; // pre-started interpreters; 0 disables the pool
    // While create() has to wait for an interpreter (a burst), the pool grows by one per wait up
    // to poolMaxSize; after poolIdleMs without such a wait it shrinks back to poolSize, killing
    // surplus idle interpreters (an idle pooled interpreter costs memory, no CPU).
    int poolMaxSize = 6;
    int poolIdleMs = 30000;
    // Nice value pooled interpreters start with, so refills do not compete with the runs of
    // handed-out sandboxes. At hand-off the sandbox's processes are set back to nice 0 where the
    // system allows it (CAP_SYS_NICE, e.g. as root, or RLIMIT_NICE); elsewhere they keep it.
    int poolNice = 10;

    // When the app runs as root, sandboxes run as this unprivileged uid/gid so that process
    // limits hold (RLIMIT_NPROC is ignored for uid 0).
    uint sandboxUid = 65534;
    uint sandboxGid = 65534;

    // Without bubblewrap (or user namespaces) sandboxes are refused unless this is set; then
    // the interpreter runs directly on the host with only rlimits, a cleared environment and a
    // private work dir, and every log line and selfTest() warning says so.
    bool allowUnisolated = false;

    // Test seam: runs on the self-test's worker thread before its probes (a test holds the
    // probe there to show that nothing else waits for it). Unset in the app.
    std::function<void()> beforeSelfTestProbe;
    // Test seam: runs on the driver compile's thread before it compiles
    // (SandboxDriverPayload::prepare; only when this backend's call starts the compile). Unset
    // in the app.
    std::function<void()> beforeDriverCompile;
    // Test seam: runs on the pool's spawn thread after a pooled interpreter was started there
    // and before it is handed back to the backend's thread (a test holds a refill in flight
    // there). Unset in the app.
    std::function<void()> afterPoolSpawn;
};

} // namespace loopscope
