/**
 * An example guardrail plugin: a naive prompt-injection check. It flags arguments and denies results
 * that carry the phrases injected text tends to use ("ignore all previous instructions"). A real
 * check would call a classifier; the shape stays the same. Run it with:
 * TOOL_PLUGINS=examples/plugins/prompt-injection.ts npm start
 */
import { defineGuardrail } from '../../src/index.ts';

const PHRASES =
  /\b(?:ignore (?:all |any )?(?:previous|prior|above) instructions|disregard (?:the|your) (?:system|previous) prompt|you are now in developer mode)\b/i;

/** Whether any string inside `value` holds one of the phrases. */
function injected(value: unknown): boolean {
  if (typeof value === 'string') return PHRASES.test(value);
  if (Array.isArray(value)) return value.some(injected);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(injected);
  return false;
}

export default defineGuardrail({
  name: 'prompt_injection',
  // Arguments come from the model, which may only be quoting: recorded, not refused.
  input: (args) => (injected(args) ? { action: 'flag', reason: 'the arguments quote an instruction override' } : null),
  // A result reaches the model next: one that tries to steer it is refused.
  output: ({ message, value }) => (injected(message) || injected(value) ? { action: 'deny', reason: 'the result tries to override the instructions' } : null),
});
