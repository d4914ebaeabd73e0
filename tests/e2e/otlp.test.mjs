// OTLP/HTTP trace export, checked by an independent OTLP implementation: a collector written
// here decodes what Loopscope sends with the OpenTelemetry JS packages' generated OTLP protobuf
// types (@opentelemetry/otlp-transformer's protobufjs root, built from the official .proto
// files). JSON payloads are pushed through the same types (fromObject → encode → decode), so
// a field name that the OTLP schema does not know would vanish and fail the checks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import OpenAI from 'openai';
import {
  startLoopscope, startScriptedUpstream, responsesFunctionCall, responsesMessage, waitFor,
} from './harness.mjs';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');
const ExportRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const CI_TOOL = [{ type: 'code_interpreter', container: { type: 'auto' } }];
const API_KEY = 'sk-e2e-otlp-user-0001-secret';

// A collector: `statuses` answers the POSTs in order (then 200). Keeps raw bodies and headers.
async function startCollector(statuses = []) {
  const posts = [];
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    posts.push({ path: req.url, headers: req.headers, body });
    const status = statuses[posts.length - 1] ?? 200;
    if (status !== 200) {
      res.writeHead(status, { 'retry-after': '1', 'content-type': 'text/plain' });
      res.end('busy');
      return;
    }
    const json = (req.headers['content-type'] ?? '').includes('json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
    res.end(json ? '{}' : Buffer.alloc(0));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    posts,
    close: () => new Promise((r) => server.close(r)),
  };
}

const hex = (b) => Buffer.from(b ?? []).toString('hex');

function anyValue(v) {
  if (v == null) return undefined;
  if (v.stringValue != null) return v.stringValue;
  if (v.boolValue != null) return v.boolValue;
  if (v.intValue != null) return Number(v.intValue.toString());
  if (v.doubleValue != null) return v.doubleValue;
  if (v.arrayValue) return v.arrayValue.values.map(anyValue);
  return undefined;
}

const attrs = (list) => Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));

// Decoded message → plain spans.
function spansOf(message) {
  const out = [];
  for (const rs of message.resourceSpans) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        out.push({
          resource, scope: ss.scope?.name, traceId: hex(s.traceId), spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId), name: s.name, kind: s.kind,
          start: BigInt(s.startTimeUnixNano.toString()), end: BigInt(s.endTimeUnixNano.toString()),
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
        });
      }
    }
  }
  return out;
}

function decodeProtobuf(body) {
  return spansOf(ExportRequest.decode(body));
}

// OTLP JSON → the official schema: ids are hex in OTLP JSON, bytes in protobuf.
function decodeJson(body) {
  const json = JSON.parse(body.toString('utf8'));
  const fix = (o) => {
    if (Array.isArray(o)) return o.forEach(fix);
    if (!o || typeof o !== 'object') return;
    for (const k of ['traceId', 'spanId', 'parentSpanId']) {
      if (typeof o[k] === 'string') {
        assert.match(o[k], /^[0-9a-f]*$/, `${k} is lowercase hex`);
        o[k] = Buffer.from(o[k], 'hex');
      }
    }
    for (const k of ['startTimeUnixNano', 'endTimeUnixNano', 'timeUnixNano', 'intValue']) {
      if (k in o) assert.equal(typeof o[k], 'string', `${k} is a string (64-bit integer)`);
    }
    Object.values(o).forEach(fix);
  };
  fix(json);
  const message = ExportRequest.fromObject(json);
  const spans = spansOf(ExportRequest.decode(ExportRequest.encode(message).finish()));
  // Every attribute survived the schema: nothing was an unknown field name.
  const rawCount = json.resourceSpans[0].scopeSpans[0].spans
    .reduce((n, s) => n + s.attributes.length, 0);
  const decodedCount = spans.reduce((n, s) => n + Object.keys(s.attributes).length, 0);
  assert.equal(decodedCount, rawCount);
  return spans;
}

async function runAgent(app, sessionId, code) {
  const client = new OpenAI({ baseURL: app.apiBase, apiKey: API_KEY, maxRetries: 0 });
  return client.responses.create({
    model: 'scripted', tools: CI_TOOL, input: `Run ${code}`, metadata: { session_id: sessionId },
  });
}

// Upstream: even calls ask for code (the code named in the input), odd ones answer.
function scripted() {
  return startScriptedUpstream(({ index, body }) => {
    const input = typeof body?.input === 'string' ? body.input : JSON.stringify(body?.input ?? '');
    if (index % 2 === 0) {
      const code = input.includes('FAIL') ? '1/0' : "print('otlp-' + 'ok')";
      return { json: responsesFunctionCall(code, `call_otlp_${index}`) };
    }
    return { json: responsesMessage('Done.', `msg_otlp_${index}`) };
  });
}

let upstream;
before(async () => { upstream = await scripted(); });
after(async () => { await upstream?.close(); });

test('http/json: a trace per run, SERVER root, CLIENT model calls, INTERNAL code runs', async () => {
  const collector = await startCollector();
  process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-from-env=env%20value';
  const app = await startLoopscope(['--upstream', upstream.url, '--no-history',
    '--otlp-endpoint', collector.url, '--otlp-protocol', 'http/json', '--otlp-header', 'x-team=e2e']);
  delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
  try {
    await runAgent(app, 'otlp-run-a', 'OK');
    await runAgent(app, 'otlp-run-a', 'FAIL');
    await runAgent(app, 'otlp-run-b', 'OK');
    const spans = () => collector.posts.flatMap((p) => decodeJson(p.body));
    await waitFor(() => spans().filter((s) => s.kind === 2).length >= 3, 20000);
    const post = collector.posts[0];
    assert.equal(post.path, '/v1/traces');
    assert.match(post.headers['content-type'], /application\/json/);
    assert.equal(post.headers['x-team'], 'e2e');
    assert.equal(post.headers['x-from-env'], 'env value');

    const all = spans();
    const roots = all.filter((s) => s.kind === 2);
    assert.equal(roots.length, 3);
    for (const r of roots) {
      assert.equal(r.name, 'chat scripted');
      assert.equal(r.parentSpanId, '');
      assert.equal(r.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(r.attributes['gen_ai.request.model'], 'scripted');
      assert.equal(r.attributes['openai.api.type'], 'responses');
      assert.match(r.attributes['loopscope.flow.id'], /^req_/);
      assert.equal(r.resource['service.name'], 'loopscope');
      assert.ok(r.end >= r.start);
    }
    const [a1, a2, b1] = roots.sort((x, y) => (x.start < y.start ? -1 : 1));
    assert.equal(a1.traceId, a2.traceId, 'one trace per agent run');
    assert.notEqual(a1.traceId, b1.traceId, 'another run, another trace');
    assert.equal(a1.attributes['loopscope.run.id'], a2.attributes['loopscope.run.id']);

    for (const r of roots) {
      const children = all.filter((s) => s.parentSpanId === r.spanId);
      const calls = children.filter((s) => s.kind === 3);
      const runs = children.filter((s) => s.kind === 1);
      assert.equal(calls.length, 2, 'two model calls per flow');
      assert.equal(runs.length, 1, 'one code run per flow');
      for (const c of calls) {
        assert.equal(c.traceId, r.traceId);
        assert.equal(c.name, 'chat scripted');
        assert.equal(c.attributes['gen_ai.provider.name'], 'openai');
        assert.equal(c.attributes['gen_ai.request.model'], 'scripted');
        assert.equal(c.attributes['gen_ai.response.model'], 'scripted');
        assert.match(c.attributes['gen_ai.response.id'], /^resp_/);
        assert.equal(c.attributes['openai.api.type'], 'responses');
        assert.ok(c.attributes['gen_ai.usage.input_tokens'] > 0);
        assert.ok(c.attributes['gen_ai.usage.output_tokens'] > 0);
        assert.equal(c.attributes['server.address'], '127.0.0.1');
      }
      const [run] = runs;
      assert.equal(run.name, 'execute_tool code_interpreter');
      assert.equal(run.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(run.attributes['gen_ai.tool.name'], 'code_interpreter');
      assert.match(run.attributes['gen_ai.tool.call.id'], /^call_otlp_/);
      assert.ok(run.end >= run.start);
      assert.ok(run.events.some((e) => e.name.startsWith('loopscope.sandbox.')), 'sandbox events');
      assert.equal(run.attributes['gen_ai.tool.call.arguments'], undefined, 'no content by default');
    }
    const failed = all.find((s) => s.kind === 1 && s.parentSpanId === a2.spanId);
    assert.equal(failed.status.code, 2, 'a failing code run is an error span');
    assert.equal(failed.attributes['error.type'], 'code_error');
    assert.doesNotMatch(failed.status.message, /ZeroDivision/, 'no output text without capture');
    const ok = all.find((s) => s.kind === 1 && s.parentSpanId === a1.spanId);
    assert.equal(ok.status.code, 0);

    const raw = collector.posts.map((p) => p.body.toString()).join('\n');
    assert.doesNotMatch(raw, /otlp-' \+ 'ok|Run OK|gen_ai\.input\.messages/, 'contents off by default');
    assert.doesNotMatch(raw, new RegExp(API_KEY), 'no client key');
  } finally {
    assert.equal(await app.stop(), 0);
    await collector.close();
  }
});

test('http/protobuf: 503 then 200 delivers the batch once; contents only when asked', async () => {
  const collector = await startCollector([503]);
  const app = await startLoopscope(['--upstream', upstream.url, '--no-history',
    '--otlp-endpoint', `${collector.url}/`, '--otlp-protocol', 'http/protobuf',
    '--otlp-capture-content']);
  try {
    await runAgent(app, 'otlp-run-pb', 'OK');
    await waitFor(() => collector.posts.length >= 2, 20000, 'the 503 and its retry');
    assert.deepEqual(collector.posts[0].body, collector.posts[1].body, 'the same batch retried');
    // A later run's batch is the marker: the exporter sends in order, so a second retry of the
    // first batch would arrive before it.
    await runAgent(app, 'otlp-run-pb-next', 'OK');
    await waitFor(() => collector.posts.length >= 3, 20000, "the next run's batch");
    assert.notDeepEqual(collector.posts[2].body, collector.posts[1].body,
      '503 once, then the same batch once, then the next one');
    assert.equal(collector.posts[1].headers['content-type'], 'application/x-protobuf');
    assert.equal(collector.posts[1].path, '/v1/traces');
    const spans = decodeProtobuf(collector.posts[1].body);
    const root = spans.find((s) => s.kind === 2);
    assert.equal(root.name, 'chat scripted');
    const calls = spans.filter((s) => s.kind === 3 && s.parentSpanId === root.spanId);
    assert.equal(calls.length, 2);
    assert.equal(calls[0].attributes['gen_ai.usage.input_tokens'], 10);
    assert.equal(calls[0].attributes['gen_ai.usage.output_tokens'], 5);
    const run = spans.find((s) => s.kind === 1);
    assert.equal(run.parentSpanId, root.spanId);
    assert.match(run.attributes['gen_ai.tool.call.arguments'], /otlp-' \+ 'ok/);
    assert.match(run.attributes['gen_ai.tool.call.result'], /otlp-ok/);
    assert.match(root.attributes['gen_ai.input.messages'], /Run OK/);
    assert.doesNotMatch(collector.posts[1].body.toString('latin1'), new RegExp(API_KEY));
  } finally {
    assert.equal(await app.stop(), 0);
    await collector.close();
  }
});

test('a dead collector does not hold up the proxy', async () => {
  const dead = await startCollector();
  const url = dead.url;
  await dead.close(); // nothing listens there any more
  const app = await startLoopscope(['--upstream', upstream.url, '--no-history', '--otlp-endpoint', url]);
  try {
    for (let i = 0; i < 3; i += 1) {
      const reply = await runAgent(app, `otlp-dead-${i}`, 'OK');
      assert.equal(reply.status, 'completed');
    }
  } finally {
    assert.equal(await app.stop(), 0);
  }
});

test('bad OTLP settings are refused at start-up', async () => {
  await assert.rejects(startLoopscope(['--otlp-protocol', 'grpc']), /http\/json or http\/protobuf/);
  await assert.rejects(startLoopscope(['--otlp-endpoint', 'not a url']), /not an http\(s\) URL/);
});
