/**
 * CPU cost of verifying one JWT access token with the JWKS cached (src/callers/tokens.ts), per
 * algorithm: `npm run bench:jwt`. Starts a small issuer in-process, warms the cache, then reports
 * CPU microseconds per verification of a token seen for the first time (each a different token:
 * the signature is checked) and of a token seen before (an agent's next call: answered from memory).
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
const perRun = (cpu: NodeJS.CpuUsage, n: number) => {
  const used = process.cpuUsage(cpu);
  return ((used.user + used.system) / n).toFixed(1);
};
for (const key of issuer.published) {
  const sign = (i: number) =>
    issuer.sign({ sub: `user-${i}`, aud: 'https://toolport.example/mcp', groups: ['staff'], scope: 'openid' }, { key, expiresIn: '1h' });
  for (let i = 0; i < 500; i++) await verifier.verify(await sign(-1 - i)); // warm: JWKS fetched, keys imported, JIT
  const fresh = await Promise.all(Array.from({ length: N }, (_, i) => sign(i)));
  let cpu = process.cpuUsage();
  for (const token of fresh) await verifier.verify(token);
  const first = perRun(cpu, N);
  cpu = process.cpuUsage();
  for (let i = 0; i < N * 10; i++) await verifier.verify(fresh[i % 100]!);
  const again = perRun(cpu, N * 10);
  console.log(
    `${key.alg.padEnd(6)} ${first} µs CPU per first verification, ${again} µs per token seen before; ${N} tokens, JWKS fetched ${issuer.jwksFetches} times in all`,
  );
}
await issuer.close();
