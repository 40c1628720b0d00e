/**
 * Every problem of a tools file, not only the first (`toolport check`): each section is checked on
 * its own and each tool entry loaded on its own into a scratch catalog, so one bad entry does not
 * hide the next. Problems two entries share (a bad `credentials:` both use) are named once.
 */
import { guardProblems } from '../guardrails/rules.ts';
import { ruleProblems } from '../policy/rules.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { isObject } from '../json.ts';
import { readToolsets } from '../toolsets/index.ts';
import { readCredentials } from './credentials.ts';
import { checkSourceNames, loadParsedSources, type LoadToolSourcesOptions } from './index.ts';
import { readToolsFile, type ToolsFile } from './tools-file.ts';
import { ToolsFileError } from '../errors.ts';

const TOOL_SECTIONS = ['plugins', 'http', 'openapi', 'mcp'] as const;

function lineOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

async function attempt(problems: Set<string>, run: () => unknown): Promise<void> {
  try {
    await run();
  } catch (err) {
    problems.add(lineOf(err));
  }
}

/** The toolsets one by one (the section's own shape first). */
function toolsetProblems(file: ToolsFile): string[] {
  const fail = (message: string): never => {
    throw new ToolsFileError(`TOOLS_FILE ${file.path}: ${message}`);
  };
  const each = isObject(file.toolsets) ? Object.entries(file.toolsets).map(([name, raw]) => ({ [name]: raw })) : [file.toolsets];
  return each.flatMap((section) => {
    try {
      readToolsets(section, fail);
      return [];
    } catch (err) {
      return [lineOf(err)];
    }
  });
}

/** One line per problem of the file; empty when each part loads on its own. */
export async function toolsFileProblems(options: Omit<LoadToolSourcesOptions, 'registry'>): Promise<string[]> {
  let file: ToolsFile;
  try {
    file = await readToolsFile(options.file, options.env);
  } catch (err) {
    return [lineOf(err)];
  }
  const problems = new Set<string>();
  await attempt(problems, () => checkSourceNames(file));
  await attempt(problems, () => readCredentials(file.path, file.credentials));
  for (const problem of toolsetProblems(file)) problems.add(problem);
  const none = { plugins: [], http: [], openapi: [], mcp: [], policy: [], guardrails: [], toolsets: undefined };
  for (const section of TOOL_SECTIONS) {
    for (const entry of file[section]) {
      await attempt(problems, async () => {
        const sources = await loadParsedSources({ ...file, ...none, [section]: [entry] }, { ...options, registry: new ToolRegistry() });
        await sources.close();
      });
    }
  }
  for (const problem of ruleProblems(file.path, file.policy)) problems.add(problem);
  for (const problem of guardProblems(file.path, file.guardrails)) problems.add(problem);
  return [...problems];
}
