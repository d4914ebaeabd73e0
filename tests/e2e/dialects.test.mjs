// The dialect samples (tests/fixtures/dialects) through the official SDKs' stream accumulators:
// `client.responses.stream().finalResponse()`, `client.chat.completions.stream()
// .finalChatCompletion()` and `anthropic.messages.stream().finalMessage()` rebuild, from each
// sample's stream, the object its .json holds; and from the stream Loopscope writes back for the
// recorded flow (its HAR export, which decodes the client's events with SseDecoder and frames
// them again with SseWriter) they rebuild the very same object.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startLoopscope, controlClient, waitFor } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(here, '..', 'fixtures', 'dialects');
const samples = readdirSync(FIXTURES).filter((f) => f.endsWith('.sse')).map((f) => f.slice(0, -4)).sort();

let upstream;
let upstreamUrl;
let app;
let control;
let dataDir;
const served = new Map(); // x-sample header → bytes to stream

before(async () => {
  upstream = http.createServer(async (req, res) => {
    for await (const _ of req) { /* drain */ }
    const bytes = served.get(req.headers['x-sample']);
    if (!bytes) { res.writeHead(404, { 'content-type': 'application/json' }); res.end('{}'); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(bytes);
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;
  dataDir = mkdtempSync(path.join(tmpdir(), 'loopscope-dialects-'));
  app = await startLoopscope(['--upstream', `${upstreamUrl}/v1`, '--anthropic-upstream', upstreamUrl,
    '--data-dir', dataDir]);
  control = await controlClient(app);
});

after(async () => {
  await app?.stop();
  await new Promise((r) => upstream?.close(r));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

// What the SDK of the sample's dialect rebuilds from the stream served under `key`.
async function accumulate(name, key, baseURL) {
  const headers = { 'x-sample': key };
  if (name.startsWith('messages-')) {
    const client = new Anthropic({ apiKey: 'sk-ant-e2e-0001', baseURL, defaultHeaders: headers, maxRetries: 0 });
    return client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
  }
  const client = new OpenAI({ apiKey: 'sk-e2e-0001', baseURL: `${baseURL}/v1`, defaultHeaders: headers, maxRetries: 0 });
  if (name.startsWith('chat-'))
    return client.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .finalChatCompletion();
  return client.responses.stream({ model: 'gpt-4.1', input: 'hi' }).finalResponse();
}

// The SDKs add convenience fields (output_text, parsed, refusal: null, …): compare on the
// sample's own fields, recursively.
function project(actual, expected) {
  if (Array.isArray(expected)) return expected.map((e, i) => project(actual?.[i], e));
  if (expected && typeof expected === 'object') {
    const out = {};
    for (const key of Object.keys(expected)) out[key] = project(actual?.[key], expected[key]);
    return out;
  }
  return actual;
}

for (const name of samples) {
  test(`${name}: the SDK rebuilds the sample's object, from the sample and from Loopscope's stream`, async () => {
    const sample = readFileSync(path.join(FIXTURES, `${name}.sse`));
    const expected = JSON.parse(readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));
    served.set(name, sample);
    const direct = await accumulate(name, name, upstreamUrl);
    assert.deepEqual(project(direct, expected), expected);

    // Through Loopscope: relayed, recorded, exported as HAR; the export's stream text is
    // Loopscope's own framing of the events it decoded.
    const relayed = await accumulate(name, name, app.baseURL);
    assert.deepEqual(relayed, direct);
    let flowId;
    await waitFor(async () => {
      const flows = (await control('GET', '/flows?limit=50')).json?.data ?? [];
      flowId = flows.find((f) => f.state !== 'running' && !served.has(`seen:${f.id}`))?.id;
      return Boolean(flowId);
    });
    assert.ok(flowId, 'the relayed flow was recorded');
    served.set(`seen:${flowId}`, true);
    const har = (await control('GET', `/export.har?ids=${flowId}`)).json;
    const text = har.log.entries[0].response.content.text;
    served.set(`${name}:loopscope`, Buffer.from(text, 'utf8'));
    const again = await accumulate(name, `${name}:loopscope`, upstreamUrl);
    assert.deepEqual(again, direct);
  });
}
