// A scripted Responses upstream for scripts/screenshot's "codex" scene: Codex CLI's real traffic
// goes through Loopscope to it. Like OpenAI it streams and refuses a request without its key.
// It asks for one shell command through the tool Codex offers, then answers from its output.
// Prints "upstream URL KEY" and serves until killed.
import { codexShellCall, startScriptedResponsesStreamUpstream } from '../tests/e2e/harness.mjs';

const upstream = await startScriptedResponsesStreamUpstream(({ body }) => {
  const result = (body.input ?? []).find((i) => i.type === 'function_call_output');
  if (!result)
    return codexShellCall(body.tools, 'ls -S *.py', 'call_screenshot_1');
  const files = String(result.output).match(/\S+\.py/g) ?? [];
  return { type: 'message', id: 'msg_screenshot_1', role: 'assistant', status: 'completed',
    content: [{ type: 'output_text', annotations: [],
      text: `There are ${files.length} Python files here; by size: ${files.join(', ')}.` }] };
}, { apiKey: process.env.SCRIPTED_KEY ?? 'sk-screenshot-codex-0001',
  usage: { input_tokens: 2400, input_tokens_details: { cached_tokens: 2048 }, output_tokens: 24,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2424 } });
console.log(`upstream ${upstream.url} ${upstream.apiKey}`);
