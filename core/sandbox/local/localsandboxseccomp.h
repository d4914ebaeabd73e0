#pragma once

#include <QByteArray>
#include <QStringList>

namespace loopscope {

// A seccomp filter for sandbox interpreters, installed before any code runs by each sandbox
// itself: the sandbox's init made by the zygote, or the driver of a bwrap of its own (its
// config), after they have mounted the sandbox's tmpfs. Namespaces and dropped capabilities already
// refuse most privileged calls; this removes kernel surface that stays reachable from an
// unprivileged user namespace and is never needed to run Python code: the kernel keyring (not
// namespaced), bpf, perf events, userfaultfd, io_uring, module and kexec loading, mount APIs,
// setns/unshare, file-handle opens, NUMA page migration (mbind, migrate_pages, move_pages), and
// every non-native syscall ABI (i386, x32). Sockets: an allow-list of families (AF_UNIX, AF_INET,
// AF_INET6 — the latter two confined by the empty network namespace); AF_VSOCK, AF_ALG, AF_NETLINK
// and every other family fail with EAFNOSUPPORT. Blocked calls fail with an errno rather than
// killing the process, so libraries that probe for them keep working. Hand-written classic BPF
// instead of libseccomp: no extra build dependency.
class LocalSandboxSeccomp {
public:
    // False on architectures the filter does not know; sandboxes then run without it.
    static bool supported();
    // The BPF program (an array of struct sock_filter), as prctl(PR_SET_SECCOMP) takes it.
    static QByteArray program();
    // Names of the blocked system calls (documentation, tests).
    static QStringList blockedSyscalls();
    // The socket families socket()/socketpair() may create; all others get EAFNOSUPPORT.
    static QStringList allowedSocketFamilies();
};

} // namespace loopscope
