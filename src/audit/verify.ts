/**
 * Checking the audit chain (docs/audit.md): every entry's hash against its content, and every link
 * against the entry before. Answers the first broken link, naming the entry.
 */
import { auditHash, type StoredAuditEntry } from '../store/audit.ts';

export interface ChainReport {
  /** Entries checked. */
  count: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** The first broken link; null when the chain holds. */
  broken: { seq: number; problem: string } | null;
}

/**
 * `gaps`: entries may be missing between two (a replica's AUDIT_FILE holds only its own), so a link
 * is checked only between consecutive numbers. The store's chain is checked without gaps.
 */
export async function verifyChain(entries: AsyncIterable<StoredAuditEntry>, options: { gaps: boolean } = { gaps: false }): Promise<ChainReport> {
  const report: ChainReport = { count: 0, firstSeq: null, lastSeq: null, broken: null };
  let before: StoredAuditEntry | null = null;
  for await (const entry of entries) {
    report.count++;
    report.firstSeq ??= entry.seq;
    report.lastSeq = entry.seq;
    const problem = problemOf(entry, before, options.gaps);
    if (problem !== null) {
      report.broken = { seq: entry.seq, problem };
      return report;
    }
    before = entry;
  }
  return report;
}

function problemOf(entry: StoredAuditEntry, before: StoredAuditEntry | null, gaps: boolean): string | null {
  if (entry.hash !== auditHash(entry.prev, entry.body)) return `entry ${entry.seq} was changed: its hash does not match its content`;
  if (before === null) return null;
  if (entry.seq !== before.seq + 1) {
    if (entry.seq <= before.seq) return `entry ${entry.seq} comes after entry ${before.seq}: the order was changed`;
    if (!gaps) return `entries ${before.seq + 1} to ${entry.seq - 1} are missing: removed from the chain`;
    return null;
  }
  if (entry.prev !== before.hash) return `entry ${entry.seq} does not link to entry ${before.seq}: one of them was changed`;
  return null;
}
