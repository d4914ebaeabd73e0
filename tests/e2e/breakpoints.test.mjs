// Breakpoints from outside: a headless Loopscope, the official OpenAI SDK streaming a Responses
// request, a scripted upstream model, and plain HTTP to /loopscope/v1. The test pauses the loop
// before the model's code runs, edits (or denies) it over the control API, and checks what the
// SDK's events and its final response show.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import {
  startLoopscope, startScriptedUpstream, responsesFunctionCall, responsesMessage, waitFor,
} from './harness.mjs';

const CI_TOOL = [{ type: 'code_interpreter', container: { type: 'auto' } }];

let app;
let upstream;
let client;
let token;
let dataDir;

async function control(method, route, body) {
  const res = await fetch(`${app.baseURL}/loopscope/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json };
}

before(async () => {
  // The model writes print(6*7); after the tool output it repeats what it got.
  upstream = await startScriptedUpstream(({ body }) => {
    const input = Array.isArray(body.input) ? body.input : [];
    const out = input.find((i) => i.type === 'function_call_output');
    if (out) return { json: responsesMessage(`got: ${out.output}`) };
    return { json: responsesFunctionCall('print(6*7)') };
  });
  dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-breakpoints-'));
  app = await startLoopscope(['--upstream', upstream.url, '--data-dir', dataDir]);
  await waitFor(() => /loopscope control token: [0-9a-f]{64}/.test(app.stderr()), 10000);
  token = app.stderr().match(/loopscope control token: ([0-9a-f]{64})/)[1];
  client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-breakpoints-0001', maxRetries: 0 });
  const put = await control('PUT', '/breakpoints', { code: true });
  assert.equal(put.status, 200);
  assert.equal(put.json.code, true);
});

after(async () => {
  const code = await app?.stop();
  await upstream?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  assert.equal(code, 0, `loopscope exited with ${code}`);
});

function messageText(response) {
  const message = response.output.find((i) => i.type === 'message');
  return message?.content?.[0]?.text;
}

// Streams one request, resolves its pause with `decision`, returns the SDK's events.
async function pausedStream(decision) {
  const stream = await client.responses.create({
    model: 'scripted', input: 'What is 6*7?', tools: CI_TOOL, stream: true,
  });
  const events = [];
  const reading = (async () => { for await (const e of stream) events.push(e); })();
  let paused;
  assert.ok(await waitFor(async () => {
    paused = (await control('GET', '/paused')).json.data;
    return paused.length === 1;
  }), 'no pause appeared');
  const [pause] = paused;
  assert.equal(pause.kind, 'code');
  assert.equal(pause.code, 'print(6*7)');
  // Before the pause the SDK already has the response and the call in progress.
  assert.ok(await waitFor(() => events.some((e) => e.type === 'response.code_interpreter_call.in_progress')));
  assert.equal(events[0].type, 'response.created');
  const resolved = await control('POST', `/paused/${pause.id}`, decision);
  assert.equal(resolved.status, 200);
  assert.equal((await control('POST', `/paused/${pause.id}`, decision)).status, 409);
  await reading;
  return { events, pause };
}

test('an edited code runs and the SDK sees the edited code and its output', async () => {
  const { events, pause } = await pausedStream({ action: 'continue', code: 'print(7*7)' });
  const completed = events.find((e) => e.type === 'response.completed').response;
  const call = completed.output.find((i) => i.type === 'code_interpreter_call');
  assert.equal(call.code, 'print(7*7)');
  assert.equal(call.outputs[0].logs, '49\n');
  assert.equal(messageText(completed), 'got: 49\n');
  const done = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'code_interpreter_call');
  assert.equal(done.item.code, 'print(7*7)');
  let flow;
  assert.ok(await waitFor(async () => {
    flow = (await control('GET', `/flows/${pause.flow_id}`)).json;
    return flow?.state === 'completed';
  }));
  const hop = flow.hops.find((h) => h.kind === 'code_run');
  assert.equal(hop.decision, 'edited');
  assert.equal(hop.edited_from, 'print(6*7)');
});

test('a denied code never runs; the model gets the message and the loop goes on', async () => {
  const { events } = await pausedStream({ action: 'deny', message: 'Not today.' });
  const completed = events.find((e) => e.type === 'response.completed').response;
  const call = completed.output.find((i) => i.type === 'code_interpreter_call');
  assert.equal(call.code, 'print(6*7)');
  assert.equal(call.status, 'failed');
  assert.equal(call.outputs[0].logs, 'Not today.');
  assert.equal(messageText(completed), 'got: Not today.');
});
