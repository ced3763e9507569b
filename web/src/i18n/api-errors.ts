// The API's error messages shown to a person in their language (issue 48, "message_localized").
// The API keeps its English words exactly as the interface names them (clients match on them);
// where a page shows one, it shows the catalog's translation instead. The `errors` area's English
// messages are the API's own words, word for word, with `{name}` where the API puts a number
// ("Account locked. Try again in {minutes} minutes"), so the map from the API's message to its key
// is read from the English catalog itself. A message the map does not know is shown as the API
// worded it. Browser-safe: the reader's script uses it too (it imports no catalog but English's).
import english from './messages/en/errors.json';

export type ErrorKey = keyof typeof english;
export type ErrorValues = Record<string, string | number>;

interface Pattern {
  key: ErrorKey;
  names: string[];
  re: RegExp;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const PATTERNS: Pattern[] = (Object.entries(english) as [ErrorKey, string][]).map(([key, message]) => {
  const names = [...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
  const re = new RegExp(`^${escapeRegExp(message).replace(/\\\{\w+\\\}/g, '(.+?)')}$`);
  return { key, names, re };
});

/** The catalog key of an API message and the values of its placeholders, or null when it is not one the map knows. */
export function errorKeyOf(message: string): { key: ErrorKey; values: ErrorValues } | null {
  if (message.length > 2000) return null;
  for (const p of PATTERNS) {
    const m = p.re.exec(message);
    if (!m) continue;
    const values: ErrorValues = {};
    p.names.forEach((name, i) => {
      const v = m[i + 1] ?? '';
      values[name] = /^\d+$/.test(v) ? Number(v) : v;
    });
    return { key: p.key, values };
  }
  return null;
}

/** An API message in the page's language: `format` is the page's translator; unknown messages stay as the API said them. */
export function localizeError(message: string, format: (key: ErrorKey, values: ErrorValues) => string): string {
  const hit = errorKeyOf(message);
  return hit ? format(hit.key, hit.values) : message;
}
