import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LazyChildLogger } from '../../src/lazy-logger.ts';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  let children = 0;
  const child = logger.child;
  // Not bound: pino children inherit this method and must keep calling it on themselves.
  logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
    children++;
    return child.apply(this, args);
  } as typeof logger.child;
  return { logger, lines, children: () => children };
}

describe('LazyChildLogger', () => {
  it('makes no child for lines at levels that are off, and writes nothing', () => {
    const { logger, lines, children } = capture('warn');
    const lazy = new LazyChildLogger(logger, { reqId: 'r1' }, {});
    lazy.info({ a: 1 }, 'hidden');
    lazy.debug('hidden');
    expect(lazy.isLevelEnabled('info')).toBe(false);
    expect(lazy.level).toBe('warn');
    expect(children()).toBe(0);
    expect(lines).toEqual([]);
  });

  it('writes enabled lines through one real child carrying the bindings', () => {
    const { logger, lines, children } = capture('info');
    const lazy = new LazyChildLogger(logger, { reqId: 'r2' }, {});
    lazy.warn({ a: 1 }, 'first');
    lazy.error(new Error('boom'));
    lazy.info('third');
    expect(children()).toBe(1);
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['r2', 'first'],
      ['r2', 'boom'],
      ['r2', 'third'],
    ]);
    expect(lines[0]!.a).toBe(1);
  });

  it('nests: a lazy child of a lazy child keeps both bindings, and honours its own level option', () => {
    const { logger, lines } = capture('info');
    const outer = new LazyChildLogger(logger, { reqId: 'r3' }, {});
    const inner = new LazyChildLogger(outer, { caller: 'agent' }, { level: 'error' });
    inner.warn('dropped');
    inner.error('kept');
    outer.child({ callId: 'c1' }).info('from a child');
    expect(lines.map((l) => [l.reqId, l.caller, l.callId, l.msg])).toEqual([
      ['r3', 'agent', undefined, 'kept'],
      ['r3', undefined, 'c1', 'from a child'],
    ]);
  });

  it('takes bindings added later on itself, before and after its real child exists, making one child', () => {
    const { logger, lines, children } = capture('info');
    const lazy = new LazyChildLogger(logger, { reqId: 'r4' }, {});
    lazy.setBindings({ caller: 'agent' });
    lazy.info('first');
    lazy.setBindings({ session: 's1' });
    lazy.info('second');
    expect(children()).toBe(1);
    expect(lines.map((l) => [l.reqId, l.caller, l.session, l.msg])).toEqual([
      ['r4', 'agent', undefined, 'first'],
      ['r4', 'agent', 's1', 'second'],
    ]);
    expect(logger.bindings()).toEqual({});
  });
});
