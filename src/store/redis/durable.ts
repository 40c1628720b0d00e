/**
 * Writes a guarantee rests on, acknowledged by replicas (docs/operations.md): the script and a `WAIT`
 * after it on the same connection (WAIT cannot run inside a script), on a connection of their own so
 * a slow acknowledgement never holds up other commands. Writes that arrive while a WAIT is out are
 * sent together with one WAIT after them (one acknowledgement covers every earlier write on the
 * connection). On Cluster each write is its own pipeline, which goes to the node owning its key.
 * With no acknowledgement wanted (REDIS_REPLICA_ACKS=0, or `auto` and no replica) a write is an
 * ordinary command on the shared connection: nothing extra on the call path.
 */
import { Cluster, type ChainableCommander, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import { connectionReady } from './ready.ts';
import { copyScripts } from './scripts.ts';
import { failureText } from './connect.ts';
import { StoreNotDurable, StoreUnavailable } from '../../errors.ts';

/** How often `auto` asks the primaries whether they have a connected replica. */
const AUTO_CHECK_MS = 2000;
/** The soonest `auto` looks again after a write its replicas did not acknowledge. */
const RECHECK_MS = 250;

/** A command queued on `client`: on the plain client it returns its promise; on a pipeline its answer comes from exec. */
export type Queued<C, T> = (client: C) => Promise<T>;

/** Runs a write a guarantee rests on: it counts once the replicas REDIS_REPLICA_ACKS asks for hold it. */
export type DurableGuard = <C, T>(command: Queued<C, T>) => Promise<T>;

interface Pending {
  queue: (pipeline: ChainableCommander) => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Whether a single primary has a connected replica. */
async function hasReplica(conn: Redis): Promise<0 | 1> {
  return Number(/connected_slaves:(\d+)/.exec(await conn.info('replication'))?.[1] ?? 0) > 0 ? 1 : 0;
}

/**
 * From CLUSTER NODES: 1 when every live master has a live replica, else 0. The cluster's own view
 * follows a failover at once (a promoted replica is a master without replicas until its old master
 * comes back as one).
 */
function everyShardReplicated(nodes: string): 0 | 1 {
  const lines = nodes
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length >= 8 && !fields[2]!.includes('fail'));
  const masters = lines.filter((fields) => fields[2]!.includes('master')).map((fields) => fields[0]!);
  const replicated = new Set(lines.filter((fields) => fields[2]!.includes('slave') && fields[7] === 'connected').map((fields) => fields[3]!));
  return masters.length > 0 && masters.every((id) => replicated.has(id)) ? 1 : 0;
}

export class DurableWriter {
  readonly #main: Redis | Cluster;
  readonly #acks: number | 'auto';
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #conn: Redis | Cluster | null;
  /** `auto`: the acknowledgements the primaries can give now (0 or 1). */
  #auto = 0;
  #timer: NodeJS.Timeout | null = null;
  #checkedAt = 0;
  #batch: Pending[] = [];
  #sending = false;

  constructor(main: Redis | Cluster, acks: number | 'auto', timeoutMs: number, log: Logger) {
    this.#main = main;
    this.#acks = acks;
    this.#timeoutMs = timeoutMs;
    this.#log = log;
    this.#conn = acks === 0 ? null : main instanceof Cluster ? main.duplicate() : main.duplicate();
    if (this.#conn === null) return;
    copyScripts(main, this.#conn);
    this.#conn.on('error', () => {}); // the shared connection reports the outage
    if (acks === 'auto') {
      this.#conn.on('ready', () => void this.#checkReplicas());
      this.#timer = setInterval(() => void this.#checkReplicas(), AUTO_CHECK_MS);
      this.#timer.unref();
    }
  }

  /** Replicas each write waits for now. */
  get needed(): number {
    return this.#acks === 'auto' ? this.#auto : this.#acks;
  }

  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.#conn === null) return true;
    const ready = await connectionReady(this.#conn, timeoutMs);
    if (ready && this.#acks === 'auto') await this.#checkReplicas();
    return ready;
  }

  /**
   * 1 when every primary that answers has a connected replica, else 0 (one that does not answer is
   * being failed over: the replica that takes its place counts once it does).
   */
  async #checkReplicas(): Promise<void> {
    const conn = this.#conn;
    if (conn === null || conn.status !== 'ready') return;
    this.#checkedAt = Date.now();
    try {
      const next = conn instanceof Cluster ? everyShardReplicated(String(await conn.cluster('NODES'))) : await hasReplica(conn);
      if (next !== this.#auto) this.#log.info({ replicaAcks: next }, next ? 'writes now wait for a replica' : 'no replica connected: writes do not wait');
      this.#auto = next;
    } catch {
      // the next check, or the next write, tells
    }
  }

  /**
   * Runs `command` so that it counts only once `needed` replicas hold it: throws StoreNotDurable
   * when they did not acknowledge in time, StoreUnavailable when Redis did not answer.
   * `run` is the shared connection's guard, used when no acknowledgement is wanted.
   */
  write<C, T>(command: Queued<C, T>, run: <R>(command: () => Promise<R>) => Promise<R>): Promise<T> {
    const needed = this.needed;
    if (needed === 0 || this.#conn === null) return run(() => command(this.#main as C));
    if (this.#conn.status !== 'ready') return Promise.reject(new StoreUnavailable(`redis is ${this.#conn.status}`));
    const queue = (pipeline: ChainableCommander) => command(pipeline as C);
    if (this.#conn instanceof Cluster) return this.#send([{ queue, resolve: () => {}, reject: () => {} }], needed) as Promise<T>;
    return new Promise<T>((resolve, reject) => {
      this.#batch.push({ queue, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#sending) void this.#drain();
    });
  }

  /** Sends the waiting writes, one WAIT after them, until none is left. */
  async #drain(): Promise<void> {
    this.#sending = true;
    while (this.#batch.length > 0) {
      const batch = this.#batch;
      this.#batch = [];
      try {
        const results = (await this.#send(batch, this.needed || 1, true)) as unknown[];
        results.forEach((result, i) => batch[i]!.resolve(result));
      } catch (err) {
        for (const pending of batch) pending.reject(err);
      }
    }
    this.#sending = false;
  }

  /** One pipeline: the writes, then WAIT; every write's answer, or the first error. */
  async #send(batch: Pending[], needed: number, all = false): Promise<unknown> {
    const pipeline = this.#conn!.pipeline();
    for (const pending of batch) pending.queue(pipeline);
    pipeline.wait(needed, this.#timeoutMs);
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await pipeline.exec();
    } catch (err) {
      throw new StoreUnavailable(failureText(err));
    }
    if (replies === null) throw new StoreUnavailable('redis did not answer');
    const failed = replies.find(([err]) => err !== null);
    if (failed) throw new StoreUnavailable(failureText(failed[0]));
    const acked = Number(replies[replies.length - 1]![1]);
    // `auto` looks again at once: a failover may have left the new primary without a replica.
    if (acked < needed && this.#acks === 'auto' && Date.now() - this.#checkedAt > RECHECK_MS) void this.#checkReplicas();
    if (acked < needed) throw new StoreNotDurable(`${acked} of ${needed} replicas acknowledged the write within ${this.#timeoutMs} ms`);
    const answers = replies.slice(0, -1).map(([, value]) => value);
    return all ? answers : answers[0];
  }

  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#conn?.disconnect();
  }
}
