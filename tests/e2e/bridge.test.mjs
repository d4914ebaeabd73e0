// The Responses API over a chat-only upstream (dialects.md §5): the official OpenAI SDK's
// responses.create / responses.stream against a scripted upstream that serves only
// /v1/chat/completions (404 on /v1/responses, as llama.cpp's or vLLM's servers without it
// answer). Loopscope detects that, bridges over chat, runs code_interpreter over it, and serves
// previous_response_id from what it kept.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import {
  Agent, run, codeInterpreterTool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled,
} from '@openai/agents';
import { startLoopscope, controlClient, waitFor } from './harness.mjs';

const KEY = 'sk-e2e-chat-only-0001';
const CI_TOOL = [{ type: 'code_interpreter', container: { type: 'auto' } }];

// A chat-only OpenAI-compatible server: /v1/chat/completions (JSON, or SSE with stream:true,
// usage chunk when stream_options.include_usage), everything else 404 like a server without
// the route. `chatServed: false` makes chat 404 too. `script(body)` returns {text} or {code}.
async function startChatOnlyUpstream({ chatServed = true } = {}) {
  const requests = [];
  let script = () => ({ text: 'hello from chat' });
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = raw ? JSON.parse(raw) : null;
    requests.push({ path: req.url, body, auth: req.headers.authorization });
    if (req.url !== '/v1/chat/completions' || !chatServed) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'Not Found' }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${KEY}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' } }));
      return;
    }
    const answer = script(body);
    const message = answer.code
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_run1', type: 'function',
        function: { name: body.tools[0].function.name, arguments: JSON.stringify({ code: answer.code }) } }] }
      : { role: 'assistant', content: answer.text };
    const finish = answer.code ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1700000000,
        model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta, finishReason = null, extra = {}) => res.write(`data: ${JSON.stringify({
      id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: body.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`);
    chunk({ role: 'assistant', content: '' });
    for (const piece of (answer.text ?? '').match(/.{1,4}/gs) ?? []) chunk({ content: piece });
    chunk({}, finish);
    if (body.stream_options?.include_usage) {
      res.write(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk',
        created: 1700000000, model: body.model, choices: [], usage })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    chats: () => requests.filter((r) => r.path === '/v1/chat/completions'),
    setScript(fn) { script = fn; },
    close: () => new Promise((r) => server.close(r)),
  };
}

// The shape of a response with what differs between two answers of the same completion (ids,
// times, the container, and the SDK's own parsed fields of a stream's final response) taken out.
function shape(response) {
  return JSON.parse(JSON.stringify(response, (key, value) =>
    (['id', 'created_at', 'container_id', 'call_id', 'parsed', 'output_parsed'].includes(key) ? undefined : value)));
}

// Answers code with "print" output, then the printed text back as the final message.
function codeScript(code) {
  return (body) => {
    const tool = body.messages.findLast((m) => m.role === 'tool');
    return tool ? { text: `the code printed ${tool.content.trim()}` } : { code };
  };
}

let upstream;
let app;
let client;

before(async () => {
  upstream = await startChatOnlyUpstream();
  app = await startLoopscope(['--upstream', upstream.url, '--no-history']);
  client = new OpenAI({ baseURL: app.apiBase, apiKey: KEY, maxRetries: 0 });
});

after(async () => {
  await app?.stop();
  await upstream?.close();
});

test('responses.create over a chat-only upstream: detected once, then bridged at once', async () => {
  upstream.setScript(() => ({ text: 'hello from chat' }));
  const before = upstream.requests.length;
  const response = await client.responses.create({
    model: 'small-model', instructions: 'Be brief.', input: 'Say hello', max_output_tokens: 50,
  });
  assert.equal(response.object, 'response');
  assert.equal(response.status, 'completed');
  assert.match(response.id, /^resp_/);
  assert.equal(response.output_text, 'hello from chat');
  assert.deepEqual(response.output.map((i) => i.type), ['message']);
  assert.equal(response.usage.input_tokens, 11);
  assert.equal(response.usage.output_tokens, 7);
  const seen = upstream.requests.slice(before);
  assert.deepEqual(seen.map((r) => r.path), ['/v1/responses', '/v1/chat/completions']);
  const chat = seen[1].body;
  assert.equal(seen[1].auth, `Bearer ${KEY}`, 'the client key reaches the upstream');
  assert.deepEqual(chat.messages, [
    { role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }]);
  assert.equal(chat.max_tokens, 50);
  assert.equal(chat.model, 'small-model');

  const again = await client.responses.create({ model: 'small-model', input: 'Again' });
  assert.equal(again.output_text, 'hello from chat');
  assert.equal(upstream.requests.filter((r) => r.path === '/v1/responses').length, 1,
    'the route is remembered as chat-only');
});

test('responses.stream over chat: OpenAI event order, finalResponse equals the JSON answer', async () => {
  upstream.setScript(() => ({ text: 'streamed words arrive in pieces' }));
  const stream = client.responses.stream({ model: 'small-model', input: 'Stream please' });
  const seen = [];
  const deltas = [];
  stream.on('event', (e) => seen.push(e.type));
  stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
  const final = await stream.finalResponse();
  assert.equal(upstream.chats().at(-1).body.stream, true, 'the chat call streamed');
  assert.deepEqual(seen.slice(0, 5), ['response.created', 'response.in_progress',
    'response.output_item.added', 'response.content_part.added', 'response.output_text.delta']);
  assert.deepEqual(seen.slice(-4), ['response.output_text.done', 'response.content_part.done',
    'response.output_item.done', 'response.completed']);
  assert.ok(deltas.length > 1, `text arrived in pieces: ${deltas.length}`);
  assert.equal(final.output_text, 'streamed words arrive in pieces');
  assert.equal(final.usage.total_tokens, 18);
  const json = await client.responses.create({ model: 'small-model', input: 'Stream please' });
  assert.deepEqual(shape(final), shape(json));
});

test('code_interpreter over chat: create and stream run the code and agree', async () => {
  upstream.setScript(codeScript('print(6*7)'));
  const response = await client.responses.create({
    model: 'small-model', input: 'What is 6*7?', tools: CI_TOOL,
  });
  assert.deepEqual(response.output.map((i) => i.type), ['code_interpreter_call', 'message']);
  const [call] = response.output;
  assert.equal(call.code, 'print(6*7)');
  assert.deepEqual(call.outputs, [{ type: 'logs', logs: '42\n' }]);
  assert.equal(response.output_text, 'the code printed 42');
  const toolMessage = upstream.chats().at(-1).body.messages.findLast((m) => m.role === 'tool');
  assert.match(toolMessage.content, /42/);

  const stream = client.responses.stream({ model: 'small-model', input: 'What is 6*7?', tools: CI_TOOL });
  const seen = [];
  stream.on('event', (e) => seen.push(e.type));
  const final = await stream.finalResponse();
  assert.equal(seen[0], 'response.created');
  assert.equal(seen.at(-1), 'response.completed');
  const interpreting = seen.indexOf('response.code_interpreter_call.interpreting');
  assert.ok(interpreting >= 0 && seen.indexOf('response.output_text.delta') > interpreting,
    `order: ${seen.join(',')}`);
  assert.ok(final.output.some((i) => i.type === 'code_interpreter_call'));
  assert.deepEqual(shape(final.output), shape(response.output));
});

test('previous_response_id is served by Loopscope: the upstream gets the first turn', async () => {
  upstream.setScript((body) => ({ text: `turn ${body.messages.filter((m) => m.role === 'user').length}` }));
  const first = await client.responses.create({ model: 'small-model', input: 'My name is Ada.' });
  assert.equal(first.output_text, 'turn 1');
  // At once: no wait between the first response and the follow-up.
  const second = await client.responses.create({
    model: 'small-model', input: 'What is my name?', previous_response_id: first.id,
  });
  assert.equal(second.output_text, 'turn 2');
  assert.equal(second.previous_response_id, first.id);
  assert.deepEqual(upstream.chats().at(-1).body.messages, [
    { role: 'user', content: 'My name is Ada.' },
    { role: 'assistant', content: 'turn 1' },
    { role: 'user', content: 'What is my name?' },
  ]);
  const stream = client.responses.stream({
    model: 'small-model', input: 'And again?', previous_response_id: second.id,
  });
  const third = await stream.finalResponse();
  assert.equal(third.output_text, 'turn 3');
  const fourth = await client.responses.create({
    model: 'small-model', input: 'Last one', previous_response_id: third.id,
  });
  assert.equal(fourth.output_text, 'turn 4', 'a streamed answer continues the chain too');
});

test('an unknown previous_response_id is OpenAI\'s previous_response_not_found', async () => {
  const chatsBefore = upstream.chats().length;
  await assert.rejects(
    client.responses.create({ model: 'small-model', input: 'hi', previous_response_id: 'resp_nope' }),
    (error) => {
      assert.ok(error instanceof OpenAI.NotFoundError, `${error.constructor.name}: ${error.message}`);
      assert.equal(error.status, 404);
      assert.equal(error.code, 'previous_response_not_found');
      assert.equal(error.param, 'previous_response_id');
      assert.match(error.message, /resp_nope/);
      return true;
    });
  assert.equal(upstream.chats().length, chatsBefore, 'nothing went upstream');
  const ok = await client.responses.create({ model: 'small-model', input: 'still serving' });
  assert.equal(ok.status, 'completed');
});

test('previous_response_id and conversation survive a Loopscope restart: served from the flow history', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-chains-'));
  let first = await startLoopscope(['--upstream', upstream.url, '--data-dir', dataDir]);
  try {
    upstream.setScript((body) => ({ text: `turn ${body.messages.filter((m) => m.role === 'user').length}` }));
    let c = new OpenAI({ baseURL: first.apiBase, apiKey: KEY, maxRetries: 0 });
    const one = await c.responses.stream({ model: 'small-model', input: 'My name is Ada.' }).finalResponse();
    assert.equal(one.output_text, 'turn 1');
    const inConversation = await c.responses.create({
      model: 'small-model', input: 'I live in London.', conversation: 'conv_restart_1',
    });
    assert.equal(inConversation.output_text, 'turn 1');
    upstream.setScript(codeScript('print(6*7)'));
    const ran = await c.responses.create({ model: 'small-model', input: 'What is 6*7?', tools: CI_TOOL });
    assert.equal(ran.output_text, 'the code printed 42');
    assert.equal(await first.stop(), 0);
    upstream.setScript((body) => ({ text: `turn ${body.messages.filter((m) => m.role === 'user').length}` }));
    first = await startLoopscope(['--upstream', upstream.url, '--data-dir', dataDir]);
    c = new OpenAI({ baseURL: first.apiBase, apiKey: KEY, maxRetries: 0 });

    const two = await c.responses.create({
      model: 'small-model', input: 'What is my name?', previous_response_id: one.id,
    });
    assert.equal(two.output_text, 'turn 2');
    assert.deepEqual(upstream.chats().at(-1).body.messages, [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'turn 1' },
      { role: 'user', content: 'What is my name?' },
    ]);
    const again = await c.responses.create({
      model: 'small-model', input: 'Where do I live?', conversation: 'conv_restart_1',
    });
    assert.equal(again.output_text, 'turn 2');
    assert.deepEqual(upstream.chats().at(-1).body.messages, [
      { role: 'user', content: 'I live in London.' },
      { role: 'assistant', content: 'turn 1' },
      { role: 'user', content: 'Where do I live?' },
    ]);
    // A code_interpreter turn comes back as the client saw it; the model gets the code's output.
    const after = await c.responses.create({
      model: 'small-model', input: 'Double it.', previous_response_id: ran.id, tools: CI_TOOL,
    });
    assert.equal(after.status, 'completed');
    const resent = JSON.stringify(upstream.chats().at(-1).body.messages);
    assert.match(resent, /What is 6\*7\?/);
    assert.match(resent, /42/);
    assert.match(resent, /the code printed 42/);
    const chatsBefore = upstream.chats().length;
    await assert.rejects(
      c.responses.create({ model: 'small-model', input: 'hi', previous_response_id: 'resp_nope_restart' }),
      (error) => error.status === 404 && error.code === 'previous_response_not_found');
    assert.equal(upstream.chats().length, chatsBefore, 'nothing went to chat');
  } finally {
    await first.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a chat error reaches the client with its status and message, JSON and streamed', async () => {
  const wrong = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-wrong-key-0002', maxRetries: 0 });
  for (const stream of [false, true]) {
    await assert.rejects(wrong.responses.create({ model: 'small-model', input: 'hi', stream }),
      (error) => {
        assert.ok(error instanceof OpenAI.AuthenticationError, `${stream}: ${error.constructor.name}`);
        assert.equal(error.code, 'invalid_api_key');
        assert.match(error.message, /bad key/);
        return true;
      });
  }
  const ok = await client.responses.create({ model: 'small-model', input: 'still serving' });
  assert.equal(ok.status, 'completed');
});

test('the flow says it was bridged and each hop its dialect', async () => {
  const history = await startLoopscope(['--upstream', upstream.url]);
  try {
    const control = await controlClient(history);
    const c = new OpenAI({ baseURL: history.apiBase, apiKey: KEY, maxRetries: 0 });
    upstream.setScript(() => ({ text: 'recorded' }));
    await c.responses.create({ model: 'small-model', input: 'record me' });
    let flow;
    await waitFor(async () => {
      const list = await control('GET', '/flows?limit=1');
      const id = list.json?.data?.[0]?.id;
      if (!id || list.json.data[0].state !== 'completed') return false;
      flow = (await control('GET', `/flows/${id}`)).json;
      return true;
    }, 20000, 'the flow to complete');
    assert.equal(flow.bridged, true);
    const requests = flow.hops.filter((h) => h.kind === 'upstream_request');
    assert.deepEqual(requests.map((h) => h.dialect), ['responses', 'chat_completions']);
    assert.match(requests[1].url, /\/v1\/chat\/completions$/);
    assert.ok(Array.isArray(requests[1].body.messages), 'the hop holds the chat body sent');
    assert.equal(flow.usage.total_tokens, 18, 'usage counted once');

    // The loop's calls (code_interpreter) show the chat request each one really was.
    upstream.setScript(codeScript('print(2+2)'));
    const looped = await c.responses.create({ model: 'small-model', input: '2+2?', tools: CI_TOOL });
    assert.equal(looped.output_text, 'the code printed 4');
    let loopFlow;
    await waitFor(async () => {
      const list = await control('GET', '/flows?limit=1');
      const summary = list.json?.data?.[0];
      if (!summary || summary.id === flow.id || summary.state !== 'completed') return false;
      loopFlow = (await control('GET', `/flows/${summary.id}`)).json;
      return true;
    }, 20000, 'the loop flow to complete');
    assert.equal(loopFlow.bridged, true);
    const calls = loopFlow.hops.filter((h) => h.kind === 'upstream_request');
    assert.equal(calls.length, 2);
    for (const hop of calls) {
      assert.equal(hop.dialect, 'chat_completions');
      assert.match(hop.url, /\/v1\/chat\/completions$/);
      assert.ok(Array.isArray(hop.body.messages), 'the chat body the upstream got');
    }
    const answers = loopFlow.hops.filter((h) => h.kind === 'upstream_response');
    assert.ok(answers.every((h) => h.dialect === 'chat_completions' && Array.isArray(h.body.choices)));
    assert.equal(loopFlow.usage.total_tokens, 36, 'both calls counted');
  } finally {
    await history.stop();
  }
});

test('a chat-only upstream that 404s on chat too: a clear 502 naming both attempts', async () => {
  const dead = await startChatOnlyUpstream({ chatServed: false });
  const other = await startLoopscope(['--upstream', dead.url, '--no-history']);
  try {
    const c = new OpenAI({ baseURL: other.apiBase, apiKey: KEY, maxRetries: 0 });
    for (const stream of [false, true]) {
      await assert.rejects(c.responses.create({ model: 'm', input: 'hi', stream }), (error) => {
        assert.equal(error.status, 502);
        assert.match(error.message, /\/v1\/responses answered 404/);
        assert.match(error.message, /\/v1\/chat\/completions answered 404/);
        return true;
      });
    }
    // And with code_interpreter (the loop's path).
    await assert.rejects(c.responses.create({ model: 'm', input: 'hi', tools: CI_TOOL }),
      (error) => error.status === 502 && /chat\/completions answered 404/.test(error.message));
  } finally {
    await other.stop();
    await dead.close();
  }
});

test('the Agents SDK (Responses mode) with codeInterpreterTool() over the chat-only upstream', async () => {
  setTracingDisabled(true); // no trace export to OpenAI from a test
  setOpenAIAPI('responses');
  setDefaultOpenAIClient(new OpenAI({ baseURL: app.apiBase, apiKey: KEY, maxRetries: 0 }));
  upstream.setScript(codeScript('print(sum(range(10)))'));
  const chatsBefore = upstream.chats().length;
  const agent = new Agent({
    name: 'calculator', instructions: 'Use the code interpreter for arithmetic.',
    model: 'small-model', tools: [codeInterpreterTool()],
  });
  const result = await run(agent, 'What is the sum of 0..9?');
  assert.equal(result.finalOutput, 'the code printed 45');
  // The SDK keeps the wire item as providerData of its hosted tool call.
  const calls = result.newItems.filter((i) => i.rawItem?.name === 'code_interpreter_call');
  assert.equal(calls.length, 1, `items: ${result.newItems.map((i) => i.rawItem?.type).join(',')}`);
  const wire = calls[0].rawItem.providerData;
  assert.equal(wire.code, 'print(sum(range(10)))');
  assert.deepEqual(wire.outputs, [{ type: 'logs', logs: '45\n' }]);
  const sent = upstream.chats().slice(chatsBefore);
  assert.equal(sent.length, 2, 'the code call and the answer after it');
  assert.deepEqual(sent[0].body.messages[0],
    { role: 'system', content: 'Use the code interpreter for arithmetic.' });
  assert.ok(sent.every((r) => r.body.tools.every((t) => t.type === 'function')),
    'the chat upstream only ever sees function tools');
});

// A Responses server that keeps no state, as Ollama's /v1/responses: previous_response_id is
// refused, every answer says how many user turns its input held. JSON or SSE.
async function startStatelessResponsesUpstream() {
  const requests = [];
  let n = 0;
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw);
    requests.push(body);
    if (body.previous_response_id) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'previous_response_id is not supported',
        type: 'invalid_request_error', param: 'previous_response_id' } }));
      return;
    }
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
    const text = `turn ${input.filter((i) => i.role === 'user').length}`;
    const id = `resp_up${++n}`;
    const item = { id: `msg_up${n}`, type: 'message', role: 'assistant', status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }] };
    const response = { id, object: 'response', created_at: 1700000000, status: 'completed',
      model: body.model, output: [item], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let seq = 0;
    const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    const started = { ...response, status: 'in_progress', output: [] };
    send('response.created', { response: started });
    send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    send('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] } });
    send('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: text });
    send('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text });
    send('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0,
      part: item.content[0] });
    send('response.output_item.done', { output_index: 0, item });
    send('response.completed', { response });
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests,
    close: () => new Promise((r) => server.close(r)) };
}

test('a stateless Responses route: Loopscope keeps the chain, the upstream gets the whole input', async () => {
  const stateless = await startStatelessResponsesUpstream();
  const dir = mkdtempSync(path.join(tmpdir(), 'loopscope-stateless-'));
  const config = path.join(dir, 'config.yaml');
  writeFileSync(config, ['model_list:', '  - model_name: local', '    litellm_params:',
    '      model: ollama/llama3.2', `      api_base: ${stateless.url}`,
    '      upstream_api: responses_stateless', ''].join('\n'));
  const other = await startLoopscope(['--config', config, '--no-history']);
  try {
    const c = new OpenAI({ baseURL: other.apiBase, apiKey: KEY, maxRetries: 0 });
    const first = await c.responses.create({ model: 'local', input: 'one' });
    assert.equal(first.output_text, 'turn 1');
    const second = await c.responses.create({ model: 'local', input: 'two', previous_response_id: first.id });
    assert.equal(second.output_text, 'turn 2');
    const sent = stateless.requests.at(-1);
    assert.equal(sent.previous_response_id, undefined, 'the upstream never sees the id');
    assert.deepEqual(sent.input.map((i) => i.content?.[0]?.text ?? i.content),
      ['one', 'turn 1', 'two']);
    // A streamed answer is kept as well, the moment it completed.
    const third = await c.responses.stream({ model: 'local', input: 'three', previous_response_id: second.id })
      .finalResponse();
    assert.equal(third.output_text, 'turn 3');
    const fourth = await c.responses.create({ model: 'local', input: 'four', previous_response_id: third.id });
    assert.equal(fourth.output_text, 'turn 4');
    await assert.rejects(c.responses.create({ model: 'local', input: 'x', previous_response_id: 'resp_unknown' }),
      (error) => error instanceof OpenAI.NotFoundError && error.code === 'previous_response_not_found');
  } finally {
    await other.stop();
    await stateless.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
