import { describe, it, expect } from 'vitest';
import { answered } from '../../src/formats/answer.ts';
import { answerAgain, failure, invocationResult, type ResultAnswer } from '../../src/tools/outcome.ts';
import { renderContent, wholeIfCut } from '../../src/tools/render.ts';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('renderContent', () => {
  it('puts the message, a blank line, then the JSON of the value', () => {
    expect(renderContent('2 + 3 = 5', '{"sum":5}', 1000)).toBe('2 + 3 = 5\n\n{"sum":5}');
  });

  it('shows only the JSON when the message is empty', () => {
    expect(renderContent('', '{"sum":5}', 1000)).toBe('{"sum":5}');
  });

  it('shows only the message when there is no value JSON', () => {
    expect(renderContent('Cannot divide by zero.', null, 1000)).toBe('Cannot divide by zero.');
  });

  it('leaves content of exactly the limit untouched', () => {
    const message = 'x'.repeat(300);
    expect(renderContent(message, null, 300)).toBe(message);
  });

  it('cuts longer content to at most the limit and says it was truncated and how long it was', () => {
    const valueJson = JSON.stringify({ text: 'y'.repeat(5000) });
    const full = `done\n\n${valueJson}`;
    const content = renderContent('done', valueJson, 300);
    expect(content.length).toBeLessThanOrEqual(300);
    expect(content.startsWith('done\n\n{"text":"yyy')).toBe(true);
    const notice = content.split('\n').at(-1) ?? '';
    expect(notice).toMatch(/truncated/);
    expect(notice).toContain(String(full.length));
  });

  it('never splits a surrogate pair when the cut falls inside an emoji', () => {
    // Try every cut position around the emoji so one of them falls between its two halves.
    for (let max = 200; max < 240; max++) {
      const message = 'a'.repeat(max - 100) + '😀'.repeat(200);
      const content = renderContent(message, null, max);
      expect(content.length).toBeLessThanOrEqual(max);
      expect(content).toMatch(/truncated/);
      // A lone surrogate is not well-formed UTF-16: it would be mangled on the way to the model.
      expect(content).not.toMatch(LONE_SURROGATE);
    }
  });
});

describe('content rendered once, where the answer is formatted', () => {
  const identity = { id: 'call_1', name: 'report', toolHash: null, startedAt: performance.now() };
  const long = { text: 'z'.repeat(500) };
  const success = (limit: number | null) =>
    invocationResult(identity, {
      success: true,
      message: 'done',
      value: long,
      excludeValue: false,
      valueJson: JSON.stringify(long),
      error: null,
      toolHash: null,
      limit,
    });

  it('cuts at the service limit the answer names, and puts content right after error, where answers always had it', () => {
    const result = answered(failure(identity, 'handler_error', 'x'.repeat(400), 'it broke'), 300);
    expect(result.content).toBe(renderContent('x'.repeat(400), null, 300));
    const keys = Object.keys(JSON.parse(JSON.stringify(result)) as object);
    expect(keys.slice(keys.indexOf('error'), keys.indexOf('error') + 2)).toEqual(['error', 'content']);
  });

  it("cuts at the tool's own limit when it has one, whatever the service's", () => {
    expect(answered(success(100), 10_000).content).toBe(renderContent('done', JSON.stringify(long), 100));
    expect(answered(success(null), 10_000).content).toBe(renderContent('done', JSON.stringify(long), 10_000));
  });

  it('says a content will be cut (and gives its whole) only when the limit that applies is passed', () => {
    const whole = `done\n\n${JSON.stringify(long)}`;
    expect(wholeIfCut({ message: 'done', valueJson: JSON.stringify(long), limit: null }, 10_000)).toBeNull();
    expect(wholeIfCut({ message: 'done', valueJson: JSON.stringify(long), limit: 100 }, 10_000)).toBe(whole);
    expect(wholeIfCut({ message: 'done', valueJson: JSON.stringify(long), limit: null }, 100)).toBe(whole);
  });

  it('answers a stored answer again byte for byte', () => {
    const first = JSON.stringify(answered(success(100), 10_000));
    const again = answered(answerAgain(JSON.parse(first) as ResultAnswer), 10_000);
    expect(JSON.stringify(again)).toBe(first);
  });
});
