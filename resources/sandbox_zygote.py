# Loopscope sandbox zygote: one pre-initialised interpreter that forks a sandbox per request.
#
# Runs inside one bubblewrap (BubblewrapCommand::zygoteArguments: the read-only system tree,
# no network, no host files, capabilities dropped, as the sandbox uid), started by
# LocalSandboxZygote and sent over fd 0 by the same bootstrap as the driver. It never runs user
# code: it loads the driver once, then hands over to _loopscope_zygote (core/sandbox/local/zygote, a C
# extension bwrap copied to /tmp), which forks the sandboxes and keeps them:
#
#   zygote ── init    PID 1 of a sandbox, cloned with new user, mount, PID, network, IPC, UTS
#             │       and cgroup namespaces: tmpfs, /proc, loopback, no nested user namespaces,
#             │       no capabilities, no_new_privs, seccomp; then it only reaps.
#             └─ interpreter   returns from serve() into Python below: the driver's main().
#
# Between the fork and the driver everything runs in C: Python code there wrote to (and so
# copied) hundreds of the zygote's pages per process (docs/benchmarks.md, "The native zygote").
#
# Fd 0 is a Unix socket to the proxy. In: the config frame (JSON: tmp_bytes, workdir_bytes,
# tmp_inodes, workdir_inodes, workdir, cpu_seconds, module), the driver frame ("M" + marshalled code or "S" + source) and the
# seccomp program frame (struct sock_filter[], may be empty), each 4-byte big-endian length +
# bytes; then the extension's protocol (one message per sandbox, see zygotemodule.cpp).

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


# The driver's definitions and imports once, here; its main() per sandbox. What is imported now
# is what a sandbox started on its own has; the zygote's own modules come after.
_config_frame = _read_frame(_CONTROL)
_driver_frame = _read_frame(_CONTROL)
_seccomp = _read_frame(_CONTROL)
_driver = {"__name__": "__loopscope_zygote__"}
exec(marshal.loads(_driver_frame[1:]) if _driver_frame[:1] == b"M" else
     compile(_driver_frame[1:], "<loopscope-driver>", "exec"), _driver)
_config = _driver["_loads"](_config_frame.decode())
_driver_modules = set(sys.modules)
del _config_frame, _driver_frame

import gc  # noqa: E402 (after the driver on purpose, see above)
import importlib.machinery  # noqa: E402

_loader = importlib.machinery.ExtensionFileLoader("_loopscope_zygote", _config["module"])
_zygote = _loader.create_module(
    importlib.machinery.ModuleSpec("_loopscope_zygote", _loader, origin=_config["module"]))
_loader.exec_module(_zygote)
# The interpreter sees the modules a sandbox started on its own would (the driver's), not the
# zygote's: they are imported afresh if user code wants them.
for _name in set(sys.modules) - _driver_modules:
    del sys.modules[_name]
# Every object so far goes to the collector's permanent generation: collections in a fork then
# never walk (and so never copy) the zygote's pages.
gc.collect()
gc.freeze()
# Returns only in a sandbox's interpreter, already inside its namespaces and on its channel.
_zygote.serve(_CONTROL, int(_config["tmp_bytes"]), int(_config["workdir_bytes"]),
              _config["workdir"], int(_config.get("cpu_seconds", 0)), _seccomp,
              int(_config["tmp_inodes"]), int(_config["workdir_inodes"]))
del _zygote, _loader, _seccomp, _config, gc, importlib
_driver["main"]()
os._exit(0)
