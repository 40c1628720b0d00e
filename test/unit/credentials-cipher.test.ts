import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseSecretsKey } from '../../src/config.ts';
import { SecretsCipher } from '../../src/credentials/cipher.ts';
import { ConfigError, SealBroken } from '../../src/errors.ts';

const key = () => randomBytes(32);

describe('sealing secrets (AES-256-GCM)', () => {
  it('opens what it sealed, for the same binding, and never shows the plaintext', () => {
    const cipher = new SecretsCipher(key());
    const sealed = cipher.seal('gho_token-123', 'issuer\nuser:alice\ngithub');
    expect(sealed).not.toContain('gho_token-123');
    expect(sealed.startsWith(`tp1.${cipher.keyId}.`)).toBe(true);
    expect(cipher.open(sealed, 'issuer\nuser:alice\ngithub')).toEqual({ plaintext: 'gho_token-123', stale: false });
  });

  it('uses a new IV each time', () => {
    const cipher = new SecretsCipher(key());
    expect(cipher.seal('same', 'b')).not.toBe(cipher.seal('same', 'b'));
  });

  it("refuses a value moved to another user's or credential's binding", () => {
    const cipher = new SecretsCipher(key());
    const sealed = cipher.seal('secret', 'issuer\nuser:alice\ngithub');
    expect(() => cipher.open(sealed, 'issuer\nuser:bob\ngithub')).toThrow(SealBroken);
    expect(() => cipher.open(sealed, 'issuer\nuser:alice\ngitlab')).toThrow(SealBroken);
    expect(() => cipher.open(sealed, 'other-issuer\nuser:alice\ngithub')).toThrow(SealBroken);
  });

  it('refuses a tampered value', () => {
    const cipher = new SecretsCipher(key());
    const sealed = cipher.seal('secret', 'b');
    const body = Buffer.from(sealed.split('.')[2]!, 'base64url');
    body[14] = body[14]! ^ 1;
    const tampered = `${sealed.split('.').slice(0, 2).join('.')}.${body.toString('base64url')}`;
    expect(() => cipher.open(tampered, 'b')).toThrow(SealBroken);
    expect(() => cipher.open('tp1.x', 'b')).toThrow(SealBroken);
  });

  it('still opens values of SECRETS_KEY_PREVIOUS, marked stale, and nothing of an unknown key', () => {
    const old = key();
    const before = new SecretsCipher(old);
    const sealed = before.seal('kept', 'b');
    const rotated = new SecretsCipher(key(), old);
    expect(rotated.open(sealed, 'b')).toEqual({ plaintext: 'kept', stale: true });
    expect(() => new SecretsCipher(key()).open(sealed, 'b')).toThrow(/neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS/);
  });
});

describe('SECRETS_KEY', () => {
  it('takes 32 bytes as 64 hex characters or base64, and nothing else', () => {
    const bytes = key();
    expect(parseSecretsKey(bytes.toString('hex'))).toEqual(bytes);
    expect(parseSecretsKey(bytes.toString('base64'))).toEqual(bytes);
    expect(parseSecretsKey(bytes.toString('base64url'))).toEqual(bytes);
    expect(parseSecretsKey('short')).toBeNull();
    expect(parseSecretsKey(randomBytes(16).toString('hex'))).toBeNull();
  });

  it('stops the start with one line naming the variable, never its value', () => {
    expect(() => loadConfig({ SECRETS_KEY: 'not-a-key-value' })).toThrow(ConfigError);
    try {
      loadConfig({ SECRETS_KEY_PREVIOUS: 'not-a-key-value' });
    } catch (err) {
      expect((err as Error).message).toMatch(/^SECRETS_KEY_PREVIOUS must be 32 bytes/);
      expect((err as Error).message).not.toContain('not-a-key-value');
    }
  });
});
