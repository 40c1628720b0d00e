/**
 * The `toolport` command: `serve` (the default) runs the service; `check` loads everything and
 * lists the catalog without serving; `tools`, `call` and `approvals` talk to a running service
 * (TOOLPORT_URL, TOOLPORT_API_KEY). Every failure is one line on stderr and a non-zero exit.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError, UsageError } from './output.ts';

export const USAGE = `toolport: executes the tool calls of large language models

Usage:
  toolport [serve]                       start the service (configured by the environment: PORT, TOOLS_FILE, …)
  toolport check                         load the configuration, tools file, plugins and upstreams; list the tools
  toolport tools [--format F] [--json]   list the tools of a running service (F: native, openai, openai-responses, anthropic, gemini, mcp)
  toolport call <tool> [key=value …]     call a tool on a running service and print its result
  toolport call <tool> --json '{…}'        … with the arguments as one JSON object
  toolport approvals                     list the pending approvals
  toolport approvals approve|deny <id> [--note TEXT]
                                         decide one
  toolport audit verify [--file PATH]    check the audit chain in Redis (REDIS_URL, KEY_PREFIX) or in an AUDIT_FILE

Options:
  -h, --help        this text          -v, --version     the version
  --session ID      (call) X-Session-Id
  --timeout MS      (call) X-Timeout-Ms
  --raw             (call) print the whole result as JSON

Environment for tools, call and approvals:
  TOOLPORT_URL      where the service answers (default http://127.0.0.1:8080)
  TOOLPORT_API_KEY  the API key, sent as a bearer token

Exit codes: 0 done; 1 failed (a tool's own failure, a refused request, bad configuration); 2 wrong usage.
`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  format: { type: 'string' },
  json: { type: 'string' },
  session: { type: 'string' },
  timeout: { type: 'string' },
  note: { type: 'string' },
  raw: { type: 'boolean' },
  file: { type: 'string' },
} satisfies ParseArgsConfig['options'];

/** `--json` is a flag for `tools` (print JSON) and takes the arguments object for `call`. */
function normalize(argv: readonly string[]): string[] {
  return argv[0] === 'tools' ? argv.map((arg) => (arg === '--json' ? '--json=' : arg)) : [...argv];
}

async function run(argv: readonly string[], version: string): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: normalize(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.version === true) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const [command = 'serve', ...rest] = positionals;
  const env = process.env;
  switch (command) {
    case 'serve':
      if (rest.length > 0) throw new UsageError(`serve takes no arguments, got "${rest.join(' ')}"`);
      await import('../server.ts');
      return -1; // the server runs until a signal
    case 'check':
      if (rest.length > 0) throw new UsageError(`check takes no arguments, got "${rest.join(' ')}"`);
      return (await import('./check.ts')).check(env);
    case 'tools':
      return (await import('./remote.ts')).listTools(env, { format: values.format, json: values.json !== undefined });
    case 'call':
      return (await import('./remote.ts')).callTool(env, rest, values);
    case 'approvals':
      return (await import('./remote.ts')).approvals(env, rest, values);
    case 'audit':
      return (await import('./audit.ts')).audit(env, rest, values);
    default:
      throw new UsageError(`unknown command "${command}" (serve, check, tools, call, approvals, audit)`);
  }
}

/** Runs the command line; answers the exit code (-1: keep the process, the server is running). */
export async function main(argv: readonly string[], version: string): Promise<number> {
  try {
    return await run(argv, version);
  } catch (err) {
    const usage = err instanceof UsageError;
    const message = err instanceof CliError ? err.message : err instanceof Error ? err.message : String(err);
    process.stderr.write(`toolport: ${message.split('\n')[0]}${usage ? ' (toolport --help)' : ''}\n`);
    return usage ? 2 : 1;
  }
}
