// A reasoning model through the loop, with the official OpenAI SDK: the scripted upstream answers
// like gpt-5 (reasoning with encrypted_content, a commentary message, then the call). The
// follow-up must carry that turn, and the client's output must keep it, in the order it happened.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startLoopscope, startScriptedUpstream, responsesFunctionCall } from './harness.mjs';

const started = [];
after(async () => {
  for (const s of started) {
    if (s.stop) await s.stop();
    else await s.close();
  }
});

function reasoning(id, text) {
  return {
    type: 'reasoning', id, summary: [{ type: 'summary_text', text }],
    encrypted_content: `gAAAA-${id}-sealed`,
  };
}

function message(id, text, phase) {
  return {
    type: 'message', id, role: 'assistant', status: 'completed', phase,
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

// Turn 1: reasoning, commentary, the call. Turn 2 (the answer): reasoning, the final message.
function reasoningModel({ index }) {
  if (index % 2 === 0) {
    const turn = responsesFunctionCall('print(6 * 7)', `call_${index}`);
    turn.id = `resp_turn_${index}`;
    turn.output.unshift(reasoning(`rs_${index}`, 'Compute it with Python.'),
      message(`msg_commentary_${index}`, 'Let me compute that.', 'commentary'));
    return { json: turn };
  }
  return {
    json: {
      id: `resp_answer_${index}`, object: 'response', created_at: 1700000001, status: 'completed',
      model: 'scripted',
      output: [reasoning(`rs_${index}`, 'The sandbox printed 42.'),
        message(`msg_answer_${index}`, 'It is 42.', 'final_answer')],
      usage: { input_tokens: 30, output_tokens: 9, total_tokens: 39 },
    },
  };
}

const upstream = await startScriptedUpstream(reasoningModel);
const app = await startLoopscope(['--upstream', upstream.url]);
started.push(app, upstream);
const client = new OpenAI({ baseURL: app.apiBase, apiKey: 'sk-e2e-reasoning-0004', maxRetries: 0 });
const request = {
  model: 'gpt-5', input: 'What is 6 * 7?', tools: [{ type: 'code_interpreter' }],
  include: ['reasoning.encrypted_content'], store: false,
};

// The follow-up of the request whose first upstream call was `first`: its input replays the
// turn as received (reasoning before the call), then the result.
function assertFollowUp(first) {
  const turn = reasoningModel({ index: first }).json.output;
  const input = upstream.requests[first + 1].body.input;
  assert.deepEqual(input.slice(1, 4), turn, 'the model\'s whole turn, as received, in order');
  assert.equal(input[1].encrypted_content, `gAAAA-rs_${first}-sealed`);
  assert.equal(input[3].id, `fc_call_${first}`, 'the call keeps its id');
  assert.deepEqual(input[4], { type: 'function_call_output', call_id: `call_${first}`, output: '42\n' });
  assert.equal(input.length, 5);
}

function assertOutput(response, first) {
  assert.deepEqual(response.output.map((i) => i.type),
    ['reasoning', 'message', 'code_interpreter_call', 'reasoning', 'message']);
  assert.deepEqual(response.output.map((i) => i.id).filter((id) => !id.startsWith('ci_')),
    [`rs_${first}`, `msg_commentary_${first}`, `rs_${first + 1}`, `msg_answer_${first + 1}`]);
  assert.equal(response.output[0].encrypted_content, `gAAAA-rs_${first}-sealed`);
  assert.equal(response.output[1].content[0].text, 'Let me compute that.');
  assert.equal(response.output[2].outputs[0].logs, '42\n');
  assert.equal(response.output_text.endsWith('It is 42.'), true);
}

// The second app (for the stdout and exception tests below) starts here, before any test is
// registered: node:test runs the file's after() once the tests registered so far are done, and
// under load that stopped an app a later top-level await had just started.
const programs = {
  'plot and file': "import matplotlib.pyplot as plt\nprint('only this')\nplt.plot([1, 2, 3])\nplt.show()\n"
    + "open('/mnt/data/o.txt', 'w').write('x')\n",
  'an exception': "print('step 1')\n1 / 0\n",
};
const toolModel = await startScriptedUpstream(({ body }) => {
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const result = input.find((i) => i.type === 'function_call_output');
  if (result) return { json: { id: 'resp_told', object: 'response', created_at: 1700000002, status: 'completed',
    model: 'scripted', output: [message('msg_told', 'Done.', 'final_answer')],
    usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } } };
  const prompt = input.find((i) => i.role === 'user').content;
  return { json: responsesFunctionCall(programs[typeof prompt === 'string' ? prompt : prompt[0].text], 'call_told') };
});
const toolApp = await startLoopscope(['--upstream', toolModel.url]);
started.push(toolApp, toolModel);
const toolClient = new OpenAI({ baseURL: toolApp.apiBase, apiKey: 'sk-e2e-reasoning-0005', maxRetries: 0 });
const toldModel = () => toolModel.requests.at(-1).body.input.find((i) => i.type === 'function_call_output').output;

test('responses.create: the follow-up carries the reasoning and commentary, the output keeps them', async () => {
  const first = upstream.requests.length;
  const response = await client.responses.create(request);
  assert.equal(upstream.requests.length, first + 2);
  assertFollowUp(first);
  assertOutput(response, first);
});

test('responses.stream: finalResponse() rebuilds the same output in the same order', async () => {
  const first = upstream.requests.length;
  const stream = client.responses.stream(request);
  const summaries = [];
  stream.on('response.reasoning_summary_text.done', (e) => summaries.push(e.text));
  const response = await stream.finalResponse();
  assertFollowUp(first);
  assertOutput(response, first);
  assert.deepEqual(summaries, ['Compute it with Python.', 'The sandbox printed 42.'],
    'each reasoning summary streamed, in order');
});

// What the client sees and what the model is told, with the official SDK end to end: logs are
// exactly what the program printed even when it also shows a plot and saves a file (those are
// notes for the model only), and after an exception the model gets the earlier stdout, the
// error and the traceback.
test('logs are exactly stdout when the code also shows a plot and saves a file; the notes go to the model', async () => {
  for (const stream of [false, true]) {
    const params = { model: 'gpt-5', input: 'plot and file', tools: [{ type: 'code_interpreter' }] };
    const response = stream ? await toolClient.responses.stream(params).finalResponse()
      : await toolClient.responses.create(params);
    const call = response.output.find((i) => i.type === 'code_interpreter_call');
    assert.deepEqual(call.outputs.map((o) => o.type), ['logs', 'image']);
    assert.equal(call.outputs[0].logs, 'only this\n');
    const told = toldModel();
    assert.match(told, /^only this\n\[image image-1\.png \(image\/png, \d+ bytes\) was produced and shown to the user\]\n/);
    assert.match(told, /\[file \/mnt\/data\/o\.txt \(1 bytes\) saved; link it as sandbox:\/mnt\/data\/o\.txt\]\n$/);
  }
});

test('after an exception the model gets the earlier stdout, the error and the traceback', async () => {
  const response = await toolClient.responses.create({ model: 'gpt-5', input: 'an exception',
    tools: [{ type: 'code_interpreter' }] });
  const told = toldModel();
  assert.match(told, /^step 1\n\[execution error\] division by zero\nTraceback \(most recent call last\):\n/);
  assert.match(told, /line 2/);
  assert.match(told, /ZeroDivisionError: division by zero\n$/);
  const logs = response.output.find((i) => i.type === 'code_interpreter_call').outputs[0].logs;
  assert.match(logs, /^step 1\nTraceback \(most recent call last\):\n/);
  assert.ok(!logs.includes('[execution error]'), 'the model\'s error label stays out of the client\'s logs');
});
