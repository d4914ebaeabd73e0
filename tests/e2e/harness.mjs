// Shared harness for the end-to-end tests: starts a real headless Loopscope binary and, where a
// test needs to script the model, a fake upstream that speaks OpenAI's wire protocol.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { once } from 'node:events';

const BIN = process.env.LOOPSCOPE_BIN;

export function requireBinary() {
  if (!BIN) throw new Error('LOOPSCOPE_BIN must point at the built loopscope executable');
  return BIN;
}

// Starts `loopscope --headless --port 0 ...args` and resolves once it prints its listening line.
// Without --data-dir its default data directory (history, control token) is a fresh one of its
// own, not the user's: a test that reads "the newest flow" must find its own, whatever else ran.
export async function startLoopscope(args = []) {
  const dataHome = args.includes('--data-dir') ? null : mkdtempSync(join(tmpdir(), 'loopscope-e2e-data-'));
  const proc = spawn(requireBinary(), ['--headless', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOOPSCOPE_E2E_CANARY: 'canary-secret-value',
      ...(dataHome ? { XDG_DATA_HOME: dataHome } : {}) },
  });
  if (dataHome) proc.on('exit', () => rmSync(dataHome, { recursive: true, force: true }));
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const baseURL = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`loopscope did not start: ${stderr}`)), 30000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/loopscope listening on (http:\/\/[^\s]+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`loopscope exited ${code}: ${stderr}`)); });
  });
  return {
    baseURL,
    apiBase: `${baseURL}/v1`,
    proc,
    stderr: () => stderr,
    async stop() {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const [code] = await once(proc, 'exit');
      return code;
    },
  };
}

// What a scripted upstream records of a request: path, method, headers, the body as JSON when
// it is JSON (else its text).
async function readRequest(req) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  let body = null;
  try { body = JSON.parse(raw); } catch { body = raw; }
  return { path: req.url, method: req.method, headers: req.headers, body };
}

// A fake upstream model: `handler({path, body, index})` returns {status, json} or {status, text}.
// Every request body is recorded so tests can assert what reached the "provider".
export async function startScriptedUpstream(handler) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    const entry = await readRequest(req);
    requests.push(entry);
    const reply = await handler({ ...entry, index: requests.length - 1 });
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
    res.end(reply.text ?? JSON.stringify(reply.json ?? {}));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((r) => server.close(r)),
  };
}

// Processes of the sandboxes one Loopscope started: their command lines carry the marker
// `loopscope-sandbox:<loopscope pid>` (bubblewrap twice, then the interpreter it runs).
export function sandboxProcessCount(loopscopePid) {
  const marker = `loopscope-sandbox:${loopscopePid}`;
  // No catch: a count that cannot be taken must fail the test, not read as "none left".
  const out = execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(marker) && !l.startsWith('ps ')).length;
}

// Live sandbox interpreters of one Loopscope (one per sandbox, pooled ones included): the
// marked python processes without a marked child. With the zygote (the default) a sandbox is
// two forks of it (namespace init, interpreter) and the zygote itself is one more; with one bwrap
// per sandbox the interpreter is the only marked python. Leaves count either way.
export function sandboxInterpreterCount(loopscopePid) {
  const marker = `loopscope-sandbox:${loopscopePid}`;
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
  const marked = out.split('\n').map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m) => m && m[3].includes(marker));
  const parents = new Set(marked.map((m) => m[2]));
  return marked.filter((m) => m[3].startsWith('/usr/bin/python3') && !parents.has(m[1])).length;
}

// CPU time (utime + stime, in clock ticks, from /proc/<pid>/stat) of every process of one
// Loopscope's sandboxes (the marked ones, as sandboxProcessCount counts them), by pid.
export function sandboxCpuTicks(loopscopePid) {
  const marker = `loopscope-sandbox:${loopscopePid}`;
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const ticks = new Map();
  for (const line of out.split('\n')) {
    const m = line.trim().match(/^(\d+)\s+(.*)$/);
    if (!m || !m[2].includes(marker) || m[2].startsWith('ps ')) continue;
    let stat;
    try { stat = readFileSync(`/proc/${m[1]}/stat`, 'utf8'); } catch { continue; } // gone since
    // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(Number(m[1]), Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

// The sandbox processes that used CPU during `windowMs` (pids), e.g. code that still spins.
export async function busySandboxProcesses(loopscopePid, windowMs = 200) {
  const before = sandboxCpuTicks(loopscopePid);
  await new Promise((r) => setTimeout(r, windowMs));
  const after = sandboxCpuTicks(loopscopePid);
  return [...after].filter(([pid, t]) => before.has(pid) && t > before.get(pid)).map(([pid]) => pid);
}

// The value `sample()` settles on: the same for `steadyMs` in a row.
export async function settledValue(sample, steadyMs = 1000, timeoutMs = 20000) {
  const start = Date.now();
  let value = sample();
  let since = Date.now();
  while (Date.now() - start < timeoutMs) {
    await new Promise((r) => setTimeout(r, 100));
    const now = sample();
    if (now !== value) {
      value = now;
      since = Date.now();
    } else if (Date.now() - since >= steadyMs) {
      return value;
    }
  }
  return value;
}

// Resolves true once `predicate()` holds; throws when it still does not after `timeoutMs`, so a
// wait that timed out fails the test where it happened instead of passing on to a weaker check.
// `what` (a string, or a function giving one at the timeout) says what was awaited.
export async function waitFor(predicate, timeoutMs = 20000, what = undefined) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await predicate()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (await predicate()) return true;
  const said = typeof what === 'function' ? what() : what;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${said ?? predicate.toString()}`);
}

// Responses-API shapes a scripted upstream answers with.
export function responsesFunctionCall(code, callId = 'call_1') {
  return {
    id: `resp_${callId}`, object: 'response', created_at: 1700000000, status: 'completed',
    model: 'scripted', output: [{
      type: 'function_call', id: `fc_${callId}`, call_id: callId, name: 'litellm_code_execution',
      arguments: JSON.stringify({ code }), status: 'completed',
    }],
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  };
}

export function responsesMessage(text, id = 'msg_final') {
  return {
    id: `resp_${id}`, object: 'response', created_at: 1700000001, status: 'completed',
    model: 'scripted', output: [{
      type: 'message', id, role: 'assistant', status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    }],
    usage: { input_tokens: 20, output_tokens: 8, total_tokens: 28 },
  };
}

export function chatMessage(content) {
  return {
    id: 'chatcmpl-scripted', object: 'chat.completion', created: 1700000000, model: 'scripted',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
  };
}

// The control API of a started Loopscope, with the token it printed at start.
export async function controlClient(app) {
  await waitFor(() => /loopscope control token: [0-9a-f]{64}/.test(app.stderr()), 10000);
  const token = app.stderr().match(/loopscope control token: ([0-9a-f]{64})/)[1];
  return async (method, route, body) => {
    const res = await fetch(`${app.baseURL}/loopscope/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, json, text };
  };
}

// A fake Anthropic Messages upstream on the real wire protocol, its auth included: a request
// without the expected key (x-api-key, or Authorization: Bearer as the SDK now sends it) gets
// Anthropic's 401. `handler({body, index, headers})` returns
// a whole Message (or {status, error}); with stream:true it is sent as Anthropic streams it
// (message_start, per block start / deltas / stop, message_delta, message_stop; with
// `streamError` an `error` event after the blocks instead of the end).
export async function startScriptedAnthropicUpstream(handler, { apiKey = 'sk-ant-e2e-key-0001' } = {}) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    const entry = await readRequest(req);
    const { body } = entry;
    requests.push(entry);
    const fail = (status, type, message) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_upstream' });
      res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_upstream' }));
    };
    const presented = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (presented !== apiKey) return fail(401, 'authentication_error', 'invalid x-api-key');
    if (!req.url.startsWith('/v1/messages')) return fail(404, 'not_found_error', `no route ${req.url}`);
    if (req.url.startsWith('/v1/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ input_tokens: 42 }));
    }
    const reply = await handler({ ...entry, index: requests.length - 1 });
    if (reply.error) return fail(reply.status ?? 400, reply.error.type, reply.error.message);
    const message = { id: `msg_${requests.length}`, type: 'message', role: 'assistant', model: body.model,
      stop_sequence: null, ...reply };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(message));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', { message: { ...message, content: [], stop_reason: null,
      usage: { ...message.usage, output_tokens: 1 } } });
    event('ping', {});
    message.content.forEach((block, index) => {
      if (block.type === 'text') {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        for (const piece of block.text.match(/.{1,7}/gs) ?? [''])
          event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      } else if (block.type === 'tool_use') {
        event('content_block_start', { index, content_block: { ...block, input: {} } });
        const json = JSON.stringify(block.input);
        for (let i = 0; i < json.length; i += 9)
          event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 9) } });
      } else if (block.type === 'thinking') { // as Anthropic streams it: text, then signature
        event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        for (const piece of block.thinking.match(/.{1,11}/gs) ?? [])
          event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
        event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
      } else {
        event('content_block_start', { index, content_block: block });
      }
      event('content_block_stop', { index });
    });
    if (reply.streamError) { // Anthropic's error event mid-stream (e.g. overloaded_error)
      event('error', { error: reply.streamError });
      return res.end();
    }
    event('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens } });
    event('message_stop', {});
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    close: () => new Promise((r) => server.close(r)),
  };
}

// The shell tool Codex CLI offers (its name and argument shape changed across releases) as a
// Responses function call running `command`.
export function codexShellCall(tools, command, callId = 'call_codex_1') {
  const tool = (tools ?? []).find((t) => ['exec_command', 'shell_command', 'shell'].includes(t.name));
  if (!tool) throw new Error(`Codex offered no shell tool: ${(tools ?? []).map((t) => t.name ?? t.type)}`);
  const args = tool.name === 'exec_command' ? { cmd: command }
    : tool.name === 'shell_command' ? { command } : { command: ['bash', '-lc', command] };
  return { type: 'function_call', id: `fc_${callId}`, call_id: callId, name: tool.name,
    arguments: JSON.stringify(args), status: 'completed' };
}

// A Responses upstream that streams every answer as OpenAI does (Codex always streams) and, like
// OpenAI, refuses a request without its key. `handler({ body, index })` gives the output item
// (a function call, a message); usage as given, else a fixed one.
export async function startScriptedResponsesStreamUpstream(handler, { apiKey, usage } = {}) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    const entry = await readRequest(req);
    const { body } = entry;
    requests.push(entry);
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error',
        code: 'invalid_api_key', param: null } }));
    }
    const item = await handler({ body, index: requests.length - 1 });
    const response = { id: `resp_codex_${requests.length}`, object: 'response', created_at: 1700000000,
      model: body.model, status: 'in_progress', output: [] };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sequence = 0;
    const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
    event('response.created', { response });
    event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } });
    event('response.output_item.done', { output_index: 0, item });
    event('response.completed', { response: { ...response, status: 'completed', output: [item],
      usage: usage ?? { input_tokens: 900, input_tokens_details: { cached_tokens: 800 }, output_tokens: 12,
        output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 912 } } });
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}/v1`, apiKey, requests,
    close: () => new Promise((r) => server.close(r)) };
}
