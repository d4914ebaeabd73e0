// Issue 14, the data-analysis loop with the official OpenAI SDK: a CSV goes into a container
// (upload or file_ids), the scripted model's code reads it with pandas and plots it, and the
// client gets the logs, the picture and the plot file back, as from OpenAI's own tool.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import {
  startLoopscope, startScriptedUpstream, responsesFunctionCall, responsesMessage,
} from './harness.mjs';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CSV = 'month,units\nJan,12\nFeb,30\nMar,21\n';
const ANALYSIS = [
  'import pandas as pd',
  'import matplotlib.pyplot as plt',
  "df = pd.read_csv('/mnt/data/sales.csv')",
  "print('total units', df['units'].sum())",
  "df.plot(x='month', y='units', kind='bar')",
  "plt.savefig('/mnt/data/units.png')",
  'plt.show()',
].join('\n');
const ANSWER = 'Here is the chart: [units.png](sandbox:/mnt/data/units.png).';

const started = [];
after(async () => {
  for (const s of started) {
    if (s.stop) await s.stop();
    else await s.close();
  }
});

// The scripted model: runs ANALYSIS, then answers with a link to the plot. It also serves the
// OpenAI Files the container's file_ids name.
async function setup() {
  let modelCalls = 0;
  const upstream = await startScriptedUpstream(({ path }) => {
    if (path === '/v1/files/file-sales') return { json: { id: 'file-sales', object: 'file', bytes: CSV.length, filename: 'sales.csv', purpose: 'user_data', created_at: 1700000000 } };
    if (path === '/v1/files/file-sales/content') return { text: CSV };
    if (path.startsWith('/v1/files/')) return { status: 404, json: { error: { message: 'No such File object', type: 'invalid_request_error', param: null, code: null } } };
    return { json: modelCalls++ % 2 === 0 ? responsesFunctionCall(ANALYSIS, `call_${modelCalls}`) : responsesMessage(ANSWER) };
  });
  const app = await startLoopscope(['--upstream', upstream.url]);
  started.push(app, upstream);
  const client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-files-0001', maxRetries: 0 });
  return { upstream, app, client };
}

function imageBytes(output) {
  assert.equal(output.type, 'image');
  const m = output.url.match(/^data:image\/png;base64,(.+)$/);
  assert.ok(m, `not a PNG data URL: ${output.url.slice(0, 40)}`);
  return Buffer.from(m[1], 'base64');
}

function checkAnalysis(response, containerId) {
  const call = response.output.find((i) => i.type === 'code_interpreter_call');
  assert.ok(call, 'no code_interpreter_call');
  assert.equal(call.container_id, containerId);
  assert.equal(call.outputs[0].type, 'logs');
  // The logs are what the program printed; the notes on the picture and the file are the model's.
  assert.equal(call.outputs[0].logs, 'total units 63\n');
  const images = call.outputs.filter((o) => o.type === 'image');
  assert.equal(images.length, 1);
  assert.ok(imageBytes(images[0]).subarray(0, 8).equals(PNG_MAGIC));
  const message = response.output.at(-1);
  assert.equal(message.type, 'message');
  const text = message.content[0];
  assert.equal(text.text, ANSWER);
  const citation = text.annotations.find((a) => a.type === 'container_file_citation');
  assert.ok(citation, JSON.stringify(text.annotations));
  assert.equal(citation.container_id, containerId);
  assert.equal(citation.filename, 'units.png');
  assert.match(citation.file_id, /^cfile_[0-9a-f]{32}$/);
  assert.equal(ANSWER.slice(citation.start_index, citation.end_index), 'sandbox:/mnt/data/units.png');
  return citation.file_id;
}

test('upload a CSV, analyse it with pandas, get the chart back as an image and a file', async () => {
  const { client, upstream } = await setup();
  const container = await client.containers.create({ name: 'analysis' });
  assert.match(container.id, /^cntr_/);
  assert.equal(container.name, 'analysis');
  const uploaded = await client.containers.files.create(container.id, {
    file: await toFile(Buffer.from(CSV), 'sales.csv', { type: 'text/csv' }),
  });
  assert.equal(uploaded.object, 'container.file');
  assert.equal(uploaded.path, '/mnt/data/sales.csv');
  assert.equal(uploaded.bytes, CSV.length);
  assert.equal(uploaded.source, 'user');
  assert.equal(uploaded.container_id, container.id);

  const response = await client.responses.create({
    model: 'gpt-5', input: 'Chart the units per month.',
    tools: [{ type: 'code_interpreter', container: container.id }],
  });
  const fileId = checkAnalysis(response, container.id);
  // What went back to the model names the picture and the saved file.
  const fedBack = JSON.stringify(upstream.requests.filter((r) => r.path === '/v1/responses').at(-1).body);
  assert.match(fedBack, /image-1\.png/);
  assert.match(fedBack, /\/mnt\/data\/units\.png/);

  const files = [];
  for await (const f of client.containers.files.list(container.id)) files.push(f);
  const plot = files.find((f) => f.id === fileId);
  assert.equal(plot.source, 'assistant');
  assert.equal(plot.path, '/mnt/data/units.png');
  assert.ok(files.some((f) => f.id === uploaded.id && f.source === 'user'));
  const retrieved = await client.containers.files.retrieve(fileId, { container_id: container.id });
  assert.equal(retrieved.bytes, plot.bytes);
  const content = Buffer.from(await (await client.containers.files.content.retrieve(fileId, { container_id: container.id })).arrayBuffer());
  assert.equal(content.length, plot.bytes);
  assert.ok(content.subarray(0, 8).equals(PNG_MAGIC));

  await client.containers.files.delete(uploaded.id, { container_id: container.id });
  await assert.rejects(client.containers.files.retrieve(uploaded.id, { container_id: container.id }),
    (e) => e.status === 404);
});

test('streaming: the picture arrives in the call\'s output_item.done', async () => {
  const { client } = await setup();
  const container = await client.containers.create({ name: 'stream' });
  await client.containers.files.create(container.id, { file: await toFile(Buffer.from(CSV), 'sales.csv') });
  const stream = await client.responses.create({
    model: 'gpt-5', input: 'chart', stream: true,
    tools: [{ type: 'code_interpreter', container: container.id }],
  });
  let done = null;
  let completed = null;
  for await (const event of stream) {
    if (event.type === 'response.output_item.done' && event.item.type === 'code_interpreter_call') done = event.item;
    if (event.type === 'response.completed') completed = event.response;
  }
  assert.ok(done, 'no output_item.done for the call');
  const images = done.outputs.filter((o) => o.type === 'image');
  assert.equal(images.length, 1);
  assert.ok(imageBytes(images[0]).subarray(0, 8).equals(PNG_MAGIC));
  checkAnalysis(completed, container.id);
});

test('file_ids: at container creation and in the tool\'s container.auto', async () => {
  const { client, upstream } = await setup();
  const container = await client.containers.create({ name: 'with-files', file_ids: ['file-sales'] });
  const files = [];
  for await (const f of client.containers.files.list(container.id)) files.push(f);
  assert.deepEqual(files.map((f) => [f.path, f.source, f.bytes]), [['/mnt/data/sales.csv', 'user', CSV.length]]);
  const fetched = upstream.requests.filter((r) => r.path.startsWith('/v1/files/'));
  assert.ok(fetched.length >= 2);
  assert.equal(fetched[0].headers.authorization, 'Bearer sk-e2e-files-0001', 'the client\'s credentials');

  const response = await client.responses.create({
    model: 'gpt-5', input: 'Chart the units per month.',
    tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-sales'] } }],
  });
  const call = response.output.find((i) => i.type === 'code_interpreter_call');
  checkAnalysis(response, call.container_id);

  await assert.rejects(
    client.containers.create({ name: 'missing', file_ids: ['file-nope'] }),
    (e) => e.status === 400 && /file-nope/.test(e.message),
  );
});

test('containers are the caller\'s own; bad uploads get clear errors (the 413s: tst_containersapi)', async () => {
  const { client, app } = await setup();
  const container = await client.containers.create({ name: 'mine' });
  const uploaded = await client.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), 'x.txt') });
  const other = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-someone-else', maxRetries: 0 });
  await assert.rejects(other.containers.files.list(container.id).then((p) => p.data), (e) => e.status === 404);
  await assert.rejects(other.containers.files.content.retrieve(uploaded.id, { container_id: container.id }), (e) => e.status === 404);
  await assert.rejects(other.containers.files.create(container.id, { file: await toFile(Buffer.from('y'), 'y.txt') }), (e) => e.status === 404);

  const url = `${app.apiBase}/containers/${container.id}/files`;
  const headers = { authorization: 'Bearer sk-e2e-files-0001' };
  const malformed = await fetch(url, {
    method: 'POST', headers: { ...headers, 'content-type': 'multipart/form-data; boundary=XyZ' },
    body: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nno closing boundary',
  });
  assert.equal(malformed.status, 400);
  assert.match((await malformed.json()).error.message, /malformed multipart/);
  const notAFile = new FormData();
  notAFile.append('file', 'just a string field');
  const noFile = await fetch(url, { method: 'POST', headers, body: notAFile });
  assert.equal(noFile.status, 400);
  assert.match((await noFile.json()).error.message, /'file' part/);
  const health = await fetch(`${app.baseURL}/health`);
  assert.equal(health.status, 200);
});
