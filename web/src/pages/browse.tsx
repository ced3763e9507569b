// What the library's browsing pages share (books, series, authors): the tabs between them, the
// library they are narrowed to, the A-Z jump, the pager with the total, and the filter box that folds
// away on a phone (a <details>; app.js opens it on a wider screen) so the first books show at once.
import type { ComponentChildren } from 'preact';

/** A library the caller may see, as /api/libraries lists it. */
export interface LibraryName {
  id: string;
  name: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A query value as text (the first when repeated), at most `max` characters. */
export const textOf = (v: unknown, max = 200): string => (typeof v === 'string' ? v.slice(0, max) : Array.isArray(v) && typeof v[0] === 'string' ? v[0].slice(0, max) : '');
/** The `library` of a page's query: a library id, or '' (every library). */
export const libraryParam = (v: unknown): string => {
  const t = textOf(v);
  return UUID.test(t) ? t.toLowerCase() : '';
};
/** The `letter` of a page's query: A to Z, #, or '' (every name). */
export const letterParam = (v: unknown): string => {
  const t = textOf(v);
  return /^[A-Za-z#]$/.test(t) ? t.toUpperCase() : '';
};
/** The `offset` of a page's query. */
export const offsetParam = (v: unknown): number => {
  const n = Number(textOf(v));
  return Number.isInteger(n) && n >= 0 && n <= 1_000_000 ? n : 0;
};

/** A page's address with these query values (empty ones left out). */
/** The values given (neither empty nor 0) as query text. */
export function queryOf<K extends string>(values: Record<K, string | number>): Partial<Record<K, string>> {
  const q: Partial<Record<K, string>> = {};
  for (const [k, v] of Object.entries(values) as [K, string | number][]) if (v !== '' && v !== 0) q[k] = String(v);
  return q;
}

export function hrefOf(path: string, values: Record<string, string | number>): string {
  const s = new URLSearchParams(queryOf(values) as Record<string, string>).toString();
  return s ? `${path}?${s}` : path;
}

const TABS = [
  { key: 'books', label: 'Books', path: '/library' },
  { key: 'series', label: 'Series', path: '/series' },
  { key: 'authors', label: 'Authors', path: '/authors' },
] as const;

/** Books, series and authors of the same library: the library's three ways in. */
export function BrowseTabs({ current, library }: { current: (typeof TABS)[number]['key']; library: string }) {
  return (
    <nav aria-label="Browse the library" class="browse-tabs">
      <ul class="browse-tabs-list">
        {TABS.map((t) => (
          <li key={t.key}>
            <a href={hrefOf(t.path, { library })} class="browse-tab" id={`tab-${t.key}`} aria-current={t.key === current ? 'page' : undefined}>
              {t.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** The library chooser of a filter form (none when the caller sees one library or none). */
export function LibrarySelect({ libraries, value }: { libraries: LibraryName[]; value: string }) {
  if (libraries.length < 2 && value === '') return null;
  return (
    <div>
      <label for="f-library">Library</label>
      <select id="f-library" name="library">
        <option value="">All libraries</option>
        {libraries.map((l) => (
          <option key={l.id} value={l.id} selected={l.id === value}>
            {l.name}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A labelled choice of a filter form (`f-<name>`); `any` adds an empty first option with that label. */
export function SelectField({
  name,
  label,
  options,
  value,
  any,
}: {
  name: string;
  label: string;
  options: readonly { value: string; label: string }[];
  value: string;
  any?: string;
}) {
  return (
    <div>
      <label for={`f-${name}`}>{label}</label>
      <select id={`f-${name}`} name={name}>
        {any !== undefined && <option value="">{any}</option>}
        {options.map((o) => (
          <option key={o.value} value={o.value} selected={value === o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A list's total, and what narrowed it (an initial letter, a search), read out when it changes. */
export function ListTotal({ id, total, noun, letter, q }: { id: string; total: number; noun: [string, string]; letter: string; q: string }) {
  return (
    <p id={id} class="muted" aria-live="polite">
      {countOf(total, noun)}
      {letter && ` beginning with ${letter === '#' ? 'another character' : letter}`}
      {q && ` matching “${q}”`}.
    </p>
  );
}

/** The heading of a list: its kind, and the library's name when narrowed to one. */
export function ListHeading({ kind, libraries, library }: { kind: string; libraries: LibraryName[]; library: string }) {
  const lib = libraries.find((l) => l.id === library);
  return (
    <>
      {lib && <p class="muted eyebrow">{kind}</p>}
      <h1 id="list-title">{lib ? lib.name : kind}</h1>
    </>
  );
}

const LETTERS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '#'];

/** Jump to the names beginning with a letter (`#`: any other beginning); `href(letter)` keeps the other choices. */
export function LetterJump({ current, href, label }: { current: string; href: (letter: string) => string; label: string }) {
  return (
    <nav aria-label={label} class="letters">
      <ul class="letters-list">
        <li>
          <a href={href('')} class="letter" aria-current={current === '' ? 'true' : undefined} id="letter-all">
            All
          </a>
        </li>
        {LETTERS.map((l) => (
          <li key={l}>
            <a
              href={href(l)}
              class="letter"
              aria-current={current === l ? 'true' : undefined}
              aria-label={l === '#' ? 'Other' : undefined}
              id={`letter-${l === '#' ? 'other' : l}`}
            >
              {l}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** Which page of the list this is, and links to the first, previous, next and last (the total is the page's own line). */
export function Pager({ total, offset, size, href }: { total: number; offset: number; size: number; href: (offset: number) => string }) {
  const pages = Math.max(1, Math.ceil(total / size));
  if (pages === 1) return null;
  const page = Math.min(pages, Math.floor(offset / size) + 1);
  const at = (n: number) => href((n - 1) * size);
  return (
    <nav aria-label="Pages" class="pager" id="pager">
      <span id="pager-status">
        Page {page} of {pages}
      </span>
      <ul class="pager-list">
        {page > 1 && (
          <>
            <li>
              <a href={at(1)} id="page-first">
                First page
              </a>
            </li>
            <li>
              <a href={at(page - 1)} id="page-previous" rel="prev">
                Previous page
              </a>
            </li>
          </>
        )}
        {page < pages && (
          <>
            <li>
              <a href={at(page + 1)} id="page-next" rel="next">
                Next page
              </a>
            </li>
            <li>
              <a href={at(pages)} id="page-last">
                Last page
              </a>
            </li>
          </>
        )}
      </ul>
    </nav>
  );
}

/** "418 books": a list's total, said once at its top. */
export const countOf = (n: number, noun: [string, string]) => `${n} ${n === 1 ? noun[0] : noun[1]}`;

/**
 * Filters that fold away on a phone: a <details> whose summary says how many are set; closed as
 * sent, opened by app.js on a screen wider than a phone's (and by a click or Enter on the summary).
 */
export function FilterBox({ active, children, label = 'Search and filters' }: { active: number; children: ComponentChildren; label?: string }) {
  return (
    <details class="filter-box" id="filter-box" data-open-wide>
      <summary id="filter-toggle">
        {label}
        {active > 0 && ` (${active} set)`}
      </summary>
      {children}
    </details>
  );
}
