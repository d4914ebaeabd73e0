// Bursts queue instead of failing: the official OpenAI SDK sends an eval batch of one-shot
// code-interpreter requests at once, more than sandbox.max_live; each waits for a sandbox, gets
// its own answer, and nothing is left running afterwards. Past a small queue the rest get 429
// with Retry-After, and the proxy goes on serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { startLoopscope, sandboxProcessCount, settledValue, waitFor } from './harness.mjs';

const CI_TOOL = [{ type: 'code_interpreter', container: { type: 'auto' } }];

function ask(client, i) {
  return client.responses.create({ model: 'loopscope-demo', input: `What is ${i}*7?`, tools: CI_TOOL });
}

test('100 concurrent one-shot requests at the default max_live all get their own answers', async () => {
  const app = await startLoopscope(['--upstream', 'demo', '--sandbox-pool', '0', '--no-history']);
  try {
    const client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-burst-0001', maxRetries: 0, timeout: 300000 });
    // With no warm pool, what runs between requests is the sandbox zygote alone (started by
    // the first one).
    assert.equal((await ask(client, 0)).output_text, 'The result is 0.');
    const idle = await settledValue(() => sandboxProcessCount(app.proc.pid));
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => ask(client, i + 1)));
    answers.forEach((r, i) => {
      assert.equal(r.status, 'completed');
      assert.equal(r.output_text, `The result is ${(i + 1) * 7}.`);
    });
    // Every one-shot sandbox is gone once the batch is answered.
    await waitFor(() => sandboxProcessCount(app.proc.pid) === idle, 60000,
      () => `${idle} sandbox processes as before the burst (${sandboxProcessCount(app.proc.pid)} now)`);
  } finally {
    await app.stop();
  }
});

test('past a small queue the rest get 429 with Retry-After, the others succeed, serving goes on', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'loopscope-e2e-burst-'));
  const config = path.join(dir, 'config.yaml');
  writeFileSync(config, 'general_settings:\n  max_connections: 1024\nsandbox:\n  max_live: 2\n  queue_max: 4\n');
  const app = await startLoopscope(['--upstream', 'demo', '--config', config, '--sandbox-pool', '0', '--no-history']);
  try {
    const client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-burst-0002', maxRetries: 0, timeout: 300000 });
    const settled = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => ask(client, i + 1)));
    const ok = settled.filter((s) => s.status === 'fulfilled');
    const refused = settled.filter((s) => s.status === 'rejected');
    assert.ok(ok.length >= 6, `only ${ok.length} served`); // two running and four waiting, at least
    assert.ok(refused.length > 0, 'nothing was refused past the queue');
    for (const { reason } of refused) {
      assert.ok(reason instanceof OpenAI.RateLimitError, `${reason}`);
      assert.equal(reason.status, 429);
      assert.equal(reason.headers.get('retry-after'), '5');
      assert.equal(reason.code, 'too_many_sandboxes');
      assert.match(reason.message, /sandbox\.queue_max/);
    }
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') assert.equal(s.value.output_text, `The result is ${(i + 1) * 7}.`);
    });
    const after = await ask(client, 1000);
    assert.equal(after.output_text, 'The result is 7000.');
  } finally {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
