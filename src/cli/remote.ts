/** `toolport tools | call | approvals`: the typed client against a running service (TOOLPORT_URL, TOOLPORT_API_KEY). */
import { ForbiddenError, ToolportClient, ToolportProblemError, ToolportUnavailableError, UnauthorizedError, type Format } from '../client/index.ts';
import { CliError, UsageError, table } from './output.ts';

type Env = Readonly<Record<string, string | undefined>>;

const FORMATS: readonly Format[] = ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp'];

function clientOf(env: Env): { client: ToolportClient; url: string } {
  const url = env.TOOLPORT_URL?.trim() || 'http://127.0.0.1:8080';
  try {
    new URL(url);
  } catch {
    throw new CliError(`TOOLPORT_URL must be a URL such as http://127.0.0.1:8080, got "${url}"`);
  }
  const apiKey = env.TOOLPORT_API_KEY?.trim();
  return { client: new ToolportClient({ baseUrl: url, ...(apiKey && { apiKey }), retries: 1 }), url };
}

/** The client's failures in one line that says what to do. */
async function talking<T>(url: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ToolportUnavailableError) {
      throw new CliError(
        err.status === null
          ? `cannot reach toolport at ${url} (${err.message.replace(/^.*did not answer: /, '')}); is it running? set TOOLPORT_URL`
          : err.message,
      );
    }
    if (err instanceof UnauthorizedError) throw new CliError(`the key was refused (401): ${err.problem.detail ?? 'set TOOLPORT_API_KEY'}`);
    if (err instanceof ForbiddenError) throw new CliError(`not allowed (403): ${err.problem.detail ?? 'this key may not do that'}`);
    if (err instanceof ToolportProblemError) throw new CliError(err.message);
    throw err;
  }
}

export async function listTools(env: Env, options: { format: string | undefined; json: boolean }): Promise<number> {
  const format = options.format;
  if (format !== undefined && !FORMATS.includes(format as Format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${format}"`);
  const { client, url } = clientOf(env);
  const list = await talking(url, () => client.listTools(format === undefined ? {} : { format: format as Format }));
  if (options.json || format !== undefined) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return 0;
  }
  const rows = list.tools.map((tool) => [String(tool.name), firstLine(String(tool.description ?? ''))]);
  process.stdout.write(rows.length === 0 ? 'no tools\n' : `${table(rows)}\n`);
  return 0;
}

function firstLine(text: string): string {
  const line = text.split('\n')[0]!;
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/** `key=value`: a value that parses as JSON (number, boolean, null, object, array) is that value, else the string as written. */
export function argumentsOf(pairs: readonly string[], json: string | undefined): Record<string, unknown> {
  if (json !== undefined) {
    if (pairs.length > 0) throw new UsageError('give the arguments either as key=value pairs or as --json, not both');
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (err) {
      throw new UsageError(`--json is not JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--json must be a JSON object of arguments');
    return parsed as Record<string, unknown>;
  }
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`arguments are key=value, got "${pair}"`);
    const raw = pair.slice(at + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // not JSON: the string itself
    }
    args[pair.slice(0, at)] = value;
  }
  return args;
}

export async function callTool(
  env: Env,
  rest: readonly string[],
  values: { json?: string | undefined; session?: string | undefined; timeout?: string | undefined; raw?: boolean | undefined },
): Promise<number> {
  const [tool, ...pairs] = rest;
  if (tool === undefined) throw new UsageError('call needs a tool name: toolport call <tool> [key=value …]');
  const args = argumentsOf(pairs, values.json);
  if (values.timeout !== undefined && !/^\d{1,9}$/.test(values.timeout))
    throw new UsageError(`--timeout is a whole number of milliseconds, got "${values.timeout}"`);
  const { client, url } = clientOf(env);
  const result = await talking(url, () =>
    client.invoke(tool, args, {
      ...(values.session !== undefined && { sessionId: values.session }),
      ...(values.timeout !== undefined && { timeoutMs: Number(values.timeout) }),
    }),
  );
  if (values.raw === true) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (!result.success) {
    const code = result.error?.code ? ` (${result.error.code})` : '';
    process.stderr.write(`toolport: ${tool} failed${code}: ${result.message.split('\n')[0]}\n`);
    return 1;
  }
  if (values.raw !== true) process.stdout.write(`${result.content}\n`);
  return 0;
}

export async function approvals(env: Env, rest: readonly string[], values: { note?: string | undefined }): Promise<number> {
  const [action = 'list', id, ...extra] = rest;
  const { client, url } = clientOf(env);
  if (action === 'list') {
    if (id !== undefined) throw new UsageError(`approvals list takes no arguments, got "${rest.slice(1).join(' ')}"`);
    const pending = await talking(url, () => client.listApprovals());
    const rows = pending.map((a) => [a.approval_id, a.tool, a.caller ?? '-', a.expires_at, JSON.stringify(a.arguments)]);
    process.stdout.write(rows.length === 0 ? 'no pending approvals\n' : `${table([['ID', 'TOOL', 'CALLER', 'EXPIRES', 'ARGUMENTS'], ...rows])}\n`);
    return 0;
  }
  if (action !== 'approve' && action !== 'deny') throw new UsageError(`approvals takes list, approve <id> or deny <id>, got "${action}"`);
  if (id === undefined || extra.length > 0) throw new UsageError(`approvals ${action} takes one approval id`);
  const decided = await talking(url, () => client.decide(id, { decision: action, ...(values.note !== undefined && { note: values.note }) }));
  process.stdout.write(`${decided.approval_id}: ${decided.status}\n`);
  return 0;
}
