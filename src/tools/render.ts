/** The text the model sees: the message, then the value's JSON, cut at MAX_CONTENT_CHARS with a notice. */

export function renderContent(message: string, valueJson: string | null, maxChars: number): string {
  const content = valueJson === null ? message : message === '' ? valueJson : `${message}\n\n${valueJson}`;
  return truncate(content, maxChars);
}

export function truncate(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  const notice = `\n…[content truncated: ${content.length} characters, cut to ${maxChars}]`;
  let keep = Math.max(0, maxChars - notice.length);
  const last = content.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep--; // never split a surrogate pair
  return content.slice(0, keep) + notice;
}
