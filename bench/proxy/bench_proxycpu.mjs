// bench_proxycpu: what one pass-through exchange costs each of Loopscope's threads — CPU time and
// how often the thread was put on a CPU (wake-ups) per request, from the kernel's per-thread
// counters (/proc/PID/task/TID/schedstat, Linux). Unlike latency these barely move with what
// else the machine runs, so two builds compare on a busy machine too. One Node.js client with a
// keep-alive connection, a Node.js upstream that answers at once, requests one after another.
//
// Usage: node bench/proxy/bench_proxycpu.mjs --bin [NAME=]build/release/app/loopscope
//          [--bin NAME=OTHER ...] [--requests 1000] [--no-history] [--rows "1 MB,1 MB SSE answer"]
import http from 'node:http';
import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { startLoopscope } from './loopscope.mjs'; // stopped if the bench is interrupted
import { settle } from './quiet.mjs';

const bins = [];
let requests = 1000;
const extra = [];
for (let i = 2; i < process.argv.length; ++i) {
  const arg = process.argv[i];
  if (arg === '--bin') {
    const value = process.argv[++i];
    const eq = value.indexOf('=');
    bins.push(eq > 0 ? { name: value.slice(0, eq), path: value.slice(eq + 1) } : { name: 'loopscope', path: value });
  } else if (arg === '--requests') {
    requests = Number(process.argv[++i]);
  } else if (arg === '--rows') {
    ++i; // read below
  } else if (arg === '--no-history') {
    extra.push('--no-history');
  }
}
if (!bins.length) {
  console.error('usage: bench_proxycpu.mjs --bin [NAME=]path/to/loopscope ... [--requests N] [--no-history]');
  process.exit(2);
}

const answer = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', choices: [] });
// The same 1 MB stream as bench_passthrough's "1 MB SSE answer" row, in 16 KB writes.
const sseEvent = `data: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'x'.repeat(1000) })}\n\n`;
const sseBody = sseEvent.repeat(Math.ceil(1024 * 1024 / sseEvent.length)) + 'data: [DONE]\n\n';
const upstream = http.createServer(async (req, res) => {
  for await (const _ of req);
  if (req.headers['x-bench-sse']) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < sseBody.length; i += 16384) res.write(sseBody.slice(i, i + 16384));
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
  res.end(answer);
});
upstream.keepAliveTimeout = 60000;
upstream.listen(0, '127.0.0.1');
await once(upstream, 'listening');

const chatBody = (bytes) => JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(Math.max(0, bytes - 60)) }] });
const sizes = [['0.1 KB', 100], ['8 KB', 8 * 1024], ['100 KB', 100 * 1024], ['1 MB', 1024 * 1024],
  ['1 MB SSE answer', 100, true]];
const only = process.argv.includes('--rows') ? process.argv[process.argv.indexOf('--rows') + 1].split(',').map((r) => r.trim()) : null;

function threads(pid) {
  const out = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const [ns, , runs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(' ').map(Number);
      // Minor page faults (stat's 10th field): memory the thread touched for the first time,
      // the cost of a fresh buffer per read.
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const faults = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
      const name = comm.startsWith('loopscope') ? comm : 'other';
      out[name] = { ns: (out[name]?.ns ?? 0) + ns, runs: (out[name]?.runs ?? 0) + runs, faults: (out[name]?.faults ?? 0) + faults };
    } catch { /* a thread that ended meanwhile */ }
  }
  return out;
}

console.log(`bench_proxycpu: ${requests} requests per size (fewer for 1 MB), sequential, ${extra.join(' ') || 'with history'}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log('');
console.log('| build | body | thread | CPU µs per request | runs per request | page faults per request |');
console.log('|---|---|---|---|---|---|');
const fileRows = [];
let flows = 0;
for (const bin of bins) {
  const gateway = await startLoopscope(bin.path, upstream.address().port, extra);
  const url = new URL(gateway.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const send = (body, sse) => new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, path: '/v1/chat/completions', method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer sk-bench',
        ...(sse ? { 'x-bench-sse': '1' } : {}) } },
    (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.end(body);
  });
  for (const [label, bytes, sse] of sizes) {
    if (only && !only.includes(label))
      continue;
    const body = chatBody(bytes);
    const n = bytes >= 1024 * 1024 || sse ? Math.max(20, Math.floor(requests / 10)) : requests;
    for (let i = 0; i < 20; ++i) await send(body, sse);
    await settle([gateway.pid], 30000); // the store catches up before counting
    const before = threads(gateway.pid);
    for (let i = 0; i < n; ++i) await send(body, sse);
    await settle([gateway.pid], 30000); // and records all that was sent (a fixed wait undercounted)
    const after = threads(gateway.pid);
    flows += n + 20;
    for (const name of Object.keys(after).sort()) {
      const cpu = (after[name].ns - (before[name]?.ns ?? 0)) / n / 1e3;
      const runs = (after[name].runs - (before[name]?.runs ?? 0)) / n;
      const faults = (after[name].faults - (before[name]?.faults ?? 0)) / n;
      if (cpu >= 1 || runs >= 0.05)
        console.log(`| ${bin.name} | ${label} | ${name} | ${cpu.toFixed(1)} | ${runs.toFixed(2)} | ${faults.toFixed(1)} |`);
    }
  }
  agent.destroy();
  // The history file once the process has stopped (its write-ahead log folded in at the close):
  // the WAL file is reused, not regrown, so sizes taken while it runs hide what was written.
  await gateway.stop((dir) => {
    const bytes = statSync(join(dir, 'history.sqlite3')).size;
    fileRows.push(`| ${bin.name} | ${flows} | ${(bytes / 1048576).toFixed(1)} | ${(bytes / flows / 1024).toFixed(1)} |`);
  });
  flows = 0;
}
if (!extra.includes('--no-history')) {
  console.log('');
  console.log('| build | flows recorded | history file MiB | KiB per flow |');
  console.log('|---|---|---|---|');
  for (const row of fileRows) console.log(row);
}
upstream.close();
