// The catalogs' messages formatted in the browser (the reader's script, decision "the reader's
// messages in the browser"): the part of ICU MessageFormat the catalogs use — `{name}`, `{n, number}`,
// `{n, plural, =0 {…} one {# …} other {…}}` and `{kind, select, note {…} other {…}}` — on the
// platform's Intl.PluralRules and Intl.NumberFormat, so the browser bundle does not carry
// @formatjs/intl (45 KB minified). The catalogs never quote with `'` (house rule: typographic
// apostrophes), so quoting is not read. web/test/i18n.unit.test.ts formats every message it is given
// both ways and holds this to @formatjs/intl's answers.

/** A placeholder's value. */
export type FormatValues = Record<string, string | number>;

type Part =
  | string
  | { kind: 'pound' }
  | { name: string; kind: 'text' }
  | { name: string; kind: 'number' }
  | { name: string; kind: 'plural' | 'select'; offset: number; options: Record<string, Part[]> };

/** Reads a message into parts; throws on what it does not know (the caller falls back). */
function parse(src: string): Part[] {
  let at = 0;
  const fail = (why: string): never => {
    throw new Error(`message not understood at ${at}: ${why}`);
  };
  const space = () => {
    while (at < src.length && /\s/.test(src.charAt(at))) at++;
  };
  const word = () => {
    space();
    const m = /^[^\s{},]+/.exec(src.slice(at));
    if (!m) return fail('a name was expected');
    at += m[0].length;
    space();
    return m[0];
  };
  const parts = (inPlural: boolean): Part[] => {
    const out: Part[] = [];
    let text = '';
    while (at < src.length) {
      const c = src.charAt(at);
      if (c === '}') break;
      if (c === '#' && inPlural) {
        if (text) out.push(text);
        text = '';
        out.push({ kind: 'pound' });
        at++;
        continue;
      }
      if (c !== '{') {
        text += c;
        at++;
        continue;
      }
      if (text) out.push(text);
      text = '';
      at++;
      out.push(argument(inPlural));
    }
    if (text) out.push(text);
    return out;
  };
  const argument = (inPlural: boolean): Part => {
    const name = word();
    if (src.charAt(at) === '}') {
      at++;
      return { name, kind: 'text' };
    }
    if (src.charAt(at) !== ',') return fail('a comma was expected');
    at++;
    const kind = word();
    if (kind === 'number' && src.charAt(at) === '}') {
      at++;
      return { name, kind: 'number' };
    }
    if (kind !== 'plural' && kind !== 'select') return fail(`unknown kind ${kind}`);
    if (src.charAt(at) !== ',') return fail('a comma was expected');
    at++;
    let offset = 0;
    const options: Record<string, Part[]> = {};
    for (;;) {
      const key = word();
      if (key.startsWith('offset:')) {
        offset = Number(key.slice(7));
        continue;
      }
      if (src.charAt(at) !== '{') return fail('an option’s message was expected');
      at++;
      options[key] = parts(inPlural || kind === 'plural');
      if (src.charAt(at) !== '}') return fail('an option was not closed');
      at++;
      space();
      if (src.charAt(at) === '}') {
        at++;
        break;
      }
    }
    if (!options.other) return fail('no other option');
    return { name, kind, offset, options };
  };
  const all = parts(false);
  if (at !== src.length) fail('a stray closing brace');
  return all;
}

/** Formats messages of one locale; a message it cannot read comes back as written. */
export function formatter(locale: string): (message: string, values?: FormatValues) => string {
  // made on first use: a page whose first words have no number does not wait for Intl's data
  let numberFormat: Intl.NumberFormat | null = null;
  let pluralRules: Intl.PluralRules | null = null;
  const numbers = {
    format: (n: number) => {
      numberFormat ??= new Intl.NumberFormat(locale);
      return numberFormat.format(n);
    },
  };
  const plurals = {
    select: (n: number) => {
      pluralRules ??= new Intl.PluralRules(locale);
      return pluralRules.select(n);
    },
  };
  const parsed = new Map<string, Part[] | null>();
  const num = (v: unknown) => (typeof v === 'number' ? numbers.format(v) : String(v ?? ''));
  const render = (parts: Part[], values: FormatValues, pound: number | null): string =>
    parts
      .map((p) => {
        if (typeof p === 'string') return p;
        if (p.kind === 'pound') return pound === null ? '#' : numbers.format(pound);
        const v = values[p.name];
        if (p.kind === 'text') return typeof v === 'number' ? numbers.format(v) : String(v ?? `{${p.name}}`);
        if (p.kind === 'number') return num(v);
        if (p.kind === 'select') return render(p.options[String(v)] ?? p.options.other ?? [], values, pound);
        const n = Number(v);
        const exact = p.options[`=${n}`];
        if (exact) return render(exact, values, n - p.offset);
        const branch = p.options[plurals.select(n - p.offset)] ?? p.options.other ?? [];
        return render(branch, values, n - p.offset);
      })
      .join('');
  return (message, values = {}) => {
    let parts = parsed.get(message);
    if (parts === undefined) {
      try {
        parts = parse(message);
      } catch {
        parts = null;
      }
      parsed.set(message, parts);
    }
    return parts ? render(parts, values, null) : message;
  };
}
