// Hang-up means stop (issue 33): a client of the official OpenAI SDK that aborts while its code
// spins leaves no sandbox process burning CPU, and a complete flow behind (failed /
// client_closed, the run that was hanging recorded); a session sandbox survives with its state.
// And admission that queues: a streamed request waiting for a sandbox slot is kept alive with
// SSE comments, served once the slot frees; one that hangs up while waiting leaves the queue.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import {
  startLoopscope, startScriptedUpstream, responsesFunctionCall, responsesMessage, chatMessage,
  controlClient, waitFor, busySandboxProcesses, sandboxProcessCount,
} from './harness.mjs';

const SPIN = "print('spinning', flush=True)\nwhile True:\n    pass";
const started = [];
const dirs = [];
after(async () => {
  for (const s of started) {
    if (s.stop) await s.stop();
    else await s.close();
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function chatToolCall(code) {
  return {
    id: 'chatcmpl-scripted-call', object: 'chat.completion', created: 1700000000, model: 'scripted',
    choices: [{
      index: 0, finish_reason: 'tool_calls',
      message: {
        role: 'assistant', content: null,
        tool_calls: [{ id: 'call_c1', type: 'function', function: { name: 'litellm_code_execution', arguments: JSON.stringify({ code }) } }],
      },
    }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

// The model runs the user's text as code, then answers with what the code printed.
function codeEchoModel({ body }) {
  if (Array.isArray(body.messages)) {
    const last = body.messages.at(-1);
    return { json: last.role === 'tool' ? chatMessage(`ran: ${last.content}`) : chatToolCall(last.content) };
  }
  const last = Array.isArray(body.input) ? body.input.at(-1) : null;
  if (last?.type === 'function_call_output') return { json: responsesMessage(`ran: ${last.output}`) };
  return { json: responsesFunctionCall(body.input) };
}

async function setup(configYaml) {
  const upstream = await startScriptedUpstream(codeEchoModel);
  const args = ['--upstream', upstream.url, '--sandbox-pool', '0', '--no-history'];
  if (configYaml) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'loopscope-hangup-'));
    dirs.push(dir);
    const config = path.join(dir, 'config.yaml');
    writeFileSync(config, configYaml);
    args.push('--config', config);
  }
  const app = await startLoopscope(args);
  started.push(app, upstream);
  const client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-hangup-0001', maxRetries: 0 });
  return { upstream, app, client, control: await controlClient(app) };
}

// Starts a request whose code spins and resolves once a sandbox process burns CPU; `abort()`
// then hangs up, and `settled` is the SDK call's end (rejected with the abort).
async function spinningRequest(app, client, { chat, stream, metadata }) {
  const controller = new AbortController();
  const options = { signal: controller.signal };
  const settled = (async () => {
    if (chat) {
      const r = await client.chat.completions.create({
        model: 'gpt-5', messages: [{ role: 'user', content: SPIN }],
        tools: [{ type: 'code_interpreter' }], stream, metadata,
      }, options);
      if (stream) for await (const chunk of r) void chunk;
    } else {
      const r = await client.responses.create({
        model: 'gpt-5', input: SPIN, tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
        stream, metadata,
      }, options);
      if (stream) for await (const event of r) void event;
    }
  })();
  settled.catch(() => {}); // awaited by the caller
  let busy = [];
  await waitFor(async () => (busy = await busySandboxProcesses(app.proc.pid)).length > 0, 30000,
    'a sandbox process spinning');
  return { abort: () => controller.abort(), settled, busy };
}

// The SDK call ends once aborted: a one-shot call rejects with the abort, an iterated stream
// just stops (the SDK ends its iterator quietly on an abort).
async function settledAfterAbort(run) {
  try {
    await run.settled;
  } catch (e) {
    assert.match(String(e?.message), /abort/i);
  }
}

async function flowOf(control, predicate, what) {
  let flow;
  await waitFor(async () => {
    const list = (await control('GET', '/flows?limit=50')).json.data;
    flow = list.find(predicate);
    return flow && flow.state !== 'running';
  }, 20000, () => `${what}: ${JSON.stringify(flow)}`);
  return (await control('GET', `/flows/${flow.id}`)).json;
}

for (const chat of [false, true]) {
  for (const stream of [false, true]) {
    const api = chat ? 'chat completions' : 'responses';
    test(`${api} ${stream ? 'stream' : 'json'}: an abort mid-run stops the code within a second and keeps the run`, async () => {
      const { app, client, control } = await setup();
      const run = await spinningRequest(app, client, { chat, stream });
      const abortedAt = Date.now();
      run.abort();
      await settledAfterAbort(run);
      // Polled with a deadline: the spin stops within 1 s of the hang-up.
      let busy = run.busy;
      while (busy.length > 0 && Date.now() - abortedAt < 1000) {
        busy = await busySandboxProcesses(app.proc.pid, 150);
      }
      assert.deepEqual(busy, [], `sandbox processes still using CPU ${Date.now() - abortedAt} ms after the abort`);
      const flow = await flowOf(control, (f) => f.api === (chat ? 'chat_completions' : 'responses'), 'the aborted flow');
      assert.equal(flow.state, 'failed');
      assert.equal(flow.incomplete_reason, 'client_closed');
      assert.equal(flow.code_runs, 1);
      const runs = flow.hops.filter((h) => h.kind === 'code_run');
      assert.equal(runs.length, 1);
      assert.equal(runs[0].stdout, 'spinning\n');
      assert.equal(runs[0].error?.name, 'KeyboardInterrupt');
      // The one-shot sandbox is discarded.
      await waitFor(() => sandboxProcessCount(app.proc.pid) <= 3, 20000, 'the one-shot sandbox gone');
    });
  }
}

test('a session sandbox survives an abort with its variables', async () => {
  const { app, client, control } = await setup();
  const metadata = { session_id: 'hangup-session' };
  const set = await client.responses.create({
    model: 'gpt-5', input: 'kept = 41', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], metadata,
  });
  assert.equal(set.status, 'completed');
  const run = await spinningRequest(app, client, { chat: false, stream: true, metadata });
  const abortedAt = Date.now();
  run.abort();
  await settledAfterAbort(run);
  let busy = run.busy;
  while (busy.length > 0 && Date.now() - abortedAt < 1000) busy = await busySandboxProcesses(app.proc.pid, 150);
  assert.deepEqual(busy, [], 'the interrupted session interpreter still uses CPU');
  const flow = await flowOf(control, (f) => f.incomplete_reason === 'client_closed', 'the aborted session flow');
  assert.equal(flow.state, 'failed');
  assert.equal(flow.session_id, 'hangup-session');
  assert.equal(flow.hops.filter((h) => h.kind === 'code_run').length, 1);
  const after = await client.responses.create({
    model: 'gpt-5', input: 'print(kept + 1)', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], metadata,
  });
  const call = after.output.find((i) => i.type === 'code_interpreter_call');
  assert.equal(call.outputs[0].logs, '42\n');
});

// Reads a streamed /v1/responses request raw (fetch), collecting its text as it arrives.
function rawStream(app, input) {
  const controller = new AbortController();
  const state = { text: '', done: false, controller };
  state.finished = (async () => {
    const res = await fetch(`${app.apiBase}/responses`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: 'Bearer sk-e2e-hangup-0001', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5', input, stream: true, tools: [{ type: 'code_interpreter' }] }),
    });
    const decoder = new TextDecoder();
    for await (const chunk of res.body) state.text += decoder.decode(chunk, { stream: true });
    state.done = true;
  })();
  state.finished.catch(() => {});
  return state;
}

test('a streamed request waiting for a sandbox hears ": waiting for a sandbox", a waiter that aborts leaves the queue', async () => {
  const { app, client, control } = await setup('sandbox:\n  max_live: 1\n  queue_max: 4\n');
  const holder = await spinningRequest(app, client, { chat: false, stream: false });
  const leaver = rawStream(app, "print('never')");
  const waiter = rawStream(app, "print('served')");
  await waitFor(() => leaver.text.includes(': waiting for a sandbox') && waiter.text.includes(': waiting for a sandbox'),
    20000, () => `waiting comments: ${JSON.stringify([leaver.text, waiter.text])}`);
  // The flows show that they wait.
  await waitFor(async () => (await control('GET', '/flows?limit=50')).json.data
    .filter((f) => f.state === 'running' && f.waiting_for_sandbox === true).length === 2, 10000, 'two flows waiting_for_sandbox');

  leaver.controller.abort();
  // It left the queue: its flow ends while the slot is still held, no code run, no container.
  const left = await flowOf(control, (f) => f.incomplete_reason === 'client_closed', 'the flow that left');
  assert.equal(left.code_runs, 0);
  assert.equal(left.container_id, null);
  assert.ok(!waiter.done, 'the other waiter was served before any slot freed');

  holder.abort(); // its one-shot sandbox is discarded: the slot goes to the waiter
  await settledAfterAbort(holder);
  await waitFor(() => waiter.done, 30000, () => `the waiter served: ${waiter.text}`);
  assert.match(waiter.text, /response\.completed/);
  assert.match(waiter.text, /ran: served/);
  const flows = (await control('GET', '/flows?limit=50')).json.data;
  assert.deepEqual(flows.filter((f) => f.code_runs > 0).map((f) => f.code_runs), [1, 1],
    `only the holder and the waiter ran code: ${JSON.stringify(flows)}`);
});
