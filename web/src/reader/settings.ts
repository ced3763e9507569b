// The reader's own settings, kept in the profile (GET/PUT /api/reader-settings and
// /api/media-items/<id>/reader-settings) with localStorage as the browser's copy (what the reader reads,
// and all it has offline): text size, font, line spacing, margins, alignment, hyphenation (for all
// books, or for one book when "Only this book" is on) and the theme. The page brings the profile's
// settings (data-settings); a change is written to the browser at once and sent to the profile; one
// not yet sent (offline, or the page left first) is sent on the next opening instead of taking the
// profile's. The theme follows the profile's unless the reader picks light, sepia, dark or black; it
// colours the reader's shell (the classes on <html>), the frame around the book and the book itself.
// The text settings win over the book's own CSS: they are given to foliate as the last style sheet
// of every section, with !important and selectors no book rule outranks (decision in docs).

import type { Answer } from './http';

const KEY = 'bindery.reader.';
export const setting = (k: string, fallback: string): string => localStorage.getItem(KEY + k) ?? fallback;
export const keep = (k: string, v: string | number): void => {
  localStorage.setItem(KEY + k, String(v));
  // the theme is one of the profile's settings (the picture viewer's choices are the browser's)
  if (k === 'theme') changed();
};

export type TextKey = 'font' | 'family' | 'spacing' | 'margins' | 'align' | 'hyphens';
/** The text settings, their defaults and the values a control may take. */
export const TEXT: Record<TextKey, { fallback: string; values?: string[] }> = {
  font: { fallback: '100' },
  family: { fallback: 'publisher', values: ['publisher', 'serif', 'sans', 'mono'] },
  spacing: { fallback: '1.5', values: ['publisher', '1.2', '1.5', '1.9'] },
  margins: { fallback: 'normal', values: ['narrow', 'normal', 'wide'] },
  align: { fallback: 'publisher', values: ['publisher', 'justify', 'start'] },
  hyphens: { fallback: 'publisher', values: ['publisher', 'auto', 'none'] },
};
export const SIZES = { min: 60, max: 250, step: 10 };

const TEXT_KEYS: TextKey[] = ['font', 'family', 'spacing', 'margins', 'align', 'hyphens'];

let book: string | null = null;
/** This book's own settings (an object), or null when it follows the settings for all books. */
const own = (): Record<string, unknown> | null => {
  if (!book) return null;
  try {
    const v: unknown = JSON.parse(localStorage.getItem(`${KEY}book.${book}`) ?? 'null');
    return v && typeof v === 'object' ? { ...v } : null;
  } catch {
    return null;
  }
};
/** Settings of this book are read from (and written to) its own record while it has one. */
export const forBook = (id: string): void => {
  book = id;
};
export const hasOwn = () => own() !== null;
/** Gives this book its own settings (a copy of those in force) or takes them away. */
export function setOwn(on: boolean): void {
  if (!book) return;
  if (!on) localStorage.removeItem(`${KEY}book.${book}`);
  else localStorage.setItem(`${KEY}book.${book}`, JSON.stringify(Object.fromEntries(TEXT_KEYS.map((k) => [k, text(k)]))));
  changed();
}
/** A text setting in force: this book's, else the one for all books; an unknown value is the default. */
export function text(k: TextKey): string {
  const d = TEXT[k];
  const v = String(own()?.[k] ?? setting(k, d.fallback));
  if (k === 'font') {
    const n = Number(v);
    return String(Number.isFinite(n) ? Math.min(SIZES.max, Math.max(SIZES.min, Math.round(n))) : 100);
  }
  return d.values?.includes(v) ? v : d.fallback;
}
export function keepText(k: TextKey, v: string | number): void {
  const o = own();
  if (o) localStorage.setItem(`${KEY}book.${book}`, JSON.stringify({ ...o, [k]: String(v) }));
  else localStorage.setItem(KEY + k, String(v));
  changed();
}

// The profile's names of the settings, and the browser's
const PROFILE: Record<TextKey, string> = { font: 'font_size', family: 'font_family', spacing: 'line_spacing', margins: 'margins', align: 'text_align', hyphens: 'hyphens' };
const UNSENT = `${KEY}unsent`;
/** the books whose own settings changed here and are not sent yet (a page left before its send) */
const UNSENT_BOOKS = `${KEY}unsent-books`;
const unsentBooks = (): string[] => {
  try {
    const v: unknown = JSON.parse(localStorage.getItem(UNSENT_BOOKS) ?? '[]');
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
};
/** a text setting for all books as kept in the browser (a wrong value is the default) */
function allBooks(k: TextKey): string | number | null {
  const d = TEXT[k];
  const v = localStorage.getItem(KEY + k);
  if (v === null) return null;
  if (k === 'font') return Number.isFinite(Number(v)) ? Math.min(SIZES.max, Math.max(SIZES.min, Math.round(Number(v)))) : null;
  return d.values?.includes(v) ? v : null;
}
const toProfile = (get: (k: TextKey) => unknown) => {
  const out: Record<string, string | number> = {};
  for (const k of TEXT_KEYS) {
    const p = PROFILE[k];
    const v = get(k);
    if (v !== null && v !== undefined) out[p] = k === 'font' ? Number(v) : String(v);
  }
  return out;
};
const fromProfile = (s: Record<string, unknown> | null | undefined): Partial<Record<TextKey, string>> =>
  Object.fromEntries(TEXT_KEYS.flatMap((k) => (s?.[PROFILE[k]] === undefined ? [] : [[k, String(s[PROFILE[k]])]])));

let send: (() => Promise<void>) | null = null;
let sending = 0;
/** A change of the settings: kept to be sent, and sent soon. */
function changed() {
  localStorage.setItem(UNSENT, '1');
  if (book && !unsentBooks().includes(book)) localStorage.setItem(UNSENT_BOOKS, JSON.stringify([...unsentBooks(), book]));
  if (!send) return;
  clearTimeout(sending);
  sending = setTimeout(() => void send?.(), 300);
}

/**
 * Follows the profile: `profile` is the page's `{all_books, this_book}` (null when it could not be
 * read: offline); `write(method, url, body)` sends. Changes made here are sent as they happen.
 */
/** The profile's reader settings as the reader page brings them (`data-settings`). */
export interface ProfileSettings {
  all_books?: { settings: Record<string, unknown> } | null;
  this_book?: { settings: Record<string, unknown> } | null;
}

export function followProfile(profile: ProfileSettings | null, write: (method: string, url: string, body?: unknown) => Promise<Answer>): void {
  const csrfWrite = write;
  // whether the profile holds this book's own settings (a DELETE is sent only then)
  let ownKept = Boolean(profile?.this_book);
  send = async () => {
    const mark = localStorage.getItem(UNSENT);
    if (!mark) return;
    localStorage.removeItem(UNSENT);
    const others = unsentBooks().filter((id) => id !== book);
    localStorage.removeItem(UNSENT_BOOKS);
    const all = toProfile(allBooks);
    const t = localStorage.getItem(`${KEY}theme`);
    if (t !== null && THEMES.includes(t)) all.theme = t;
    const writes: Promise<Answer>[] = [];
    if (Object.keys(all).length) writes.push(csrfWrite('PUT', '/api/reader-settings', all));
    if (book) {
      const o = own();
      const url = `/api/media-items/${encodeURIComponent(book)}/reader-settings`;
      if (o)
        writes.push(
          csrfWrite(
            'PUT',
            url,
            toProfile((k) => (o[k] === undefined ? null : text(k))),
          ),
        );
      else if (ownKept) writes.push(csrfWrite('DELETE', url));
      ownKept = Boolean(o);
    }
    // books left before their own change was sent: their record here
    for (const id of others) {
      const url = `/api/media-items/${encodeURIComponent(id)}/reader-settings`;
      let theirs: Record<string, unknown> | null = null;
      try {
        theirs = JSON.parse(localStorage.getItem(`${KEY}book.${id}`) ?? 'null');
      } catch {
        theirs = null;
      }
      if (theirs)
        writes.push(
          csrfWrite(
            'PUT',
            url,
            toProfile((k) => (theirs?.[k] === undefined ? null : theirs[k])),
          ),
        );
    }
    const sent = await Promise.all(writes);
    // not reached: sent on the next change or opening
    if (sent.some((r) => !r.ok)) {
      localStorage.setItem(UNSENT, '1');
      localStorage.setItem(UNSENT_BOOKS, JSON.stringify([...new Set([...unsentBooks(), ...others, ...(book ? [book] : [])])]));
    } else document.documentElement.dataset.settingsSent = String(Number(document.documentElement.dataset.settingsSent ?? '0') + 1);
  };
  addEventListener('online', () => void send?.());
  if (localStorage.getItem(UNSENT) || !profile) {
    // changes not yet sent win over the profile's (made later, here)
    void send?.();
    return;
  }
  if (profile.all_books) {
    const s = profile.all_books.settings;
    const local = fromProfile(s);
    for (const k of TEXT_KEYS) {
      const v = local[k];
      if (v === undefined) localStorage.removeItem(KEY + k);
      else localStorage.setItem(KEY + k, v);
    }
    if (typeof s.theme === 'string') localStorage.setItem(`${KEY}theme`, s.theme);
    else localStorage.removeItem(`${KEY}theme`);
  } else if (TEXT_KEYS.some((k) => localStorage.getItem(KEY + k) !== null)) {
    // settings this browser kept before the profile had any: they become the profile's
    localStorage.setItem(UNSENT, '1');
    void send?.();
  }
  if (book) {
    if (profile.this_book) localStorage.setItem(`${KEY}book.${book}`, JSON.stringify(fromProfile(profile.this_book.settings)));
    else if (!localStorage.getItem(UNSENT) && !unsentBooks().includes(book)) localStorage.removeItem(`${KEY}book.${book}`);
  }
}

const html = document.documentElement.classList;
const profileClass = [...html].find((c) => c.startsWith('theme-')) ?? 'theme-system';
const profileDark = () => profileClass === 'theme-dark' || (profileClass === 'theme-system' && matchMedia('(prefers-color-scheme: dark)').matches);

type Theme = 'light' | 'sepia' | 'dark' | 'black';
const COLOURS: Record<Theme, { fg: string; bg: string; link: string }> = {
  light: { fg: '#1a1a1a', bg: '#ffffff', link: '#1a56c4' },
  sepia: { fg: '#3b2f20', bg: '#f4ecd8', link: '#7a3a0c' },
  dark: { fg: '#e6e6e6', bg: '#1a1b26', link: '#8ab4f8' },
  black: { fg: '#d0d0d0', bg: '#000000', link: '#8ab4f8' },
};
const isTheme = (t: string): t is Theme => Object.hasOwn(COLOURS, t);
export const THEMES = ['profile', ...Object.keys(COLOURS)];
const FAMILIES: Record<string, string | undefined> = {
  serif: 'Georgia, "Iowan Old Style", "Palatino Linotype", "Times New Roman", serif',
  sans: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  mono: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
};
/** foliate's gap between columns (also the page's side margin) and its margin above and below */
const NORMAL_MARGINS: [string, string] = ['6%', '48px'];
const MARGINS: Record<string, [string, string] | undefined> = { narrow: ['2%', '24px'], normal: NORMAL_MARGINS, wide: ['12%', '72px'] };

/** The theme in use: the reader's choice, else the profile's light or dark. */
export function theme(): Theme {
  const t = setting('theme', 'profile');
  return isTheme(t) ? t : profileDark() ? 'dark' : 'light';
}
export const isDark = () => theme() === 'dark' || theme() === 'black';

/** Colours the shell: the profile's classes, or the reader's choice (sepia and black on top of light and dark). */
export function applyShell(): void {
  const t = setting('theme', 'profile');
  for (const c of [...html]) if (c.startsWith('theme-') || c === 'reader-sepia' || c === 'reader-black') html.remove(c);
  if (t === 'light' || t === 'sepia') html.add('theme-light');
  else if (t === 'dark' || t === 'black') html.add('theme-dark');
  else html.add(profileClass);
  if (t === 'sepia') html.add('reader-sepia');
  if (t === 'black') html.add('reader-black');
}

// Selectors that outrank a book's: `:root` adds a class's weight, and the sheet comes last
const BODY = ':root > body';
const BLOCKS = `${BODY} :is(p, li, dd, dt, blockquote, div, td, th, figcaption)`;

/** The styles foliate gives each section of the book, after the book's own. */
export function bookCss(): string {
  const t = theme();
  const c = COLOURS[t];
  const size = Number(text('font'));
  const spacing = text('spacing');
  const family = FAMILIES[text('family')];
  const align = text('align');
  const hyphens = text('hyphens');
  const dark = t === 'dark' || t === 'black';
  // the book's `body { font-size: medium }` (pandoc's) or `12pt` would hold the text at its size
  // whatever the root's: the body is set from the root, and the root from the reader's size
  return `:root { --theme-bg-color: ${c.bg}; color-scheme: ${dark ? 'dark' : 'light'}; color: ${c.fg} !important; background: ${c.bg} !important; font-size: ${size}% !important; }
${BODY} { color: ${c.fg} !important; background: none !important; font-size: 1rem !important; }
${BODY} a:any-link { color: ${c.link} !important; }
${dark ? `${BODY} :not(a, a *, mark, svg, svg *) { color: inherit !important; background-color: transparent !important; }` : ''}
${spacing === 'publisher' ? '' : `${BODY}, ${BLOCKS} { line-height: ${spacing} !important; }`}
${family ? `${BODY}, ${BODY} :not(code, pre, kbd, samp, tt, code *, pre *) { font-family: ${family} !important; }` : ''}
${align === 'publisher' ? '' : `${BODY}, ${BLOCKS} { text-align: ${align} !important; }`}
${hyphens === 'publisher' ? '' : `${BODY}, ${BLOCKS} { hyphens: ${hyphens} !important; -webkit-hyphens: ${hyphens} !important; }`}`;
}

/** foliate's gap and margin for the margins in force. */
export const margins = (): [string, string] => MARGINS[text('margins')] ?? NORMAL_MARGINS;

/**
 * Wires a <select> to a setting: shows the kept value and keeps a change, then calls `changed`.
 * `read`/`write` default to the settings for all books. Missing controls are skipped.
 */
export function bind<K extends string>(
  id: string,
  k: K,
  fallback: string,
  changed: () => void,
  read: (key: K) => string = (key) => setting(key, fallback),
  write: (key: K, value: string) => void = keep,
): () => void {
  const el = document.getElementById(id);
  if (!(el instanceof HTMLSelectElement)) return () => undefined;
  const show = () => {
    el.value = read(k);
    if (!el.value) el.value = fallback;
  };
  show();
  el.addEventListener('change', () => {
    write(k, el.value);
    changed();
  });
  return show;
}
