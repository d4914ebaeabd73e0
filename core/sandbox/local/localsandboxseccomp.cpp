#include "sandbox/local/localsandboxseccomp.h"

#include <QList>
#include <QPair>

#include <cerrno>
#include <cstddef>
#include <fcntl.h>
#include <iterator>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace loopscope {

namespace {

#if defined(__x86_64__)
constexpr quint32 kNativeArch = AUDIT_ARCH_X86_64;
constexpr bool kSupported = true;
#elif defined(__aarch64__)
constexpr quint32 kNativeArch = AUDIT_ARCH_AARCH64;
constexpr bool kSupported = true;
#else
constexpr quint32 kNativeArch = 0;
constexpr bool kSupported = false;
#endif

#define LOOPSCOPE_SYSCALL(name) QPair<QString, long>(QStringLiteral(#name), SYS_##name)

QList<QPair<QString, long>> blocked() {
    QList<QPair<QString, long>> list{
        LOOPSCOPE_SYSCALL(keyctl),
        LOOPSCOPE_SYSCALL(add_key),
        LOOPSCOPE_SYSCALL(request_key),
        LOOPSCOPE_SYSCALL(bpf),
        LOOPSCOPE_SYSCALL(perf_event_open),
        LOOPSCOPE_SYSCALL(userfaultfd),
        LOOPSCOPE_SYSCALL(kexec_load),
        LOOPSCOPE_SYSCALL(init_module),
        LOOPSCOPE_SYSCALL(finit_module),
        LOOPSCOPE_SYSCALL(delete_module),
        LOOPSCOPE_SYSCALL(mount),
        LOOPSCOPE_SYSCALL(umount2),
        LOOPSCOPE_SYSCALL(pivot_root),
        LOOPSCOPE_SYSCALL(setns),
        LOOPSCOPE_SYSCALL(unshare),
        LOOPSCOPE_SYSCALL(open_by_handle_at),
        LOOPSCOPE_SYSCALL(name_to_handle_at),
        LOOPSCOPE_SYSCALL(reboot),
        LOOPSCOPE_SYSCALL(swapon),
        LOOPSCOPE_SYSCALL(swapoff),
        LOOPSCOPE_SYSCALL(acct),
        LOOPSCOPE_SYSCALL(quotactl),
        LOOPSCOPE_SYSCALL(syslog),
        LOOPSCOPE_SYSCALL(vhangup),
        LOOPSCOPE_SYSCALL(chroot),
        LOOPSCOPE_SYSCALL(settimeofday),
        LOOPSCOPE_SYSCALL(clock_settime),
        LOOPSCOPE_SYSCALL(adjtimex),
        LOOPSCOPE_SYSCALL(lookup_dcookie),
    };
    // NUMA page placement: lets one process move or pin pages on other nodes (and probe the
    // machine's memory layout); never needed to run Python.
    list << LOOPSCOPE_SYSCALL(mbind) << LOOPSCOPE_SYSCALL(migrate_pages)
         << LOOPSCOPE_SYSCALL(move_pages);
#ifdef SYS_kexec_file_load
    list << LOOPSCOPE_SYSCALL(kexec_file_load);
#endif
#ifdef SYS_io_uring_setup
    list << LOOPSCOPE_SYSCALL(io_uring_setup) << LOOPSCOPE_SYSCALL(io_uring_enter)
         << LOOPSCOPE_SYSCALL(io_uring_register);
#endif
#ifdef SYS_open_tree
    list << LOOPSCOPE_SYSCALL(open_tree) << LOOPSCOPE_SYSCALL(move_mount)
         << LOOPSCOPE_SYSCALL(fsopen) << LOOPSCOPE_SYSCALL(fsconfig) << LOOPSCOPE_SYSCALL(fsmount)
         << LOOPSCOPE_SYSCALL(fspick);
#endif
#ifdef SYS_mount_setattr
    list << LOOPSCOPE_SYSCALL(mount_setattr);
#endif
#ifdef SYS_modify_ldt
    list << LOOPSCOPE_SYSCALL(modify_ldt);
#endif
#ifdef SYS_uselib
    list << LOOPSCOPE_SYSCALL(uselib);
#endif
    return list;
}

#undef LOOPSCOPE_SYSCALL

// The only socket families a sandbox may create. AF_UNIX for socketpair/multiprocessing/asyncio;
// AF_INET/AF_INET6 because code may serve and call its own private loopback, and the empty
// network namespace confines them. Everything else (AF_VSOCK, which the namespace does not
// confine and which reaches a VM's hypervisor; AF_ALG kernel crypto; AF_NETLINK; AF_PACKET;
// Bluetooth, CAN, RDS, TIPC, XDP, ...) fails with EAFNOSUPPORT, as on a kernel without it,
// so libraries fall back (glibc's getaddrinfo treats a refused netlink socket as "both IPv4
// and IPv6 present").
constexpr int kAllowedFamilies[] = {AF_UNIX, AF_INET, AF_INET6};

sock_filter statement(quint16 code, quint32 k) {
    return sock_filter{code, 0, 0, k};
}

sock_filter jump(quint16 code, quint32 k, quint8 jt, quint8 jf) {
    return sock_filter{code, jt, jf, k};
}

} // namespace

bool LocalSandboxSeccomp::supported() {
    return kSupported;
}

QStringList LocalSandboxSeccomp::allowedSocketFamilies() {
    return {QStringLiteral("AF_UNIX"), QStringLiteral("AF_INET"), QStringLiteral("AF_INET6")};
}

QStringList LocalSandboxSeccomp::blockedSyscalls() {
    QStringList names;
    for (const auto &entry : blocked())
        names << entry.first;
    return names;
}

QByteArray LocalSandboxSeccomp::program() {
    if (!kSupported)
        return {};
    constexpr quint32 deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    QList<sock_filter> code;
    // Only the native ABI: a foreign arch (i386 via int 0x80) would use other numbers.
    code << statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
    code << jump(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 1, 0);
    code << statement(BPF_RET | BPF_K, deny);
    code << statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
    // x32 ABI calls share the arch but set bit 30.
    code << jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1);
    code << statement(BPF_RET | BPF_K, deny);
#endif
    for (const auto &entry : blocked()) {
        code << jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<quint32>(entry.second), 0, 1);
        code << statement(BPF_RET | BPF_K, deny);
    }
    // socket(family, ...) and socketpair(family, ...): the family allow-list. Only the low 32
    // bits of the first argument are compared: the kernel reads it as an int.
    constexpr quint8 kFamilies = quint8(std::size(kAllowedFamilies));
    code << jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<quint32>(SYS_socket), 2, 0);
    code << jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<quint32>(SYS_socketpair), 1, 0);
    code << statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    code << statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));
    for (quint8 i = 0; i < kFamilies; ++i)
        code << jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<quint32>(kAllowedFamilies[i]),
                     quint8(kFamilies - i), 0);
    code << statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EAFNOSUPPORT & SECCOMP_RET_DATA));
    code << statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    return QByteArray(reinterpret_cast<const char *>(code.constData()),
                      code.size() * static_cast<qsizetype>(sizeof(sock_filter)));
}

} // namespace loopscope
