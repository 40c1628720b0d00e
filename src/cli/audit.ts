/**
 * `toolport audit verify`: checks the audit chain (docs/audit.md) in the store the environment
 * configures (REDIS_URL or REDIS_CLUSTER_NODES, KEY_PREFIX), or in an AUDIT_FILE with `--file`.
 * Prints what it checked and exits 0, or names the first broken link and exits 1.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import pino from 'pino';
import { verifyChain, type ChainReport } from '../audit/verify.ts';
import { loadConfig } from '../config.ts';
import { auditBodyOf, type AuditLog, type StoredAuditEntry } from '../store/audit.ts';
import { createStore } from '../store/index.ts';
import { CliError, UsageError } from './output.ts';

const PAGE = 1000;

async function* chainOf(log: AuditLog): AsyncGenerator<StoredAuditEntry> {
  for (let after = 0; ;) {
    const page = await log.oldest(after, PAGE);
    yield* page;
    if (page.length < PAGE) return;
    after = page.at(-1)!.seq;
  }
}

async function* fileOf(path: string): AsyncGenerator<StoredAuditEntry> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let number = 0;
  for await (const text of lines) {
    number++;
    if (text.trim() === '') continue;
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new CliError(`audit chain broken at line ${number} of ${path}: not JSON`);
    }
    const { seq, prev, hash } = line;
    if (typeof seq !== 'number' || typeof prev !== 'string' || typeof hash !== 'string')
      throw new CliError(`audit chain broken at line ${number} of ${path}: not an audit entry`);
    yield { seq, prev, hash, body: auditBodyOf(line) };
  }
}

function conclude(report: ChainReport, where: string): number {
  if (report.broken !== null) throw new CliError(`audit chain broken at entry ${report.broken.seq} (${where}): ${report.broken.problem}`);
  const range = report.count === 0 ? '' : `, entries ${report.firstSeq} to ${report.lastSeq}`;
  process.stdout.write(`audit chain verified (${where}): ${report.count} entries${range}\n`);
  return 0;
}

export async function audit(
  env: Readonly<Record<string, string | undefined>>,
  rest: readonly string[],
  options: { file?: string | undefined },
): Promise<number> {
  if (rest[0] !== 'verify' || rest.length > 1) throw new UsageError('audit takes one subcommand: verify');
  if (options.file !== undefined) return conclude(await verifyChain(fileOf(options.file), { gaps: true }).catch(fileProblem(options.file)), options.file);
  const config = loadConfig(env);
  if (config.redisUrl === null && config.redisClusterNodes === null)
    throw new CliError('the audit log is kept in Redis or in a running process: set REDIS_URL (or REDIS_CLUSTER_NODES), or pass --file AUDIT_FILE');
  const store = await createStore(config, pino({ level: 'silent' }));
  try {
    store.assertAvailable();
    return conclude(await verifyChain(chainOf(store.audit)), 'redis');
  } finally {
    await store.close();
  }
}

function fileProblem(path: string): (err: unknown) => never {
  return (err) => {
    if (err instanceof CliError) throw err;
    throw new CliError(`${path} cannot be read: ${(err as Error).message}`);
  };
}
