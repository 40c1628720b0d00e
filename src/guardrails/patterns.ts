/**
 * The built-in patterns of `guardrails:` (docs/guardrails.md). Each is a global regular expression
 * and, where the shape alone says too little, a check of the match (a card number's Luhn digit).
 */

export interface Pattern {
  readonly regex: RegExp;
  /** Whether a match really is one (absent: every match is). */
  readonly accept?: (match: string) => boolean;
}

/** The Luhn check digit of a card number (spaces and dashes ignored). */
export function luhnValid(text: string): boolean {
  const digits = text.replace(/[ -]/g, '');
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616: the country code and check digits moved to the end, letters as numbers, mod 97 = 1. */
function ibanValid(text: string): boolean {
  const compact = text.replace(/ /g, '').toUpperCase();
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const char of moved) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : char;
    for (const digit of value) rest = (rest * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

export const BUILTIN_PATTERNS: Readonly<Record<string, Pattern>> = Object.freeze({
  email: { regex: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  credit_card: { regex: /\b\d(?:[ -]?\d){12,18}\b/g, accept: luhnValid },
  iban: { regex: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g, accept: ibanValid },
  phone: { regex: /(?<![\w+])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?(?:[ .-]?\d{2,4}){2,3}\b/g },
  jwt: { regex: /\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g },
  private_key: { regex: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z]+ )?PRIVATE KEY-----/g },
  aws_key: { regex: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g },
});

/** Whether `text` holds a match of `pattern`. */
export function matches(pattern: Pattern, text: string): boolean {
  pattern.regex.lastIndex = 0;
  if (pattern.accept === undefined) return pattern.regex.test(text);
  for (const match of text.matchAll(pattern.regex)) if (pattern.accept(match[0])) return true;
  return false;
}

/** `text` with every match of `pattern` replaced by `replacement`. */
export function replaceMatches(pattern: Pattern, text: string, replacement: string): string {
  const accept = pattern.accept;
  return text.replace(pattern.regex, (match) => (accept === undefined || accept(match) ? replacement : match));
}
