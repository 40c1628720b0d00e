/**
 * An upstream's HTTP answer as the call's result (docs/tool-sources.md): a 2xx JSON ToolResult is taken as
 * one; any other 2xx becomes `value` with a short `message`; 4xx → `upstream_rejected` with the
 * endpoint's own reason; 3xx (redirects are not followed), 5xx and bodies that are cut or not the
 * JSON they claim → `upstream_unavailable`.
 */
import { parseJson } from '../../json.ts';
import { ToolFailure } from '../../tools/failure.ts';
import type { HandlerReturn } from '../../tools/types.ts';
import type { UpstreamAnswer } from './client.ts';

/** How much of a refusal's reason reaches the model. */
export const MAX_REASON_CHARS = 2000;

const RESULT_KEYS = new Set(['message', 'value', 'success', 'exclude_value_from_context']);

function isJson(contentType: string): boolean {
  return /^application\/([a-z0-9.+-]*\+)?json\b/.test(contentType);
}

function isText(contentType: string): boolean {
  return contentType === '' || contentType.startsWith('text/') || isJson(contentType) || /^application\/([a-z0-9.+-]*\+)?xml\b/.test(contentType);
}

/** `{message, value?, success?, exclude_value_from_context?}` and nothing else, with the right types. */
function isToolResult(value: unknown): value is HandlerReturn {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.message === 'string' &&
    Object.keys(r).every((k) => RESULT_KEYS.has(k)) &&
    (r.success === undefined || typeof r.success === 'boolean') &&
    (r.exclude_value_from_context === undefined || typeof r.exclude_value_from_context === 'boolean')
  );
}

function cut(text: string): string {
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS)}… (cut at ${MAX_REASON_CHARS} characters)` : text;
}

/** A refusal's reason: an RFC 9457 problem's detail (or title), a JSON `message`/`error`, else the body text. */
function reasonOf(answer: UpstreamAnswer): string {
  const text = answer.body.toString('utf8').trim();
  if (isJson(answer.contentType)) {
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      for (const key of ['detail', 'title', 'message', 'error']) {
        const value = parsed?.[key];
        if (typeof value === 'string' && value.trim() !== '') return cut(value.trim());
      }
    } catch {
      // not the JSON it claims: the text itself is the best reason there is
    }
  }
  if (!isText(answer.contentType)) return `(a ${answer.contentType} body of ${answer.body.length} bytes)`;
  return text === '' ? '(no reason given)' : cut(text);
}

export function resultOfAnswer(toolName: string, answer: UpstreamAnswer, limitBytes: number): HandlerReturn {
  const { status } = answer;
  if (status >= 400 && status < 500) {
    const retry = status === 408 || status === 429 ? ' It may accept the same call later.' : '';
    throw new ToolFailure(
      'upstream_rejected',
      `The endpoint of tool "${toolName}" refused the call (HTTP ${status}): ${reasonOf(answer)}${retry}`,
      `HTTP ${status}`,
    );
  }
  if (status >= 500) {
    const transient = status === 502 || status === 503 || status === 504;
    throw new ToolFailure(
      'upstream_unavailable',
      `Tool "${toolName}" is unavailable now: its endpoint failed (HTTP ${status}). ${transient ? 'Retrying later may help.' : 'Retrying the same call is unlikely to help; try another approach.'}`,
      `HTTP ${status}`,
    );
  }
  if (status < 200 || status >= 300) {
    throw new ToolFailure(
      'upstream_unavailable',
      `Tool "${toolName}" is unavailable: its endpoint answered HTTP ${status}, a redirect, which toolport does not follow. Retrying will not help.`,
      `HTTP ${status} (redirects are not followed)`,
    );
  }
  if (answer.truncated) {
    throw new ToolFailure(
      'upstream_unavailable',
      `Tool "${toolName}" answered more than ${limitBytes} bytes, more than toolport accepts, so its answer was dropped. Ask for less (a narrower query, fewer items).`,
      `answer larger than ${limitBytes} bytes`,
    );
  }
  if (answer.body.length === 0) return { message: `Done (HTTP ${status}, no content).`, value: null };
  if (isJson(answer.contentType)) {
    let value: unknown;
    try {
      // Our own parser: bounded depth, exact integers, no __proto__ keys (src/json.ts).
      value = parseJson(answer.body.toString('utf8'));
    } catch (err) {
      const reason = err instanceof Error ? err.message : 'not valid JSON';
      throw new ToolFailure(
        'upstream_unavailable',
        `Tool "${toolName}" is unavailable: its endpoint answered JSON that toolport cannot take (${reason}). Retrying is unlikely to help.`,
        `the answer is not usable JSON: ${reason}`,
      );
    }
    return isToolResult(value) ? value : { message: `Done (HTTP ${status}).`, value };
  }
  if (isText(answer.contentType)) return { message: `Done (HTTP ${status}).`, value: answer.body.toString('utf8') };
  return { message: `Done (HTTP ${status}): the endpoint answered ${answer.body.length} bytes of ${answer.contentType}, not shown.`, value: null };
}
