// Anthropic's surface end to end: the official @anthropic-ai/sdk and Claude Code itself (the
// real CLI from npm, `claude -p`) drive a headless Loopscope that routes /v1/messages to a
// scripted Anthropic-format upstream which, like Anthropic's API, refuses a request without its
// x-api-key. What the upstream receives, what the clients rebuild from Loopscope's answers, and
// what the flow history says of the traffic.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { startLoopscope, startScriptedAnthropicUpstream, controlClient, waitFor } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLAUDE = path.join(here, 'node_modules', '.bin', 'claude');
let upstream;
let app;
let control;
let dataDir;

// The model's script: a Bash call when offered the tool and no result yet, an answer from the
// result once it is there, a plain greeting otherwise.
function script({ body }) {
  const last = body.messages.at(-1);
  const result = Array.isArray(last.content) && last.content.find((b) => b.type === 'tool_result');
  if (result) {
    const text = typeof result.content === 'string' ? result.content
      : result.content.map((b) => b.text ?? '').join('');
    return { content: [{ type: 'text', text: `The command printed ${text.trim().split('\n')[0]}.` }], stop_reason: 'end_turn',
      usage: { input_tokens: 30, output_tokens: 6, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 } };
  }
  if ((body.tools ?? []).some((t) => t.name === 'Bash'))
    return { content: [{ type: 'text', text: 'Running it.' },
      { type: 'tool_use', id: 'toolu_e2e_1', name: 'Bash', input: { command: 'echo e2e-marker-7', description: 'Print the marker' } }],
    stop_reason: 'tool_use', usage: { input_tokens: 50, output_tokens: 12 } };
  return { content: [{ type: 'text', text: 'Hello from the scripted upstream.' }], stop_reason: 'end_turn',
    usage: { input_tokens: 12, output_tokens: 7 } };
}

before(async () => {
  upstream = await startScriptedAnthropicUpstream(script);
  dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-anthropic-'));
  app = await startLoopscope(['--anthropic-upstream', upstream.url, '--data-dir', dataDir]);
  control = await controlClient(app);
});

after(async () => {
  await app?.stop();
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function flowsWhere(predicate, count) {
  let flows = [];
  assert.ok(await waitFor(async () => {
    flows = (await control('GET', '/flows?limit=200')).json.data.filter(predicate);
    return flows.length >= count && flows.every((f) => f.state !== 'running');
  }), `flows: ${JSON.stringify(flows)}`);
  return flows;
}

test('the Anthropic SDK: messages.create and messages.stream rebuild the same message', async () => {
  const client = new Anthropic({ baseURL: app.baseURL, apiKey: upstream.apiKey, maxRetries: 0 });
  const params = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }],
    metadata: { user_id: 'sdk-user' } };
  const created = await client.messages.create(params);
  assert.equal(created.type, 'message');
  assert.deepEqual(created.content, [{ type: 'text', text: 'Hello from the scripted upstream.' }]);
  const stream = client.messages.stream(params);
  const final = await stream.finalMessage();
  assert.deepEqual(final.content, created.content);
  assert.equal(final.stop_reason, created.stop_reason);
  assert.equal(final.usage.input_tokens, created.usage.input_tokens);
  assert.equal(final.usage.output_tokens, created.usage.output_tokens);
  // The key reached the upstream as the SDK sent it (this SDK sends Authorization: Bearer),
  // with its version header.
  const sent = upstream.requests.filter((r) => r.body?.metadata?.user_id === 'sdk-user');
  assert.equal(sent.length, 2);
  for (const r of sent) {
    assert.equal(r.headers.authorization, `Bearer ${upstream.apiKey}`);
    assert.ok(r.headers['anthropic-version']);
  }
  const tokens = await client.messages.countTokens({ model: 'claude-sonnet-4-5', messages: params.messages });
  assert.equal(tokens.input_tokens, 42);
  const flows = await flowsWhere((f) => f.path === '/v1/messages' && f.api === 'messages', 2);
  for (const f of flows.slice(0, 2)) {
    assert.equal(f.usage.input_tokens, 12);
    assert.equal(f.usage.output_tokens, 7);
  }
  assert.ok(flows.some((f) => f.stream) && flows.some((f) => !f.stream));
});

test('errors come in Anthropic\'s shape: a refused key, a malformed body', async () => {
  const wrong = new Anthropic({ baseURL: app.baseURL, apiKey: 'sk-ant-wrong', maxRetries: 0 });
  await assert.rejects(
    wrong.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    (err) => err instanceof Anthropic.AuthenticationError && err.status === 401 && /invalid x-api-key/.test(err.message));
  for (const body of ['{"model":', '[1,2]', '{"max_tokens":1}']) {
    const res = await fetch(`${app.baseURL}/v1/messages`, { method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': upstream.apiKey }, body });
    assert.equal(res.status, 400);
    const json = await res.json();
    assert.equal(json.type, 'error');
    assert.equal(json.error.type, 'invalid_request_error');
    assert.ok(json.error.message.length > 0);
  }
  // The proxy kept serving.
  const ok = new Anthropic({ baseURL: app.baseURL, apiKey: upstream.apiKey, maxRetries: 0 });
  assert.equal((await ok.messages.create({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })).type, 'message');
});

test('Claude Code runs through Loopscope: one session, one run, tool calls counted, the key masked', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-claude-'));
  const before = upstream.requests.length;
  const child = spawn(CLAUDE, ['-p', 'Run `echo e2e-marker-7` with Bash and tell me what it printed',
    '--model', 'claude-sonnet-4-5', '--allowedTools', 'Bash'], {
    cwd: home,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: home, ANTHROPIC_BASE_URL: app.baseURL, ANTHROPIC_API_KEY: upstream.apiKey,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const [code] = await once(child, 'exit');
  rmSync(home, { recursive: true, force: true });
  assert.equal(code, 0, `claude exited ${code}: ${err}`);
  assert.match(out, /The command printed e2e-marker-7\./);
  const mine = upstream.requests.slice(before);
  assert.ok(mine.length >= 2, `upstream saw ${mine.length} requests`);
  assert.ok(mine.every((r) => r.headers['x-api-key'] === upstream.apiKey));
  // Its flows: the Messages API, tokens counted, the tool call counted, one session and run.
  const sessionIds = new Set(mine.map((r) => r.headers['x-claude-code-session-id']));
  assert.equal(sessionIds.size, 1);
  const [session] = sessionIds;
  assert.ok(session, 'Claude Code sent no x-claude-code-session-id');
  const flows = await flowsWhere((f) => f.session_id === session, mine.length);
  assert.ok(flows.every((f) => f.api === 'messages'));
  assert.equal(new Set(flows.map((f) => f.run_id)).size, 1);
  assert.ok(flows.reduce((n, f) => n + f.tool_calls, 0) >= 1);
  assert.ok(flows.every((f) => f.usage.input_tokens > 0 && f.usage.output_tokens > 0));
  const withCache = flows.find((f) => f.usage.cache_read_tokens === 100);
  assert.ok(withCache, 'the cache read of the answer turn is recorded');
  for (const f of flows) {
    const full = (await control('GET', `/flows/${f.id}`)).json;
    const text = JSON.stringify(full);
    assert.ok(!text.includes(upstream.apiKey), 'the key is stored in clear');
    const request = full.hops.find((h) => h.kind === 'client_request');
    assert.equal(request.headers['x-api-key'], `…${upstream.apiKey.slice(-4)}`);
  }
});
