// No configured secret's value is ever stored or shown (issue 33, docs/security.md "Secrets").
// A canary key is configured as the upstream's api_key; the scripted model writes code that
// prints it (split across two live-output chunks, on stdout, stderr and in an exception), then
// the upstream echoes it in an error body, and a pass-through request carries it in its query
// string. The canary must be absent from the SQLite files' bytes (and the decompressed rows), every
// control API answer, /events, the HAR export, the OTLP payloads, MCP answers and the process
// log — while the upstream received it intact wherever it needs it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inflateSync } from 'node:zlib';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  startLoopscope, startScriptedUpstream, responsesFunctionCall, chatMessage, controlClient, waitFor,
} from './harness.mjs';

// No key format matches it ("cnry-…"), so only the configured value can find it.
const CANARY = `cnry-${randomBytes(12).toString('hex')}`;
const FIRST_HALF = CANARY.slice(0, 15); // what the first live chunk ends with
const LAST4 = CANARY.slice(-4);
// A key nobody configured, in a known format: the policy's formats must find it.
const FORMAT_KEY = `sk-proj-${randomBytes(12).toString('hex')}`;
const CLIENT_KEY = 'sk-e2e-canary-client-key-0001';

const CODE = [
  'import sys, time',
  `k = "${CANARY}"`,
  'print("start", flush=True)',
  'sys.stdout.write("key: " + k[:15]); sys.stdout.flush()',
  'time.sleep(2)',
  'sys.stdout.write(k[15:] + "\\n"); sys.stdout.flush()',
  `print("${FORMAT_KEY}")`,
  'print("err " + k, file=sys.stderr)',
  'raise ValueError("bad key " + k)',
].join('\n');

const cleanup = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

// Whether `text` (a string or bytes) holds any piece a reader could rebuild the canary from.
function leaks(text) {
  const s = Buffer.isBuffer(text) ? text.toString('latin1') : String(text);
  return [CANARY, FIRST_HALF, FORMAT_KEY].filter((needle) => s.includes(needle));
}

function assertClean(what, text) {
  assert.deepEqual(leaks(text), [], `${what} shows a secret:\n${String(text).slice(0, 4000)}`);
}

async function startCollector() {
  const posts = [];
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    posts.push(Buffer.concat(chunks));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}`, posts, close: () => new Promise((r) => server.close(r)) };
}

// /loopscope/v1/events read into one string while the test runs.
async function subscribe(app, token) {
  const controller = new AbortController();
  const res = await fetch(`${app.baseURL}/loopscope/v1/events`, {
    headers: { authorization: `Bearer ${token}` }, signal: controller.signal,
  });
  assert.equal(res.status, 200);
  const stream = { text: '', close: () => controller.abort() };
  (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) stream.text += decoder.decode(chunk, { stream: true });
    } catch { /* aborted at the end */ }
  })();
  return stream;
}

function sseEvents(text) {
  const out = [];
  for (const block of text.split('\n\n')) {
    const name = block.match(/^event: (.*)$/m)?.[1];
    const data = block.match(/^data: (.*)$/m)?.[1];
    if (name && data) out.push({ name, data: JSON.parse(data) });
  }
  return out;
}

test('a configured key printed, echoed and queried is never stored or shown, yet reaches the upstream', async () => {
  const upstream = await startScriptedUpstream(({ path: p, index }) => {
    if (p.startsWith('/v1/chat/completions')) return { json: chatMessage(`your key ends ${CANARY}`) };
    if (index === 0) return { json: responsesFunctionCall(CODE, 'call_canary') };
    // Some providers echo the key they refused.
    return {
      status: 401,
      json: { error: { message: `Incorrect API key provided: ${CANARY}.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
    };
  });
  cleanup.push(() => upstream.close());
  const collector = await startCollector();
  cleanup.push(() => collector.close());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-secrets-'));
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = path.join(dataDir, 'config.yaml');
  writeFileSync(config, [
    'model_list:',
    '  - model_name: gpt-5',
    '    litellm_params:',
    '      model: openai/gpt-5',
    `      api_base: ${upstream.url}`,
    `      api_key: ${CANARY}`,
    '',
  ].join('\n'));
  const app = await startLoopscope(['--config', config, '--data-dir', path.join(dataDir, 'data'),
    '--otlp-endpoint', collector.url, '--otlp-protocol', 'http/json', '--otlp-capture-content']);
  let stdout = '';
  app.proc.stdout.on('data', (d) => { stdout += d; });
  let stopped = false;
  cleanup.push(async () => { if (!stopped) await app.stop(); });
  const control = await controlClient(app);
  const token = app.stderr().match(/loopscope control token: ([0-9a-f]{64})/)[1];
  const events = await subscribe(app, token);
  cleanup.push(() => events.close());

  const client = new OpenAI({ baseURL: app.apiBase, apiKey: CLIENT_KEY, maxRetries: 0 });
  // 1. Intercepted: the code prints the canary, the follow-up's answer echoes it in an error.
  // A code breakpoint stops it first: the paused code is shown by GET /paused and MCP.
  assert.equal((await control('PUT', '/breakpoints', { code: true })).status, 200);
  const intercepted = client.responses.create({ model: 'gpt-5', input: 'print the key', tools: [{ type: 'code_interpreter' }] });
  intercepted.catch(() => {}); // awaited below
  let paused = [];
  assert.ok(await waitFor(async () => {
    paused = (await control('GET', '/paused')).json?.data ?? [];
    return paused.length === 1;
  }, 20000), 'the code run paused');
  const pausedAnswer = await control('GET', '/paused');
  assertClean('GET /loopscope/v1/paused', pausedAnswer.text);
  assert.match(pausedAnswer.text, new RegExp(`\u2026${LAST4}`), 'the paused code, masked');
  const pausedMcp = new Client({ name: 'loopscope-e2e', version: '1.0.0' });
  await pausedMcp.connect(new StreamableHTTPClientTransport(new URL(`${app.baseURL}/loopscope/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  }));
  const listed = await pausedMcp.callTool({ name: 'list_paused', arguments: {} });
  assert.match(JSON.stringify(listed), /pause_/);
  assertClean('MCP list_paused', JSON.stringify(listed));
  await pausedMcp.close();
  const resolved = await control('POST', `/paused/${paused[0].id}`, { action: 'continue' });
  assert.equal(resolved.status, 200);
  assertClean('POST /loopscope/v1/paused/{id}', resolved.text);
  assert.equal((await control('PUT', '/breakpoints', { code: false })).status, 200);
  await assert.rejects(intercepted, (e) => e.status === 401);
  // 2. Pass-through, the canary in the query string (and echoed in the answer).
  const chat = await client.chat.completions.create(
    { model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] },
    { query: { api_key: CANARY } },
  );
  assert.match(chat.choices[0].message.content, /your key ends/);

  // The upstream got the key wherever it needs it, unmasked.
  assert.equal(upstream.requests.length, 3);
  assert.equal(upstream.requests[0].headers.authorization, `Bearer ${CANARY}`);
  assert.match(JSON.stringify(upstream.requests[1].body), new RegExp(CANARY), 'the output fed back to the model');
  assert.ok(upstream.requests[2].path.includes(`api_key=${CANARY}`), upstream.requests[2].path);

  // Both flows finished (the store and /events say so), then look everywhere.
  let flows = [];
  await waitFor(async () => {
    flows = (await control('GET', '/flows?limit=10')).json?.data ?? [];
    return flows.length === 2 && flows.every((f) => f.state === 'completed' || f.state === 'failed');
  }, 30000);
  assert.equal(flows.length, 2, JSON.stringify(flows));
  const ids = flows.map((f) => f.id);
  assert.ok(await waitFor(() => ids.every((id) => sseEvents(events.text)
    .some((e) => e.name === 'flow.finished' && e.data.flow_id === id)), 20000), 'flow.finished on /events');

  // The live output really came in pieces around the key, and the pieces read masked.
  // "key: " and the first half were written at once, so the event that holds "key: " coming
  // before the one with the masked key means the key reached Loopscope in two chunks.
  const chunks = sseEvents(events.text)
    .filter((e) => e.name === 'code_run.output' && e.data.stream === 'stdout').map((e) => e.data.text);
  const keyAt = chunks.findIndex((t) => t.includes('key: '));
  const maskedAt = chunks.findIndex((t) => t.includes(`\u2026${LAST4}`));
  assert.ok(keyAt >= 0 && maskedAt > keyAt, `live stdout chunks: ${JSON.stringify(chunks)}`);
  assert.ok(chunks.join('').includes(`key: \u2026${LAST4}\n`), chunks.join(''));
  assertClean('/events', events.text);

  // Control API answers.
  const routes = ['/flows?limit=10', `/flows?q=${encodeURIComponent('key')}`, '/runs', '/sandboxes', '/paused',
    '/breakpoints', ...ids.map((id) => `/flows/${id}`),
    ...flows.filter((f) => f.run_id).map((f) => `/runs/${f.run_id}`)];
  for (const route of routes) {
    const r = await control('GET', route);
    assert.equal(r.status, 200, route);
    assertClean(`GET /loopscope/v1${route}`, r.text);
  }
  const detail = (await control('GET', `/flows/${flows.find((f) => f.intercepted).id}`)).json;
  const run = detail.hops.find((h) => h.kind === 'code_run');
  assert.ok(run.code.includes(`k = "\u2026${LAST4}"`), run.code);
  assert.ok(run.stdout.includes(`key: \u2026${LAST4}`), run.stdout);
  assert.ok(run.stderr.includes(`\u2026${LAST4}`), run.stderr);
  const passThrough = (await control('GET', `/flows/${flows.find((f) => !f.intercepted).id}`)).json;
  assert.equal(passThrough.hops[0].query, `api_key=\u2026${LAST4}`);

  // HAR.
  const har = await control('GET', '/export.har');
  assert.equal(har.status, 200);
  assert.ok(har.json.log.entries.length === 2);
  assertClean('HAR export', har.text);

  // MCP.
  const mcp = new Client({ name: 'loopscope-e2e', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${app.baseURL}/loopscope/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  }));
  cleanup.push(() => mcp.close());
  const calls = [['list_flows', {}], ['search_flows', { query: 'key' }], ['list_runs', {}], ['list_sandboxes', {}],
    ...ids.map((id) => ['get_flow', { flow_id: id }])];
  for (const [name, args] of calls) {
    const result = await mcp.callTool({ name, arguments: args });
    assert.ok(!result.isError, name);
    assertClean(`MCP ${name}`, JSON.stringify(result));
  }
  const transcript = await mcp.callTool({ name: 'get_flow', arguments: { flow_id: detail.id } });
  assert.match(JSON.stringify(transcript), new RegExp(`\u2026${LAST4}`));

  // OTLP: every flow exported (with contents), none of them with the key.
  assert.ok(await waitFor(() => {
    const all = Buffer.concat(collector.posts).toString('utf8');
    return ids.every((id) => all.includes(id));
  }, 20000), 'both flows exported');
  for (const body of collector.posts) assertClean('OTLP payload', body);
  assert.match(Buffer.concat(collector.posts).toString('utf8'), /execute_tool/);

  // The store, after a clean stop: the files' bytes, then every row decompressed.
  events.close();
  assert.equal(await app.stop(), 0);
  stopped = true;
  const data = path.join(dataDir, 'data');
  const files = readdirSync(data).filter((f) => f.startsWith('history.sqlite3'));
  assert.ok(files.includes('history.sqlite3'), files.join(','));
  for (const f of files) assertClean(`${f} bytes`, readFileSync(path.join(data, f)));
  const rows = execFileSync('sqlite3', [path.join(data, 'history.sqlite3'),
    'SELECT hex(summary), hex(hops) FROM flows'], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(rows.length, 2);
  let decoded = '';
  for (const row of rows) {
    for (const hex of row.split('|')) {
      const blob = Buffer.from(hex, 'hex');
      // Hops: a Zstandard frame (Debian's zstd reads it; files written before hold qCompress
      // blobs: a 4-byte length, then zlib); a summary is stored as is.
      let text;
      if (blob.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd])))
        text = execFileSync('zstd', ['-dcq'], { input: blob }).toString('utf8');
      else
        try { text = inflateSync(blob.subarray(4)).toString('utf8'); } catch { text = blob.toString('utf8'); }
      decoded += text;
    }
  }
  assert.match(decoded, /"kind":"code_run"/, 'the rows were read');
  assertClean('stored rows (decompressed)', decoded);
  // The search index keeps terms, not text (content=''), so its terms are read from the index
  // itself: the masked form's last four are one, and no run of a secret's characters is.
  const terms = execFileSync('sqlite3', [path.join(data, 'history.sqlite3'),
    "CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, flows_fts, 'row'); SELECT term FROM temp.terms"],
  { encoding: 'utf8' }).split('\n');
  assert.ok(terms.includes(LAST4.toLowerCase()), 'the search index holds the masked form');
  const secretParts = [CANARY, FORMAT_KEY].flatMap((s) => s.toLowerCase().split(/[^a-z0-9]+/))
    .filter((part) => part.length >= 8);
  assert.equal(secretParts.length, 2);
  assert.deepEqual(terms.filter((t) => t.length >= 8 && secretParts.some((part) => part.includes(t))), [],
    'the search index holds a piece of a secret');

  // The log: both streams of the headless process, the upstream's error included.
  assert.match(app.stderr(), new RegExp(`failed: Incorrect API key provided: \u2026${LAST4}`),
    "the upstream's error body was logged, masked");
  assertClean('stderr', app.stderr());
  assertClean('stdout', stdout);
});
