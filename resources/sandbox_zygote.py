# Loopscope sandbox zygote: one pre-initialised interpreter that forks a sandbox per request.
#
# Runs inside one bubblewrap (BubblewrapCommand::zygoteArguments: the read-only system tree,
# no network, no host files, capabilities dropped, as the sandbox uid), started by
# LocalSandboxZygote and sent over fd 0 by the same bootstrap as the driver. It never runs user
# code: it only forks. Each sandbox then enters namespaces of its own, as bubblewrap would for a
# sandbox started on its own (a bwrap + interpreter of its own costs the machine ~17 ms of CPU, a
# fork here ~10 ms, most of it the kernel's: copy-on-write, three exits, the network namespace):
#
#   zygote ── A  the sandbox's keeper, outside its PID namespace: creates the user, mount, PID,
#             │  network, IPC, UTS and cgroup namespaces, maps the uid, mounts size-capped tmpfs
#             │  on /tmp, /mnt/data and /dev/shm, brings up the private loopback, forbids nested
#             │  user namespaces, and reports to the proxy over the sandbox's lifeline.
#             └─ B  PID 1 of the new namespace: mounts its /proc, drops every capability, sets
#                │  no_new_privs and the seccomp filter, then only reaps (as bwrap's init does).
#                └─ C  the interpreter: the driver (resources/sandbox_driver.py) on the channel.
#
# Fd 0 is a Unix socket to the proxy. In: the config frame (JSON: tmp_bytes, workdir_bytes,
# workdir, cpu_seconds), the driver frame ("M" + marshalled code or "S" + source) and the seccomp
# program frame (struct sock_filter[], may be empty), each 4-byte big-endian length + bytes; then
# one message per sandbox: b"S" + the nice value as text, with two descriptors attached
# (SCM_RIGHTS): the channel (the driver's frames) and the lifeline. A writes on the lifeline
# b"P" with its pid in SCM_CREDENTIALS (the proxy reads it translated into its own PID
# namespace) once it exists, and b"X<wait status>\n" when the interpreter has gone; anything the
# proxy writes to the lifeline, or its closing, kills the sandbox. The zygote exits when fd 0
# closes; every sandbox dies with its keeper (PR_SET_PDEATHSIG), every keeper with the zygote.

import marshal
import os
import sys

_CONTROL = 0


def _read_exact(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise SystemExit(0)
        data += chunk
    return data


def _read_frame(fd):
    return _read_exact(fd, int.from_bytes(_read_exact(fd, 4), "big"))


# The driver's definitions and imports once, here; its main() per sandbox, in C. What is
# imported now is what a sandbox started on its own has; the zygote's own modules come after.
_config_frame = _read_frame(_CONTROL)
_driver_frame = _read_frame(_CONTROL)
_seccomp = _read_frame(_CONTROL)
_driver = {"__name__": "__loopscope_zygote__"}
exec(marshal.loads(_driver_frame[1:]) if _driver_frame[:1] == b"M" else
     compile(_driver_frame[1:], "<loopscope-driver>", "exec"), _driver)
_config = _driver["_loads"](_config_frame.decode())
_driver_modules = set(sys.modules)
del _config_frame, _driver_frame

import ctypes  # noqa: E402 (after the driver on purpose, see above)
import gc  # noqa: E402
import resource  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                        ctypes.c_ulong]

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SIOCSIFFLAGS, IFF_UP, IFF_RUNNING = 0x8914, 0x1, 0x40


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def _write(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _die_with_parent(parent):
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _enter_namespaces(config):
    """In A: everything that needs privilege over the new namespaces, before B exists."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                         CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP), "unshare")
    # The same single uid and gid as outside: no root inside, as with bwrap --unshare-user.
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", "%d %d 1" % (uid, uid))
    _write("/proc/self/gid_map", "%d %d 1" % (gid, gid))
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    for path, size in ((b"/tmp", config["tmp_bytes"]), (b"/dev/shm", config["tmp_bytes"]),
                       (config["workdir"].encode(), config["workdir_bytes"])):
        _check(_libc.mount(b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV,
                           b"size=%d,mode=1777" % size), "mount tmpfs " + path.decode())
    # The loopback of the new network namespace starts down (bwrap brings its own up).
    fd = _libc.socket(socket.AF_INET, socket.SOCK_DGRAM, 0)
    if fd < 0:
        _check(-1, "socket")
    try:
        request = struct.pack("16sH22x", b"lo", IFF_UP | IFF_RUNNING)
        _check(_libc.ioctl(fd, SIOCSIFFLAGS, ctypes.c_char_p(request)), "loopback up")
    finally:
        os.close(fd)
    # No user namespaces below this one (bwrap --disable-userns); seccomp refuses unshare, but
    # clone() with CLONE_NEWUSER would get through it.
    _write("/proc/sys/user/max_user_namespaces", "0")


def _drop_privileges(seccomp):
    """In B, once its /proc is mounted: what bwrap does just before it runs the program."""
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        _check(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "PR_CAPBSET_DROP")
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient caps")
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)                           # effective, permitted, inheritable: none
    _check(_libc.capset(header, data), "capset")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if seccomp:
        program = ctypes.create_string_buffer(seccomp, len(seccomp))
        fprog = struct.pack("HxxxxxxP", len(seccomp) // 8, ctypes.addressof(program))
        _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                           ctypes.cast(ctypes.c_char_p(fprog), ctypes.c_void_p).value, 0, 0),
               "seccomp")


def _close_all_but(*keep):
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _clean_modules():
    # The interpreter sees the modules a sandbox started on its own would (the driver's), not
    # the zygote's ctypes and socket: they are imported afresh if user code wants them.
    for name in set(sys.modules) - _driver_modules:
        del sys.modules[name]


def _init(channel, report_fd, config, seccomp):
    """B: PID 1 of the sandbox. Signals sent to it from inside are ignored by the kernel, so the
    interpreter runs as its child, and B reaps every orphan until the interpreter is gone."""
    _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None),
           "mount /proc")
    os.setsid()
    _drop_privileges(seccomp)
    interpreter = os.fork()
    if interpreter == 0:
        os.close(report_fd)
        _interpreter(channel, config)
    os.close(channel)
    # The init has nothing more to say, and code in the sandbox could make it say things (it
    # may ptrace its init): its stderr, the zygote's and so the proxy's log, goes. The
    # interpreter's own stderr is re-pointed by the driver before any user code runs.
    null = os.open("/dev/null", os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        if pid == interpreter:
            os.write(report_fd, b"%d" % status)
            os._exit(0)  # the kernel kills what is left in the namespace


def _interpreter(channel, config):
    os.dup2(channel, 0)
    os.dup2(channel, 1)
    os.close(channel)
    cpu = int(config.get("cpu_seconds", 0))
    if cpu > 0:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    _clean_modules()
    _driver["main"]()
    os._exit(0)


def _keeper(zygote, channel, lifeline, nice, config, seccomp):
    """A: makes the sandbox, then waits for the interpreter or the proxy's kill."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _die_with_parent(zygote)
    os.close(_CONTROL)
    link = socket.socket(fileno=lifeline)
    link.sendmsg([b"P"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS,
                           struct.pack("3i", os.getpid(), os.getuid(), os.getgid()))])
    if nice > 0:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    _enter_namespaces(config)
    report_read, report_write = os.pipe()
    init = os.fork()
    if init == 0:
        _die_with_parent(0)  # A is outside the new PID namespace: getppid() is 0 from here
        link.detach()
        os.close(lifeline)
        os.close(report_read)
        _close_all_but(channel, report_write)
        _init(channel, report_write, config, seccomp)
    os.close(channel)
    os.close(report_write)
    waiter = select.poll()
    waiter.register(report_read, select.POLLIN)
    waiter.register(lifeline, select.POLLIN)
    events = dict(waiter.poll())
    # The proxy's kill, the proxy gone, or the interpreter ended: the init goes either way (it
    # would exit by itself after a report; killing it means that code in the sandbox which made
    # the init report early cannot keep it, and the namespace, alive past that).
    os.kill(init, signal.SIGKILL)
    status = os.read(report_read, 64) if report_read in events else b""
    _, init_status = os.waitpid(init, 0)
    try:
        link.sendall(b"X" + (status or b"%d" % init_status) + b"\n")
    except OSError:
        pass
    os._exit(0)


def _serve(config, seccomp):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    # Every object so far goes to the collector's permanent generation: collections in a fork
    # then never walk (and so never copy-on-write) the zygote's pages.
    gc.collect()
    gc.freeze()
    control = socket.socket(fileno=_CONTROL)
    zygote = os.getpid()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 64, 2)
        except InterruptedError:
            continue
        if not message:
            os._exit(0)
        if len(fds) != 2 or message[:1] != b"S":
            for fd in fds:
                os.close(fd)
            continue
        channel, lifeline = fds
        if os.fork() == 0:
            try:
                _keeper(zygote, channel, lifeline, int(message[1:] or 0), config, seccomp)
            except BaseException as exc:
                try:
                    os.write(2, ("loopscope zygote: sandbox setup failed: %s\n" % exc).encode())
                finally:
                    os._exit(1)
        os.close(channel)
        os.close(lifeline)


_serve(_config, _seccomp)
