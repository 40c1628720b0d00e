/**
 * The ledger's shared sweep (docs/ledger.md): every replica looks, now and then, for leases of
 * `unknown` tools whose runner died, and turns them into unknown outcomes — counted and logged once,
 * by whichever replica (or identical call) sees the lapse first. Nothing depends on the replica that
 * took the lease still being alive.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.ts';
import type { EffectLedger } from '../store/ledger.ts';

const BATCH = 100;

export class LedgerSweep {
  readonly #timer: NodeJS.Timeout;
  #running = false;

  constructor(ledger: EffectLedger, leaseMs: number, log: Logger, metrics?: Metrics) {
    const every = Math.max(250, Math.min(5000, Math.floor(leaseMs / 2)));
    this.#timer = setInterval(() => void this.#sweep(ledger, log, metrics), every).unref();
  }

  async #sweep(ledger: EffectLedger, log: Logger, metrics?: Metrics): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (const lost of await ledger.sweep(BATCH)) {
        metrics?.ledgerUnknown(lost.tool_name);
        log.warn(
          { ledgerKey: lost.idempotency_key, effectId: lost.effect_id, lostAt: lost.lost_at },
          'a ledger lease lapsed without a record: outcome unknown',
        );
      }
    } catch {
      // the store is down: the next sweep (or the next identical call) sees the lapse
    } finally {
      this.#running = false;
    }
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
