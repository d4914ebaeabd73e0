#!/usr/bin/env node
// Pass-through throughput with recording on: N keep-alive Node clients send 0.1 KB chat
// completions through each Loopscope binary for a few seconds, the binaries taking turns
// (several rounds, order rotated), against one local upstream. Prints requests/s per binary
// and round, and the median. The Node client is part of what is measured (on 2 cores it is
// much of it): compare the binaries with each other, not with other tools' figures.
//
//   node bench/proxy/bench_throughput.mjs --bin before=PATH --bin now=PATH
//        [--clients 16] [--seconds 5] [--rounds 4]
import http from 'node:http';
import { once } from 'node:events';
import { startLoopscope } from './loopscope.mjs'; // stopped if the bench is interrupted

const args = process.argv.slice(2);
const bins = [];
let clients = 16;
let seconds = 5;
let rounds = 4;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--bin') {
    const [name, ...rest] = args[++i].split('=');
    bins.push({ name, path: rest.join('=') });
  } else if (args[i] === '--clients') clients = Number(args[++i]);
  else if (args[i] === '--seconds') seconds = Number(args[++i]);
  else if (args[i] === '--rounds') rounds = Number(args[++i]);
  else throw new Error(`unknown argument ${args[i]}`);
}
if (bins.length === 0) throw new Error('give at least one --bin NAME=PATH');

const answer = JSON.stringify({ id: 'c', object: 'chat.completion', choices: [] });
const upstream = http.createServer(async (req, res) => {
  for await (const _ of req);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
  res.end(answer);
});
upstream.keepAliveTimeout = 60000;
upstream.listen(0, '127.0.0.1');
await once(upstream, 'listening');
const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(100) }] });

async function measure(bin) {
  const gateway = await startLoopscope(bin.path, upstream.address().port);
  const url = new URL(gateway.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const send = () => new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, path: '/v1/chat/completions',
      method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body),
        authorization: 'Bearer sk-bench-throughput' } }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.end(body);
  });
  const end = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (Date.now() < end) { await send(); ++done; }
  }));
  agent.destroy();
  await gateway.stop();
  return done / seconds;
}

const results = new Map(bins.map((b) => [b.name, []]));
console.log(`bench_throughput: ${clients} clients, ${seconds} s per turn, ${rounds} rounds; node ${process.version}`);
for (let round = 0; round < rounds; ++round) {
  const order = bins.map((_, i) => bins[(i + round) % bins.length]);
  for (const bin of order) {
    const rate = await measure(bin);
    results.get(bin.name).push(rate);
    console.log(`round ${round + 1} ${bin.name}: ${rate.toFixed(0)} req/s`);
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
console.log('\n| binary | median req/s | rounds |\n|---|---|---|');
for (const [name, rates] of results)
  console.log(`| ${name} | ${median(rates).toFixed(0)} | ${rates.map((r) => r.toFixed(0)).join(', ')} |`);
upstream.close();
