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

test('the Node snippet runs a code-interpreter loop against the demo model', async () => {
  const app = await startLoopscope();
  started.push(app);
  const port = new URL(app.baseURL).port;
  const code = snippet('node', port);
  assert.match(code, /model: "loopscope-demo"/);
  assert.match(code, /What is 17\*23\?/);
  assert.ok(code.includes(`baseURL: "http://127.0.0.1:${port}/v1"`), code);
  // Saved next to node_modules so `import OpenAI from "openai"` resolves as in a user's project.
  const dir = fs.mkdtempSync(path.join(here, '.snippet-'));
  try {
    fs.writeFileSync(path.join(dir, 'loop.mjs'), code);
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    const out = execFileSync(process.execPath, [path.join(dir, 'loop.mjs')],
      { encoding: 'utf8', env, timeout: 120000 });
    // The snippet prints the code of each code_interpreter_call, then the answer.
    assert.match(out, /^ran: /m, out);
    assert.match(out, /391/, out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every snippet names the demo model, the prompt and the address', async () => {
  for (const lang of ['python', 'node', 'curl', 'litellm', 'agents']) {
    const code = snippet(lang, 4123);
    assert.ok(code.includes('loopscope-demo'), `${lang}: ${code}`);
    assert.ok(code.includes('What is 17*23?'), `${lang}: ${code}`);
    assert.ok(code.includes('http://127.0.0.1:4123/v1'), `${lang}: ${code}`);
  }
});
