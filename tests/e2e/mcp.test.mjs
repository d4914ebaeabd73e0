// The MCP server at /loopscope/mcp, driven by the official MCP TypeScript SDK over its Streamable
// HTTP transport: a coding agent reads what an agent did through Loopscope (flows as
// transcripts, search, runs, sandboxes) with the control token; a wrong token gets the
// transport's 401 error and a foreign page's Origin a 403 before anything runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  requireBinary, startLoopscope, startScriptedUpstream, responsesFunctionCall, responsesMessage,
  waitFor,
} from './harness.mjs';

const CI_TOOL = [{ type: 'code_interpreter', container: { type: 'auto' } }];
const MARKER_CODE = "print('mcp-' + 'needle-' + str(6*7))";
const MARKER = 'mcp-needle-42';

let app;
let upstream;
let token;
let dataDir;
let mcp;
let flowId;

async function connect(headers) {
  const client = new Client({ name: 'loopscope-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.baseURL}/loopscope/mcp`), {
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
}

// The control API beside MCP, with the same token.
function control(method, route, body) {
  return fetch(`${app.baseURL}/loopscope/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
}

function text(result) {
  assert.equal(result.content[0].type, 'text');
  return result.content.map((c) => c.text).join('\n');
}

before(async () => {
  upstream = await startScriptedUpstream(({ index }) => (index % 2 === 0
    ? { json: responsesFunctionCall(MARKER_CODE, `call_mcp_${index}`) }
    : { json: responsesMessage('The code printed the marker.', `msg_${index}`) }));
  dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-mcp-'));
  app = await startLoopscope(['--upstream', upstream.url, '--data-dir', dataDir]);
  await waitFor(() => /loopscope control token: [0-9a-f]{64}/.test(app.stderr()), 10000);
  token = app.stderr().match(/loopscope control token: ([0-9a-f]{64})/)[1];
  const openai = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-mcp-user-0001', maxRetries: 0 });
  const reply = await openai.responses.create({
    model: 'scripted', tools: CI_TOOL, input: 'Print the marker.',
    metadata: { session_id: 'mcp-e2e-session' },
  });
  assert.match(JSON.stringify(reply.output), new RegExp(MARKER));
  mcp = await connect({ authorization: `Bearer ${token}` });
});

after(async () => {
  await mcp?.close();
  const code = await app?.stop();
  await upstream?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  assert.equal(code, 0, `loopscope exited with ${code}`);
});

test('initialize negotiates a protocol version and names the server', () => {
  assert.equal(mcp.getServerVersion().name, 'loopscope');
  assert.ok(mcp.getServerCapabilities().tools, 'tools capability');
});

test('tools/list has the nine contract tools, each with a JSON Schema for its input', async () => {
  const { tools } = await mcp.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['delete_sandbox', 'get_flow', 'list_flows', 'list_paused', 'list_runs',
    'list_sandboxes', 'replay_flow', 'resolve_paused', 'search_flows']);
  for (const t of tools) assert.equal(t.inputSchema.type, 'object', t.name);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(byName.get_flow.inputSchema.required, ['flow_id']);
  assert.deepEqual(byName.search_flows.inputSchema.required, ['query']);
  assert.deepEqual(byName.resolve_paused.inputSchema.required, ['pause_id', 'action']);
  assert.ok(byName.resolve_paused.inputSchema.properties.code);
  assert.ok(byName.replay_flow.inputSchema.properties.body);
  assert.ok(byName.list_flows.inputSchema.properties.run_id);
});

test('list_flows names the flow ids in text, not a JSON dump', async () => {
  await waitFor(async () => {
    const t = text(await mcp.callTool({ name: 'list_flows', arguments: { state: 'completed' } }));
    return /req_\w+\s+POST \/v1\/responses/.test(t);
  }, 10000);
  const t = text(await mcp.callTool({ name: 'list_flows', arguments: { limit: 5 } }));
  flowId = t.match(/(req_\w+)\s+POST \/v1\/responses/)[1];
  assert.match(t, /model scripted/);
  assert.match(t, /1 code runs/);
  assert.throws(() => JSON.parse(t));
  const bad = await mcp.callTool({ name: 'list_flows', arguments: { limit: 0 } });
  assert.equal(bad.isError, true);
});

test('get_flow renders a transcript: request, model calls, code, output fed back, answer', async () => {
  const t = text(await mcp.callTool({ name: 'get_flow', arguments: { flow_id: flowId } }));
  assert.match(t, new RegExp(`^Flow ${flowId}`));
  const order = ['[client request] POST /v1/responses', 'Print the marker.', '[model call 1]',
    MARKER_CODE, '[code run]', MARKER, 'fed back to the model', '[model call 2]',
    '[final answer to the client] HTTP 200', 'The code printed the marker.'];
  let at = 0;
  for (const piece of order) {
    const found = t.indexOf(piece, at);
    assert.ok(found >= 0, `"${piece}" after offset ${at} in:\n${t}`);
    at = found;
  }
  assert.doesNotMatch(t, /sk-e2e-mcp-user-0001/, 'no client key');
  const missing = await mcp.callTool({ name: 'get_flow', arguments: { flow_id: 'req_nope' } });
  assert.equal(missing.isError, true);
  assert.match(text(missing), /No flow with id req_nope/);
});

test('search_flows finds the flow by what its code printed', async () => {
  const t = text(await mcp.callTool({ name: 'search_flows', arguments: { query: MARKER } }));
  assert.match(t, new RegExp(flowId));
  const none = text(await mcp.callTool({ name: 'search_flows', arguments: { query: 'zz-absent-word' } }));
  assert.match(none, /none/);
});

test('list_runs names the run and its flows', async () => {
  const t = text(await mcp.callTool({ name: 'list_runs', arguments: {} }));
  assert.match(t, /run_\w+/);
  assert.match(t, new RegExp(flowId));
});

test('list_sandboxes and delete_sandbox remove the session sandbox', async () => {
  const listed = text(await mcp.callTool({ name: 'list_sandboxes', arguments: {} }));
  const id = listed.match(/(cntr_\w+)/)?.[1];
  assert.ok(id, listed);
  assert.match(listed, /session mcp-e2e-session/);
  const deleted = await mcp.callTool({ name: 'delete_sandbox', arguments: { sandbox_id: id } });
  assert.notEqual(deleted.isError, true);
  assert.match(text(deleted), new RegExp(`Deleted sandbox ${id}`));
  assert.doesNotMatch(text(await mcp.callTool({ name: 'list_sandboxes', arguments: {} })), new RegExp(id));
  const again = await mcp.callTool({ name: 'delete_sandbox', arguments: { sandbox_id: id } });
  assert.equal(again.isError, true);
});

test('replay_flow runs the recorded request again as a new flow', async () => {
  const t = text(await mcp.callTool({ name: 'replay_flow', arguments: { flow_id: flowId } }));
  const newId = t.match(/new flow (req_\w+)/)?.[1];
  assert.ok(newId, t);
  await waitFor(async () => !(await mcp.callTool({ name: 'get_flow', arguments: { flow_id: newId } })).isError, 10000);
  await waitFor(async () => /replay of/.test(text(await mcp.callTool({ name: 'list_flows', arguments: { limit: 3 } }))), 10000);
  // The replay is listed while it runs; the next test needs its loop over (both upstream calls
  // made), or a breakpoint set there pauses the replay instead of that test's own request.
  await waitFor(async () => {
    const r = await control('GET', `/flows/${newId}`);
    return r.ok && (await r.json()).state === 'completed';
  }, 10000);
});

test('list_paused and resolve_paused steer a loop paused before its code runs', async () => {
  // Earlier tests' loops (the replay included) have finished: two upstream calls each, so the
  // scripted model answers this request with code first.
  await waitFor(() => upstream.requests.length % 2 === 0, 10000);
  assert.equal((await control('PUT', '/breakpoints', { code: true })).status, 200);
  try {
    const idle = await mcp.callTool({ name: 'list_paused', arguments: {} });
    assert.ok(!idle.isError);
    assert.doesNotMatch(text(idle), /pause_/);
    const openai = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-mcp-user-0001', maxRetries: 0 });
    const pending = openai.responses.create({ model: 'scripted', tools: CI_TOOL, input: 'Print it.' });
    let listed = '';
    await waitFor(async () => {
      listed = text(await mcp.callTool({ name: 'list_paused', arguments: {} }));
      return /pause_[0-9a-f]+/.test(listed);
    }, 20000);
    const pauseId = listed.match(/pause_[0-9a-f]+/)[0];
    assert.match(listed, /req_[0-9a-f]+/, 'the paused flow is named');
    assert.match(listed, /needle/, 'the code waiting to run is shown');
    const resolved = await mcp.callTool({
      name: 'resolve_paused',
      arguments: { pause_id: pauseId, action: 'continue', code: "print('edited-' + str(6*7+1))" },
    });
    assert.ok(!resolved.isError, text(resolved));
    const reply = await pending;
    const call = reply.output.find((o) => o.type === 'code_interpreter_call');
    assert.equal(call.code, "print('edited-' + str(6*7+1))", 'the item carries the code that ran');
    assert.deepEqual(call.outputs[0], { type: 'logs', logs: 'edited-43\n' });
    const again = await mcp.callTool({ name: 'resolve_paused', arguments: { pause_id: pauseId, action: 'continue' } });
    assert.equal(again.isError, true, 'a resolved pause cannot be resolved twice');
  } finally {
    await control('PUT', '/breakpoints', {});
  }
});

test('unknown tools are a JSON-RPC error', async () => {
  await assert.rejects(mcp.callTool({ name: 'rm_rf', arguments: {} }), /Unknown tool/);
});

test('a wrong token gets the transport\'s 401 error', async () => {
  await assert.rejects(connect({ authorization: 'Bearer wrong-token' }),
    (e) => e.code === 401 || /401/.test(String(e)));
  await assert.rejects(connect({}), (e) => e.code === 401 || /401/.test(String(e)));
});

test('a foreign Origin gets 403, even with the right token', async () => {
  await assert.rejects(
    connect({ authorization: `Bearer ${token}`, origin: 'https://evil.example' }),
    (e) => e.code === 403 || /403/.test(String(e)),
  );
});

test('GET has no server stream: 405', async () => {
  const res = await fetch(`${app.baseURL}/loopscope/mcp`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
  });
  assert.equal(res.status, 405);
});

test('--print-mcp-config prints the URL and the Authorization header', () => {
  const out = execFileSync(requireBinary(), ['--print-mcp-config', '--port', '4123', '--control-token', 'tok-e2e'], {
    encoding: 'utf8',
  });
  const cfg = JSON.parse(out);
  assert.deepEqual(cfg.mcpServers.loopscope, {
    type: 'http', url: 'http://127.0.0.1:4123/loopscope/mcp', headers: { Authorization: 'Bearer tok-e2e' },
  });
});
