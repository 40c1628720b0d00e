// Requests to toolport with the API key, and Server-Sent Events read with fetch (EventSource cannot
// send an Authorization header). The key lives in this tab's sessionStorage only.
import { noAnswer, requestEnded, requestStarted } from './status.js';

const KEY_ITEM = 'toolport.apiKey';

export const apiKey = {
  get: () => sessionStorage.getItem(KEY_ITEM),
  set: (key) => sessionStorage.setItem(KEY_ITEM, key),
  clear: () => sessionStorage.removeItem(KEY_ITEM),
};

function headersWithKey(headers = {}) {
  const key = apiKey.get();
  return key ? { ...headers, authorization: `Bearer ${key}` } : { ...headers };
}

/** Fired on window when the service refuses the key (401), with the problem as detail: the page asks for another. */
export const UNAUTHORIZED = 'toolport:unauthorized';

/**
 * One request; answers {status, ok, data, headers} where data is the parsed JSON (or text).
 * A network failure answers status 0 with a problem-shaped data.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, headers?: Record<string, string> }} [options]
 * @returns {Promise<{ status: number, ok: boolean, headers: Headers, data: any }>}
 */
export async function request(path, { method = 'GET', body, headers = {} } = {}) {
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { method, headers: headersWithKey(headers), cache: 'no-store' };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['content-type'] = 'application/json';
  }
  let response;
  let text;
  requestStarted();
  try {
    response = await fetch(path, init);
    text = await response.text();
  } catch (err) {
    requestEnded(0, String(err.message ?? err));
    return { status: 0, ok: false, headers: new Headers(), data: { title: 'Network error', detail: String(err.message ?? err) } };
  }
  requestEnded(response.status);
  const type = response.headers.get('content-type') ?? '';
  /** @type {any} */
  let data = text;
  if (/json/.test(type) && text !== '') {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (response.status === 401) window.dispatchEvent(new CustomEvent(UNAUTHORIZED, { detail: data }));
  return { status: response.status, ok: response.ok, headers: response.headers, data };
}

/** The problem's detail (RFC 9457) or a short description of a failed answer. */
export function problemText(answer) {
  const data = answer.data;
  if (data && typeof data === 'object') return [data.title, data.detail].filter(Boolean).join(': ') || `HTTP ${answer.status}`;
  return `HTTP ${answer.status}${data ? `: ${String(data).slice(0, 200)}` : ''}`;
}

/**
 * Reads an SSE stream until it ends or `signal` aborts: calls onEvent(name, data) for each event
 * (data parsed as JSON). Resolves when the stream ends; rejects with the HTTP status on a refusal.
 */
export async function readEventStream(path, onEvent, signal) {
  let response;
  try {
    response = await fetch(path, { headers: headersWithKey({ accept: 'text/event-stream' }), cache: 'no-store', signal });
  } catch (err) {
    if (!signal?.aborted) noAnswer(String(err.message ?? err));
    throw err;
  }
  if (!response.ok || response.body === null) {
    if (response.status === 401) window.dispatchEvent(new CustomEvent(UNAUTHORIZED, { detail: null }));
    throw Object.assign(new Error(`the stream answered HTTP ${response.status}`), { status: response.status });
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      dispatchBlock(block, onEvent);
    }
  }
}

function dispatchBlock(block, onEvent) {
  let name = 'message';
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return;
  try {
    onEvent(name, JSON.parse(data.join('\n')));
  } catch {
    // an event that is not JSON is not one of ours
  }
}
