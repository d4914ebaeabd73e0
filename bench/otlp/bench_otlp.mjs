// Trace export on/off, side by side: the same pass-through load (chat completions against a
// scripted upstream that answers at once) through a headless Loopscope without export, with
// export to a live collector (answers 200), and with export to a dead collector (nothing
// listens). Usage: LOOPSCOPE_BIN=build/<dir>/app/loopscope node bench/otlp/bench_otlp.mjs [N]
import http from 'node:http';
import { once } from 'node:events';
import { startLoopscope, startScriptedUpstream } from '../../tests/e2e/harness.mjs';

const N = Number(process.argv[2] ?? 2000);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const body = JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] });

function post(url) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, {
      method: 'POST', agent,
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6)
        : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function load(url, total, concurrency) {
  const samples = [];
  let next = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) { next += 1; samples.push(await post(url)); }
  }));
  const seconds = (Date.now() - t0) / 1000;
  samples.sort((a, b) => a - b);
  const pct = (p) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))];
  return { p50: pct(0.5), p99: pct(0.99), rps: total / seconds };
}

const upstream = await startScriptedUpstream(() => ({
  json: { id: 'chatcmpl_b', object: 'chat.completion', created: 1, model: 'scripted',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } },
}));
let received = 0;
const collector = http.createServer((req, res) => { req.resume(); req.on('end', () => { received += 1; res.end('{}'); }); });
collector.listen(0, '127.0.0.1');
await once(collector, 'listening');
const dead = http.createServer();
dead.listen(0, '127.0.0.1');
await once(dead, 'listening');
const deadUrl = `http://127.0.0.1:${dead.address().port}`;
await new Promise((r) => dead.close(r));

const setups = [
  ['export off', []],
  ['export on, live collector (http/json)', ['--otlp-endpoint', `http://127.0.0.1:${collector.address().port}`]],
  ['export on, live collector (http/protobuf)', ['--otlp-endpoint', `http://127.0.0.1:${collector.address().port}`, '--otlp-protocol', 'http/protobuf']],
  ['export on, dead collector', ['--otlp-endpoint', deadUrl]],
];
console.log('| setup | concurrency | p50 ms | p99 ms | req/s |');
console.log('|---|---|---|---|---|');
for (const [name, args] of setups) {
  const app = await startLoopscope(['--upstream', upstream.url, '--no-history', ...args]);
  const url = `${app.apiBase}/chat/completions`;
  await load(url, 200, 4); // warm-up
  for (const concurrency of [1, 16]) {
    const r = await load(url, N, concurrency);
    console.log(`| ${name} | ${concurrency} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${Math.round(r.rps)} |`);
  }
  await app.stop();
}
console.log(`\ncollector batches received: ${received}`);
agent.destroy();
collector.close();
await upstream.close();
