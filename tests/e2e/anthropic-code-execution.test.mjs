// Anthropic's code execution tool served by Loopscope (dialects.md §4), end to end: the official
// @anthropic-ai/sdk declares {type:"code_execution_…", name:"code_execution"}, a scripted
// Anthropic-format upstream (which refuses requests without its x-api-key) plays the model and
// calls the sub-tools as ordinary client tools, and the code runs in Loopscope's real sandboxes
// (Python and bash under bubblewrap). What the client gets is Anthropic's shape: server_tool_use
// then the result block, `container`, summed usage; streamed and not alike.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  startLoopscope, startScriptedAnthropicUpstream, sandboxProcessCount, controlClient, waitFor,
} from './harness.mjs';

let upstream;
let app;
let dataDir;
let client;
let collector; // OTLP/HTTP JSON bodies Loopscope exports
 // what runs with no sandbox (the zygote)

// The user's message names the calls to make: "PLAN <json array>", one entry per round, each a
// {name, input} call or an array of calls made in one turn. After the last round, a text answer
// quoting the last result the model was given.
function script({ body }) {
  const firstUser = body.messages.find((m) => m.role === 'user');
  const text = typeof firstUser.content === 'string' ? firstUser.content
    : firstUser.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  const plan = JSON.parse(text.replace(/^PLAN /, ''));
  const results = body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b) => b.type === 'tool_result');
  const round = body.messages.filter((m) => m.role === 'assistant').length;
  const usage = { input_tokens: 10 + round, output_tokens: 3 + round, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  if (round < plan.length) {
    const calls = [plan[round]].flat();
    return { content: [{ type: 'text', text: `Step ${round + 1}.` },
      ...calls.map((c, i) => ({ type: 'tool_use', id: `toolu_e2e_${round}${i ? `_${i}` : ''}`, name: c.name, input: c.input }))],
    stop_reason: 'tool_use', usage };
  }
  const last = results.at(-1);
  return { content: [{ type: 'text', text: `Done: ${last ? String(last.content) : 'nothing ran'}` }],
    stop_reason: 'end_turn', usage };
}

// A minimal OTLP/HTTP collector (http/json): keeps every decoded export request. The full
// schema check of the export lives in otlp.test.mjs; here: that Messages code runs are traced.
async function startCollector() {
  const bodies = [];
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}`, bodies, close: () => new Promise((r) => server.close(r)) };
}

before(async () => {
  collector = await startCollector();
  upstream = await startScriptedAnthropicUpstream(script);
  dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-anthcx-'));
  app = await startLoopscope(['--anthropic-upstream', upstream.url, '--data-dir', dataDir, '--exec-timeout', '4', '--sandbox-pool', '0',
    '--otlp-endpoint', collector.url, '--otlp-protocol', 'http/json']);
  client = new Anthropic({ baseURL: app.baseURL, apiKey: upstream.apiKey, maxRetries: 0 });
});

after(async () => {
  await app?.stop();
  await upstream?.close();
  await collector?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const TOOL = { type: 'code_execution_20250825', name: 'code_execution' };
const containers = new Set();

function params(plan, extra = {}) {
  return { model: 'claude-sonnet-4-5', max_tokens: 256, tools: [TOOL],
    messages: [{ role: 'user', content: `PLAN ${JSON.stringify(plan)}` }], ...extra };
}

function requestsOf(plan) {
  const marker = `PLAN ${JSON.stringify(plan)}`;
  return upstream.requests.filter((r) => JSON.stringify(r.body?.messages ?? []).includes(JSON.stringify(marker).slice(1, -1)));
}

function assertNeverNative(plan) {
  const sent = requestsOf(plan);
  assert.ok(sent.length >= 1);
  for (const r of sent) {
    assert.equal(r.headers['x-api-key'] ?? r.headers.authorization?.replace(/^Bearer /, ''), upstream.apiKey);
    for (const tool of r.body.tools ?? [])
      assert.ok(!/^code_execution_/.test(tool.type ?? ''), `native tool sent upstream: ${JSON.stringify(tool)}`);
    assert.ok(!JSON.stringify(r.body.messages).includes('server_tool_use'));
  }
  return sent;
}

function results(message) {
  return message.content.filter((b) => b.type.endsWith('_tool_result'));
}

const bashPlan = [{ name: 'bash_code_execution', input: { command: 'echo hello-bash; echo oops >&2; exit 3' } }];

test('bash: server_tool_use then bash_code_execution_tool_result with the exact output', async () => {
  const message = await client.messages.create(params(bashPlan));
  containers.add(message.container.id);
  assert.match(message.container.id, /^cntr_/);
  assert.ok(Date.parse(message.container.expires_at) > Date.now());
  assert.deepEqual(message.content, [
    { type: 'text', text: 'Step 1.' },
    { type: 'server_tool_use', id: 'srvtoolu_e2e_0', name: 'bash_code_execution', input: bashPlan[0].input,
      caller: { type: 'direct' } },
    { type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_e2e_0',
      content: { type: 'bash_code_execution_result', stdout: 'hello-bash\n', stderr: 'oops\n', return_code: 3, content: [] } },
    { type: 'text', text: 'Done: hello-bash\n\n[stderr]\noops\n\n[return code 3]' },
  ]);
  assert.equal(message.stop_reason, 'end_turn');
  // Usage adds up over the two upstream calls.
  assert.equal(message.usage.input_tokens, 10 + 11);
  assert.equal(message.usage.output_tokens, 3 + 4);
  const sent = assertNeverNative(bashPlan);
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[0].body.tools.map((t) => t.name), ['bash_code_execution', 'text_editor_code_execution']);
  // The follow-up replays the model's turn and answers its tool_use with a tool_result.
  assert.deepEqual(sent[1].body.messages[1], { role: 'assistant', content: [{ type: 'text', text: 'Step 1.' },
    { type: 'tool_use', id: 'toolu_e2e_0', name: 'bash_code_execution', input: bashPlan[0].input }] });
  assert.equal(sent[1].body.messages[2].content[0].tool_use_id, 'toolu_e2e_0');
});

test('messages.stream: finalMessage() is the non-streamed message', async () => {
  const plan = [{ name: 'bash_code_execution', input: { command: 'printf "a\\nb\\n"; seq 3' } }];
  const created = await client.messages.create(params(plan));
  const stream = client.messages.stream(params(plan));
  const types = [];
  stream.on('streamEvent', (event) => types.push(event.type));
  const final = await stream.finalMessage();
  containers.add(created.container.id);
  containers.add(final.container.id);
  // The SDK's finalMessage() adds parsed_output (null without an output format) on its own.
  const normal = ({ parsed_output: parsed, ...m }) => {
    assert.equal(parsed ?? null, null);
    return { ...m, id: 'msg', container: { ...m.container, id: 'cntr', expires_at: 'later' } };
  };
  assert.deepEqual(normal(final), normal(created));
  assert.equal(results(final)[0].content.stdout, 'a\nb\n1\n2\n3\n');
  assert.equal(types[0], 'message_start');
  assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop']);
  assert.ok(types.includes('content_block_delta'));
});

test('a second request with container: <id> sees the first one\'s files', async () => {
  const write = [{ name: 'bash_code_execution', input: { command: 'echo kept-across-requests > note.txt; pwd' } }];
  const first = await client.messages.create(params(write));
  containers.add(first.container.id);
  assert.equal(results(first)[0].content.stdout, '/mnt/data\n');
  const read = [{ name: 'bash_code_execution', input: { command: 'cat note.txt' } }];
  const second = await client.messages.create(params(read, { container: first.container.id }));
  assert.equal(second.container.id, first.container.id);
  assert.equal(results(second)[0].content.stdout, 'kept-across-requests\n');
  assert.equal(results(second)[0].content.return_code, 0);
  // A file the code writes is a file id whose bytes the Files API serves.
  const report = [{ name: 'bash_code_execution', input: { command: 'printf "a,b\\n1,2\\n" > report.csv' } }];
  const third = await client.messages.create(params(report, { container: first.container.id }));
  const [output] = results(third)[0].content.content;
  assert.equal(output.type, 'bash_code_execution_output');
  assert.match(output.file_id, /^cfile_/);
  const download = await client.beta.files.download(output.file_id);
  assert.equal(await download.text(), 'a,b\n1,2\n');
  // ...to the container's owner only.
  const other = new Anthropic({ baseURL: app.baseURL, apiKey: 'sk-ant-someone-else', maxRetries: 0 });
  await assert.rejects(other.beta.files.download(output.file_id), (err) => err.status === 404);
  // container_upload copies it into another container before the model is asked.
  const readReport = [{ name: 'bash_code_execution', input: { command: 'cat report.csv' } }];
  const uploaded = await client.messages.create({ ...params(readReport), messages: [{ role: 'user', content: [
    { type: 'container_upload', file_id: output.file_id }, { type: 'text', text: `PLAN ${JSON.stringify(readReport)}` }] }] });
  containers.add(uploaded.container.id);
  assert.notEqual(uploaded.container.id, first.container.id);
  assert.equal(results(uploaded)[0].content.stdout, 'a,b\n1,2\n');
  assert.ok(!JSON.stringify(requestsOf(readReport).map((r) => r.body)).includes('container_upload'));
  // Another container does not have it.
  const fresh = await client.messages.create(params(read));
  containers.add(fresh.container.id);
  assert.notEqual(fresh.container.id, first.container.id);
  assert.equal(results(fresh)[0].content.return_code, 1);
});

for (const [type, kept] of [['code_execution_20250825', false], ['code_execution_20260120', true], ['code_execution_20260521', true]]) {
  test(`${type}: the shell's directory and exports ${kept ? 'carry over' : 'do not carry over'} to the container's next request`, async () => {
    const tools = [{ type, name: 'code_execution' }];
    const set = [{ name: 'bash_code_execution', input: { command: `export GREETING=hi-${type}; mkdir -p sub; cd sub` } }];
    const first = await client.messages.create(params(set, { tools }));
    containers.add(first.container.id);
    assert.equal(results(first)[0].content.return_code, 0);
    const get = [{ name: 'bash_code_execution', input: { command: `echo "[$GREETING]"; pwd # ${type}` } }];
    const second = await client.messages.create(params(get, { tools, container: first.container.id }));
    assert.equal(results(second)[0].content.stdout, kept ? `[hi-${type}]\n/mnt/data/sub\n` : '[]\n/mnt/data\n');
  });
}

test('the text editor creates a file that bash then reads; view and str_replace', async () => {
  const plan = [
    [{ name: 'text_editor_code_execution', input: { command: 'create', path: 'hello.py', file_text: 'print("hi from the editor")\n' } },
      { name: 'text_editor_code_execution', input: { command: 'str_replace', path: 'hello.py', old_str: 'hi from', new_str: 'hello from' } }],
    [{ name: 'bash_code_execution', input: { command: 'python3 hello.py && cat hello.py' } },
      { name: 'text_editor_code_execution', input: { command: 'view', path: 'hello.py' } },
      { name: 'text_editor_code_execution', input: { command: 'view', path: 'missing.txt' } }],
  ];
  const message = await client.messages.create(params(plan, { max_tokens: 512 }));
  containers.add(message.container.id);
  // Each call's server_tool_use right before its result, in the order the model made them.
  assert.deepEqual(message.content.map((b) => b.type), ['text', 'server_tool_use', 'text_editor_code_execution_tool_result',
    'server_tool_use', 'text_editor_code_execution_tool_result', 'text', 'server_tool_use', 'bash_code_execution_tool_result',
    'server_tool_use', 'text_editor_code_execution_tool_result', 'server_tool_use', 'text_editor_code_execution_tool_result', 'text']);
  const [create, replace, bash, view, missing] = results(message).map((b) => b.content);
  assert.deepEqual(create, { type: 'text_editor_code_execution_create_result', is_file_update: false });
  assert.deepEqual(replace, { type: 'text_editor_code_execution_str_replace_result', old_start: 1, old_lines: 1,
    new_start: 1, new_lines: 1, lines: ['-hi from', '+hello from'] });
  assert.equal(bash.stdout, 'hello from the editor\nprint("hello from the editor")\n');
  assert.deepEqual(view, { type: 'text_editor_code_execution_view_result', file_type: 'text',
    content: 'print("hello from the editor")', num_lines: 1, start_line: 1, total_lines: 1 });
  assert.equal(missing.type, 'text_editor_code_execution_tool_result_error');
  assert.equal(missing.error_code, 'file_not_found');
  assertNeverNative(plan);
});

test('legacy code_execution_20250522 runs Python', async () => {
  const plan = [{ name: 'code_execution', input: { code: 'print(6 * 7)\nraise ValueError("late")' } }];
  const message = await client.messages.create(params(plan, { tools: [{ type: 'code_execution_20250522', name: 'code_execution' }] }));
  containers.add(message.container.id);
  assert.equal(message.content[1].type, 'server_tool_use');
  assert.equal(message.content[1].name, 'code_execution');
  const [result] = results(message);
  assert.equal(result.type, 'code_execution_tool_result');
  assert.equal(result.content.type, 'code_execution_result');
  assert.equal(result.content.stdout, '42\n');
  assert.equal(result.content.return_code, 1);
  assert.match(result.content.stderr, /ValueError: late/);
  const sent = assertNeverNative(plan);
  assert.deepEqual(sent[0].body.tools.map((t) => t.name), ['code_execution']);
});

test('a run over the time limit is execution_time_exceeded', async () => {
  const plan = [{ name: 'bash_code_execution', input: { command: 'echo started; sleep 60' } }];
  const message = await client.messages.create(params(plan));
  containers.add(message.container.id);
  const [result] = results(message);
  assert.deepEqual(result.content, { type: 'bash_code_execution_tool_result_error', error_code: 'execution_time_exceeded' });
  assert.equal(message.stop_reason, 'end_turn');
});

test('breakpoints, live output and the flow record work as on the OpenAI path', async () => {
  const control = await controlClient(app);
  assert.equal((await control('PUT', '/breakpoints', { code: true })).status, 200);
  try {
    const plan = [{ name: 'bash_code_execution', input: { command: 'echo paused-run' } }];
    const pending = client.messages.create(params(plan));
    let paused;
    assert.ok(await waitFor(async () => {
      paused = (await control('GET', '/paused')).json.data;
      return paused.length === 1;
    }), 'no pause appeared');
    // The pause shows the program that runs the command (bash from Python's subprocess).
    assert.equal(paused[0].kind, 'code');
    assert.match(paused[0].code, /^# bash_code_execution: echo paused-run\n/);
    assert.equal((await control('POST', `/paused/${paused[0].id}`, { action: 'deny', message: 'Not today.' })).status, 200);
    const message = await pending;
    containers.add(message.container.id);
    assert.deepEqual(results(message)[0].content, { type: 'bash_code_execution_tool_result_error', error_code: 'unavailable' });
    assert.match(JSON.stringify(requestsOf(plan)[1].body.messages.at(-1)), /Not today\./);
    let flow;
    assert.ok(await waitFor(async () => {
      flow = (await control('GET', `/flows/${paused[0].flow_id}`)).json;
      return flow?.state === 'completed';
    }));
    assert.equal(flow.api, 'messages');
    assert.equal(flow.hops.find((h) => h.kind === 'code_run').decision, 'denied');
  } finally {
    await control('PUT', '/breakpoints', { code: false });
  }
});

test('a stream stays alive with ping events while code runs longer than 15 s', async () => {
  const plan = [{ name: 'bash_code_execution', input: { command: 'sleep 16.5; echo woke' } }];
  const slow = await startLoopscope(['--anthropic-upstream', upstream.url, '--no-history', '--sandbox-pool', '0']);
  try {
    // Read raw: the SDK drops ping events before its listeners see them.
    const res = await fetch(`${slow.baseURL}/v1/messages`, { method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': upstream.apiKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...params(plan), stream: true }) });
    assert.equal(res.status, 200);
    const order = (await res.text()).split('\n\n').filter(Boolean).map((frame) => {
      const data = JSON.parse(frame.split('\n').find((l) => l.startsWith('data: ')).slice(6));
      return data.type === 'content_block_start' ? data.content_block.type : data.type;
    });
    const result = order.indexOf('bash_code_execution_tool_result');
    assert.ok(result > 0, order.join(' '));
    const ping = order.indexOf('ping');
    assert.ok(ping > order.indexOf('server_tool_use') && ping < order.indexOf('bash_code_execution_tool_result'),
      order.join(' '));
  } finally {
    await slow.stop();
  }
});

test('the demo model calls the code execution tool offline', async () => {
  const demo = await startLoopscope(['--upstream', 'demo', '--no-history']);
  try {
    const offline = new Anthropic({ baseURL: demo.baseURL, apiKey: 'sk-ant-none', maxRetries: 0 });
    const message = await offline.messages.create({ model: 'loopscope-demo', max_tokens: 64, tools: [TOOL],
      messages: [{ role: 'user', content: 'what is 17*23?' }] });
    assert.deepEqual(message.content.map((b) => b.type), ['server_tool_use', 'bash_code_execution_tool_result', 'text']);
    assert.equal(message.content[0].name, 'bash_code_execution');
    assert.equal(message.content[1].content.stdout, '391\n');
    assert.equal(message.content[2].text, 'The result is 391.');
  } finally {
    await demo.stop();
  }
});

test('bad input: invalid sub-tool input is invalid_tool_input, a bad key an Anthropic error, no sandbox leaks', async () => {
  const plan = [[{ name: 'bash_code_execution', input: { cmd: 'echo never' } },
    { name: 'text_editor_code_execution', input: { command: 'delete', path: 'x' } }]];
  const message = await client.messages.create(params(plan));
  containers.add(message.container.id);
  const [bash, editor] = results(message);
  assert.deepEqual(bash.content, { type: 'bash_code_execution_tool_result_error', error_code: 'invalid_tool_input' });
  assert.equal(editor.content.error_code, 'invalid_tool_input');
  // The model is told why.
  const sent = requestsOf(plan);
  assert.match(JSON.stringify(sent[1].body.messages.at(-1)), /invalid_tool_input: command must be a non-empty string/);

  const wrongKey = new Anthropic({ baseURL: app.baseURL, apiKey: 'sk-ant-wrong', maxRetries: 0 });
  await assert.rejects(wrongKey.messages.create(params(bashPlan)), (err) => {
    assert.equal(err.status, 401);
    assert.equal(err.error?.type, 'error');
    assert.equal(err.error?.error?.type, 'authentication_error');
    return true;
  });
  await assert.rejects(client.messages.create(params(bashPlan, { container: 'cntr_not_a_container' })), (err) => {
    assert.equal(err.status, 404);
    assert.equal(err.error?.error?.type, 'not_found_error');
    return true;
  });

  // Every live sandbox is a container some answer named; deleting them leaves no interpreter.
  const listed = await fetch(`${app.baseURL}/v1/containers`, { headers: { authorization: `Bearer ${upstream.apiKey}` } });
  const live = (await listed.json()).data.map((c) => c.id);
  assert.ok(live.length > 0);
  for (const id of live) assert.ok(containers.has(id), `unknown live sandbox ${id}`);
  for (const id of live)
    await fetch(`${app.baseURL}/v1/containers/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${upstream.apiKey}` } });
  // What may stay is the zygote alone (two bwrap processes and its interpreter); any sandbox,
  // or a child of one such as a timed-out `sleep`, would add to it.
  await waitFor(() => sandboxProcessCount(app.proc.pid) <= 3, 20000,
    () => `sandbox processes left: ${sandboxProcessCount(app.proc.pid)}`);
});

test('OTLP traces and the MCP transcript cover a Messages code run as they do an OpenAI one', async () => {
  const marker = 'otlp-mcp-' + 'messages-' + 42;
  const plan = [{ name: 'bash_code_execution', input: { command: `echo ${marker}` } }];
  const message = await client.messages.create(params(plan));
  containers.add(message.container.id);
  assert.equal(results(message)[0].content.stdout, `${marker}\n`);

  // The flow of this request (other tests' flows ran bash too), once the store has it.
  const control = await controlClient(app);
  let flowId;
  await waitFor(async () => {
    const list = (await control('GET', '/flows?limit=100')).json?.data ?? [];
    for (const f of list.filter((x) => x.api === 'messages')) {
      const detail = (await control('GET', `/flows/${f.id}`)).json;
      if (JSON.stringify(detail ?? {}).includes(`echo ${marker}`)) {
        flowId = f.id;
        return true;
      }
    }
    return false;
  }, 20000, () => 'the flow of the request in the store');

  // OTLP: a SERVER root for the flow with a CLIENT model call per upstream call and an
  // INTERNAL span for the bash run.
  const spans = () => collector.bodies.flatMap((b) => b.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) => ss.spans)));
  const attr = (span, key) => span.attributes.find((a) => a.key === key)?.value;
  const rootOf = () => spans().find((s) => s.kind === 2 && attr(s, 'loopscope.flow.id')?.stringValue === flowId);
  await waitFor(() => rootOf() !== undefined, 20000, () => `no span for ${flowId} in ${spans().length} spans`);
  const root = rootOf();
  assert.equal(attr(root, 'gen_ai.provider.name')?.stringValue, 'anthropic');
  const children = spans().filter((s) => s.parentSpanId === root.spanId);
  assert.equal(children.filter((s) => s.kind === 3).length, 2, 'two model calls');
  const run = children.find((s) => s.kind === 1);
  assert.equal(run.name, 'execute_tool bash_code_execution');
  assert.equal(attr(run, 'gen_ai.tool.name')?.stringValue, 'bash_code_execution');

  // MCP: the transcript has the command and what it printed.
  const token = app.stderr().match(/loopscope control token: ([0-9a-f]{64})/)[1];
  const mcp = new Client({ name: 'loopscope-e2e', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${app.baseURL}/loopscope/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  }));
  try {
    const got = await mcp.callTool({ name: 'get_flow', arguments: { flow_id: flowId } });
    const text = got.content.map((c) => c.text).join('\n');
    assert.match(text, /POST \/v1\/messages/);
    assert.ok(text.includes(`echo ${marker}`), text);
    assert.ok(text.includes(`${marker}\n`) || text.includes(marker), text);
    const at = text.indexOf(`echo ${marker}`);
    assert.ok(text.indexOf(marker, at + `echo ${marker}`.length) > at, 'the output follows the code');
  } finally {
    await mcp.close();
  }
});
