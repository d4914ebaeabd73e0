// OpenAI clients over an Anthropic upstream (dialects.md §5): the official `openai` SDK's Chat
// Completions and Responses calls on a config model `anthropic/…` whose api_base is a scripted
// Anthropic Messages upstream. The upstream, like Anthropic's API, refuses a request without the
// configured x-api-key, and here also one whose blocks are not well-formed Messages (roles that
// do not alternate, tool results outside a user turn, tool_use without its result, OpenAI keys
// left in the body…), so every translated request is checked on arrival.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startLoopscope, startScriptedAnthropicUpstream, controlClient, waitFor } from './harness.mjs';

const KEY = 'sk-ant-bridge-key-0042';
const MODEL = 'claude';
const SIGNATURE = 'EqQBCgIYAhIMsig-e2e-0001';
const BODY_KEYS = new Set(['model', 'messages', 'system', 'max_tokens', 'tools', 'tool_choice', 'thinking',
  'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata', 'stream']);

// What Anthropic's API would refuse, as its message; null for a well-formed request.
function malformed(body, headers) {
  if (!headers['anthropic-version']) return 'anthropic-version header: required';
  for (const key of Object.keys(body)) if (!BODY_KEYS.has(key)) return `${key}: Extra inputs are not permitted`;
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (body.thinking && !(body.thinking.budget_tokens < body.max_tokens)) return 'max_tokens must exceed thinking.budget_tokens';
  if (body.system !== undefined && typeof body.system !== 'string') return 'system: must be a string here';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message';
  for (const tool of body.tools ?? [])
    if (typeof tool.name !== 'string' || tool.input_schema?.type !== 'object' || tool.type || tool.function)
      return `tools: not a custom tool: ${JSON.stringify(tool)}`;
  let expected = 'user';
  for (const [i, m] of body.messages.entries()) {
    if (m.role !== expected) return `messages.${i}.role: roles must alternate, starting with user`;
    expected = m.role === 'user' ? 'assistant' : 'user';
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (!Array.isArray(blocks) || blocks.length === 0) return `messages.${i}.content: empty`;
    let seenOther = false;
    for (const b of blocks) {
      const ok = {
        text: () => typeof b.text === 'string' && b.text.length > 0,
        image: () => m.role === 'user' && (b.source?.type === 'base64' ? /^image\//.test(b.source.media_type) && b.source.data
          : b.source?.type === 'url' && /^https?:/.test(b.source.url)),
        tool_use: () => m.role === 'assistant' && b.id && b.name && b.input && typeof b.input === 'object' && !Array.isArray(b.input),
        tool_result: () => m.role === 'user' && b.tool_use_id && !seenOther,
        thinking: () => m.role === 'assistant' && typeof b.thinking === 'string' && b.signature && blocks[0] === b,
        redacted_thinking: () => m.role === 'assistant' && b.data,
      }[b.type];
      if (!ok || !ok()) return `messages.${i}: malformed ${b.type} block ${JSON.stringify(b)}`;
      if (b.type !== 'tool_result') seenOther = true;
    }
    const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id);
    const next = body.messages[i + 1];
    if (uses.length && next) {
      const results = (Array.isArray(next.content) ? next.content : []).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id);
      if (uses.some((id) => !results.includes(id))) return `messages.${i + 1}: tool_use ids without tool_result blocks`;
    }
  }
  return null;
}

let script = () => ({ content: [{ type: 'text', text: 'Hello from Claude.' }], stop_reason: 'end_turn',
  usage: { input_tokens: 12, output_tokens: 5 } });

let upstream;
let app;
let client;
let dir;

before(async () => {
  upstream = await startScriptedAnthropicUpstream(async (entry) => {
    const problem = malformed(entry.body, entry.headers);
    if (problem) return { status: 400, error: { type: 'invalid_request_error', message: problem } };
    return script(entry.body);
  }, { apiKey: KEY });
  dir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-anthropic-bridge-'));
  const config = path.join(dir, 'config.yaml');
  writeFileSync(config, ['model_list:', `  - model_name: ${MODEL}`, '    litellm_params:',
    '      model: anthropic/claude-sonnet-4-5', `      api_base: ${upstream.url}`, `      api_key: ${KEY}`,
    '  - model_name: claude-client-key', '    litellm_params:', '      model: anthropic/claude-sonnet-4-5',
    `      api_base: ${upstream.url}`, ''].join('\n'));
  // The keyless route must stay keyless: a developer's own ANTHROPIC_API_KEY (LiteLLM's fallback
  // for anthropic/ routes) is not this Loopscope's to see.
  delete process.env.ANTHROPIC_API_KEY;
  app = await startLoopscope(['--config', config, '--data-dir', dir]);
  // The client's own key is not Anthropic's: the configured one must be what goes upstream.
  client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-client-not-anthropic', maxRetries: 0 });
});

after(async () => {
  await app?.stop();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const last = () => upstream.requests.at(-1);

test('chat.completions.create: system → system, max_tokens defaulted, the configured key as x-api-key', async () => {
  script = () => ({ content: [{ type: 'text', text: 'Hello from Claude.' }], stop_reason: 'end_turn',
    usage: { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 } });
  const completion = await client.chat.completions.create({
    model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }],
  });
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.choices[0].message.role, 'assistant');
  assert.equal(completion.choices[0].message.content, 'Hello from Claude.');
  assert.equal(completion.choices[0].finish_reason, 'stop');
  assert.equal(completion.usage.prompt_tokens, 119);
  assert.equal(completion.usage.completion_tokens, 5);
  assert.equal(completion.usage.total_tokens, 124);
  assert.equal(completion.usage.prompt_tokens_details.cached_tokens, 100);
  assert.equal(completion.usage.prompt_tokens_details.cache_write_tokens, 7);
  const sent = last();
  assert.equal(sent.path, '/v1/messages');
  assert.equal(sent.headers['x-api-key'], KEY);
  assert.equal(sent.headers.authorization, undefined, "the client's own key stays here");
  assert.ok(sent.headers['anthropic-version']);
  assert.equal(sent.body.model, 'claude-sonnet-4-5');
  assert.equal(sent.body.system, 'Be brief.');
  assert.equal(sent.body.max_tokens, 4096);
  assert.deepEqual(sent.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
});

// Without a configured key the client's own key is the one: the
// OpenAI SDK sends it as a Bearer token, Anthropic reads x-api-key.
test("a route without a key: the OpenAI client's Bearer key goes as x-api-key", async () => {
  script = () => ({ content: [{ type: 'text', text: 'yours' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } });
  const own = new OpenAI({ baseURL: app.apiBase, apiKey: KEY, maxRetries: 0 });
  const answer = await own.chat.completions.create({ model: 'claude-client-key', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(answer.choices[0].message.content, 'yours');
  assert.equal(last().headers['x-api-key'], KEY);
  assert.equal(last().headers.authorization, undefined);
});

test('chat streaming: raw chunks and the SDK stream helper rebuild the JSON answer', async () => {
  script = () => ({ content: [{ type: 'text', text: 'Streamed words arrive in pieces.' }], stop_reason: 'end_turn',
    usage: { input_tokens: 20, output_tokens: 9 } });
  const params = { model: MODEL, messages: [{ role: 'user', content: 'stream please' }], max_tokens: 64 };
  const chunks = [];
  for await (const chunk of await client.chat.completions.create({ ...params, stream: true,
    stream_options: { include_usage: true } }))
    chunks.push(chunk);
  assert.equal(last().body.stream, true, 'Anthropic was asked to stream');
  assert.equal(last().body.max_tokens, 64);
  assert.ok(chunks.length > 4, `pieces: ${chunks.length}`);
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), 'Streamed words arrive in pieces.');
  assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks.at(-1).choices, []);
  assert.equal(chunks.at(-1).usage.completion_tokens, 9);

  const final = await client.chat.completions.stream(params).finalChatCompletion();
  const json = await client.chat.completions.create(params);
  assert.equal(final.choices[0].message.content, json.choices[0].message.content);
  assert.equal(final.choices[0].finish_reason, json.choices[0].finish_reason);
});

test('a function tool round trip: tool_choice required → any, tool_use ⇄ tool_calls, results as tool_result', async () => {
  script = (body) => {
    const results = body.messages.at(-1).content.filter?.((b) => b.type === 'tool_result') ?? [];
    if (results.length)
      return { content: [{ type: 'text', text: `It is ${results.map((r) => r.content).join(' and ')}.` }],
        stop_reason: 'end_turn', usage: { input_tokens: 40, output_tokens: 6 } };
    return { content: [{ type: 'text', text: 'Checking both.' },
      { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'toolu_w2', name: 'get_weather', input: { city: 'Rome' } }],
    stop_reason: 'tool_use', usage: { input_tokens: 30, output_tokens: 20 } };
  };
  const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather now',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const messages = [{ role: 'user', content: 'Weather in Oslo and Rome?' }];
  for (const stream of [false, true]) {
    const first = stream
      ? await client.chat.completions.stream({ model: MODEL, messages, tools, tool_choice: 'required' }).finalChatCompletion()
      : await client.chat.completions.create({ model: MODEL, messages, tools, tool_choice: 'required' });
    assert.deepEqual(last().body.tools, [{ name: 'get_weather', description: 'Weather now',
      input_schema: tools[0].function.parameters }]);
    assert.deepEqual(last().body.tool_choice, { type: 'any' });
    const message = first.choices[0].message;
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.equal(message.content, 'Checking both.');
    assert.deepEqual(message.tool_calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      [['toolu_w1', 'get_weather', { city: 'Oslo' }], ['toolu_w2', 'get_weather', { city: 'Rome' }]]);
    const second = await client.chat.completions.create({ model: MODEL, tools, messages: [...messages,
      { role: 'assistant', content: message.content, tool_calls: message.tool_calls },
      { role: 'tool', tool_call_id: 'toolu_w1', content: '3C' },
      { role: 'tool', tool_call_id: 'toolu_w2', content: '20C' }] });
    assert.equal(second.choices[0].message.content, 'It is 3C and 20C.');
    const sent = last().body.messages;
    assert.deepEqual(sent[1].content.map((b) => b.type), ['text', 'tool_use', 'tool_use']);
    assert.deepEqual(sent[2], { role: 'user', content: [
      { type: 'tool_result', tool_use_id: 'toolu_w1', content: '3C' },
      { type: 'tool_result', tool_use_id: 'toolu_w2', content: '20C' }] }, 'consecutive results in one user turn');
  }
});

test('images: a data URL as a base64 block, an http URL as a url block', async () => {
  script = () => ({ content: [{ type: 'text', text: 'A red dot.' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 3 } });
  const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: [
    { type: 'text', text: 'What are these?' },
    { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==' } },
    { type: 'image_url', image_url: { url: 'https://example.com/dot.jpg' } }] }] });
  assert.equal(answer.choices[0].message.content, 'A red dot.');
  assert.deepEqual(last().body.messages[0].content.slice(1), [
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/dot.jpg' } }]);
});

// Writes print(...) code via the loop's function tool, then answers with what the result says.
function codeScript(code) {
  return (body) => {
    const lastTurn = body.messages.at(-1);
    const result = Array.isArray(lastTurn.content) && lastTurn.content.find((b) => b.type === 'tool_result');
    if (result) {
      const text = typeof result.content === 'string' ? result.content : result.content.map((b) => b.text).join('');
      return { content: [{ type: 'text', text: `the code printed ${text.trim()}` }], stop_reason: 'end_turn',
        usage: { input_tokens: 50, output_tokens: 6 } };
    }
    assert.equal(body.tools.length, 1, 'the code tool, as a client tool');
    return { content: [{ type: 'tool_use', id: 'toolu_code1', name: body.tools[0].name, input: { code } }],
      stop_reason: 'tool_use', usage: { input_tokens: 40, output_tokens: 12 } };
  };
}

test('code_interpreter on Chat Completions: the code runs, the loop talks Messages upstream', async () => {
  script = codeScript('print(6*7)');
  const before = upstream.requests.length;
  const completion = await client.chat.completions.create({ model: MODEL,
    messages: [{ role: 'user', content: 'What is 6*7? Use code.' }], tools: [{ type: 'code_interpreter' }] });
  assert.match(completion.choices[0].message.content, /the code printed 42/);
  const calls = upstream.requests.slice(before);
  assert.equal(calls.length, 2);
  for (const call of calls) {
    assert.equal(call.path, '/v1/messages');
    assert.equal(call.headers['x-api-key'], KEY);
  }
  const result = calls[1].body.messages.at(-1).content[0];
  assert.equal(result.type, 'tool_result');
  assert.equal(result.tool_use_id, 'toolu_code1');
  assert.match(JSON.stringify(result.content), /42/);

  const streamed = await client.chat.completions.stream({ model: MODEL,
    messages: [{ role: 'user', content: 'What is 6*7? Use code.' }], tools: [{ type: 'code_interpreter' }] }).finalChatCompletion();
  assert.equal(streamed.choices[0].message.content, completion.choices[0].message.content);
});

test('responses.create and responses.stream: the same response, over /v1/messages', async () => {
  script = () => ({ content: [{ type: 'text', text: 'Responses over Claude works.' }], stop_reason: 'end_turn',
    usage: { input_tokens: 15, output_tokens: 6, cache_read_input_tokens: 4, cache_creation_input_tokens: 2 } });
  const params = { model: MODEL, instructions: 'Be brief.', input: 'Say it', max_output_tokens: 100 };
  const response = await client.responses.create(params);
  assert.equal(response.object, 'response');
  assert.equal(response.status, 'completed');
  assert.equal(response.output_text, 'Responses over Claude works.');
  assert.equal(response.usage.input_tokens, 21);
  assert.equal(response.usage.input_tokens_details.cached_tokens, 4);
  assert.equal(response.usage.input_tokens_details.cache_write_tokens, 2);
  assert.equal(response.usage.output_tokens, 6);
  assert.equal(last().path, '/v1/messages');
  assert.equal(last().headers['x-api-key'], KEY);
  assert.equal(last().body.system, 'Be brief.');
  assert.equal(last().body.max_tokens, 100);

  const stream = client.responses.stream(params);
  const seen = [];
  stream.on('event', (e) => seen.push(e.type));
  const final = await stream.finalResponse();
  assert.equal(last().body.stream, true);
  assert.deepEqual(seen.slice(0, 3), ['response.created', 'response.in_progress', 'response.output_item.added']);
  assert.ok(seen.includes('response.output_text.delta'));
  assert.equal(seen.at(-1), 'response.completed');
  assert.equal(final.output_text, response.output_text);
  assert.equal(final.usage.input_tokens, response.usage.input_tokens);
  assert.deepEqual(final.output.map((i) => i.type), response.output.map((i) => i.type));
});

test('code_interpreter on Responses: a code_interpreter_call with the logs, JSON and stream', async () => {
  script = codeScript('print(6*7)');
  const tools = [{ type: 'code_interpreter', container: { type: 'auto' } }];
  const response = await client.responses.create({ model: MODEL, input: 'What is 6*7?', tools });
  assert.deepEqual(response.output.map((i) => i.type), ['code_interpreter_call', 'message']);
  assert.equal(response.output[0].code, 'print(6*7)');
  assert.deepEqual(response.output[0].outputs, [{ type: 'logs', logs: '42\n' }]);
  assert.equal(response.output_text, 'the code printed 42');
  assert.equal(last().path, '/v1/messages');
  const final = await client.responses.stream({ model: MODEL, input: 'What is 6*7?', tools }).finalResponse();
  assert.deepEqual(final.output.map((i) => i.type), ['code_interpreter_call', 'message']);
  assert.equal(final.output_text, 'the code printed 42');
});

test("Anthropic's errors reach the client as the SDK's error classes with the upstream's message", async () => {
  script = () => ({ status: 400, error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' } });
  for (const stream of [false, true]) {
    await assert.rejects(client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream }),
      (error) => error instanceof OpenAI.BadRequestError && /prompt is too long: 250000 tokens/.test(error.message));
    await assert.rejects(client.responses.create({ model: MODEL, input: 'x', stream }),
      (error) => error instanceof OpenAI.BadRequestError && /prompt is too long/.test(error.message));
  }
  script = () => ({ status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } });
  await assert.rejects(client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }),
    (error) => error instanceof OpenAI.InternalServerError && error.status === 503 && /Overloaded/.test(error.message)
      && error.error?.type === 'overloaded_error');
  // An error event in the middle of Anthropic's stream ends the client's stream as an error.
  script = () => ({ content: [{ type: 'text', text: 'Partial answ' }], stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 2 }, streamError: { type: 'overloaded_error', message: 'Overloaded mid-stream' } });
  await assert.rejects(async () => {
    for await (const chunk of await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true })) void chunk;
  }, (error) => error instanceof OpenAI.APIError && /Overloaded mid-stream/.test(error.message));
  await assert.rejects(client.responses.stream({ model: MODEL, input: 'x' }).finalResponse(),
    (error) => /Overloaded mid-stream/.test(error.message));
  // A request Anthropic cannot take is refused here, by name, not dropped.
  await assert.rejects(client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], n: 2 }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === 'n');
  script = () => ({ content: [{ type: 'text', text: 'still serving' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } });
  const ok = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] });
  assert.equal(ok.choices[0].message.content, 'still serving');
});

// Thinking first, then a tool call; the next turn must send the signed thinking block back.
function thinkingScript(body) {
  const lastTurn = body.messages.at(-1);
  if (Array.isArray(lastTurn.content) && lastTurn.content.some((b) => b.type === 'tool_result'))
    return { content: [{ type: 'text', text: 'It is sunny.' }], stop_reason: 'end_turn', usage: { input_tokens: 60, output_tokens: 4 } };
  return { content: [{ type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: SIGNATURE },
    { type: 'tool_use', id: 'toolu_t1', name: 'get_weather', input: { city: 'Oslo' } }],
  stop_reason: 'tool_use', usage: { input_tokens: 50, output_tokens: 30 } };
}
const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

test('Chat: reasoning_effort → thinking budget; thinking comes back with its signature and goes back next turn', async () => {
  script = thinkingScript;
  const messages = [{ role: 'user', content: 'Weather in Oslo?' }];
  for (const stream of [false, true]) {
    const params = { model: MODEL, messages, tools: [WEATHER], reasoning_effort: 'low' };
    const first = stream ? await client.chat.completions.stream(params).finalChatCompletion()
      : await client.chat.completions.create(params);
    assert.deepEqual(last().body.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.equal(last().body.max_tokens, 4096 + 1024);
    const message = first.choices[0].message;
    // The SDK's stream helper keeps the last value of a delta field it does not know, so only
    // the cumulative thinking_blocks survive it whole; reasoning_content streams as pieces.
    if (!stream) assert.equal(message.reasoning_content, 'The user wants the weather; call the tool.');
    assert.deepEqual(message.thinking_blocks, [{ type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: SIGNATURE }]);
    const second = await client.chat.completions.create({ ...params, messages: [...messages, message,
      { role: 'tool', tool_call_id: 'toolu_t1', content: 'sunny' }] });
    assert.equal(second.choices[0].message.content, 'It is sunny.');
    assert.deepEqual(last().body.messages[1].content[0],
      { type: 'thinking', thinking: 'The user wants the weather; call the tool.', signature: SIGNATURE });
  }
});

test('Responses: thinking → a reasoning item whose encrypted_content carries the signature back', async () => {
  script = thinkingScript;
  const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
  for (const stream of [false, true]) {
    const params = { model: MODEL, input: [{ role: 'user', content: 'Weather in Oslo?' }], tools,
      reasoning: { effort: 'medium' } };
    const first = stream ? await client.responses.stream(params).finalResponse() : await client.responses.create(params);
    assert.deepEqual(last().body.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.deepEqual(first.output.map((i) => i.type), ['reasoning', 'function_call']);
    assert.equal(first.output[0].encrypted_content, SIGNATURE);
    assert.equal(first.output[1].call_id, 'toolu_t1');
    const second = await client.responses.create({ ...params, input: [...params.input, ...first.output,
      { type: 'function_call_output', call_id: 'toolu_t1', output: 'sunny' }] });
    assert.equal(second.output_text, 'It is sunny.');
    assert.deepEqual(last().body.messages[1].content.map((b) => b.type), ['thinking', 'tool_use']);
    assert.equal(last().body.messages[1].content[0].signature, SIGNATURE);
  }
});

test('max_tokens stop → finish_reason length, Responses incomplete (max_output_tokens)', async () => {
  script = () => ({ content: [{ type: 'text', text: 'Cut sho' }], stop_reason: 'max_tokens', usage: { input_tokens: 5, output_tokens: 3 } });
  const chat = await client.chat.completions.create({ model: MODEL, max_tokens: 3, messages: [{ role: 'user', content: 'long story' }] });
  assert.equal(chat.choices[0].finish_reason, 'length');
  const response = await client.responses.create({ model: MODEL, max_output_tokens: 3, input: 'long story' });
  assert.equal(response.status, 'incomplete');
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(response.output_text, 'Cut sho');
});

test('previous_response_id over Anthropic: Loopscope keeps the chain, signed thinking included', async () => {
  script = thinkingScript;
  const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
  const first = await client.responses.create({ model: MODEL, input: 'Weather in Oslo?', tools, reasoning: { effort: 'low' } });
  const second = await client.responses.create({ model: MODEL, tools, reasoning: { effort: 'low' }, previous_response_id: first.id,
    input: [{ type: 'function_call_output', call_id: 'toolu_t1', output: 'sunny' }] });
  assert.equal(second.output_text, 'It is sunny.');
  assert.equal(second.previous_response_id, first.id);
  const sent = last().body.messages;
  assert.deepEqual(sent.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.deepEqual(sent[1].content.map((b) => b.type), ['thinking', 'tool_use']);
  assert.equal(sent[1].content[0].signature, SIGNATURE);
  await assert.rejects(client.responses.create({ model: MODEL, input: 'x', previous_response_id: 'resp_unknown' }),
    (error) => error instanceof OpenAI.NotFoundError && error.code === 'previous_response_not_found');
});

test('the flow records each hop sent to Anthropic in the messages dialect, pass-through and loop', async () => {
  const control = await controlClient(app);
  const latestFlow = async (previous) => {
    let flow;
    await waitFor(async () => {
      const summary = (await control('GET', '/flows?limit=1')).json?.data?.[0];
      if (!summary || summary.id === previous || summary.state !== 'completed') return false;
      flow = (await control('GET', `/flows/${summary.id}`)).json;
      return true;
    }, 20000, 'the flow to complete');
    return flow;
  };
  const before = (await control('GET', '/flows?limit=1')).json?.data?.[0]?.id;
  script = () => ({ content: [{ type: 'text', text: 'recorded' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2 } });
  await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'record me' }] });
  const flow = await latestFlow(before);
  assert.equal(flow.bridged, true);
  const requests = flow.hops.filter((h) => h.kind === 'upstream_request');
  assert.deepEqual(requests.map((h) => h.dialect), ['messages']);
  assert.match(requests[0].url, /\/v1\/messages$/);
  assert.equal(requests[0].body.messages[0].content[0].text, 'record me');

  script = codeScript('print(2+2)');
  const looped = await client.responses.create({ model: MODEL, input: '2+2?', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });
  assert.equal(looped.output_text, 'the code printed 4');
  const loopFlow = await latestFlow(flow.id);
  const calls = loopFlow.hops.filter((h) => h.kind === 'upstream_request');
  assert.equal(calls.length, 2);
  for (const hop of calls) {
    assert.equal(hop.dialect, 'messages');
    assert.match(hop.url, /\/v1\/messages$/);
    assert.ok(Array.isArray(hop.body.messages) && hop.body.max_tokens, 'the Messages body the upstream got');
  }
});
