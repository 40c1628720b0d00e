/** The built-in patterns of `guardrails:` (docs/guardrails.md): what each finds, and what it leaves alone. */
import { describe, expect, it } from 'vitest';
import { BUILTIN_PATTERNS, luhnValid, matches, replaceMatches } from '../../src/guardrails/patterns.ts';

const found = (name: string, text: string) => matches(BUILTIN_PATTERNS[name]!, text);

describe('built-in guardrail patterns', () => {
  it('finds card numbers that pass the Luhn check, with or without separators', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(found('credit_card', 'pay with 4111 1111 1111 1111 today')).toBe(true);
    expect(found('credit_card', 'card 5500-0000-0000-0004')).toBe(true);
    expect(found('credit_card', 'order 1234 5678 9012 3456')).toBe(false);
    expect(found('credit_card', 'call 12345')).toBe(false);
    expect(replaceMatches(BUILTIN_PATTERNS.credit_card!, 'a 4111111111111111 b 4111111111111112', 'X')).toBe('a X b 4111111111111112');
  });

  it('finds IBANs whose check digits are right', () => {
    expect(found('iban', 'to DE89 3704 0044 0532 0130 00 please')).toBe(true);
    expect(found('iban', 'GB82WEST12345698765432')).toBe(true);
    expect(found('iban', 'DE00 3704 0044 0532 0130 00')).toBe(false);
  });

  it('finds e-mail addresses, phone numbers, JWTs, private keys and AWS key ids', () => {
    expect(found('email', 'write to jane.doe+x@mail.example.co.uk')).toBe(true);
    expect(found('email', 'no address @ here')).toBe(false);
    expect(found('phone', 'call +1 415 555 2671')).toBe(true);
    expect(found('phone', 'call 030 1234567')).toBe(true);
    expect(found('phone', 'in 2026')).toBe(false);
    expect(found('jwt', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl')).toBe(true);
    expect(found('jwt', 'eyJhbGciOiJIUzI1NiJ9 alone')).toBe(false);
    expect(found('private_key', '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----')).toBe(true);
    expect(found('private_key', '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----')).toBe(false);
    expect(found('aws_key', 'AKIAIOSFODNN7EXAMPLE')).toBe(true);
    expect(found('aws_key', 'AKIAshort')).toBe(false);
  });

  it('gives the same answer when asked twice (global expressions keep no state between calls)', () => {
    expect(found('email', 'a@b.io')).toBe(true);
    expect(found('email', 'a@b.io')).toBe(true);
  });
});
