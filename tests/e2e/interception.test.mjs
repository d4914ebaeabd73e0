// The official OpenAI SDK, unchanged, against a headless Loopscope with the built-in demo model
// and the real local sandbox: the product as a developer meets it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  startLoopscope, sandboxProcessCount, sandboxInterpreterCount, settledValue, waitFor,
} from './harness.mjs';

const CI_TOOL = [{ type: 'code_interpreter', container: { type: 'auto' } }];
let app;
let client;

before(async () => {
  app = await startLoopscope(['--upstream', 'demo']);
  client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-user-a-0001', maxRetries: 0 });
});

after(async () => {
  const code = await app.stop();
  assert.equal(code, 0, `loopscope exited with ${code}: ${app.stderr()}`);
  await waitFor(() => sandboxProcessCount(app.proc.pid) === 0, 20000,
    () => `no sandbox process left after shutdown (${sandboxProcessCount(app.proc.pid)} left)`);
});

function codeCalls(output) {
  return output.filter((item) => item.type === 'code_interpreter_call');
}

test('responses: non-stream runs the code and returns OpenAI-shaped items', async () => {
  const response = await client.responses.create({
    model: 'loopscope-demo', input: 'What is 17*23?', tools: CI_TOOL,
  });
  const types = response.output.map((i) => i.type);
  assert.deepEqual(types, ['code_interpreter_call', 'message']);
  const [call] = codeCalls(response.output);
  assert.match(call.id, /^ci_[0-9a-f]{32}$/);
  assert.equal(call.status, 'completed');
  assert.match(call.code, /17\s*\*\s*23/);
  assert.ok(call.container_id, 'container_id set');
  assert.deepEqual(call.outputs, [{ type: 'logs', logs: '391\n' }]);
  assert.match(response.output_text, /391/);
  assert.ok(!JSON.stringify(response).includes('litellm_code_execution'), 'internal tool leaked');
});

test('responses: stream() + finalResponse() sees code run before the answer', async () => {
  const stream = client.responses.stream({
    model: 'loopscope-demo', input: 'What is 6*7?', tools: CI_TOOL,
  });
  const seen = [];
  stream.on('event', (e) => seen.push(e.type));
  const final = await stream.finalResponse();
  assert.equal(seen[0], 'response.created');
  assert.equal(seen.at(-1), 'response.completed');
  const interpreting = seen.indexOf('response.code_interpreter_call.interpreting');
  const firstText = seen.indexOf('response.output_text.delta');
  assert.ok(interpreting >= 0 && firstText > interpreting, `order: ${seen.join(',')}`);
  assert.deepEqual(final.output.map((i) => i.type), ['code_interpreter_call', 'message']);
  assert.match(final.output_text, /42/);
});

test('responses: raw for-await over create({stream:true})', async () => {
  const events = [];
  const stream = await client.responses.create({
    model: 'loopscope-demo', input: 'What is 2+3?', tools: CI_TOOL, stream: true,
  });
  for await (const event of stream) events.push(event);
  assert.equal(events[0].type, 'response.created');
  const last = events.at(-1);
  assert.equal(last.type, 'response.completed');
  assert.equal(last.response.id, events[0].response.id);
  events.forEach((e, i) => assert.equal(e.sequence_number, i));
  assert.match(JSON.stringify(last.response.output), /"logs":"5\\n"/);
});

test('chat: non-stream loop answers with the tool output', async () => {
  const completion = await client.chat.completions.create({
    model: 'loopscope-demo', messages: [{ role: 'user', content: 'What is 12*12?' }], tools: CI_TOOL,
  });
  const message = completion.choices[0].message;
  assert.match(message.content, /144/);
  assert.ok(!message.tool_calls || message.tool_calls.length === 0, 'internal tool call leaked');
});

test('chat: stream with include_usage sends exactly one usage chunk', async () => {
  const stream = await client.chat.completions.create({
    model: 'loopscope-demo', messages: [{ role: 'user', content: 'What is 9*9?' }], tools: CI_TOOL,
    stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let usageChunks = 0;
  const ids = new Set();
  for await (const chunk of stream) {
    ids.add(chunk.id);
    if (chunk.usage) usageChunks += 1;
    for (const choice of chunk.choices) text += choice.delta?.content ?? '';
  }
  assert.equal(usageChunks, 1);
  assert.equal(ids.size, 1);
  assert.match(text, /81/);
});

test('chat: stream with the tool declared but never called', async () => {
  const stream = await client.chat.completions.create({
    model: 'loopscope-demo', messages: [{ role: 'user', content: 'Say hello.' }], tools: CI_TOOL,
    stream: true,
  });
  let text = '';
  for await (const chunk of stream) for (const c of chunk.choices) text += c.delta?.content ?? '';
  assert.ok(text.length > 0);
});

test('sessions: state persists across requests and never crosses API keys', async () => {
  const sessionId = `e2e-${Date.now()}`;
  const ask = (c, code) => c.responses.create({
    model: 'loopscope-demo', tools: CI_TOOL, metadata: { session_id: sessionId },
    input: `Run this:\n\`\`\`python\n${code}\n\`\`\``,
  });
  const first = await ask(client, 'secret_value = 41\nprint("stored")');
  const second = await ask(client, 'print(secret_value + 1)');
  const [c1] = codeCalls(first.output);
  const [c2] = codeCalls(second.output);
  assert.equal(c1.container_id, c2.container_id, 'same session, same container');
  assert.deepEqual(c2.outputs, [{ type: 'logs', logs: '42\n' }]);

  const other = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-user-b-0002', maxRetries: 0 });
  const foreign = await ask(other, 'print(secret_value + 1)');
  const [c3] = codeCalls(foreign.output);
  assert.notEqual(c3.container_id, c1.container_id);
  assert.match(c3.outputs[0].logs, /NameError|not defined/);

  // containers API: the caller sees its own session sandbox and can delete it; others cannot.
  const mine = await client.containers.list();
  assert.ok(mine.data.some((c) => c.id === c1.container_id), 'own container listed');
  const theirs = await other.containers.list();
  assert.ok(!theirs.data.some((c) => c.id === c1.container_id), 'foreign container hidden');
  await assert.rejects(other.containers.delete(c1.container_id), (e) => e.status === 404);
  await client.containers.delete(c1.container_id);
  const after = await client.containers.list();
  assert.ok(!after.data.some((c) => c.id === c1.container_id), 'deleted container gone');
  const fresh = await ask(client, 'print(secret_value + 1)');
  assert.match(codeCalls(fresh.output)[0].outputs[0].logs, /NameError|not defined/);
});

test('40 concurrent requests all complete and leave no sandbox behind', async () => {
  // What lives between requests: the warm pool and the session sandboxes of earlier tests.
  const interpreters = () => sandboxInterpreterCount(app.proc.pid);
  const baseline = await settledValue(interpreters);
  assert.ok(baseline >= 2, 'the warm pool is visible, so the count below means something');
  // 40 at once is beyond sandbox.max_live (32): the extra ones get 429 with Retry-After, and
  // the SDK's own retry (which honours Retry-After) brings them through.
  const retrying = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-user-a-0001', maxRetries: 4 });
  const results = await Promise.all(Array.from({ length: 40 }, (_, i) => retrying.responses.create({
    model: 'loopscope-demo', input: `What is ${i}+1000?`, tools: CI_TOOL,
  })));
  results.forEach((r, i) => assert.match(r.output_text, new RegExp(String(i + 1000))));
  // The registry's own view: only the session sandboxes of earlier tests are left.
  const live = async () => {
    const res = await fetch(`${app.baseURL}/loopscope/v1/sandboxes`, {
      headers: { authorization: `Bearer ${app.stderr().match(/loopscope control token: ([0-9a-f]{64})/)[1]}` },
    });
    assert.equal(res.status, 200);
    return (await res.json()).data;
  };
  const sandboxes = await live();
  assert.ok(sandboxes.every((s) => !s.ephemeral), `no ephemeral sandbox left: ${JSON.stringify(sandboxes)}`);
  // Processes: the burst may grow the warm pool from 2 to its maximum of 6 (it shrinks after
  // 30 s idle); anything beyond that would be a leaked sandbox.
  const after = await settledValue(interpreters);
  assert.ok(after <= baseline + 4, `ephemeral sandboxes deleted (baseline ${baseline}, now ${after})`);
});
