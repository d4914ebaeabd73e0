// Shared harness for the end-to-end tests: starts a real headless Loopscope binary and, where a
// test needs to script the model, a fake upstream that speaks OpenAI's wire protocol.
import { spawn, execFileSync } from 'node:child_process';
import http from 'node:http';
import { once } from 'node:events';

const BIN = process.env.LOOPSCOPE_BIN;

export function requireBinary() {
  if (!BIN) throw new Error('LOOPSCOPE_BIN must point at the built loopscope executable');
  return BIN;
}

// Starts `loopscope --headless --port 0 ...args` and resolves once it prints its listening line.
export async function startLoopscope(args = []) {
  const proc = spawn(requireBinary(), ['--headless', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOOPSCOPE_E2E_CANARY: 'canary-secret-value' },
  });
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

// A fake upstream model: `handler({path, body, index})` returns {status, json} or {status, text}.
// Every request body is recorded so tests can assert what reached the "provider".
export async function startScriptedUpstream(handler) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    let body = null;
    try { body = JSON.parse(raw); } catch { body = raw; }
    const entry = { path: req.url, method: req.method, headers: req.headers, body };
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
  try {
    const out = execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' });
    return out.split('\n').filter((l) => l.includes(marker) && !l.startsWith('ps ')).length;
  } catch {
    return 0;
  }
}

// Live sandbox interpreters of one Loopscope (one per sandbox, pooled ones included): the
// marked python processes without a marked child. With the zygote (the default) a sandbox is
// two forks of it (namespace init, interpreter) and the zygote itself is one more; with one bwrap
// per sandbox the interpreter is the only marked python. Leaves count either way.
export function sandboxInterpreterCount(loopscopePid) {
  const marker = `loopscope-sandbox:${loopscopePid}`;
  try {
    const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
    const marked = out.split('\n').map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
      .filter((m) => m && m[3].includes(marker));
    const parents = new Set(marked.map((m) => m[2]));
    return marked.filter((m) => m[3].startsWith('/usr/bin/python3') && !parents.has(m[1])).length;
  } catch {
    return 0;
  }
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

export async function waitFor(predicate, timeoutMs = 20000) {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await predicate()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return predicate();
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
