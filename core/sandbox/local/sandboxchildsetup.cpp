#include "sandbox/local/sandboxchildsetup.h"

#include <QtGlobal>

#include <csignal>
#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace loopscope {

namespace {

void setLimit(int resource, rlim_t soft, rlim_t hard) {
    const rlimit limit{soft, hard};
    ::setrlimit(resource, &limit);
}

} // namespace

SandboxChildSetup SandboxChildSetup::fromOptions(const LocalSandboxOptions &options, int nice,
                                                 bool cpuLimit) {
    SandboxChildSetup setup;
    setup.dropPrivileges = ::geteuid() == 0;
    setup.uid = options.sandboxUid;
    setup.gid = options.sandboxGid;
    setup.nice = nice;
    setup.memory = static_cast<rlim_t>(options.memoryLimitBytes);
    setup.cpu = cpuLimit ? static_cast<rlim_t>(options.cpuLimitSeconds) : 0;
    setup.fileSize = static_cast<rlim_t>(options.maxFileBytes);
    setup.openFiles = static_cast<rlim_t>(options.maxOpenFiles);
    // Read before the fork: the child must not allocate or read files it cannot trust.
    rlimit nofile{};
    setup.fdLimit = ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY
                        ? int(qMin<rlim_t>(nofile.rlim_cur, 1U << 20))
                        : 65536;
    return setup;
}

void SandboxChildSetup::apply() const {
    ::setsid(); // own process group: the whole group is killed with one kill(-pid)
    if (nice > 0)
        ::setpriority(PRIO_PROCESS, 0, nice); // inherited by everything below
    // RLIMIT_AS is per process and there are no cgroups to cap a sandbox as a whole, so
    // make sandbox processes the kernel's first choice if memory runs out, not the app.
    // Done before dropping privileges: after setuid /proc/self is no longer ours to write.
    const int oom = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom >= 0) {
        [[maybe_unused]] const ssize_t written = ::write(oom, "1000", 4);
        ::close(oom);
    }
    if (dropPrivileges) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)
            ::_exit(126); // never run user code as root
    }
    // After setuid: changing credentials clears the parent-death signal.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    setLimit(RLIMIT_AS, memory, memory);
    if (cpu > 0)
        setLimit(RLIMIT_CPU, cpu, cpu + 5);
    setLimit(RLIMIT_FSIZE, fileSize, fileSize);
    setLimit(RLIMIT_NOFILE, openFiles, openFiles);
    setLimit(RLIMIT_CORE, 0, 0);
}

} // namespace loopscope
