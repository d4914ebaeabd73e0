# Loopscope sandbox driver: runs inside the sandbox as the long-lived interpreter of one sandbox.
#
# It is sent over stdin by a tiny bootstrap (see BubblewrapCommand::pythonArguments), then speaks
# length-prefixed JSON frames (4-byte big-endian length + UTF-8 JSON) on private duplicates of the
# original stdin/stdout. Before any user code runs, fds 0/1/2 are re-pointed: 0 at /dev/null, 1 and 2
# at pipes drained into capped in-memory captures, and sys.stdout/sys.stderr at the same captures.
# So nothing user code prints (from Python, from C code or from child processes) can reach the
# protocol channel, and no run can make the proxy buffer more than the configured caps.
#
# Frames in:  {"op":"config", "nproc":N, "stdout_cap":B, "stderr_cap":B, "traceback_cap":B,
#              "confine":{"tmpfs":[[path, bytes, inodes]], "seccomp":"<hex>"} (see _confine)}
#             {"op":"run", "id":N, "code":"...", "partial_after_ms":N}
#             {"op":"fs", "id":N, "action":"list"|"read"|"write"|"delete", "path":"/mnt/data/..."}
#             followed by one raw frame: the bytes to write (empty for the other actions).
# Frames out: {"op":"ready", "pid":N, "python":"3.11.2"}
#             {"op":"result", "id":N, "stdout_truncated":bool, "stderr_truncated":bool,
#              "stdout_dropped":N, "stderr_dropped":N, "stdout_cap":N, "stderr_cap":N,
#              "error":null|{"name","value","traceback"}, "duration_ms":F,
#              "images":[{"name","mime","bytes"}], "notes":["..."]}
#             followed by two raw frames: the captured stdout and stderr bytes (UTF-8, capped),
#             then one raw frame per image (PNG bytes, in the order the code produced them).
#             {"op":"fs_result", "id":N, "ok":bool, "error":"...", "files":[{"path","bytes",
#              "mtime_ms"}]} + one raw frame: the file's bytes for "read", else empty.
#             {"op":"partial", "id":N, + the result's _truncated/_dropped/_cap fields} + the same
#             two raw frames: output so far, sent once when partial_after_ms passes mid-run (just
#             before the proxy's timeout), so a run that is killed still shows what it printed.
#             {"op":"output", "id":N, "capped":bool} + two raw frames: what the run printed since
#             the last such frame (stdout, stderr), sent while it runs (see _LiveOutput); always
#             before the run's result frame. The config's live_interval_ms, live_chunk_bytes and
#             live_cap_bytes bound them (live_cap_bytes 0: none).

import _json as _cjson
import _signal
import _thread
import builtins
import io
import os
import posix
import resource
import select
import sys
import time
import types

# User code runs in this interpreter and may patch anything it can reach: os.walk, builtins,
# io, sys.modules. What the driver does between runs (frames, the file operations, the stream
# wiring) must not run any of that, or a patch hangs the proxy's request. So the driver looks
# nothing up through modules after start: it uses its own copy of the builtins (functions
# defined below resolve names in it, not in the `builtins` module user code sees) and the C
# functions of `posix`, `time` and `select` bound here, before any user code runs.
__builtins__ = dict(builtins.__dict__)
_p_open = posix.open
_p_close = posix.close
_p_read = posix.read
_p_write = posix.write
_p_dup2 = posix.dup2
_p_fstat = posix.fstat
_p_ftruncate = posix.ftruncate
_p_scandir = posix.scandir
_p_mkdir = posix.mkdir
_p_unlink = posix.unlink
_monotonic = time.monotonic
_perf_counter = time.perf_counter
_select = select.select
_set_signal = _signal.signal
_SIGINT = _signal.SIGINT
_SIG_IGN = _signal.SIG_IGN
_raise_interrupt = _signal.default_int_handler  # C: no driver frame in the traceback
_BytesIO = io.BytesIO
_O_NOFOLLOW_DIR = posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
# O_NONBLOCK: opening a FIFO never waits for its other end; fstat then refuses it.
_O_READ = posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC
_O_WRITE = posix.O_WRONLY | posix.O_CREAT | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC
_O_NULL = posix.O_RDONLY | posix.O_CLOEXEC
_S_IFMT, _S_IFREG = 0o170000, 0o100000

MAX_IN_FRAME = 64 * 1024 * 1024


# Threads and locks through _thread: `import threading` pulls in functools and collections, ~3 ms
# of CPU on every sandbox start. The driver's thread is a daemon in all but name (nothing waits
# for it at exit); user code importing threading gets the real module as usual.
def _start_thread(target):
    _thread.start_new_thread(target, ())


def _read_exact(fd, n):
    chunks = []
    while n > 0:
        chunk = _p_read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read_raw_frame(fd):
    header = _read_exact(fd, 4)
    if header is None:
        return None
    size = int.from_bytes(header, "big")
    if size > MAX_IN_FRAME:
        raise RuntimeError("oversized request frame")
    return _read_exact(fd, size)


# JSON through the C half of the json module: `import json` pulls in re, enum, functools and
# collections, ~4 ms of CPU on every sandbox start (a third of the interpreter's own start-up).
# Same output as json.dumps(ensure_ascii=False, separators=(",", ":")) and json.loads for the
# compact JSON the proxy sends. User code importing json gets the real module as usual.
class _JsonOptions:
    # The attributes _json.make_scanner reads from a json.JSONDecoder.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity


_scan_json = _cjson.make_scanner(_JsonOptions())


def _not_serializable(obj):
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_encode_json = _cjson.make_encoder(None, _not_serializable, _cjson.encode_basestring, None, ":",
                                   ",", False, False, True)


def _loads(text):
    try:
        value, end = _scan_json(text, 0)
    except StopIteration:
        raise ValueError("a frame is not JSON") from None
    if end != len(text):
        raise ValueError("a frame has data after its JSON")
    return value


def _read_frame(fd):
    body = _read_raw_frame(fd)
    if body is None:
        return None
    return _loads(body.decode("utf-8"))


def _write_frames(fd, *payloads):
    data = memoryview(b"".join(len(p).to_bytes(4, "big") + p for p in payloads))
    while data:
        written = _p_write(fd, data)
        data = data[written:]


def _json(obj):
    return "".join(_encode_json(obj, 0)).encode("utf-8", "backslashreplace")


class Capture:
    """Keeps at most `cap` bytes of one stream; everything beyond is only counted."""

    def __init__(self, cap):
        self.cap = cap
        self.lock = _thread.allocate_lock()
        self.buf = bytearray()
        self.dropped = 0
        self.listener = None  # called after bytes were kept (live output)

    def add(self, data):
        with self.lock:
            room = self.cap - len(self.buf)
            if room >= len(data):
                self.buf += data
            else:
                if room > 0:
                    self.buf += data[:room]
                self.dropped += len(data) - max(room, 0)
        if self.listener is not None and room > 0:
            self.listener()

    def add_text(self, text):
        with self.lock:
            full = len(self.buf) >= self.cap
        if full:
            # Count without building a huge bytes object (a 50 MiB print must stay cheap).
            size = len(text) if text.isascii() else len(
                text.encode("utf-8", "backslashreplace"))
            with self.lock:
                self.dropped += size
            return
        self.add(text.encode("utf-8", "backslashreplace"))

    def peek(self):
        with self.lock:
            return bytes(self.buf), self.dropped

    def take(self):
        with self.lock:
            data, dropped = bytes(self.buf), self.dropped
            self.buf = bytearray()
            self.dropped = 0
        return data, dropped


def _trim_partial_utf8(data):
    """Drops an incomplete UTF-8 sequence at the end (where a capture was cut)."""
    i, tail = len(data) - 1, 0
    while i >= 0 and tail < 3 and (data[i] & 0xC0) == 0x80:
        i -= 1
        tail += 1
    if i >= 0:
        lead = data[i]
        need = 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else \
            4 if lead >= 0xF0 else 1
        if need > len(data) - i:
            return data[:i]
    return data


class _BinaryStream(io.RawIOBase):
    def __init__(self, capture, fd):
        self._capture = capture
        self._fd = fd

    def writable(self):
        return True

    def write(self, data):
        data = bytes(data)
        self._capture.add(data)
        return len(data)

    def fileno(self):
        return self._fd


class _TextStream(io.TextIOBase):
    """sys.stdout / sys.stderr: writes straight into the capture (no pipe round trip)."""

    def __init__(self, capture, fd, name):
        self._capture = capture
        self._fd = fd
        self._name = name
        self.buffer = _BinaryStream(capture, fd)

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "backslashreplace"

    @property
    def name(self):
        return self._name

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        self._capture.add_text(text)
        return len(text)

    def flush(self):
        pass


class _Service:
    """The driver's one helper thread, for the interpreter's lifetime: it drains the pipes
    behind fd 1 and 2 (so writers below Python never block on a full pipe) and runs the
    watchdog's and the live output's timed sends. One thread rather than one per job: every
    thread is paid for at each sandbox start (docs/benchmarks.md, "Less work per fresh
    request"). It sleeps in select() until a pipe has bytes or the earliest due time of its
    jobs; whoever brings a due time forward wakes it through a pipe of its own."""

    def __init__(self):
        self.drains = []
        self.jobs = []  # due() -> monotonic time or None; fire(now)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.lock = _thread.allocate_lock()
        self.sleeping_until = None  # None: awake; float("inf"): asleep with nothing due

    def start(self):
        _start_thread(self._loop)

    def wake_by(self, when):
        """A job is due at `when` now: wakes the thread if it sleeps past that. Called after
        the job's state changed, so a thread that has not gone to sleep yet sees the change."""
        with self.lock:
            if self.sleeping_until is None or self.sleeping_until <= when:
                return
            self.sleeping_until = None
        try:
            _p_write(self.wake_w, b"!")
        except BlockingIOError:
            pass  # a wake is pending already

    def _loop(self):
        fds = [self.wake_r] + [drain.read_fd for drain in self.drains]
        while True:
            with self.lock:
                due = [when for when in (job.due() for job in self.jobs) if when is not None]
                self.sleeping_until = min(due) if due else float("inf")
                timeout = None if not due else max(0.0, self.sleeping_until - _monotonic())
            ready = _select(fds, [], [], timeout)[0]
            with self.lock:
                self.sleeping_until = None
            if self.wake_r in ready:
                try:
                    while _p_read(self.wake_r, 64):
                        pass
                except BlockingIOError:
                    pass
            for drain in self.drains:
                if drain.read_fd in ready:
                    drain.drain()
            now = _monotonic()
            for job in self.jobs:
                job.fire(now)


class _FdDrain:
    """Output written to fd 1/2 below Python (C code, child processes) goes into a pipe that
    the service thread drains into the capture."""

    def __init__(self, capture, service):
        self.capture = capture
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        self.lock = _thread.allocate_lock()
        service.drains.append(self)

    def drain(self):
        with self.lock:
            while True:
                try:
                    data = _p_read(self.read_fd, 1 << 16)
                except BlockingIOError:
                    return
                if not data:
                    return
                self.capture.add(data)


class _Watchdog:
    """Shortly before the proxy kills a run that overstays its time limit, sends what the run has
    printed so far (a "partial" frame), so a timed-out run still shows its output. Arming is a
    lock, two assignments and, when the service thread would sleep past the deadline, a wake."""

    def __init__(self, driver, service):
        self.driver = driver
        self.service = service
        self.lock = _thread.allocate_lock()
        self.deadline = None
        self.run_id = None
        service.jobs.append(self)

    def arm(self, run_id, seconds):
        deadline = _monotonic() + seconds
        with self.lock:
            self.run_id = run_id
            self.deadline = deadline
        self.service.wake_by(deadline)

    def disarm(self):
        with self.lock:
            self.deadline = None

    def due(self):
        return self.deadline

    def fire(self, now):
        with self.lock:
            if self.deadline is None or self.deadline > now:
                return
            run_id, self.deadline = self.run_id, None
        self.driver.send_partial(run_id)


class _LiveOutput:
    """Sends what a run prints while it runs: "output" frames with the bytes the captures gained
    since the last frame. The service thread is woken only for the first byte after a quiet
    spell or when `chunk` bytes pile up; it sends once the oldest unsent byte is `interval` old
    (or at once for a full chunk), so frames are coalesced to >= 50 ms or >= 4 KiB. After `cap`
    bytes in a run it stops (the captures, and so the result, keep all). Frames of a run are
    written under `lock`, and end() takes it too: no output frame of a run can follow that run's
    result frame."""

    def __init__(self, driver, service, interval_ms, chunk, cap):
        self.driver = driver
        self.service = service
        self.interval = interval_ms / 1000.0
        self.chunk = chunk
        self.cap = cap
        self.lock = _thread.allocate_lock()
        self.run_id = None
        self.sent = {}
        self.total = 0
        self.first = None  # monotonic time of the oldest unsent byte
        if cap > 0:
            for capture in (driver.out, driver.err):
                capture.listener = self.notify
            service.jobs.append(self)

    def begin(self, run_id):
        with self.lock:
            self.run_id = run_id
            self.sent = {self.driver.out: 0, self.driver.err: 0}
            self.total = 0
            self.first = None

    def end(self):
        """Sends the rest if the run streamed already (so its chunks add up to its output)."""
        with self.lock:
            if self.run_id is not None and self.total > 0 and self.first is not None:
                self._send_locked()
            self.run_id = None
            self.first = None

    def _pending(self):
        return sum(len(c.buf) - self.sent.get(c, 0) for c in (self.driver.out, self.driver.err))

    def _due_locked(self):
        if self.run_id is None or self.first is None or self.total >= self.cap:
            return None
        return 0.0 if self._pending() >= self.chunk else self.first + self.interval

    def notify(self):
        if self.run_id is None:
            return
        with self.lock:
            if self.run_id is None or self.total >= self.cap:
                return
            if self.first is None:
                self.first = _monotonic()
                when = self.first + self.interval
            elif self._pending() >= self.chunk:
                when = 0.0
            else:
                return
        self.service.wake_by(when)

    def due(self):
        with self.lock:
            return self._due_locked()

    def fire(self, now):
        with self.lock:
            when = self._due_locked()
            if when is not None and when <= now:
                self._send_locked()

    def _send_locked(self):
        parts = []
        room = self.cap - self.total
        for capture in (self.driver.out, self.driver.err):
            with capture.lock:
                start = self.sent.get(capture, 0)
                data = bytes(capture.buf[start:start + max(room, 0)])
            self.sent[capture] = start + len(data)
            room -= len(data)
            parts.append(data)
        self.total += len(parts[0]) + len(parts[1])
        self.first = None
        if parts[0] or parts[1]:
            self.driver._write(_json({"op": "output", "id": self.run_id,
                                      "capped": self.total >= self.cap}), parts[0], parts[1])


class Driver:
    def __init__(self, proto_in, proto_out, config):
        self.proto_in = proto_in
        self.proto_out = proto_out
        self.traceback_cap = int(config.get("traceback_cap", 65536))
        self.out = Capture(int(config.get("stdout_cap", 1 << 20)))
        self.err = Capture(int(config.get("stderr_cap", 1 << 20)))
        self.service = _Service()
        self.out_drain = _FdDrain(self.out, self.service)
        self.err_drain = _FdDrain(self.err, self.service)
        self.stdout = _TextStream(self.out, 1, "<stdout>")
        self.stderr = _TextStream(self.err, 2, "<stderr>")
        self.stdin = open(os.devnull, "r")
        self.namespace = {"__name__": "__main__", "__builtins__": builtins}
        self.cells = 0
        self.sources = {}
        self.write_lock = _thread.allocate_lock()  # the watchdog writes frames too
        self.watchdog = _Watchdog(self, self.service)
        self.live = _LiveOutput(self, self.service, int(config.get("live_interval_ms", 50)),
                                int(config.get("live_chunk_bytes", 4096)),
                                int(config.get("live_cap_bytes", 0)))
        self.service.start()
        self.media = _Media(self, config)
        self.files = _Files(config)
        # The proxy's interrupt (SIGINT: the client went away) stops the user's code with a
        # KeyboardInterrupt, and only that: between runs, and while the driver itself reports, it
        # is ignored, so the interpreter and its state survive.
        _set_signal(_SIGINT, _SIG_IGN)
        self._wire_streams()

    def _wire_streams(self):
        # Re-done before every run: user code may have closed or replaced any of them.
        null = _p_open("/dev/null", _O_NULL)
        _p_dup2(null, 0)
        _p_close(null)
        _p_dup2(self.out_drain.write_fd, 1)
        _p_dup2(self.err_drain.write_fd, 2)
        sys.stdin = sys.__stdin__ = self.stdin
        sys.stdout = sys.__stdout__ = self.stdout
        sys.stderr = sys.__stderr__ = self.stderr

    def _error(self, exc, skip_frames):
        # Imported on the first error only: they cost a few ms of every interpreter start.
        import linecache
        import traceback
        for filename, code in self.sources.items():
            if filename not in linecache.cache:
                linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tb = exc.__traceback__
        for _ in range(skip_frames):
            if tb is not None:
                tb = tb.tb_next
        text = "".join(traceback.format_exception(type(exc), exc, tb))
        if len(text) > self.traceback_cap:
            text = text[: self.traceback_cap] + "\n[traceback truncated]\n"
        try:
            value = str(exc)
        except BaseException:  # a broken __str__ must not kill the driver
            value = "<exception str() failed>"
        return {"name": type(exc).__name__, "value": value[: self.traceback_cap],
                "traceback": text}

    def _write(self, *payloads):
        with self.write_lock:
            _write_frames(self.proto_out, *payloads)

    def send_partial(self, run_id):
        self.out_drain.drain()
        self.err_drain.drain()
        stdout, out_cut = self._stream_result(self.out, peek=True)
        stderr, err_cut = self._stream_result(self.err, peek=True)
        self._write(_json({"op": "partial", "id": run_id, **self._cut_fields(out_cut, err_cut)}),
                    stdout, stderr)

    def _stream_result(self, capture, peek=False):
        """The bytes kept (cut on a character boundary) and how many were dropped. No notice
        goes into the bytes: they are what the program wrote, as the client sees it; the host
        tells the model of the cut (LocalSandboxProcess::applyOutput)."""
        data, dropped = capture.peek() if peek else capture.take()
        if dropped:
            data = _trim_partial_utf8(data)
        return data, dropped

    def _cut_fields(self, out_dropped, err_dropped):
        return {"stdout_truncated": out_dropped > 0, "stderr_truncated": err_dropped > 0,
                "stdout_dropped": out_dropped, "stderr_dropped": err_dropped,
                "stdout_cap": self.out.cap, "stderr_cap": self.err.cap}

    def run(self, run_id, code, partial_after_ms):
        self._wire_streams()
        if partial_after_ms > 0:
            self.watchdog.arm(run_id, partial_after_ms / 1000.0)
        self.live.begin(run_id)
        self.cells += 1
        filename = "<cell %d>" % self.cells
        self.sources[filename] = code  # for tracebacks, also of functions defined here
        self.media.before_run()
        error = None
        started = _perf_counter()
        try:
            compiled = compile(code, filename, "exec", dont_inherit=True)
        except BaseException as exc:  # SyntaxError and friends: no user frames to show
            error = self._error(exc, 1)
        else:
            try:
                try:
                    _set_signal(_SIGINT, _raise_interrupt)  # user code may have changed it
                    exec(compiled, self.namespace)
                finally:
                    # An interrupt that lands after exec() returned, before this, is still
                    # the run's: it is caught below like one inside the code.
                    _set_signal(_SIGINT, _SIG_IGN)
            except BaseException as exc:  # includes SystemExit: the interpreter stays alive
                error = self._error(exc, 1)
        duration = (_perf_counter() - started) * 1000.0
        self.watchdog.disarm()
        images, notes = self.media.after_run()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        self.out_drain.drain()
        self.err_drain.drain()
        self.live.end()
        stdout, out_cut = self._stream_result(self.out)
        stderr, err_cut = self._stream_result(self.err)
        # Output travels as raw bytes after the header: no JSON escaping, so a frame is never
        # bigger than the cap.
        self._write(_json({
            "op": "result", "id": run_id, **self._cut_fields(out_cut, err_cut),
            "error": error, "duration_ms": duration,
            "images": [{"name": name, "mime": "image/png", "bytes": len(data)}
                       for name, data in images], "notes": notes}),
            stdout, stderr, *[data for _, data in images])

    def serve(self):
        self._write(_json({"op": "ready", "pid": os.getpid(),
                           "python": sys.version.split()[0]}))
        while True:
            message = _read_frame(self.proto_in)
            if message is None:
                return
            if message.get("op") == "run":
                self.run(message.get("id", 0), str(message.get("code", "")),
                         int(message.get("partial_after_ms", 0)))
            elif message.get("op") == "fs":
                _serve_fs(self, message)


# --- Images and files: what the code shows, and the container's files under /mnt/data -------

MPL_BACKEND = "loopscope_mpl_backend"
_spec_from_loader = None  # importlib.util.spec_from_loader, set by _Media


class _Media:
    """Collects the pictures one run produces, in order: matplotlib figures at plt.show() (through
    a backend of our own, so show() captures instead of warning) and those still open at the end
    of the run, and PIL images at Image.show(). Each becomes a PNG within the caps; the rest is
    a note in the run's stdout."""

    def __init__(self, driver, config):
        self.driver = driver
        self.max_bytes = int(config.get("image_max_bytes", 4 << 20))
        self.max_count = int(config.get("image_max_count", 8))
        self.counter = 0  # per sandbox, so image names stay unique across runs
        self.images = []
        self.dropped = []
        os.environ["MPLBACKEND"] = "module://" + MPL_BACKEND
        # Taken before the finder is installed: importing it from inside find_spec would ask
        # the finder again. The frozen bootstrap's own function, which importlib.util re-exports:
        # importing importlib.util pulls in contextlib, functools and collections (~2 ms/start).
        global _spec_from_loader
        import _frozen_importlib
        _spec_from_loader = _frozen_importlib.spec_from_loader
        sys.meta_path.insert(0, _MediaFinder(self))

    def before_run(self):
        self.images = []
        self.dropped = []

    def add_png(self, data):
        self.counter += 1
        name = "image-%d.png" % self.counter
        if len(self.images) >= self.max_count:
            self.dropped.append("[loopscope] %s not returned: a run returns at most %d images"
                                % (name, self.max_count))
        elif len(data) > self.max_bytes:
            self.dropped.append("[loopscope] %s not returned: it has %d bytes; the limit is %d "
                                "bytes per image" % (name, len(data), self.max_bytes))
        else:
            self.images.append((name, data))

    def capture_figures(self):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        for number in list(pyplot.get_fignums()):
            figure = pyplot.figure(number)
            buffer = _BytesIO()
            try:
                figure.savefig(buffer, format="png")
            except Exception as exc:  # a broken figure must not fail the run
                self.dropped.append("[loopscope] a figure could not be rendered: %s" % exc)
            else:
                self.add_png(buffer.getvalue())
            pyplot.close(figure)

    def capture_pil(self, image):
        buffer = _BytesIO()
        try:
            image.save(buffer, format="PNG")
        except Exception as exc:
            self.dropped.append("[loopscope] an image could not be converted to PNG: %s" % exc)
            return
        self.add_png(buffer.getvalue())

    def after_run(self):
        """Figures left open; returns ([(name, png bytes)], [note]). The notes are for the model
        and travel beside stdout, which stays what the program printed."""
        try:
            self.capture_figures()
        except Exception as exc:
            self.dropped.append("[loopscope] open figures could not be collected: %s" % exc)
        images, self.images = self.images, []
        notes, self.dropped = self.dropped, []
        return images, notes


class _MediaFinder:
    """Import hook: provides the matplotlib backend module, and registers a PIL viewer when
    PIL.ImageShow is first imported (so Image.show() in the very run that imports PIL counts)."""

    def __init__(self, media):
        self.media = media

    def find_spec(self, fullname, path=None, target=None):
        if fullname == MPL_BACKEND:
            return _spec_from_loader(fullname, _MplBackendLoader(self.media))
        if fullname != "PIL.ImageShow":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PostImportLoader(spec.loader, self._register_pil_viewer)
                return spec
        return None

    def _register_pil_viewer(self, image_show):
        media = self.media

        class LoopscopeViewer(image_show.Viewer):
            def show(self, image, **options):
                media.capture_pil(image)
                return 1

        image_show.register(LoopscopeViewer, order=-1)


class _PostImportLoader:
    def __init__(self, loader, hook):
        self.loader = loader
        self.hook = hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.hook(module)


class _MplBackendLoader:
    def __init__(self, media):
        self.media = media

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        from matplotlib.backends import backend_agg
        media = self.media
        module.FigureCanvas = backend_agg.FigureCanvasAgg
        module.FigureManager = backend_agg.FigureManager
        module.backend_version = "loopscope"

        def show(*args, **kwargs):
            media.capture_figures()

        module.show = show


class _ListLimit(Exception):
    pass


class _Files:
    """The container's files: list / read / write / delete under the data dir, never outside.
    Only through descriptors, one path component at a time (O_NOFOLLOW: a symlink planted by
    the code is never followed), and only on regular files (a FIFO or socket planted in place of
    a file is refused instead of blocking the driver). A listing is bounded in entries and time,
    so a tree made to be slow to walk cannot hold the driver."""

    def __init__(self, config):
        self.root = os.path.realpath(config.get("datadir") or "/mnt/data")
        self.public = "/mnt/data"  # how paths look to the proxy and the code
        self.max_bytes = int(config.get("file_max_bytes", 32 << 20))
        self.max_entries = int(config.get("file_list_max", 10000))
        self.list_seconds = int(config.get("file_list_ms", 5000)) / 1000.0
        self.max_depth = 64

    def _parts(self, path):
        path = str(path)
        if not path.startswith(self.public + "/"):
            raise ValueError("path must be under %s" % self.public)
        parts = path[len(self.public) + 1:].split("/")
        for part in parts:
            if part in ("", ".", ".."):
                raise ValueError("path must stay under %s: %r" % (self.public, path))
        return parts

    def _parent(self, parts, create=False):
        """A descriptor of the directory holding the last of `parts`."""
        fd = _p_open(self.root, _O_NOFOLLOW_DIR)
        try:
            for part in parts[:-1]:
                if create:
                    try:
                        _p_mkdir(part, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                child = _p_open(part, _O_NOFOLLOW_DIR, dir_fd=fd)
                _p_close(fd)
                fd = child
        except BaseException:
            _p_close(fd)
            raise
        return fd

    def _open_regular(self, parts, flags, create=False):
        parent = self._parent(parts, create)
        try:
            fd = _p_open(parts[-1], flags, 0o666, dir_fd=parent)
        finally:
            _p_close(parent)
        info = _p_fstat(fd)
        if (info.st_mode & _S_IFMT) != _S_IFREG:
            _p_close(fd)
            raise ValueError("%s is not a regular file" % "/".join([self.public] + parts))
        return fd, info

    def list(self):
        """[{path, bytes, mtime_ms}] of the regular files, each directory's files (sorted) before
        its subdirectories (sorted); at most max_entries, within list_seconds."""
        files = []
        budget = [self.max_entries * 4, _monotonic() + self.list_seconds]
        fd = _p_open(self.root, _O_NOFOLLOW_DIR)
        try:
            self._walk(fd, self.public, 0, files, budget)
        except _ListLimit:
            return files, True
        finally:
            _p_close(fd)
        return files, False

    def _walk(self, fd, prefix, depth, files, budget):
        names, dirs = [], []
        with _p_scandir(fd) as entries:
            for entry in entries:
                budget[0] -= 1
                if budget[0] < 0 or _monotonic() > budget[1]:
                    raise _ListLimit()
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(entry.name)
                elif entry.is_file(follow_symlinks=False):
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    names.append((entry.name, info))
        names.sort()
        for name, info in names:
            files.append({"path": prefix + "/" + name, "bytes": info.st_size,
                          "mtime_ms": info.st_mtime_ns // 1000000})
            if len(files) >= self.max_entries:
                raise _ListLimit()
        if depth >= self.max_depth:
            return
        dirs.sort()
        for name in dirs:
            try:
                child = _p_open(name, _O_NOFOLLOW_DIR, dir_fd=fd)
            except OSError:
                continue  # gone or replaced meanwhile
            try:
                self._walk(child, prefix + "/" + name, depth + 1, files, budget)
            finally:
                _p_close(child)

    def handle(self, message, payload):
        action = message.get("action")
        data = b""
        if action == "list":
            files, truncated = self.list()
            return {"files": files, "truncated": truncated}, data
        parts = self._parts(message.get("path", ""))
        if action == "read":
            fd, info = self._open_regular(parts, _O_READ)
            try:
                if info.st_size > self.max_bytes:
                    raise ValueError("the file has %d bytes; the limit is %d"
                                     % (info.st_size, self.max_bytes))
                chunks, room = [], self.max_bytes + 1
                while room > 0:
                    chunk = _p_read(fd, min(room, 1 << 20))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    room -= len(chunk)
            finally:
                _p_close(fd)
            data = b"".join(chunks)
            if len(data) > self.max_bytes:
                raise ValueError("the file grew past the limit of %d bytes" % self.max_bytes)
            return {}, data
        if action == "write":
            fd, info = self._open_regular(parts, _O_WRITE, create=True)
            try:
                _p_ftruncate(fd, 0)
                view = memoryview(payload)
                while view:
                    view = view[_p_write(fd, view):]
                info = _p_fstat(fd)
            except BaseException:
                # A full /mnt/data must not keep half a file.
                _p_close(fd)
                fd = -1
                try:
                    parent = self._parent(parts)
                    try:
                        _p_unlink(parts[-1], dir_fd=parent)
                    finally:
                        _p_close(parent)
                except OSError:
                    pass
                raise
            finally:
                if fd >= 0:
                    _p_close(fd)
            return {"files": [{"path": message.get("path"), "bytes": info.st_size,
                               "mtime_ms": info.st_mtime_ns // 1000000}]}, data
        if action == "delete":
            parent = self._parent(parts)
            try:
                _p_unlink(parts[-1], dir_fd=parent)
            finally:
                _p_close(parent)
            return {}, data
        raise ValueError("unknown file action %r" % action)


def _serve_fs(driver, message):
    payload = _read_raw_frame(driver.proto_in)
    reply = {"op": "fs_result", "id": message.get("id", 0), "ok": True}
    data = b""
    try:
        extra, data = driver.files.handle(message, payload or b"")
        reply.update(extra)
    except BaseException as exc:  # reported to the proxy; the interpreter stays alive
        reply = {"op": "fs_result", "id": message.get("id", 0), "ok": False,
                 "error": "%s: %s" % (type(exc).__name__, exc)}
        data = b""
    driver._write(_json(reply), data)


def _tasks_of_uid(uid):
    count = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        real = threads = None
        try:
            with open("/proc/%s/status" % pid) as status:
                for line in status:
                    if line.startswith("Uid:"):
                        real = int(line.split()[1])
                    elif line.startswith("Threads:"):
                        threads = int(line.split()[1])
        except (OSError, ValueError):
            continue
        if real == uid and threads:
            count += threads
    return count


class _Quitter:
    """exit() / quit() as the site module would add them (the interpreter runs with -S)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use %s() to exit" % self.name

    def __call__(self, code=None):
        raise SystemExit(code)


def _site_without_site(paths):
    """What `site` would have done, minus its .pth files: the -S start is several ms faster."""
    for path in paths:
        if isinstance(path, str) and path not in sys.path and os.path.isdir(path):
            sys.path.append(path)
    builtins.exit = _Quitter("exit")
    builtins.quit = _Quitter("quit")

    def help(*args, **kwargs):
        import pydoc
        return pydoc.help(*args, **kwargs)
    builtins.help = help


def _confine(spec):
    """A sandbox that is a bwrap of its own (no zygote) starts with CAP_SYS_ADMIN,
    CAP_SYS_RESOURCE and CAP_SETPCAP in its user namespace (BubblewrapCommand::bwrapArguments),
    for this only: bubblewrap 0.8.0 gives a tmpfs a size but no inode cap, and every empty file
    is unreclaimable kernel memory. Remount each tmpfs with nr_inodes, forbid user namespaces
    below this one, drop every capability and load the seccomp filter, as the zygote's sandbox
    init does in C. Any failure raises: the interpreter exits and the sandbox never runs code."""
    import ctypes
    import errno
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result, what):
        if result != 0:
            err = ctypes.get_errno()
            raise OSError(err, "sandbox confinement failed: %s: %s" % (what, os.strerror(err)))

    ms_nosuid, ms_nodev, ms_remount = 2, 4, 32
    for path, size, inodes in spec["tmpfs"]:
        options = "size=%d,nr_inodes=%d" % (int(size), max(1, int(inodes)))
        check(libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs",
                         ctypes.c_ulong(ms_remount | ms_nosuid | ms_nodev),
                         options.encode()), "remount " + path)
    # clone(CLONE_NEWUSER) gets through the filter; this stops it (as bwrap --disable-userns).
    with open("/proc/sys/user/max_user_namespaces", "w") as limit:
        limit.write("0")
    pr_capbset_drop, pr_cap_ambient, pr_cap_ambient_clear_all = 24, 47, 4
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    for cap in range(64):
        if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            check(-1, "PR_CAPBSET_DROP")
    check(libc.prctl(pr_cap_ambient, pr_cap_ambient_clear_all, 0, 0, 0), "ambient capabilities")
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    check(libc.capset(header, (ctypes.c_uint32 * 6)()), "capset")
    check(libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0), "no_new_privs")
    program = bytes.fromhex(spec.get("seccomp") or "")
    if program:
        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        code = ctypes.create_string_buffer(program, len(program))
        fprog = SockFprog(len(program) // 8, ctypes.addressof(code))
        check(libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0),
              "seccomp")


def main():
    # Private copies of the protocol pipes; os.dup makes them non-inheritable, so child
    # processes of user code never get them either.
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    config = _read_frame(proto_in)
    if config is None:
        return
    if config.get("confine"):
        _confine(config["confine"])
    _site_without_site(config.get("site_packages") or [])
    nproc = int(config.get("nproc", 0))
    if nproc > 0 and config.get("shared_uid"):
        # Unisolated: no user namespace of our own, so the kernel counts every task of this
        # uid on the machine. Allow the sandbox `nproc` more than exist now.
        nproc += _tasks_of_uid(os.getuid())
    if nproc > 0:
        # Set here, inside the sandbox's own user namespace, so the count is per sandbox.
        _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        if hard != resource.RLIM_INFINITY:
            nproc = min(nproc, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    workdir = config.get("workdir")
    if workdir:
        os.chdir(workdir)
    Driver(proto_in, proto_out, config).serve()


# The zygote (sandbox_zygote.py) runs this module once and main() in each sandbox it forks.
if __name__ == "__loopscope_driver__":
    main()
