// The window's Connect-an-SDK snippets (also `loopscope --print-snippet LANG`) produce a
// code-interpreter loop against the demo model: the Node snippet, verbatim, run with the
// official openai package against a real headless Loopscope.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopscope, requireBinary } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const started = [];
after(async () => { for (const s of started) await s.stop(); });

function snippet(lang, port) {
  return execFileSync(requireBinary(), ['--print-snippet', lang, '--port', String(port)],
    { encoding: 'utf8' });
}

// Runs a snippet verbatim, saved next to node_modules so its imports resolve as in a user's
// project, without the variables that would point it elsewhere; returns what it printed.
function runSnippet(code, file, unset) {
  const dir = fs.mkdtempSync(path.join(here, '.snippet-'));
  try {
    fs.writeFileSync(path.join(dir, file), code);
    const env = { ...process.env };
    for (const name of unset) delete env[name];
    return execFileSync(process.execPath, [path.join(dir, file)],
      { encoding: 'utf8', env, timeout: 120000 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the Node snippet runs a code-interpreter loop against the demo model', async () => {
  const app = await startLoopscope();
  started.push(app);
  const port = new URL(app.baseURL).port;
  const code = snippet('node', port);
  assert.match(code, /model: "loopscope-demo"/);
  assert.match(code, /What is 17\*23\?/);
  assert.ok(code.includes(`baseURL: "http://127.0.0.1:${port}/v1"`), code);
  const out = runSnippet(code, 'loop.mjs', ['OPENAI_API_KEY', 'OPENAI_BASE_URL']);
  // The snippet prints the code of each code_interpreter_call, then the answer.
  assert.match(out, /^ran: /m, out);
  assert.match(out, /391/, out);
});

test('every snippet names the demo model, the prompt and the address', async () => {
  for (const lang of ['python', 'node', 'curl', 'litellm', 'agents']) {
    const code = snippet(lang, 4123);
    assert.ok(code.includes('loopscope-demo'), `${lang}: ${code}`);
    assert.ok(code.includes('What is 17*23?'), `${lang}: ${code}`);
    assert.ok(code.includes('http://127.0.0.1:4123/v1'), `${lang}: ${code}`);
  }
});

test('the Anthropic SDK snippet, verbatim, asks the demo model through /v1/messages', async () => {
  const app = await startLoopscope();
  started.push(app);
  const port = new URL(app.baseURL).port;
  const code = snippet('anthropic', port);
  assert.ok(code.includes(`baseURL: "http://127.0.0.1:${port}",`), code);
  const out = runSnippet(code, 'ask.mjs', ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL']);
  // The demo model's own words, printed from the message's text block.
  assert.match(out, /Loopscope demo model/, out);
});

test('the agent snippets point Claude Code and Codex at Loopscope', () => {
  const claude = snippet('claude-code', 4123);
  assert.match(claude, /^export ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:4123$/m, claude);
  // The demo model cannot drive Claude Code's tools: the snippet names a Claude model and how
  // to start Loopscope with a Claude upstream (tst_dialogs checks a configured model instead).
  assert.match(claude, /^#   loopscope --anthropic-upstream https:\/\/api\.anthropic\.com$/m, claude);
  assert.match(claude, /^claude --model claude-sonnet-4-5 -p "What is 17\*23\?"$/m, claude);
  const codex = snippet('codex', 4123);
  assert.match(codex, /^base_url = "http:\/\/127\.0\.0\.1:4123\/v1"$/m, codex);
  assert.match(codex, /^wire_api = "responses"$/m, codex);
  assert.match(codex, /^model = "loopscope-demo"$/m, codex);
  assert.match(codex, /codex exec "What is 17\*23\?"/, codex);
});

test('an unknown snippet name lists the ones there are', () => {
  assert.throws(() => execFileSync(requireBinary(), ['--print-snippet', 'cobol'], { encoding: 'utf8', stdio: 'pipe' }),
    (err) => /not one of python, node, curl, litellm, agents, anthropic, claude-code, codex/.test(String(err.stderr)));
});
