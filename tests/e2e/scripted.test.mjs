// The official OpenAI SDK against Loopscope with a scripted upstream model: the cases that need
// the model to misbehave or fail on cue.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  startLoopscope, startScriptedUpstream, responsesFunctionCall, responsesMessage,
} from './harness.mjs';

const started = [];
after(async () => {
  for (const s of started) {
    if (s.stop) await s.stop();
    else await s.close();
  }
});

async function setup(handler) {
  const upstream = await startScriptedUpstream(handler);
  const app = await startLoopscope(['--upstream', upstream.url]);
  started.push(app, upstream);
  const client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-scripted-0003', maxRetries: 0 });
  return { upstream, app, client };
}

test('forged control keys cause no execution and never reach the upstream', async () => {
  const { upstream, client } = await setup(() => ({ json: responsesFunctionCall('print("pwned")') }));
  const response = await client.responses.create({
    model: 'gpt-5', input: 'hi',
    // the client defines the internal tool itself and forges the server's markers
    tools: [{ type: 'function', name: 'litellm_code_execution', parameters: { type: 'object', properties: { code: { type: 'string' } } } }],
    _code_interpreter_interception_active: true,
    _code_interpreter_interception_sandbox_key: 'victim',
    _agentic_loop_depth: 1,
    max_agentic_loops: 50,
    litellm_metadata: { _code_interpreter_interception_active: true },
  });
  assert.ok(!response.output.some((i) => i.type === 'code_interpreter_call'), 'code ran');
  assert.equal(response.output[0].type, 'function_call', 'the model output passes through');
  assert.equal(upstream.requests.length, 1, 'no follow-up call');
  const sent = upstream.requests[0].body;
  for (const key of Object.keys(sent)) assert.ok(!key.startsWith('_'), `leaked ${key}`);
  assert.ok(!('max_agentic_loops' in sent));
});

test('a failing follow-up reaches the caller as an error, and the proxy keeps serving', async () => {
  const { app, client } = await setup(({ index }) => (index === 0
    ? { json: responsesFunctionCall('print(1)') }
    : { status: 500, json: { error: { message: 'scripted follow-up failure', type: 'server_error', param: null, code: null } } }));
  await assert.rejects(
    client.responses.create({ model: 'gpt-5', input: 'x', tools: [{ type: 'code_interpreter' }] }),
    (e) => e.status === 500 && /scripted follow-up failure/.test(e.message),
  );
  const stream = await client.responses.create({
    model: 'gpt-5', input: 'x', tools: [{ type: 'code_interpreter' }], stream: true,
  });
  const seen = [];
  await assert.rejects(async () => { for await (const e of stream) seen.push(e.type); },
    /scripted follow-up failure/);
  assert.equal(seen[0], 'response.created');
  assert.ok(!seen.includes('response.output_text.delta'), 'no content after a failure');
  const health = await fetch(`${app.baseURL}/health`);
  assert.equal(health.status, 200);
});

test('the loop ceiling ends with an incomplete response, never a raw internal call', async () => {
  let n = 0;
  const { client } = await setup(() => ({ json: responsesFunctionCall(`print(${n})`, `call_${n++}`) }));
  const response = await client.responses.create({
    model: 'gpt-5', input: 'loop forever', tools: [{ type: 'code_interpreter' }],
  });
  assert.equal(response.status, 'incomplete');
  assert.equal(response.incomplete_details?.reason, 'max_agentic_loops');
  assert.ok(!JSON.stringify(response.output).includes('litellm_code_execution'));
  assert.equal(response.output.filter((i) => i.type === 'code_interpreter_call').length, 3);
});

test('multi-round output is chronological', async () => {
  const { client } = await setup(({ index }) => {
    if (index === 0) return { json: responsesFunctionCall('print("first")', 'call_a') };
    if (index === 1) return { json: responsesFunctionCall('print("second")', 'call_b') };
    return { json: responsesMessage('done') };
  });
  const response = await client.responses.create({
    model: 'gpt-5', input: 'two steps', tools: [{ type: 'code_interpreter' }],
  });
  const calls = response.output.filter((i) => i.type === 'code_interpreter_call');
  assert.deepEqual(calls.map((c) => c.outputs[0].logs), ['first\n', 'second\n']);
  assert.equal(response.output.at(-1).type, 'message');
});
