#!/usr/bin/python3
"""Soak of the real loopscope binary (issue 16): a mixed workload for --duration seconds while
sampling the process's RSS, open fds, threads and live sandbox processes, and the sandbox
zygote's descriptors beyond those its live sandboxes need. Not a CTest test.

Workload, from --workers client threads plus periodic bursts of open streams:
  pass-through chat JSON and SSE, code-interpreter loops on /v1/responses and
  /v1/chat/completions (fresh sandbox each), session requests (metadata.session_id, sandbox
  reused) and container deletes (DELETE /v1/containers/{id}), client hang-ups mid-stream,
  upstream failures (500) and slow answers, and every --burst-every seconds --streams (500)
  SSE streams held open at once.
The upstream is an instant scripted OpenAI-compatible server in this process (loopback only).
Every answer is checked; a wrong one counts as an error.

  /usr/bin/python3 bench/soak/soak.py --binary build/dev/app/loopscope --duration 1800 \
      --out /tmp/soak --plot docs/soak.png
Writes samples.csv, minutes.csv and summary.json to --out and prints the summary.
"""
import argparse
import collections
import http.client
import http.server
import json
import os
import random
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time

# ----------------------------------------------------------------------------- upstream


def chat_completion(message, finish="stop"):
    return {"id": "chatcmpl-soak", "object": "chat.completion", "created": int(time.time()),
            "model": "soak", "choices": [{"index": 0, "message": message,
                                          "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def responses_body(output):
    return {"id": "resp_soak", "object": "response", "status": "completed", "model": "soak",
            "output": output,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}


CODE = "print(sum(range(10)))"


class Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events, delay):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for event in events:
                chunk = event.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                if delay:
                    time.sleep(delay)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self):
        self._json(200, {"object": "list", "data": [{"id": "soak", "object": "model"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        model = body.get("model", "")
        if model == "soak-fail":
            return self._json(500, {"error": {"message": "scripted failure", "type": "server_error"}})
        if model == "soak-slow":
            time.sleep(1.5)
        chat = self.path.endswith("/chat/completions")
        tools = body.get("tools") or []
        if tools:
            if chat:
                answered = any(m.get("role") == "tool" for m in body.get("messages", []))
                if answered:
                    return self._json(200, chat_completion({"role": "assistant", "content": "45"}))
                return self._json(200, chat_completion({
                    "role": "assistant", "content": None,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": {
                        "name": "litellm_code_execution",
                        "arguments": json.dumps({"code": CODE})}}]}, "tool_calls"))
            items = body.get("input") if isinstance(body.get("input"), list) else []
            if any(i.get("type") == "function_call_output" for i in items if isinstance(i, dict)):
                return self._json(200, responses_body([{
                    "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "45", "annotations": []}]}]))
            return self._json(200, responses_body([{
                "type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": "litellm_code_execution", "arguments": json.dumps({"code": CODE}),
                "status": "completed"}]))
        if body.get("stream"):
            hold = model == "soak-hold"
            count = int(body.get("metadata", {}).get("chunks", 3)) if hold else 3
            events = ["data: %s\n\n" % json.dumps({
                "id": "chatcmpl-soak", "object": "chat.completion.chunk", "model": model,
                "choices": [{"index": 0, "delta": {"content": "tok%d " % i},
                             "finish_reason": None}]}) for i in range(count)]
            events.append("data: [DONE]\n\n")
            return self._sse(events, 1.0 if hold else 0)
        return self._json(200, chat_completion({"role": "assistant", "content": "pong"}))


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 1024


# ----------------------------------------------------------------------------- client

AUTH = {"authorization": "Bearer sk-soak-harness-0001", "content-type": "application/json"}
CI_TOOL = [{"type": "code_interpreter", "container": {"type": "auto"}}]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.errors = collections.Counter()
        self.latency = collections.defaultdict(list)  # (minute, kind) -> [ms]
        self.error_samples = []

    def record(self, kind, ok, ms, minute, detail=""):
        with self.lock:
            self.counts[kind] += 1
            if ok:
                self.latency[(minute, kind)].append(ms)
            else:
                self.errors[kind] += 1
                if len(self.error_samples) < 20:
                    self.error_samples.append("%s: %s" % (kind, detail[:300]))


class Exchanges:
    """Client exchanges sent to the proxy: each must be one flow in the history store."""
    lock = threading.Lock()
    sent = 0

    @classmethod
    def count(cls):
        with cls.lock:
            cls.sent += 1


def request(port, method, path, body=None, timeout=120):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    Exchanges.count()
    try:
        conn.request(method, path, json.dumps(body) if body is not None else None, AUTH)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def chat(model, content="ping", **extra):
    body = {"model": model, "messages": [{"role": "user", "content": content}]}
    body.update(extra)
    return body


class Workload:
    def __init__(self, port, stats, start, sessions=8):  # under the 10-per-key cap
        self.port = port
        self.stats = stats
        self.start = start
        self.sessions = ["soak-session-%d" % i for i in range(sessions)]
        self.containers = {}  # session -> container id of its sandbox
        self.lock = threading.Lock()
        # A client does not delete a container while it still uses it: one request at a time per
        # session (deleting mid-request is a client bug the proxy answers with a 502).
        self.session_locks = {s: threading.Lock() for s in self.sessions}

    def minute(self):
        return int((time.monotonic() - self.start) // 60)

    def run(self, kind):
        began = time.monotonic()
        minute = self.minute()
        try:
            ok, detail = getattr(self, "do_" + kind)()
        except Exception as exc:  # a hang, a reset: an error of this kind
            ok, detail = False, repr(exc)
        self.stats.record(kind, ok, (time.monotonic() - began) * 1000, minute, detail)

    def do_passthrough_json(self):
        status, data = request(self.port, "POST", "/v1/chat/completions", chat("soak"))
        return status == 200 and json.loads(data)["choices"][0]["message"]["content"] == "pong", \
            data.decode(errors="replace")

    def do_passthrough_sse(self):
        status, data = request(self.port, "POST", "/v1/chat/completions",
                               chat("soak", stream=True))
        return status == 200 and data.count(b"tok") == 3 and b"[DONE]" in data, \
            data.decode(errors="replace")

    def do_ci_responses(self):
        status, data = request(self.port, "POST", "/v1/responses",
                               {"model": "soak", "input": "sum", "tools": CI_TOOL})
        body = json.loads(data)
        out = body.get("output", [])
        return (status == 200 and len(out) == 2 and
                out[0].get("outputs", [{}])[0].get("logs") == "45\n"), data.decode()[:300]

    def do_ci_chat(self):
        status, data = request(self.port, "POST", "/v1/chat/completions",
                               chat("soak", "sum", tools=CI_TOOL))
        body = json.loads(data)
        return (status == 200 and
                body["choices"][0]["message"]["content"] == "45"), data.decode()[:300]

    def do_session(self):
        session = random.choice(self.sessions)
        with self.session_locks[session]:
            status, data = request(self.port, "POST", "/v1/responses",
                                   {"model": "soak", "input": "sum", "tools": CI_TOOL,
                                    "metadata": {"session_id": session}})
            body = json.loads(data)
            out = body.get("output", [])
            ok = (status == 200 and len(out) == 2 and
                  out[0].get("outputs", [{}])[0].get("logs") == "45\n")
            if ok and out[0].get("container_id"):
                with self.lock:
                    self.containers[session] = out[0]["container_id"]
        return ok, data.decode()[:300]

    def do_container_delete(self):
        with self.lock:
            if not self.containers:
                return True, ""
            session = random.choice(list(self.containers))
        with self.session_locks[session]:
            with self.lock:
                cid = self.containers.pop(session, None)
            if cid is None:
                return True, ""
            status, data = request(self.port, "DELETE", "/v1/containers/" + cid)
        return status == 200, "%d %s" % (status, data[:200])

    def do_hangup(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        Exchanges.count()
        try:
            payload = json.dumps(chat("soak-hold", stream=True, metadata={"chunks": "5"})).encode()
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                         b"authorization: Bearer sk-soak-harness-0001\r\n"
                         b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                         % (len(payload), payload))
            got = b""
            while b"tok0" not in got:
                chunk = sock.recv(65536)
                if not chunk:
                    return False, "closed before the first token: " + got.decode(errors="replace")
                got += chunk
            return got.startswith(b"HTTP/1.1 200"), got[:200].decode(errors="replace")
        finally:
            sock.close()  # mid-stream

    def do_upstream_fail(self):
        status, data = request(self.port, "POST", "/v1/chat/completions", chat("soak-fail"))
        return status == 500, "%d %s" % (status, data[:200])

    def do_slow(self):
        status, data = request(self.port, "POST", "/v1/chat/completions", chat("soak-slow"))
        return status == 200, "%d %s" % (status, data[:200])

    def do_held_stream(self, chunks=20):
        status, data = request(self.port, "POST", "/v1/chat/completions",
                               chat("soak-hold", stream=True, metadata={"chunks": str(chunks)}),
                               timeout=chunks + 120)
        return status == 200 and data.count(b"tok") == chunks and b"[DONE]" in data, \
            "%d %s" % (status, data[:200])


MIX = [("passthrough_json", 25), ("passthrough_sse", 15), ("ci_responses", 10), ("ci_chat", 10),
       ("session", 15), ("container_delete", 5), ("hangup", 5), ("upstream_fail", 5),
       ("slow", 5)]

# ----------------------------------------------------------------------------- sampling


def proc_status(pid):
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, rest = line.partition(":")
            values[key] = rest.strip()
    return values


def marked_processes(app_pid):
    """The pids (as /proc entries) whose command line carries this app's sandbox marker."""
    marker = b"loopscope-sandbox:%d" % app_pid
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                if marker in f.read():
                    yield entry
        except OSError:
            pass


def sandbox_processes(app_pid):
    return sum(1 for _ in marked_processes(app_pid))


def zygote_descriptors(app_pid):
    """The sandbox zygote's open descriptors beyond its own three and the three it holds per live
    sandbox (lifeline, report pipe, pidfd): 0 unless it leaks (+2 or +4 while it is forking one).
    Read between two identical reads of its children, so sandboxes started or reaped while this
    sampler was descheduled under load do not count. None without a zygote or a quiet moment."""
    for entry in marked_processes(app_pid):
        try:
            with open("/proc/%s/comm" % entry, "rb") as f:
                if f.read().strip() != b"sandbox-zygote":
                    continue
            children = "/proc/%s/task/%s/children" % (entry, entry)
            for _ in range(20):
                with open(children) as f:
                    before = f.read().split()
                fds = len(os.listdir("/proc/%s/fd" % entry))
                with open(children) as f:
                    if f.read().split() == before:
                        return fds - 3 - 3 * len(before)
            return None
        except OSError:
            pass
    return None


STORE_FILES = []  # the history file and its WAL (set in main)


def store_kb():
    return sum(os.path.getsize(f) for f in STORE_FILES if os.path.exists(f)) // 1024


def sample(pid):
    status = proc_status(pid)
    return {"rss_kb": int(status["VmRSS"].split()[0]),
            "rss_anon_kb": int(status["RssAnon"].split()[0]),
            "rss_file_kb": int(status["RssFile"].split()[0]) + int(status["RssShmem"].split()[0]),
            "threads": int(status["Threads"]),
            "fds": len(os.listdir("/proc/%d/fd" % pid)), "sandbox_procs": sandbox_processes(pid),
            "zygote_extra_fds": zygote_descriptors(pid), "store_kb": store_kb()}


def stored_flows(port, token):
    """Pages through the control API's flow list (newest first) and counts every flow."""
    total, before = 0, None
    while True:
        path = "/loopscope/v1/flows?limit=1000" + ("&before=" + before if before else "")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            conn.request("GET", path, headers={"authorization": "Bearer " + token})
            resp = conn.getresponse()
            page = json.loads(resp.read())
        finally:
            conn.close()
        if resp.status != 200:
            raise RuntimeError("flow list: %d %s" % (resp.status, page))
        total += len(page["data"])
        if not page.get("has_more") or not page["data"]:
            return total
        before = page["data"][-1]["id"]


def heap_stats_kb(pid, log_path):
    """malloc's own count of bytes in use (glibc malloc_stats) and SQLite's share of it
    (sqlite3_memory_used: page caches and statements), both called in the process by gdb, which
    stops it for about a second; (None, None) when gdb cannot. Tells a growing heap from free
    pages malloc keeps, and the store's bounded caches from the rest: RSS alone cannot."""
    before = os.path.getsize(log_path)
    try:
        out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "call (void)malloc_stats()",
                              "-ex", "print (long long)sqlite3_memory_used()"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    sqlite_kb = None
    for line in out.decode(errors="replace").splitlines():
        if line.startswith("$1 = "):
            sqlite_kb = int(line[5:]) // 1024
    time.sleep(0.2)
    with open(log_path, "rb") as f:
        f.seek(before)
        text = f.read().decode(errors="replace")
    total = text.rfind("Total (incl. mmap):")
    if total < 0:
        return None, sqlite_kb
    for line in text[total:].splitlines():
        if line.strip().startswith("in use bytes"):
            return int(line.split("=")[1]) // 1024, sqlite_kb
    return None, sqlite_kb


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ----------------------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary")
    parser.add_argument("--replot", metavar="DIR", help="only plot DIR/samples.csv to --plot")
    parser.add_argument("--duration", type=int, default=1800, help="seconds (default 1800)")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--streams", type=int, default=500, help="streams held open per burst")
    parser.add_argument("--burst-every", type=int, default=300, help="seconds between bursts")
    parser.add_argument("--sample-every", type=float, default=5.0)
    parser.add_argument("--out", default="/tmp/loopscope-soak")
    parser.add_argument("--plot", help="write a PNG of the curves here")
    parser.add_argument("--heap-stats", action="store_true",
                        help="at each quiet point before a burst, read malloc's bytes in use "
                             "and SQLite's share of them with gdb (stops the process for about "
                             "a second)")
    args = parser.parse_args()
    if args.replot:
        return replot(args.replot, args.plot)
    if not args.binary:
        parser.error("--binary is required")
    os.makedirs(args.out, exist_ok=True)

    upstream = ThreadingServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(os.path.join(args.out, "loopscope.log"), "wb")
    # The held streams of a burst plus the workers must fit under general_settings.
    # max_connections (default 256; beyond it 503s, which the workers would retry in a tight
    # loop and count as errors).
    config = os.path.join(args.out, "config.yaml")
    with open(config, "w") as f:
        f.write("general_settings:\n  max_connections: %d\n" % (args.streams + args.workers + 256))
    # A history store of its own: every exchange must end up there ("every flow accounted
    # for"), and its size is sampled with the process.
    data_dir = os.path.join(args.out, "data")
    shutil.rmtree(data_dir, ignore_errors=True)
    STORE_FILES[:] = [os.path.join(data_dir, "history.sqlite3"),
                      os.path.join(data_dir, "history.sqlite3-wal")]
    token = "soak-control-" + os.urandom(8).hex()
    app = subprocess.Popen([args.binary, "--headless", "--port", str(port), "--upstream",
                            "http://127.0.0.1:%d/v1" % upstream.server_address[1],
                            "--config", config, "--data-dir", data_dir,
                            "--control-token", token],
                           stdout=log, stderr=log)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("loopscope did not listen")

    stats = Stats()
    start = time.monotonic()
    end = start + args.duration
    work = Workload(port, stats, start)
    kinds = [k for k, w in MIX for _ in range(w)]
    stop = threading.Event()

    def worker():
        while not stop.is_set() and time.monotonic() < end:
            work.run(random.choice(kinds))

    def burst():
        # Held streams: 20 chunks a second apart, all open at once.
        threads = [threading.Thread(target=work.run, args=("held_stream",), daemon=True)
                   for _ in range(args.streams)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)

    samples = []
    first = dict(sample(app.pid), t=0.0, load=load_average(), requests=0, errors=0)
    samples.append(first)
    workers = [threading.Thread(target=worker, daemon=True) for _ in range(args.workers)]
    for t in workers:
        t.start()
    next_burst = start + 30
    bursts = []
    quiet_points = []  # just before each burst: RSS (and the heap, with --heap-stats)
    next_sample = start + args.sample_every
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_burst and now + 60 < end:
            point = dict(sample(app.pid), t=round(now - start, 1))
            if args.heap_stats:
                point["heap_in_use_kb"], point["sqlite_kb"] = heap_stats_kb(app.pid, log.name)
            quiet_points.append(point)
            print("quiet point %s" % point, flush=True)
            bursts.append(threading.Thread(target=burst, daemon=True))
            bursts[-1].start()
            next_burst = now + args.burst_every
        if now >= next_sample:
            with stats.lock:
                done = sum(stats.counts.values())
                errs = sum(stats.errors.values())
            s = dict(sample(app.pid), t=round(now - start, 1), load=load_average(),
                     requests=done, errors=errs)
            samples.append(s)
            print("t=%6.0fs rss=%6d KiB fds=%4d threads=%3d sandbox_procs=%3d store=%7d KiB "
                  "requests=%7d errors=%d load=%s" % (s["t"], s["rss_kb"], s["fds"], s["threads"],
                                                      s["sandbox_procs"], s["store_kb"], done,
                                                      errs, s["load"]), flush=True)
            next_sample += args.sample_every
        time.sleep(0.2)
    stop.set()
    for t in workers + bursts:
        t.join(timeout=300)
    # Quiet: sessions' sandboxes stay (15 min TTL); everything else must be gone.
    time.sleep(10)
    settled = dict(sample(app.pid), t=round(time.monotonic() - start, 1), load=load_average(),
                   requests=sum(stats.counts.values()), errors=sum(stats.errors.values()))
    samples.append(settled)
    try:
        flows_stored = stored_flows(port, token)
    except Exception as exc:  # counted as missing below, with the reason
        flows_stored, store_error = -1, repr(exc)
    else:
        store_error = None
    app.send_signal(signal.SIGTERM)
    try:
        app.wait(timeout=60)
    except subprocess.TimeoutExpired:
        app.kill()
    time.sleep(2)
    leftover = sandbox_processes(app.pid)
    upstream.shutdown()

    with open(os.path.join(args.out, "samples.csv"), "w") as f:
        keys = ["t", "rss_kb", "rss_anon_kb", "rss_file_kb", "fds", "threads", "sandbox_procs",
                "zygote_extra_fds",
                "store_kb", "requests", "errors", "load"]
        f.write(",".join(keys) + "\n")
        for s in samples:
            f.write(",".join(str(s[k]) for k in keys) + "\n")
    minutes = sorted({m for m, _ in stats.latency})
    per_minute = []
    for m in minutes:
        row = {"minute": m}
        for kind in ("passthrough_json", "ci_responses", "session"):
            lat = sorted(stats.latency.get((m, kind), []))
            row[kind + "_n"] = len(lat)
            row[kind + "_p50"] = round(lat[len(lat) // 2], 2) if lat else None
            row[kind + "_p99"] = round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 2) \
                if lat else None
        per_minute.append(row)
    with open(os.path.join(args.out, "minutes.csv"), "w") as f:
        keys = list(per_minute[0].keys()) if per_minute else []
        f.write(",".join(keys) + "\n")
        for row in per_minute:
            f.write(",".join(str(row[k]) for k in keys) + "\n")

    # RSS growth after warm-up: the first sample at >= 20 % of the run vs the last under load.
    loaded = [s for s in samples[:-1] if s["t"] > 0]
    warm = next((s for s in loaded if s["t"] >= 0.2 * args.duration), loaded[0])
    summary = {
        "duration_s": args.duration, "workers": args.workers, "streams_per_burst": args.streams,
        "bursts": len(bursts), "requests": dict(stats.counts), "errors": dict(stats.errors),
        "error_samples": stats.error_samples,
        "rss_kb": {"start": first["rss_kb"], "after_warmup": warm["rss_kb"],
                   "max": max(s["rss_kb"] for s in samples), "end": loaded[-1]["rss_kb"],
                   "settled": settled["rss_kb"]},
        # Before each burst (the load's quiet points; the first is before any burst).
        "quiet_points": quiet_points,
        "rss_growth_after_warmup_pct": round(100.0 * (loaded[-1]["rss_kb"] - warm["rss_kb"]) /
                                             warm["rss_kb"], 2),
        "fds": {"start": first["fds"], "max": max(s["fds"] for s in samples),
                "settled": settled["fds"]},
        "threads": {"start": first["threads"], "max": max(s["threads"] for s in samples),
                    "settled": settled["threads"]},
        "sandbox_procs": {"start": first["sandbox_procs"],
                          "max": max(s["sandbox_procs"] for s in samples),
                          "settled": settled["sandbox_procs"],
                          "after_exit": leftover},
        # Per sample: the zygote's descriptors beyond 3 + 3 per live sandbox (0: no leak).
        "zygote_extra_fds": {
            "values": sorted({s["zygote_extra_fds"] for s in samples
                              if s["zygote_extra_fds"] is not None}),
            "settled": settled["zygote_extra_fds"]},
        "passthrough_json_p99_first_last_minute": [
            per_minute[0]["passthrough_json_p99"] if per_minute else None,
            per_minute[-1]["passthrough_json_p99"] if per_minute else None],
        "flows": {"exchanges_sent": Exchanges.sent, "in_store": flows_stored,
                  "every_flow_accounted_for": flows_stored == Exchanges.sent,
                  "error": store_error},
        "store_kb": {"after_warmup": warm["store_kb"], "end": settled["store_kb"]},
        "exit_code": app.returncode,
        "load_average_end": load_average(),
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))

    if args.plot:
        plot(samples, args.plot, "loopscope soak: %d s, %d requests, %d errors" % (
            args.duration, sum(stats.counts.values()), sum(stats.errors.values())))


def plot(samples, path, title):
    import matplotlib  # Debian's python3-matplotlib: run with /usr/bin/python3
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = [float(s["t"]) / 60 for s in samples]
    fig, axes = plt.subplots(2, 2, figsize=(9, 5.5), sharex=True)
    for ax, key, label in ((axes[0][0], "rss_kb", "RSS (KiB)"), (axes[0][1], "fds", "open fds"),
                           (axes[1][0], "threads", "threads"),
                           (axes[1][1], "sandbox_procs", "sandbox processes")):
        ax.plot(t, [float(s[key]) for s in samples], lw=1)
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("minutes")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def replot(out_dir, path):
    """Plots an earlier run's samples.csv (--replot DIR --plot FILE)."""
    import csv
    with open(os.path.join(out_dir, "samples.csv")) as f:
        samples = list(csv.DictReader(f))
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    plot(samples, path, "loopscope soak: %d s, %d requests, %d errors" % (
        summary["duration_s"], sum(summary["requests"].values()),
        sum(summary["errors"].values())))

if __name__ == "__main__":
    main()
