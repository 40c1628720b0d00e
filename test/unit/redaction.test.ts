/** The secret matcher (docs/operations.md#secrets-never-reach-the-model): few secrets and many, in text and in values. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIN_SECRET_CHARS, SecretMatcher } from '../../src/redaction/matcher.ts';
import { KnownSecrets } from '../../src/redaction/stage.ts';

const secret = () => randomBytes(18).toString('base64url');

describe.each([
  ['a few secrets (one look per secret)', 3],
  ['many secrets (one pass with a rolling hash)', 1000],
])('SecretMatcher with %s', (_label, count) => {
  const secrets = Array.from({ length: count }, (_, i) => ({ name: `S${i}`, value: secret() }));
  const matcher = new SecretMatcher(secrets);
  const [first, second] = [secrets[0]!, secrets[count - 1]!];

  it('replaces every occurrence with [redacted:<name>], at the start, the middle and the end', () => {
    const text = `${first.value} then ${second.value}, again ${first.value}`;
    expect(matcher.redact(text)).toBe(`[redacted:S0] then [redacted:S${count - 1}], again [redacted:S0]`);
    expect(matcher.redact(`x${first.value}`)).toBe('x[redacted:S0]');
  });

  it('gives back the very same string when no secret is in it, a near miss included', () => {
    const text = `nothing here but ${first.value.slice(0, -1)}_ and ünïcödé ✓`;
    expect(matcher.redact(text)).toBe(text);
    expect(matcher.redact('short')).toBe('short');
  });

  it('redacts the strings of a value, copying only what changed', () => {
    const clean = { list: [1, 'two', { three: true }] };
    const value = { token: first.value, nested: [{ text: `Bearer ${second.value}` }], clean, n: 4, none: null };
    const redacted = matcher.redactValue(value);
    expect(redacted).toEqual({ token: '[redacted:S0]', nested: [{ text: `Bearer [redacted:S${count - 1}]` }], clean, n: 4, none: null });
    expect(redacted.clean).toBe(clean);
    expect(value.token).toBe(first.value);
    expect(matcher.redactValue(clean)).toBe(clean);
  });
});

describe('SecretMatcher', () => {
  it(`ignores values shorter than ${MIN_SECRET_CHARS} characters, and replaces a secret containing another whole`, () => {
    const matcher = new SecretMatcher([
      { name: 'short', value: '1234' },
      { name: 'inner', value: 'abcdefgh' },
      { name: 'outer', value: 'xxabcdefghyy' },
    ]);
    expect(matcher.size).toBe(2);
    expect(matcher.redact('1234 xxabcdefghyy abcdefgh')).toBe('1234 [redacted:outer] [redacted:inner]');
  });

  it('finds secrets that share their first characters among many', () => {
    const shared = Array.from({ length: 50 }, (_, i) => ({ name: `P${i}`, value: `prefix-0${i}-${secret()}` }));
    const matcher = new SecretMatcher(shared);
    expect(matcher.redact(`a ${shared[42]!.value} b ${shared[7]!.value}`)).toBe('a [redacted:P42] b [redacted:P7]');
  });
});

describe('KnownSecrets', () => {
  it('rebuilds its one matcher when a group changes', () => {
    const known = new KnownSecrets();
    expect(known.matcher.size).toBe(0);
    known.set('tools file', [{ name: 'API_TOKEN', value: 'tok-0123456789' }]);
    known.set('configuration', [{ name: 'WEBHOOK', value: 'whk-0123456789' }]);
    expect(known.matcher.redact('tok-0123456789 whk-0123456789')).toBe('[redacted:API_TOKEN] [redacted:WEBHOOK]');
    known.set('tools file', [{ name: 'API_TOKEN', value: 'tok-new-0123456789' }]);
    expect(known.matcher.redact('tok-0123456789 tok-new-0123456789')).toBe('tok-0123456789 [redacted:API_TOKEN]');
  });
});
