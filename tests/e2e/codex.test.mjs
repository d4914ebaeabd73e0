// Codex CLI itself (the real `codex exec` from npm) through a headless Loopscope: a
// `model_providers` entry whose base_url is Loopscope, and behind it a scripted Responses
// upstream that streams as OpenAI does and, like OpenAI, refuses a request without its key. The
// script asks for one shell command through the tool Codex offers, then answers from its
// output. What Codex prints, what the upstream received, and what the history makes of it: one
// session (Codex's own id), one run, the tool call and its result.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopscope, controlClient, waitFor, codexShellCall, startScriptedResponsesStreamUpstream }
  from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CODEX = path.join(here, 'node_modules', '.bin', 'codex');
const KEY = 'sk-e2e-codex-key-0001';
const MARKER = 'e2e-codex-marker-5';
let upstream;
let app;
let control;
let dataDir;

// A shell call until a result is in the input, then an answer quoting the result's first line.
function script({ body }) {
  const result = (body.input ?? []).find((i) => i.type === 'function_call_output');
  if (!result) return codexShellCall(body.tools, `echo ${MARKER}`);
  return { type: 'message', id: 'msg_codex_1', role: 'assistant', status: 'completed',
    content: [{ type: 'output_text', text: `The command printed ${String(result.output).match(/e2e-\S+/)?.[0]}.`,
      annotations: [] }] };
}

before(async () => {
  upstream = await startScriptedResponsesStreamUpstream(script, { apiKey: KEY });
  dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-codex-'));
  app = await startLoopscope(['--upstream', upstream.url, '--data-dir', dataDir]);
  control = await controlClient(app);
});

after(async () => {
  await app?.stop();
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('Codex CLI runs through Loopscope: one session, one run, the shell call and its result', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-codex-home-'));
  const work = path.join(home, 'work');
  mkdirSync(path.join(home, '.codex'));
  mkdirSync(work);
  // The provider entry as the Connect dialog's Codex snippet writes it.
  writeFileSync(path.join(home, '.codex', 'config.toml'), [
    'model = "gpt-5-codex"', 'model_provider = "loopscope"', '',
    '[model_providers.loopscope]', 'name = "Loopscope"', `base_url = "${app.apiBase}"`,
    'env_key = "OPENAI_API_KEY"', 'wire_api = "responses"', ''].join('\n'));
  const before = upstream.requests.length;
  const child = spawn(CODEX, ['exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access',
    `Run echo ${MARKER} and tell me what it printed`], {
    cwd: work, stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: home, OPENAI_API_KEY: KEY },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const [code] = await once(child, 'exit');
  rmSync(home, { recursive: true, force: true });
  assert.equal(code, 0, `codex exited ${code}: ${err}`);
  assert.match(out, new RegExp(`The command printed ${MARKER}\\.`));

  // The upstream got Codex's own requests, its key intact, the shell result in the second.
  const mine = upstream.requests.slice(before);
  assert.equal(mine.length, 2, `upstream saw ${mine.length} requests`);
  assert.ok(mine.every((r) => r.path === '/v1/responses' && r.headers.authorization === `Bearer ${KEY}`));
  const sessions = new Set(mine.map((r) => r.headers['session-id']));
  assert.equal(sessions.size, 1);
  const [session] = sessions;
  assert.ok(session, 'Codex sent no session-id header');

  // Loopscope's history: both flows in Codex's session and one run, the tool call counted.
  let flows = [];
  await waitFor(async () => {
    flows = (await control('GET', '/flows?limit=200')).json.data.filter((f) => f.session_id === session);
    return flows.length === 2 && flows.every((f) => f.state === 'completed');
  }, 20000, () => `two completed flows in session ${session}: ${JSON.stringify(flows)}`);
  assert.ok(flows.every((f) => f.api === 'responses' && f.stream));
  assert.equal(new Set(flows.map((f) => f.run_id)).size, 1);
  assert.ok(flows.every((f) => f.usage.input_tokens === 900 && f.usage.cache_read_tokens === 800));
  const runs = (await control('GET', '/runs?limit=50')).json.data;
  const run = runs.find((r) => r.id === flows[0].run_id);
  assert.ok(run, `run ${flows[0].run_id} listed`);
  assert.deepEqual([...run.flows].sort(), flows.map((f) => f.id).sort());
  assert.equal(run.tool_calls, 1);

  // The run's last flow reads as the conversation: the prompt, the call, its result, the answer.
  const last = flows.reduce((a, b) => (a.started_at >= b.started_at ? a : b));
  const full = (await control('GET', `/flows/${last.id}`)).json;
  const request = full.hops.find((h) => h.kind === 'client_request');
  const input = request.body.input;
  assert.ok(input.some((i) => i.role === 'user' && JSON.stringify(i.content).includes(`Run echo ${MARKER}`)));
  const call = input.find((i) => i.type === 'function_call');
  assert.equal(call.call_id, 'call_codex_1');
  const output = input.find((i) => i.type === 'function_call_output');
  assert.equal(output.call_id, 'call_codex_1');
  assert.match(String(output.output), new RegExp(MARKER));
  assert.ok(!JSON.stringify(full).includes(KEY), 'the key is stored in clear');
});
