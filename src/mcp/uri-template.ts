/**
 * Matching a URI against a resource template (RFC 6570, the forms resources use): `{var}` is one
 * path segment, `{+var}`, `{#var}` and `{var*}` anything; `{?a,b}` query parameters, optional.
 */

const EXPRESSION = /\{([+#?&/.;]?)([^}]+)\}/g;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A function that answers a URI's variables, or null when the URI does not match the template. */
export function templateMatcher(template: string): (uri: string) => Record<string, string> | null {
  const names: string[] = [];
  let query: string[] = [];
  let pattern = '';
  let last = 0;
  for (const match of template.matchAll(EXPRESSION)) {
    pattern += escape(template.slice(last, match.index));
    last = match.index + match[0].length;
    const operator = match[1]!;
    const variables = match[2]!.split(',').map((v) => v.replace(/\*$|:\d+$/, ''));
    if (operator === '?' || operator === '&') {
      query = variables;
      pattern += '(?:[?&].*)?';
      continue;
    }
    for (const [i, name] of variables.entries()) {
      names.push(name);
      const wide = operator === '+' || operator === '#' || match[2]!.includes('*');
      pattern += `${i > 0 ? ',' : escape(operator === '+' ? '' : operator)}(${wide ? '.*' : '[^/?#,]*'})`;
    }
  }
  const regex = new RegExp(`^${pattern}${escape(template.slice(last))}$`);
  return (uri) => {
    const found = regex.exec(uri);
    if (found === null) return null;
    const variables: Record<string, string> = {};
    names.forEach((name, i) => (variables[name] = decodeURIComponent(found[i + 1] ?? '')));
    if (query.length > 0) {
      const search = new URL(uri, 'x:/').searchParams;
      for (const name of query) {
        const value = search.get(name);
        if (value !== null) variables[name] = value;
      }
    }
    return variables;
  };
}
