// A scripted Anthropic-format upstream for scripts/screenshot's "claude" scene: Claude Code's
// real traffic goes through Loopscope to it. Like Anthropic's API it refuses a request without
// its key. It asks for one Bash call, then answers from its result. Prints "upstream URL KEY"
// and serves until killed.
import { startScriptedAnthropicUpstream } from '../tests/e2e/harness.mjs';

const upstream = await startScriptedAnthropicUpstream(({ body }) => {
  const last = body.messages.at(-1);
  const result = Array.isArray(last.content) && last.content.find((b) => b.type === 'tool_result');
  if (result) {
    const text = typeof result.content === 'string' ? result.content
      : result.content.map((b) => b.text ?? '').join('');
    const count = text.trim().split('\n').filter(Boolean).length;
    return { content: [{ type: 'text', text: `There are ${count} Python files here; the largest is listed first.` }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 180, output_tokens: 16, cache_read_input_tokens: 14200, cache_creation_input_tokens: 0 } };
  }
  if ((body.tools ?? []).some((t) => t.name === 'Bash'))
    return { content: [{ type: 'thinking', thinking: 'The user wants the Python files by size: ls -S does that.', signature: 'c2lnLXNjcmVlbnNob3Q=' },
      { type: 'text', text: "I'll list them by size." },
      { type: 'tool_use', id: 'toolu_01Screenshot', name: 'Bash', input: { command: 'ls -S *.py', description: 'List Python files by size' } }],
    stop_reason: 'tool_use',
    usage: { input_tokens: 2100, output_tokens: 48, cache_read_input_tokens: 0, cache_creation_input_tokens: 14200 } };
  return { content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 2 } };
}, { apiKey: process.env.SCRIPTED_KEY ?? 'sk-ant-screenshot-0001' });
console.log(`upstream ${upstream.url} ${upstream.apiKey}`);
