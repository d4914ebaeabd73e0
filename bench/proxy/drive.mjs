// drive: sends REQUESTS pass-through requests of SIZE bytes back to back through a Loopscope
// binary (one keep-alive Node client, a local Node upstream that reads the body and answers a
// small JSON), for a profiler attached to the process meanwhile; writes its pid to --pid-file
// once it listens and waits --settle-ms before the first request. Prints the mean time per
// request. (How the 2026-12-08 profile in docs/benchmarks.md was taken: `perf record -e
// cpu-clock -F 1999 -p $(cat PIDFILE)` while this ran with --requests 400 --size 1048576.)
// --prose fills the body with this repository's own text (README.md, docs/ and core/'s sources
// in turn, none repeated before the size is reached: newlines, quotes, non-ASCII, what the
// recorder's JSON and compression work meets in agents' requests) instead of one letter.
//   node bench/proxy/drive.mjs --bin build/release/app/loopscope [--requests 400]
//        [--size 1048576] [--prose] [--pid-file /tmp/loopscope.pid] [--settle-ms 1500]
//        [-- extra args]
import http from 'node:http';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startLoopscope } from './loopscope.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    bin: { type: 'string' },
    requests: { type: 'string', default: '400' },
    size: { type: 'string', default: String(1024 * 1024) },
    'pid-file': { type: 'string', default: '/tmp/loopscope.pid' },
    'settle-ms': { type: 'string', default: '1500' },
    prose: { type: 'boolean', default: false },
  },
});
if (!values.bin) {
  console.error('usage: node bench/proxy/drive.mjs --bin PATH [--requests N] [--size BYTES]');
  process.exit(2);
}
const requests = Number(values.requests);
const size = Number(values.size);

const upstream = http.createServer(async (req, res) => {
  for await (const _ of req); // read the whole body, as a model server does
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"object":"chat.completion","choices":[]}');
});
await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const loopscope = await startLoopscope(values.bin, upstream.address().port, positionals);
writeFileSync(values['pid-file'], String(loopscope.pid));
await new Promise((resolve) => setTimeout(resolve, Number(values['settle-ms'])));

function repositoryText(bytes) {
  const root = new URL('../../', import.meta.url);
  const files = ['README.md'];
  for (const dir of ['docs', 'core']) {
    for (const f of readdirSync(new URL(dir, root), { recursive: true }).sort()) {
      if (/\.(md|cpp|h)$/.test(f)) files.push(`${dir}/${f}`);
    }
  }
  let text = '';
  for (const f of files) {
    if (text.length >= bytes) break;
    text += readFileSync(new URL(f, root), 'utf8');
  }
  return text.repeat(Math.ceil(bytes / text.length)); // (a repository smaller than the size)
}
const content = (values.prose ? repositoryText(size) : 'x'.repeat(size)).slice(0, size);
const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const target = new URL(loopscope.url);
const started = performance.now();
for (let i = 0; i < requests; ++i) {
  await new Promise((resolve, reject) => {
    const req = http.request({
      host: target.hostname, port: target.port, path: '/v1/chat/completions', method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}
console.log(`${requests} requests of ${size} bytes: ${((performance.now() - started) / requests).toFixed(3)} ms each`);
agent.destroy();
await loopscope.stop();
upstream.close();
