import { describe, it, expect } from 'vitest';
import { renderContent } from '../../src/tools/render.ts';

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
