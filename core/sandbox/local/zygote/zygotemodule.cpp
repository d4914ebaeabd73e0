// _loopscope_zygote: the C half of the sandbox zygote (resources/sandbox_zygote.py).
//
// The zygote is /usr/bin/python3 itself (the sandbox's interpreter at full speed) with the driver
// loaded; it imports this extension and calls serve(), which never returns in the zygote. Per
// sandbox it clones the sandbox's init with new namespaces; the init forks the interpreter, in
// which serve() returns and Python runs the driver's main(). Everything between the fork and
// the driver runs here, in C: a Python keeper and init wrote to (and so copied) hundreds of the
// zygote's pages each and were two more forks of a Python-sized address space
// (docs/benchmarks.md, "The native zygote").
//
//   zygote ── B  PID 1 of the sandbox, made by clone() with new user, mount, PID, network, IPC,
//             │  UTS and cgroup namespaces: maps the uid, mounts size- and inode-capped tmpfs
//             │  on /tmp, /mnt/data and /dev/shm and its own /proc, brings up the loopback,
//             │  forbids nested user namespaces, drops every capability, sets no_new_privs and
//             │  the seccomp filter, then only reaps (as bwrap's init does).
//             └─ C  the interpreter: serve() returns there, on the channel, and the driver runs.
//
// The zygote is every sandbox's keeper: outside the sandbox, it kills B (and with it the PID
// namespace) when the proxy writes to or closes the sandbox's lifeline, and reports the end.
//
// Protocol on the control socket, after the frames sandbox_zygote.py reads: one message per
// sandbox, "S" + the nice value as text, with two descriptors attached (SCM_RIGHTS): the channel
// (the driver's frames) and the lifeline. B writes "P" on the lifeline once it exists (the proxy
// sets SO_PASSCRED, so the kernel attaches B's pid, which the proxy reads in its own PID
// namespace); the zygote writes "X<wait status>\n" when the interpreter has gone or the sandbox
// was killed, or closes the lifeline without it when the sandbox could not be set up (the reason
// is on stderr). The zygote exits when the control socket closes; every sandbox dies with it
// (PR_SET_PDEATHSIG). The stable ABI: any python3 from 3.11 on can load it.

#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030B0000
#include <Python.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// Set once before the first fork; read-only afterwards (every sandbox sees the same copy).
struct Settings {
    long tmpBytes = 0;
    long workDirBytes = 0;
    long tmpInodes = 0;
    long workDirInodes = 0;
    long cpuSeconds = 0;
    std::string workDir;
    std::string seccomp;
    uid_t uid = 0;
    gid_t gid = 0;
} g_settings;

// The fds a sandbox's init gets, renumbered (everything else of the zygote's is closed).
constexpr int kChannelFd = 3;
constexpr int kLifelineFd = 4;
constexpr int kReportFd = 5;

[[noreturn]] void setupFailed(const char *what) {
    dprintf(2, "loopscope zygote: sandbox setup failed: %s: %s\n", what, strerror(errno));
    _exit(1);
}

void writeFile(const char *path, const char *text) {
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != ssize_t(strlen(text)))
        setupFailed(path);
    close(fd);
}

// nr_inodes as well as size: `size=` does not bound empty files, and each inode is kernel
// memory no limit of the sandbox's processes counts.
void mountTmpfs(const char *path, long bytes, long inodes) {
    char options[96];
    snprintf(options, sizeof options, "size=%ld,nr_inodes=%ld,mode=1777", bytes,
             std::max(1L, inodes));
    if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0)
        setupFailed(path);
}

// In B, inside its new namespaces: what bwrap does for a sandbox before it runs the program.
void makeSandbox() {
    char text[64];
    // The same single uid and gid as outside: no root inside, as with bwrap --unshare-user.
    writeFile("/proc/self/setgroups", "deny");
    snprintf(text, sizeof text, "%u %u 1", g_settings.uid, g_settings.uid);
    writeFile("/proc/self/uid_map", text);
    snprintf(text, sizeof text, "%u %u 1", g_settings.gid, g_settings.gid);
    writeFile("/proc/self/gid_map", text);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        setupFailed("mount --make-rprivate /");
    mountTmpfs("/tmp", g_settings.tmpBytes, g_settings.tmpInodes);
    mountTmpfs("/dev/shm", g_settings.tmpBytes, g_settings.tmpInodes);
    mountTmpfs(g_settings.workDir.c_str(), g_settings.workDirBytes, g_settings.workDirInodes);
    // The loopback of a new network namespace starts down (bwrap brings its own up).
    const int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq request{};
    strcpy(request.ifr_name, "lo");
    request.ifr_flags = IFF_UP | IFF_RUNNING;
    if (sock < 0 || ioctl(sock, SIOCSIFFLAGS, &request) != 0)
        setupFailed("loopback up");
    close(sock);
    // No user namespaces below this one (bwrap --disable-userns): seccomp refuses unshare, but
    // clone() with CLONE_NEWUSER would get through it.
    writeFile("/proc/sys/user/max_user_namespaces", "0");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
        setupFailed("mount /proc");
}

void dropPrivileges() {
    for (int cap = 0; cap <= 63; ++cap) {
        // EINVAL: past the kernel's last capability.
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
            setupFailed("PR_CAPBSET_DROP");
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
        setupFailed("ambient capabilities");
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{}; // effective, permitted, inheritable: none
    if (syscall(SYS_capset, &header, data) != 0)
        setupFailed("capset");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        setupFailed("no_new_privs");
    if (!g_settings.seccomp.empty()) {
        sock_fprog program{static_cast<unsigned short>(g_settings.seccomp.size() / 8),
                           reinterpret_cast<sock_filter *>(g_settings.seccomp.data())};
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0)
            setupFailed("seccomp");
    }
}

// In C, before serve() returns there: the channel as stdin and stdout (the driver's), nothing
// else of the zygote's, and Python's own state made the child's.
void prepareInterpreter() {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        setupFailed("PR_SET_PDEATHSIG");
    if (dup2(kChannelFd, 0) < 0 || dup2(kChannelFd, 1) < 0)
        setupFailed("dup2");
    close_range(3, ~0U, 0);
    prctl(PR_SET_NAME, "python3", 0, 0, 0);
    if (g_settings.cpuSeconds > 0) {
        const rlimit limit{rlim_t(g_settings.cpuSeconds), rlim_t(g_settings.cpuSeconds + 5)};
        setrlimit(RLIMIT_CPU, &limit);
    }
    PyOS_AfterFork_Child();
}

// B: PID 1 of the sandbox. Signals sent to it from inside are ignored by the kernel, so the
// interpreter runs as its child; B reaps every orphan until the interpreter is gone. Returns
// only in the interpreter.
void runInit(int nice) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        setupFailed("PR_SET_PDEATHSIG");
    prctl(PR_SET_NAME, "sandbox-init", 0, 0, 0);
    // The zygote's control socket must not be held inside the sandbox.
    const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
        setupFailed("/dev/null");
    if (nice > 0)
        setpriority(PRIO_PROCESS, 0, nice);
    if (write(kLifelineFd, "P", 1) != 1)
        setupFailed("lifeline");
    close(kLifelineFd);
    makeSandbox();
    setsid();
    dropPrivileges();
    const pid_t interpreter = fork();
    if (interpreter < 0)
        setupFailed("fork");
    if (interpreter == 0) {
        prepareInterpreter();
        return;
    }
    close(kChannelFd);
    if (write(kReportFd, "R", 1) != 1)
        _exit(1);
    // Nothing more to say, and code in the sandbox could make the init say things (it may
    // ptrace it): its stderr, the zygote's and so the proxy's log, goes.
    dup2(null, 2);
    close(null);
    for (;;) {
        int status = 0;
        const pid_t pid = wait(&status);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            _exit(0);
        if (pid == interpreter) {
            char text[32];
            const int n = snprintf(text, sizeof text, "%d", status);
            (void)!write(kReportFd, text, size_t(n));
            _exit(0); // the kernel kills what is left in the namespace
        }
    }
}

struct Sandbox {
    pid_t init = 0;
    int pidfd = -1; // readable once the init has exited (-1: kernel before 5.3)
    int lifeline = -1;
    int report = -1;
    std::string reported; // "R" once the interpreter runs, then its wait status
    bool killed = false;  // by the proxy (through the lifeline)
    bool ending = false;  // SIGKILL sent; waiting for the init to be gone
};

// True only in a new sandbox's interpreter.
bool spawn(std::vector<Sandbox> &sandboxes, int channel, int lifeline, int nice) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        dprintf(2, "loopscope zygote: pipe: %s\n", strerror(errno));
        close(channel);
        close(lifeline);
        return false;
    }
    // Fork semantics (a copy of this process, continuing here) plus the namespaces: the child is
    // PID 1 of its own PID namespace. The raw syscall because glibc's clone() wants a function
    // and a stack; only syscalls and fork() run in the child before the interpreter.
    const long init = syscall(SYS_clone,
                              CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                  CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD,
                              nullptr, nullptr, nullptr, nullptr);
    if (init == 0) {
        const int c = fcntl(channel, F_DUPFD, 16);
        const int l = fcntl(lifeline, F_DUPFD, 16);
        const int r = fcntl(report[1], F_DUPFD, 16);
        if (c < 0 || l < 0 || r < 0 || dup2(c, kChannelFd) < 0 || dup2(l, kLifelineFd) < 0 ||
            dup2(r, kReportFd) < 0)
            setupFailed("dup2");
        close_range(kReportFd + 1, ~0U, 0);
        runInit(nice);
        return true;
    }
    close(channel);
    close(report[1]);
    if (init < 0) {
        dprintf(2, "loopscope zygote: sandbox setup failed: clone: %s\n", strerror(errno));
        close(lifeline);
        close(report[0]);
        return false;
    }
    Sandbox sandbox;
    sandbox.init = pid_t(init);
    sandbox.pidfd = int(syscall(SYS_pidfd_open, init, 0));
    sandbox.lifeline = lifeline;
    sandbox.report = report[0];
    sandboxes.push_back(std::move(sandbox));
    return false;
}

// The proxy's kill, or the init's report or end: the init goes either way (it would exit by
// itself after a report; killing it means that code which made the init report early cannot
// keep the namespace alive past that). Its end is awaited in the loop (the pidfd), not here: an
// init takes its whole PID namespace with it, which can take a while, and other sandboxes must
// not wait for that.
void end(Sandbox &sandbox, bool killed) {
    sandbox.killed = sandbox.killed || killed;
    if (!sandbox.ending)
        kill(sandbox.init, SIGKILL);
    sandbox.ending = true;
}

// Once the init has exited: reap it and report.
void finish(Sandbox &sandbox) {
    int status = 0;
    while (waitpid(sandbox.init, &status, 0) < 0 && errno == EINTR) {
    }
    char buffer[64];
    ssize_t n = 0;
    while ((n = read(sandbox.report, buffer, sizeof buffer)) > 0 && sandbox.reported.size() < 64)
        sandbox.reported.append(buffer, size_t(n));
    // Not killed and no "R": the init died setting the sandbox up (it said why on stderr); the
    // proxy reads a lifeline closed without "X" as that.
    if (sandbox.killed || (!sandbox.reported.empty() && sandbox.reported[0] == 'R')) {
        const std::string interpreter =
            sandbox.reported.size() > 1 ? sandbox.reported.substr(1) : std::string();
        const std::string report =
            "X" + (interpreter.empty() ? std::to_string(status) : interpreter) + "\n";
        send(sandbox.lifeline, report.data(), report.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close(sandbox.lifeline);
    close(sandbox.report);
    if (sandbox.pidfd >= 0)
        close(sandbox.pidfd);
}

} // namespace

// serve(control_fd, tmp_bytes, workdir_bytes, workdir, cpu_seconds, seccomp, tmp_inodes,
// workdir_inodes): forks sandboxes for the proxy until the control socket closes (then the
// process exits). Returns None only in a new sandbox's interpreter.
static PyObject *serve(PyObject *, PyObject *args) {
    int control = -1;
    const char *workDir = nullptr;
    const char *seccomp = nullptr;
    Py_ssize_t seccompSize = 0;
    if (!PyArg_ParseTuple(args, "illsly#ll", &control, &g_settings.tmpBytes,
                          &g_settings.workDirBytes, &workDir, &g_settings.cpuSeconds, &seccomp,
                          &seccompSize, &g_settings.tmpInodes, &g_settings.workDirInodes))
        return nullptr;
    g_settings.workDir = workDir;
    g_settings.seccomp.assign(seccomp, size_t(seccompSize));
    g_settings.uid = getuid();
    g_settings.gid = getgid();
    prctl(PR_SET_NAME, "sandbox-zygote", 0, 0, 0);

    std::vector<Sandbox> sandboxes;
    std::vector<pollfd> polled;
    for (;;) {
        // Per sandbox: its lifeline and report pipe until it is ending, then its pidfd (negative
        // descriptors are skipped by poll).
        polled.assign(1, pollfd{control, POLLIN, 0});
        for (const Sandbox &sandbox : sandboxes) {
            polled.push_back(pollfd{sandbox.ending ? -1 : sandbox.lifeline, POLLIN, 0});
            polled.push_back(pollfd{sandbox.ending ? -1 : sandbox.report, POLLIN, 0});
            polled.push_back(pollfd{sandbox.ending ? sandbox.pidfd : -1, POLLIN, 0});
        }
        if (poll(polled.data(), polled.size(), -1) < 0)
            continue;
        for (size_t i = sandboxes.size(); i-- > 0;) {
            Sandbox &sandbox = sandboxes[i];
            const short lifeline = polled[1 + 3 * i].revents;
            const short report = polled[2 + 3 * i].revents;
            if (lifeline != 0) {
                end(sandbox, true);
            } else if (report != 0) {
                char buffer[64];
                const ssize_t n = read(sandbox.report, buffer, sizeof buffer);
                if (n > 0)
                    sandbox.reported.append(buffer, size_t(n));
                // Anything after "R" is the interpreter's end; EOF is the init's.
                if (n <= 0 || sandbox.reported.size() > 1 || sandbox.reported[0] != 'R')
                    end(sandbox, false);
            }
            // Without a pidfd (kernels before 5.3) the init is awaited here, as it goes.
            if (sandbox.ending && (sandbox.pidfd < 0 || polled[3 + 3 * i].revents != 0)) {
                finish(sandbox);
                sandboxes.erase(sandboxes.begin() + std::ptrdiff_t(i));
            }
        }
        if (polled[0].revents == 0)
            continue;
        char message[64];
        alignas(cmsghdr) char ancillary[CMSG_SPACE(2 * sizeof(int))];
        iovec iov{message, sizeof message - 1};
        msghdr header{};
        header.msg_iov = &iov;
        header.msg_iovlen = 1;
        header.msg_control = ancillary;
        header.msg_controllen = sizeof ancillary;
        const ssize_t got = recvmsg(control, &header, MSG_CMSG_CLOEXEC);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            _exit(0); // the proxy is gone: so are the sandboxes (PR_SET_PDEATHSIG)
        message[got] = '\0';
        int passed[2] = {-1, -1};
        size_t count = 0;
        for (cmsghdr *c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                memcpy(passed, CMSG_DATA(c), std::min(count, size_t(2)) * sizeof(int));
            }
        }
        if (count != 2 || message[0] != 'S') {
            for (size_t i = 0; i < std::min(count, size_t(2)); ++i)
                close(passed[i]);
            continue;
        }
        if (spawn(sandboxes, passed[0], passed[1], atoi(message + 1)))
            Py_RETURN_NONE; // the interpreter of a new sandbox
    }
}

static PyMethodDef kMethods[] = {
    {"serve", serve, METH_VARARGS, "Fork sandboxes until the control socket closes."},
    {nullptr, nullptr, 0, nullptr},
};

static PyModuleDef kModule = {
    PyModuleDef_HEAD_INIT,
    "_loopscope_zygote",
    nullptr,
    -1,
    kMethods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

PyMODINIT_FUNC PyInit__loopscope_zygote() {
    return PyModule_Create(&kModule);
}
