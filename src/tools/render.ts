/** The text the model sees: the message, then the value's JSON, cut at MAX_CONTENT_CHARS with a notice. */
import type { Attachment } from './types.ts';
import type { ResultRef } from '../store/results.ts';

/**
 * The text a result's `content` is made of, before any cut: carried as data through the pipeline
 * and rendered once where the answer is formatted (formats/answer.ts), where MAX_CONTENT_CHARS is known.
 */
export interface ResultText {
  /** The message, with a line naming each attachment. */
  readonly message: string;
  /** The value's JSON when the model sees it; null leaves the value out. */
  readonly valueJson: string | null;
  /** The tool's own `max_content_chars`; null: the service's MAX_CONTENT_CHARS. */
  readonly limit: number | null;
}

/** A result's content: its text cut at the tool's own limit, else at `maxChars` (MAX_CONTENT_CHARS). */
export function contentOf(text: ResultText, maxChars: number, kept: ResultRef | null): string {
  return renderContent(text.message, text.valueJson, text.limit ?? maxChars, kept);
}

/** The whole content when rendering will cut it (so a caller may keep it), else null; the cheap test first. */
export function wholeIfCut(text: ResultText, maxChars: number): string | null {
  const limit = text.limit ?? maxChars;
  if (text.message.length + (text.valueJson?.length ?? 0) + 2 <= limit) return null;
  const whole = joinContent(text.message, text.valueJson);
  return whole.length > limit ? whole : null;
}

/** The whole content, uncut. */
export function joinContent(message: string, valueJson: string | null): string {
  return valueJson === null ? message : message === '' ? valueJson : `${message}\n\n${valueJson}`;
}

/** The content cut to `maxChars`; the notice names the kept whole when there is one (docs/large-results.md). */
export function renderContent(message: string, valueJson: string | null, maxChars: number, kept: ResultRef | null = null): string {
  return truncate(joinContent(message, valueJson), maxChars, kept);
}

export function truncate(content: string, maxChars: number, kept: ResultRef | null = null): string {
  if (content.length <= maxChars) return content;
  const whole = kept === null ? '' : `; the whole result is ${kept.uri}: read it with the result_read tool`;
  const notice = `\n…[content truncated: ${content.length} characters, cut to ${maxChars}${whole}]`;
  let keep = Math.max(0, maxChars - notice.length);
  const last = content.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep--; // never split a surrogate pair
  return content.slice(0, keep) + notice;
}

/** The message with a line naming each attachment, for formats that carry only text. */
export function withAttachmentsNamed(message: string, attachments: readonly Attachment[]): string {
  const names = attachments.map(nameOf);
  return `${message}${message === '' ? '' : '\n'}${names.map((n) => `[attached: ${n}]`).join('\n')}`;
}

function nameOf(block: Attachment): string {
  const resource = block.resource as Record<string, unknown> | undefined;
  const uri = typeof block.uri === 'string' ? block.uri : typeof resource?.uri === 'string' ? resource.uri : null;
  const mime = typeof block.mimeType === 'string' ? block.mimeType : typeof resource?.mimeType === 'string' ? resource.mimeType : null;
  const parts = [block.type.slice(0, 40), mime?.slice(0, 100), uri?.slice(0, 500)].filter((p) => p !== null && p !== undefined);
  return parts.join(' ');
}
