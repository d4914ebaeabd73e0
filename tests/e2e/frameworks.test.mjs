// Agent frameworks as independent parsers of Loopscope's output: the Vercel AI SDK (`ai` with
// `@ai-sdk/openai`'s `openai.tools.codeInterpreter()`) and LangChain JS (`@langchain/openai`
// in Responses mode) each run a code-interpreter task through a headless Loopscope — the
// built-in demo model and a real local sandbox — and read their own tool result back. Each
// parses `code_interpreter_call` items with its own schema, so a field out of OpenAI's shape
// fails here even where the official SDK (which does not validate) would pass it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { startLoopscope, controlClient, sandboxProcessCount, waitFor } from './harness.mjs';

let app;
let control;

before(async () => {
  app = await startLoopscope(['--upstream', 'demo']);
  control = await controlClient(app);
});

after(async () => {
  const code = await app.stop();
  assert.equal(code, 0, `loopscope exited with ${code}: ${app.stderr()}`);
  await waitFor(() => sandboxProcessCount(app.proc.pid) === 0, 20000, 'no sandbox left after shutdown');
});

// The flow Loopscope recorded for a request whose input held `marker`, once it finished.
async function finishedFlowWith(marker) {
  let flow;
  await waitFor(async () => {
    const { json } = await control('GET', `/flows?limit=50&q=${encodeURIComponent(marker)}`);
    flow = json.data.find((f) => f.state !== 'running');
    return Boolean(flow);
  }, 20000, `a finished flow holding ${marker}`);
  return flow;
}

function vercelProvider() {
  return createOpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-vercel-0001' });
}

test('Vercel AI SDK: generateText with openai.tools.codeInterpreter() reads the run back', async () => {
  const openai = vercelProvider();
  const result = await generateText({
    model: openai.responses('loopscope-demo'),
    prompt: 'What is 17*23? (vercel-generate)',
    tools: { code_interpreter: openai.tools.codeInterpreter() },
  });
  const calls = result.toolCalls.filter((c) => c.toolName === 'code_interpreter');
  assert.equal(calls.length, 1, JSON.stringify(result.content));
  assert.equal(calls[0].providerExecuted, true);
  assert.match(calls[0].input.code, /17\s*\*\s*23/);
  assert.ok(calls[0].input.containerId, 'container id parsed');
  const results = result.toolResults.filter((r) => r.toolName === 'code_interpreter');
  assert.equal(results.length, 1);
  assert.equal(results[0].toolCallId, calls[0].toolCallId);
  assert.deepEqual(results[0].output.outputs, [{ type: 'logs', logs: '391\n' }]);
  assert.match(result.text, /391/);
  assert.equal(result.finishReason, 'stop');
  const flow = await finishedFlowWith('vercel-generate');
  assert.equal(flow.state, 'completed');
  assert.equal(flow.code_runs, 1);
});

test('Vercel AI SDK: streamText sees the tool call, its result and then the text', async () => {
  const openai = vercelProvider();
  const result = streamText({
    model: openai.responses('loopscope-demo'),
    prompt: 'What is 6*7? (vercel-stream)',
    tools: { code_interpreter: openai.tools.codeInterpreter() },
  });
  const parts = [];
  for await (const part of result.fullStream) parts.push(part);
  const types = parts.map((p) => p.type);
  const call = types.indexOf('tool-call');
  const toolResult = types.indexOf('tool-result');
  const firstText = types.indexOf('text-delta');
  assert.ok(call >= 0 && toolResult > call && firstText > toolResult, `order: ${types.join(',')}`);
  assert.equal(types.at(-1), 'finish');
  assert.ok(!types.includes('error'), JSON.stringify(parts.filter((p) => p.type === 'error')));
  assert.deepEqual(parts[toolResult].output.outputs, [{ type: 'logs', logs: '42\n' }]);
  assert.match(await result.text, /42/);
});

test('LangChain JS (Responses mode): the code_interpreter_call comes back among the tool outputs', async () => {
  const model = new ChatOpenAI({
    model: 'loopscope-demo', useResponsesApi: true, apiKey: 'sk-e2e-langchain-0001',
    configuration: { baseURL: app.apiBase }, maxRetries: 0,
  }).bindTools([{ type: 'code_interpreter', container: { type: 'auto' } }]);
  const message = await model.invoke('What is 12*12? (langchain-invoke)');
  const outputs = message.additional_kwargs.tool_outputs ?? [];
  const runs = outputs.filter((o) => o.type === 'code_interpreter_call');
  assert.equal(runs.length, 1, JSON.stringify(message.additional_kwargs));
  assert.match(runs[0].code, /12\s*\*\s*12/);
  assert.deepEqual(runs[0].outputs, [{ type: 'logs', logs: '144\n' }]);
  assert.match(message.text, /144/);
  // The hosted call is no client tool: nothing for the caller to execute.
  assert.deepEqual(message.tool_calls, []);

  // Streaming through LangChain's own chunk merging ends at the same answer.
  let merged;
  for await (const chunk of await model.stream('What is 11*11? (langchain-stream)'))
    merged = merged ? merged.concat(chunk) : chunk;
  assert.match(merged.text, /121/);
  const streamedRuns = (merged.additional_kwargs.tool_outputs ?? []).filter((o) => o.type === 'code_interpreter_call');
  assert.equal(streamedRuns.length, 1, JSON.stringify(merged.additional_kwargs));
  assert.deepEqual(streamedRuns[0].outputs, [{ type: 'logs', logs: '121\n' }]);
});
