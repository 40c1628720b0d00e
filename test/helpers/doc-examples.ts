/**
 * The `curl` examples of the documentation, read from the markdown: each command of a ```sh block,
 * the answer documented after it (`# → …` lines, or a ```json block right after a block of one
 * command), turned into a request and a pattern. `…` in a documented answer stands for anything.
 *
 * Markers (HTML comments, invisible when rendered):
 *   <!-- doc-test: skip (reason) -->   on the line before a ```sh block: its commands are not run
 *   <!-- doc-test: env NAME=value … --> anywhere in a file: the app for that file's examples gets these variables
 */

export interface DocExample {
  file: string;
  line: number;
  command: string;
  /** The documented answer as written, `null` when none is shown (then any 2xx will do). */
  expected: string | null;
}

export interface DocFile {
  file: string;
  env: Record<string, string>;
  examples: DocExample[];
}

export interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  includeHeaders: boolean;
}

const SKIP = /<!--\s*doc-test:\s*skip\b/;
const ENV = /<!--\s*doc-test:\s*env\s+([^>]*?)\s*-->/g;

/** Whether quotes are balanced and the text does not end in a line continuation. */
function complete(text: string): boolean {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quote === "'") {
      if (char === "'") quote = null;
    } else if (quote === '"') {
      if (char === '\\') i++;
      else if (char === '"') quote = null;
    } else if (char === '\\') i++;
    else if (char === "'" || char === '"') quote = char;
  }
  return quote === null && !/\\\s*$/.test(text);
}

function expectedFrom(lines: string[]): string {
  return lines.map((line) => line.replace(/^#\s*(→\s*)?/, '').trim()).join('');
}

export function parseDocFile(file: string, markdown: string): DocFile {
  const env: Record<string, string> = {};
  for (const match of markdown.matchAll(ENV)) {
    for (const pair of match[1]!.split(/\s+/)) {
      const at = pair.indexOf('=');
      if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  const lines = markdown.split('\n');
  const examples: DocExample[] = [];
  let i = 0;
  while (i < lines.length) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i]!)) {
      i++;
      continue;
    }
    const skipped = SKIP.test(lines[i - 1] ?? '') || SKIP.test(lines[i - 2] ?? '');
    const blockExamples: DocExample[] = [];
    let j = i + 1;
    while (j < lines.length && !/^```\s*$/.test(lines[j]!)) {
      if (!/^curl\s/.test(lines[j]!)) {
        j++;
        continue;
      }
      const start = j;
      let command = lines[j]!;
      while (!complete(command) && j + 1 < lines.length) command += `\n${lines[++j]!}`;
      j++;
      const answer: string[] = [];
      if (j < lines.length && /^#\s*→/.test(lines[j]!)) {
        answer.push(lines[j++]!);
        while (j < lines.length && /^#\s{2,}\S/.test(lines[j]!)) answer.push(lines[j++]!);
      }
      blockExamples.push({ file, line: start + 1, command, expected: answer.length > 0 ? expectedFrom(answer) : null });
    }
    // A block of one command without `# →`, followed by a ```json block: that block is the answer.
    let next = j + 1;
    while (next < lines.length && lines[next]!.trim() === '') next++;
    if (blockExamples.length === 1 && blockExamples[0]!.expected === null && /^```json\s*$/.test(lines[next] ?? '')) {
      const json: string[] = [];
      let k = next + 1;
      while (k < lines.length && !/^```\s*$/.test(lines[k]!)) json.push(lines[k++]!.trim());
      blockExamples[0]!.expected = json.join('');
    }
    if (!skipped) examples.push(...blockExamples);
    i = j + 1;
  }
  return { file, env, examples };
}

/** Shell words of a command line: single and double quotes, backslash escapes and line continuations. */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let i = 0;
  const push = (text: string) => {
    word = (word ?? '') + text;
  };
  while (i < command.length) {
    const char = command[i]!;
    if (char === "'") {
      const end = command.indexOf("'", i + 1);
      push(command.slice(i + 1, end));
      i = end + 1;
    } else if (char === '"') {
      i++;
      let text = '';
      while (command[i] !== '"') {
        if (command[i] === '\\' && /["\\$`]/.test(command[i + 1] ?? '')) i++;
        text += command[i++];
      }
      push(text);
      i++;
    } else if (char === '\\') {
      if (command[i + 1] !== '\n') push(command[i + 1]!);
      i += 2;
    } else if (/\s/.test(char)) {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else {
      push(char);
      i++;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** The request a documented `curl` command makes, sent to `base` instead of the host it names. */
export function curlRequest(command: string, base: string): CurlRequest {
  const words = shellWords(command).slice(1);
  const request: CurlRequest = { method: '', url: '', headers: {}, body: undefined, includeHeaders: false };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-H' || word === '--header') {
      const header = words[++i]!;
      const at = header.indexOf(':');
      request.headers[header.slice(0, at).trim().toLowerCase()] = header.slice(at + 1).trim();
    } else if (word === '-d' || word === '--data' || word === '--data-raw' || word === '--json') {
      request.body = words[++i]!;
      if (word === '--json') request.headers['content-type'] ??= 'application/json';
    } else if (word === '-X' || word === '--request') request.method = words[++i]!;
    else if (/^-[a-zA-Z]+$/.test(word)) request.includeHeaders ||= word.includes('i');
    else if (word === '--include') request.includeHeaders = true;
    else if (word.startsWith('-')) throw new Error(`curl option ${word} is not understood by the docs test`);
    else request.url = `${base}${word.replace(/^(https?:\/\/)?[^/]+/, '')}`;
  }
  request.method ||= request.body === undefined ? 'GET' : 'POST';
  return request;
}

/** The answer as curl prints it: the body, after the status line and headers with -i. */
export async function curlOutput(request: CurlRequest): Promise<{ status: number; text: string }> {
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined && { body: request.body }),
  });
  const body = await response.text();
  if (!request.includeHeaders) return { status: response.status, text: body };
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  return { status: response.status, text: `HTTP/1.1 ${response.status} ${response.statusText}\n${headers}\n\n${body}` };
}

/** Whether the output holds the documented answer, `…` matching anything (whitespace between tokens ignored). */
export function matchesDocumented(expected: string, actual: string): boolean {
  const pattern = expected
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  return new RegExp(pattern).test(actual);
}
