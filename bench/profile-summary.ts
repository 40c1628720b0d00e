// `npx tsx bench/profile-summary.ts <file.cpuprofile> [--top N] [--by function|file|package] [--last S]`:
// what a CPU profile (`node --cpu-prof`) spent its time on, by self time: the functions (or files,
// or packages) where the samples landed, largest first, with their share of the busy (not idle)
// time. Idle and garbage collection are listed as V8 names them ("(idle)", "(garbage collector)",
// "(program)"). `--last S` keeps only the last S seconds (the load, without the start-up).
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function usage(): never {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [--top N] [--by function|file|package] [--last S]');
  process.exit(2);
}

const args = process.argv.slice(2);
const file = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (file === undefined) usage();
const option = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? undefined : args[at + 1];
};
const top = Number(option('top') ?? 30);
const by = option('by') ?? 'function';
const lastUs = option('last') === undefined ? Number.POSITIVE_INFINITY : Number(option('last')) * 1e6;
if (!['function', 'file', 'package'].includes(by) || !Number.isInteger(top) || top < 1 || !(lastUs > 0)) usage();

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));

/** Where a sample landed, at the chosen grain. */
function keyOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^file:\/\//, '');
  if (where === '') return functionName || '(anonymous)';
  if (by === 'function') return `${functionName || '(anonymous)'}  ${shorten(where)}:${lineNumber + 1}`;
  if (by === 'file') return shorten(where);
  const modules = where.lastIndexOf('node_modules/');
  if (modules === -1) return where.startsWith('node:') ? 'node (built-in)' : 'the application';
  const [scope, name] = where.slice(modules + 'node_modules/'.length).split('/');
  return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
}

function shorten(where: string): string {
  const modules = where.lastIndexOf('node_modules/');
  if (modules !== -1) return where.slice(modules);
  return where.startsWith('/') ? path.relative(process.cwd(), where) : where;
}

// Each sample's time is the delta that follows it (the V8 convention: timeDeltas[i] precedes sample i+1).
const self = new Map<string, number>();
let total = 0;
const from = profile.endTime - lastUs;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i] ?? 0;
  const node = nodes.get(profile.samples[i]!);
  const delta = profile.timeDeltas[i + 1] ?? 0;
  if (node === undefined || delta < 0 || at < from) continue;
  const key = keyOf(node);
  self.set(key, (self.get(key) ?? 0) + delta);
  total += delta;
}
const idle = self.get('(idle)') ?? 0;
const busy = total - idle;
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms busy (not idle); self time by ${by}, share of busy time`);
for (const [key, us] of rows) {
  const share = key === '(idle)' ? '' : `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
  console.log(`${(us / 1000).toFixed(1).padStart(9)} ms ${share.padStart(7)}  ${key}`);
}
