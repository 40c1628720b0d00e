/** Where a worker thread's module is, and the flags it starts with: for the isolation pool and code mode's sandbox. */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * The worker module `name` beside the module at `moduleUrl`, of the same kind: `name.js` when that
 * module runs compiled (`node dist/server.js`), `name.ts` when it runs as TypeScript (tsx, tests).
 */
export function workerBeside(moduleUrl: string, name: string): URL {
  return new URL(`./${name}${moduleUrl.endsWith('.js') ? '.js' : '.ts'}`, moduleUrl);
}

/**
 * The process's own flags, and when the worker must load TypeScript (its own module under tsx, or
 * plugins written in TypeScript), tsx's import flag unless the process already has it.
 */
export function workerExecArgv(loadsTypeScript: boolean): string[] {
  const argv = process.execArgv;
  if (!loadsTypeScript || argv.some((arg, i) => arg.includes('tsx') && (argv[i - 1] === '--import' || arg.startsWith('--import')))) return argv;
  return [...argv, '--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
}
