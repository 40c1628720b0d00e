/**
 * The JavaScript that runs in the sandbox before a program (./sandbox.ts): it receives the two host
 * functions and keeps them in closures, and defines what a program sees — `tools`, `console`, a fake
 * `setTimeout` — with the built-ins it uses captured first, so a program that replaces `JSON` or
 * `Promise` changes only its own view. Arguments leave as the program's own JSON text and answers
 * arrive as JSON text, so prototype tricks in either stay inside.
 */
export const PRELUDE = String.raw`(function (hostCall, hostLog) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, freeze = Object.freeze, create = Object.create;
  const ErrorClass = Error, StringOf = String;
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, writable: false, configurable: false, enumerable: false });

  class ToolError extends ErrorClass {
    constructor(code, message, tool) {
      super(message);
      this.name = 'ToolError';
      this.code = code;
      this.tool = tool;
    }
  }

  async function invoke(name, args) {
    let text;
    try {
      text = args === undefined ? '{}' : stringify(args);
    } catch (err) {
      throw new ToolError('invalid_arguments', 'The arguments of tools.' + name + ' are not JSON: ' + (err && err.message), name);
    }
    const answer = parse(await hostCall(name, text === undefined ? 'null' : text));
    if (answer.ok) return answer.value;
    throw new ToolError(answer.code, answer.message, name);
  }

  // Any tool name reads as a function; one the caller may not call answers unknown_tool, as a direct call does.
  const cache = create(null);
  const tools = new Proxy(freeze(create(null)), {
    get(_target, name) {
      if (typeof name !== 'string' || name === 'then') return undefined;
      return cache[name] || (cache[name] = freeze((args) => invoke(name, args)));
    },
    has: (_target, name) => typeof name === 'string' && name !== 'then',
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
    setPrototypeOf: () => false,
    getPrototypeOf: () => null,
  });

  function show(value) {
    if (typeof value === 'string') return value;
    if (value instanceof ErrorClass) return value.name + ': ' + value.message;
    try {
      const json = stringify(value);
      return json === undefined ? StringOf(value) : json;
    } catch (err) {
      return StringOf(value);
    }
  }
  const line = (level) => (...values) => {
    hostLog(level, values.map(show).join(' '));
  };
  const console = freeze({ log: line('log'), info: line('info'), warn: line('warn'), error: line('error'), debug: line('debug') });

  // No real timers: a callback runs once the current job is done, whatever the delay.
  let timers = 0;
  const cleared = new Set();
  const resolved = Promise.resolve();
  function setTimeout(callback, _ms, ...args) {
    const id = ++timers;
    resolved.then(() => {
      if (!cleared.has(id) && typeof callback === 'function') callback(...args);
    });
    return id;
  }
  const clearTimeout = (id) => void cleared.add(id);

  define('tools', tools);
  define('console', console);
  define('ToolError', ToolError);
  globalThis.setTimeout = setTimeout;
  globalThis.clearTimeout = clearTimeout;
})`;
