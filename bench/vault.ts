/**
 * npm run bench:vault — the CPU cost of a vault lookup per call, in process: the memory store's
 * read, the AES-256-GCM open (with its binding) and the JSON of the sealed material, as the
 * credentials stage does it for a tool with `auth: {credential}`.
 */
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { SecretsCipher } from '../src/credentials/cipher.ts';
import { Vault } from '../src/credentials/vault.ts';
import { MemoryCredentials } from '../src/store/memory/credentials.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 200_000);
const store = new MemoryCredentials();
const vault = new Vault({
  definitions: new Map([
    [
      'github',
      {
        name: 'github',
        kind: 'oauth2',
        authorizeUrl: 'https://p/auth',
        tokenUrl: 'https://p/token',
        clientId: 'c',
        clientSecret: null,
        scopes: ['repo'],
        issuer: null,
      },
    ],
    ['weather', { name: 'weather', kind: 'secret' }],
  ]),
  store,
  cipher: new SecretsCipher(randomBytes(32)),
  issuer: 'api-keys',
  publicUrl: 'https://toolport.example',
  log: pino({ level: 'silent' }),
});
await vault.storeGrant('agent', 'github', {
  accessToken: `gho_${'x'.repeat(36)}`,
  refreshToken: 'r'.repeat(40),
  expiresAt: Date.now() + 3_600_000,
  scopes: ['repo'],
});
await vault.putSecret('agent', 'weather', 'k'.repeat(32));

async function measure(label: string, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 10_000; i++) await run();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) await run();
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - started;
  process.stdout.write(
    `${label}: ${((used.user + used.system) / CALLS).toFixed(2)} µs CPU per lookup (${((wall * 1000) / CALLS).toFixed(2)} µs wall), ${CALLS} lookups\n`,
  );
}

await measure('oauth2 token (not due for refresh)', () => vault.secret('agent', 'github'));
await measure('secret value', () => vault.secret('agent', 'weather'));
await measure('missing: connect link issued', () => vault.secret('nobody', 'github').then(() => vault.connectLink('nobody', 'github')));
