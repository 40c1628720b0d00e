/** The command's failures: each is one line on stderr. */

/** A failure whose message is already what the user should read. */
export class CliError extends Error {
  override name = 'CliError';
}

/** The command line itself is wrong: exit 2. */
export class UsageError extends CliError {
  override name = 'UsageError';
}

/** Lines as a table: each column padded to its widest cell, the last one left as it is. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}
