/**
 * CPU cost of verifying one JWT access token with the JWKS cached (src/callers/tokens.ts), per
 * algorithm: `npm run bench:jwt`. Starts a small issuer in-process, warms the cache, then verifies
 * the same token many times and reports CPU microseconds per verification.
 */
import { pino } from 'pino';
import { TokenVerifier } from '../src/callers/tokens.ts';
import { startIssuer } from '../test/helpers/issuer.ts';

const N = 5000;
const issuer = await startIssuer();
const verifier = new TokenVerifier({
  issuer: issuer.issuer,
  audiences: ['https://toolport.example/mcp'],
  groupsClaim: 'groups',
  log: pino({ level: 'silent' }),
});
for (const key of issuer.published) {
  const token = await issuer.sign({ sub: 'alice', aud: 'https://toolport.example/mcp', groups: ['staff'], scope: 'openid' }, { key, expiresIn: '1h' });
  for (let i = 0; i < 500; i++) await verifier.verify(token); // warm: JWKS fetched, keys imported, JIT
  const cpu = process.cpuUsage();
  const wall = performance.now();
  for (let i = 0; i < N; i++) await verifier.verify(token);
  const used = process.cpuUsage(cpu);
  const micros = (used.user + used.system) / N;
  console.log(
    `${key.alg.padEnd(6)} ${micros.toFixed(1)} µs CPU per verification (${(((performance.now() - wall) * 1000) / N).toFixed(1)} µs wall), ${N} runs, JWKS fetched ${issuer.jwksFetches} times in all`,
  );
}
await issuer.close();
