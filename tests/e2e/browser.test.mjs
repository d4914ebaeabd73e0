// A real browser (headless Chromium from Debian) against a headless Loopscope with the demo
// model and the real sandbox: a page from a loopback origin may call the proxy (CORS preflight
// with the SDK's headers, then the code runs), a page from any other origin may not — neither
// with a CORS request nor with the no-cors text/plain POST a browser sends without asking
// (issue 18's attack). The foreign origin is a host name mapped to 127.0.0.1 inside Chromium
// (--host-resolver-rules); nothing leaves this machine. Skipped when chromium is not installed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startLoopscope, waitFor } from './harness.mjs';

const run = promisify(execFile);
let chromium = null;
try {
  execFileSync('chromium', ['--version'], { stdio: 'ignore' });
  chromium = 'chromium';
} catch { /* not installed: skip */ }

const TOKEN = 'browser-e2e-control-token';
let app;
let pages;
let profile;

function page(base, mode) {
  const init = mode === 'no-cors'
    ? "mode: 'no-cors', headers: {'content-type': 'text/plain'},"
    : "headers: {'content-type': 'application/json', authorization: 'Bearer sk-browser-0001', " +
      "'x-stainless-os': 'Linux', 'x-stainless-lang': 'js', 'x-stainless-retry-count': '0'},";
  return `<!doctype html><html><body>pending<script>
(async () => {
  try {
    const r = await fetch('${base}/v1/responses', {method: 'POST', ${init}
      body: JSON.stringify({model: 'loopscope-demo', input: 'What is 17*23?',
                            tools: [{type: 'code_interpreter'}]})});
    document.body.textContent = 'status=' + r.status + ' type=' + r.type + ' ' + (await r.text());
  } catch (e) { document.body.textContent = 'fetch failed: ' + e; }
})();
</script></body></html>`;
}

async function browse(url) {
  const { stdout } = await run(chromium, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run',
    `--user-data-dir=${profile}`, '--virtual-time-budget=20000',
    '--host-resolver-rules=MAP evil.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
    '--dump-dom', url,
  ], { timeout: 90000 });
  return stdout.replace(/\s+/g, ' ');
}

async function flows() {
  const res = await fetch(`${app.baseURL}/loopscope/v1/flows?limit=200`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return (await res.json()).data;
}

before(async () => {
  if (!chromium) return;
  app = await startLoopscope(['--upstream', 'demo', '--control-token', TOKEN, '--no-history']);
  profile = mkdtempSync(path.join(tmpdir(), 'loopscope-chromium-'));
  pages = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page(app.baseURL, req.url.includes('no-cors') ? 'no-cors' : 'cors'));
  });
  pages.listen(0, '127.0.0.1');
  await once(pages, 'listening');
});

after(async () => {
  if (!chromium) return;
  pages.close();
  const code = await app.stop();
  rmSync(profile, { recursive: true, force: true });
  assert.equal(code, 0);
});

test('a loopback page calls the proxy through CORS and the code runs', { skip: !chromium && 'chromium not installed' }, async () => {
  const port = pages.address().port;
  const dom = await browse(`http://localhost:${port}/page`);
  assert.match(dom, /status=200 type=cors/);
  assert.match(dom, /391/);
  assert.ok(await waitFor(async () => (await flows()).some((f) => f.code_runs === 1)));
});

test('a foreign page is refused, with or without a preflight, and no code runs', { skip: !chromium && 'chromium not installed' }, async () => {
  const port = pages.address().port;
  const ranBefore = (await flows()).filter((f) => f.code_runs > 0).length;
  const cors = await browse(`http://evil.test:${port}/page`);
  assert.match(cors, /fetch failed: TypeError/);
  const noCors = await browse(`http://evil.test:${port}/no-cors`);
  assert.match(noCors, /status=0 type=opaque/); // the page learns nothing
  let all;
  assert.ok(await waitFor(async () => {
    all = await flows();
    return all.filter((f) => f.status === 403).length >= 2;
  }), `403 flows: ${JSON.stringify(all?.map((f) => [f.method, f.path, f.status]))}`);
  // The preflight (OPTIONS) and the no-cors POST were both refused; nothing else reached the loop.
  const refused = all.filter((f) => f.status === 403);
  assert.ok(refused.some((f) => f.method === 'OPTIONS'));
  assert.ok(refused.some((f) => f.method === 'POST'));
  assert.equal(all.filter((f) => f.code_runs > 0).length, ranBefore);
});
