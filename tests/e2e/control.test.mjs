// The control API from outside, as a script or CI job meets it: a headless Loopscope, the
// official OpenAI SDK as the agent, a scripted upstream model, and plain HTTP to /loopscope/v1
// with the token Loopscope printed. One SDK session (code-interpreter turns, a plain turn, a
// function-calling turn) must read back as one run; `q` must find text that only a code run
// printed; the HAR export must validate; a HAR written by another tool must import.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import harValidator from 'har-validator';
import {
  startLoopscope, startScriptedUpstream, responsesFunctionCall, responsesMessage, waitFor,
} from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CI_TOOL = [{ type: 'code_interpreter', container: { type: 'auto' } }];
const WEATHER_TOOL = [{
  type: 'function', name: 'get_weather', description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}];
// The code builds the marker, so it appears in stdout (and what follows from it) only.
const MARKER = 'qz-needle-42';
const MARKER_CODE = "print('qz-' + 'needle-' + str(6*7))";

let app;
let upstream;
let client;
let token;
let dataDir;

function responsesFunctionTool(name, args, callId) {
  return {
    id: `resp_${callId}`, object: 'response', created_at: 1700000002, status: 'completed',
    model: 'scripted', output: [{
      type: 'function_call', id: `fc_${callId}`, call_id: callId, name,
      arguments: JSON.stringify(args), status: 'completed',
    }],
    usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 },
  };
}

async function control(method, route, body, headers = {}) {
  const res = await fetch(`${app.baseURL}/loopscope/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text };
}

before(async () => {
  // The model's script, by call order: the code-interpreter turn needs two upstream calls (the
  // code, then the answer after its output), the plain turn one, the function turn two.
  upstream = await startScriptedUpstream(({ index }) => {
    switch (index) {
      case 0: return { json: responsesFunctionCall(MARKER_CODE, 'call_code') };
      case 1: return { json: responsesMessage('The code printed the marker.', 'msg_code') };
      case 2: return { json: responsesMessage('A plain answer.', 'msg_plain') };
      case 3: return { json: responsesFunctionTool('get_weather', { city: 'Oslo' }, 'call_fn') };
      default: return { json: responsesMessage('It is sunny in Oslo.', `msg_${index}`) };
    }
  });
  dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-control-'));
  app = await startLoopscope(['--upstream', upstream.url, '--data-dir', dataDir]);
  await waitFor(() => /loopscope control token: [0-9a-f]{64}/.test(app.stderr()), 10000);
  token = app.stderr().match(/loopscope control token: ([0-9a-f]{64})/)[1];
  client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-control-user-0001', maxRetries: 0 });
});

after(async () => {
  const code = await app?.stop();
  await upstream?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  assert.equal(code, 0, `loopscope exited with ${code}`);
});

test('the generated token is printed once and saved 0600 in the data dir', () => {
  const file = path.join(dataDir, 'control-token');
  assert.equal(readFileSync(file, 'utf8').trim(), token);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(app.stderr().split('loopscope control token:').length - 1, 1);
});

test('without the token, with a wrong one, or with a client key: 401', async () => {
  for (const auth of [undefined, 'Bearer wrong', 'Bearer sk-e2e-control-user-0001']) {
    const res = await fetch(`${app.baseURL}/loopscope/v1/flows`, { headers: auth ? { authorization: auth } : {} });
    assert.equal(res.status, 401);
    const body = await res.json();
    assert.equal(typeof body.error.message, 'string');
  }
});

test('an SDK session with code, plain and function turns is one run, and q finds stdout', async () => {
  const metadata = { session_id: 'e2e-control-session' };
  const first = await client.responses.create({
    model: 'scripted', input: 'Print the marker.', tools: CI_TOOL, metadata,
  });
  assert.match(JSON.stringify(first.output), /qz-needle-42/);
  const second = await client.responses.create({
    model: 'scripted', input: 'Now just talk.', previous_response_id: first.id, metadata,
  });
  assert.equal(second.output_text, 'A plain answer.');
  const third = await client.responses.create({
    model: 'scripted', input: 'Weather in Oslo?', tools: WEATHER_TOOL,
    previous_response_id: second.id, metadata,
  });
  const call = third.output.find((i) => i.type === 'function_call');
  assert.equal(call.name, 'get_weather');
  const fourth = await client.responses.create({
    model: 'scripted', previous_response_id: third.id, metadata, tools: WEATHER_TOOL,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' }],
  });
  assert.equal(fourth.output_text, 'It is sunny in Oslo.');

  let flows;
  assert.ok(await waitFor(async () => {
    flows = (await control('GET', '/flows?limit=50')).json.data;
    return flows.length === 4 && flows.every((f) => f.state === 'completed');
  }), `flows: ${JSON.stringify(flows)}`);
  const runIds = new Set(flows.map((f) => f.run_id));
  assert.equal(runIds.size, 1, `one run expected, got ${[...runIds]}`);
  const [runId] = runIds;
  assert.match(runId, /^run_/);
  const runs = (await control('GET', '/runs')).json.data;
  const run = runs.find((r) => r.id === runId);
  assert.ok(run, 'the run is listed');
  assert.deepEqual([...run.flows].sort(), flows.map((f) => f.id).sort());
  assert.equal(run.code_runs, 1);
  assert.ok(run.tool_calls >= 1, `tool_calls: ${run.tool_calls}`);
  assert.equal((await control('GET', `/flows?run=${runId}`)).json.data.length, 4);

  const hits = (await control('GET', `/flows?q=${encodeURIComponent(MARKER)}`)).json.data;
  assert.deepEqual(hits.map((f) => f.id), [flows.find((f) => f.code_runs === 1).id]);
  const detail = (await control('GET', `/flows/${hits[0].id}`)).json;
  const codeRun = detail.hops.find((h) => h.kind === 'code_run');
  assert.equal(codeRun.stdout.trim(), MARKER);
  assert.equal(codeRun.code, MARKER_CODE);
  assert.ok(!JSON.stringify(detail).includes('sk-e2e-control-user-0001'), 'client key masked');
});

test('the HAR export validates with har-validator and holds no secrets', async () => {
  const res = await control('GET', '/export.har');
  assert.equal(res.status, 200);
  assert.ok(res.json.log.entries.length >= 4);
  await assert.doesNotReject(harValidator.har(res.json));
  // The validator does reject a broken HAR (so the line above can fail).
  const broken = structuredClone(res.json);
  delete broken.log.entries[0].request.method;
  await assert.rejects(harValidator.har(broken));
  assert.ok(!res.text.includes('sk-e2e-control-user-0001'), 'client key in the export');
  assert.ok(!res.text.includes(token), 'control token in the export');
  for (const entry of res.json.log.entries) {
    for (const key of Object.keys(entry)) {
      assert.ok(['startedDateTime', 'time', 'request', 'response', 'cache', 'timings'].includes(key)
        || key === '_loopscope', `unexpected entry key ${key}`);
    }
  }
});

test('a HAR written by Chromium + Playwright imports and reads back', async () => {
  const har = readFileSync(path.join(here, '..', 'fixtures', 'chromium-playwright.har'), 'utf8');
  const entries = JSON.parse(har).log.entries.length;
  const res = await control('POST', '/import', har);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.imported, entries);
  const flows = await Promise.all(res.json.ids.map(async (id) => (await control('GET', `/flows/${id}`)).json));
  const chat = flows.find((f) => f.path === '/v1/chat/completions');
  assert.ok(chat, 'the chat call was imported');
  assert.equal(chat.imported, true);
  assert.equal(chat.model, 'gpt-4o-mini');
  assert.equal(chat.status, 200);
  assert.equal(chat.hops[1].body.choices[0].message.content, 'Hello from the HAR fixture!');
  for (const flow of flows) {
    const headers = JSON.stringify(flow.hops[0].headers);
    assert.ok(!headers.includes('sk-page-secret-0000abcd'), 'imported credentials masked');
  }
  assert.match(chat.hops[0].headers.authorization, /abcd$/);
  const bad = await control('POST', '/import', 'not a har');
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /HAR/);
});

test('a foreign page cannot run code: 403 before anything runs', async () => {
  const before = (await control('GET', '/flows?limit=100')).json.data;
  const res = await fetch(`${app.apiBase}/responses`, {
    method: 'POST',
    headers: { origin: 'https://evil.example', 'content-type': 'text/plain' },
    body: JSON.stringify({ model: 'scripted', input: '```python\nprint(1)\n```', tools: CI_TOOL }),
  });
  assert.equal(res.status, 403);
  assert.equal(res.headers.get('access-control-allow-origin'), null);
  const calls = upstream.requests.length;
  const after = (await control('GET', '/flows?limit=100')).json.data;
  assert.equal(upstream.requests.length, calls);
  assert.equal(after.filter((f) => f.code_runs > 0).length, before.filter((f) => f.code_runs > 0).length);
});

test('GET /loopscope/v1 reports the store and what every bounded queue dropped', async () => {
  // The session above finished; its flows reach the file within a writer tick or two.
  const listed = (await control('GET', '/flows?limit=1000')).json.data.length;
  assert.ok(listed > 0);
  let stats;
  await waitFor(async () => {
    stats = await control('GET', '');
    return stats.status === 200 && stats.json.store.flows_written >= listed;
  }, 20000, 'the listed flows written');
  assert.equal(stats.json.object, 'loopscope.stats');
  assert.equal(stats.json.store.writing, true);
  assert.equal(stats.json.store.problem, null);
  assert.equal(stats.json.store.flows_unwritten, 0);
  assert.deepEqual(Object.keys(stats.json.dropped).sort(),
    ['flows', 'otlp_events', 'otlp_flows', 'recorder_events', 'sse_events', 'window_events']);
  // A handful of requests never fills a queue: every counter is there, and zero.
  for (const [name, n] of Object.entries(stats.json.dropped)) assert.equal(n, 0, name);
  assert.equal((await control('POST', '')).status, 405);
});
