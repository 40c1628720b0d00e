/**
 * The one door for secrets at rest: AES-256-GCM (node:crypto) with a random 12-byte IV, the
 * 16-byte tag, and additional data that binds a sealed value to where it belongs (issuer, user,
 * credential name), so a value copied to another user's record does not open. A sealed value
 * names its key's id: SECRETS_KEY seals and opens, SECRETS_KEY_PREVIOUS still opens (rotation).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SealBroken } from '../errors.ts';

const FORMAT = 'tp1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface Key {
  readonly id: string;
  readonly bytes: Buffer;
}

/** A short, public name of a key (not derived reversibly): which key sealed a value. */
function keyId(bytes: Buffer): string {
  return createHash('sha256').update('toolport secrets key id\n').update(bytes).digest('hex').slice(0, 8);
}

export interface Opened {
  readonly plaintext: string;
  /** Sealed with SECRETS_KEY_PREVIOUS: seal it again with the current key. */
  readonly stale: boolean;
}

export class SecretsCipher {
  readonly #current: Key;
  readonly #previous: Key | null;

  constructor(current: Buffer, previous: Buffer | null = null) {
    if (current.length !== 32 || (previous !== null && previous.length !== 32)) throw new RangeError('a secrets key is 32 bytes');
    this.#current = { id: keyId(current), bytes: current };
    this.#previous = previous === null ? null : { id: keyId(previous), bytes: previous };
  }

  /** The current key's id, as sealed values name it. */
  get keyId(): string {
    return this.#current.id;
  }

  /** `binding`: what the value belongs to, checked when it is opened (the GCM additional data). */
  seal(plaintext: string, binding: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#current.bytes, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${FORMAT}.${this.#current.id}.${body.toString('base64url')}`;
  }

  open(sealed: string, binding: string): Opened {
    const [format, id, encoded, extra] = sealed.split('.');
    if (format !== FORMAT || id === undefined || encoded === undefined || extra !== undefined) throw new SealBroken('not a sealed value');
    const key = id === this.#current.id ? this.#current : id === this.#previous?.id ? this.#previous : null;
    if (key === null) throw new SealBroken(`sealed with key ${id}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS`);
    const body = Buffer.from(encoded, 'base64url');
    if (body.length < IV_BYTES + TAG_BYTES) throw new SealBroken('the sealed value is cut');
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, body.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      const plaintext = Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      return { plaintext, stale: key !== this.#current };
    } catch {
      throw new SealBroken('the sealed value was changed or belongs elsewhere');
    }
  }
}
