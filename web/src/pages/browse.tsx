// What the library's browsing pages share (books, series, authors): the tabs between them, the
// library they are narrowed to, the A-Z jump, the pager with the total, and the filter box that folds
// away on a phone (a <details>; app.js opens it on a wider screen) so the first books show at once.
import type { ComponentChildren } from 'preact';
import { type I18n, type MessageKey, useI18n } from '../i18n';

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
  { key: 'books', label: 'browse.books', path: '/library' },
  { key: 'series', label: 'browse.series', path: '/series' },
  { key: 'authors', label: 'browse.authors', path: '/authors' },
] as const satisfies readonly { key: string; label: MessageKey; path: string }[];

/** Books, series and authors of the same library: the library's three ways in. */
export function BrowseTabs({ current, library }: { current: (typeof TABS)[number]['key']; library: string }) {
  const { t } = useI18n();
  return (
    <nav aria-label={t('browse.tabs')} class="browse-tabs">
      <ul class="browse-tabs-list">
        {TABS.map((tab) => (
          <li key={tab.key}>
            <a href={hrefOf(tab.path, { library })} class="browse-tab" id={`tab-${tab.key}`} aria-current={tab.key === current ? 'page' : undefined}>
              {t(tab.label)}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** The library chooser of a filter form (none when the caller sees one library or none). */
export function LibrarySelect({ libraries, value }: { libraries: LibraryName[]; value: string }) {
  const { t } = useI18n();
  if (libraries.length < 2 && value === '') return null;
  return (
    <div>
      <label for="f-library">{t('browse.library')}</label>
      <select id="f-library" name="library">
        <option value="">{t('browse.allLibraries')}</option>
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
export function ListTotal({ id, total, noun, letter, q }: { id: string; total: number; noun: CountKey; letter: string; q: string }) {
  const { t } = useI18n();
  return (
    <p id={id} class="muted" aria-live="polite">
      {t('browse.total', {
        total: t(noun, { count: total }),
        hasLetter: letter ? 'yes' : 'no',
        letter: letter === '#' ? t('browse.anotherCharacter') : letter,
        hasQuery: q ? 'yes' : 'no',
        q,
      })}
    </p>
  );
}

/** The heading of a list: its kind, and the library's name when narrowed to one. */
export function ListHeading({ kind, libraries, library }: { kind: MessageKey; libraries: LibraryName[]; library: string }) {
  const { t } = useI18n();
  const lib = libraries.find((l) => l.id === library);
  return (
    <>
      {lib && <p class="muted eyebrow">{t(kind)}</p>}
      <h1 id="list-title">{lib ? lib.name : t(kind)}</h1>
    </>
  );
}

const LETTERS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '#'];

/** Jump to the names beginning with a letter (`#`: any other beginning); `href(letter)` keeps the other choices. */
export function LetterJump({ current, href, label }: { current: string; href: (letter: string) => string; label: string }) {
  const { t } = useI18n();
  return (
    <nav aria-label={label} class="letters">
      <ul class="letters-list">
        <li>
          <a href={href('')} class="letter" aria-current={current === '' ? 'true' : undefined} id="letter-all">
            {t('browse.all')}
          </a>
        </li>
        {LETTERS.map((l) => (
          <li key={l}>
            <a
              href={href(l)}
              class="letter"
              aria-current={current === l ? 'true' : undefined}
              aria-label={l === '#' ? t('browse.other') : undefined}
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
  const { t } = useI18n();
  const pages = Math.max(1, Math.ceil(total / size));
  if (pages === 1) return null;
  const page = Math.min(pages, Math.floor(offset / size) + 1);
  const at = (n: number) => href((n - 1) * size);
  return (
    <nav aria-label={t('browse.pages')} class="pager" id="pager">
      <span id="pager-status">{t('browse.pageOf', { page, pages })}</span>
      <ul class="pager-list">
        {page > 1 && (
          <>
            <li>
              <a href={at(1)} id="page-first">
                {t('browse.firstPage')}
              </a>
            </li>
            <li>
              <a href={at(page - 1)} id="page-previous" rel="prev">
                {t('browse.previousPage')}
              </a>
            </li>
          </>
        )}
        {page < pages && (
          <>
            <li>
              <a href={at(page + 1)} id="page-next" rel="next">
                {t('browse.nextPage')}
              </a>
            </li>
            <li>
              <a href={at(pages)} id="page-last">
                {t('browse.lastPage')}
              </a>
            </li>
          </>
        )}
      </ul>
    </nav>
  );
}

/** The plural messages of a count: "418 books", "1 series", "2 authors". */
export type CountKey = 'count.books' | 'count.series' | 'count.authors';
/** "418 books": a list's total, said once at its top, in the page's language. */
export const countOf = (i18n: Pick<I18n, 't'>, n: number, noun: CountKey) => i18n.t(noun, { count: n });

/**
 * Filters that fold away on a phone: a <details> whose summary says how many are set; closed as
 * sent, opened by app.js on a screen wider than a phone's (and by a click or Enter on the summary).
 */
export function FilterBox({ active, children, label }: { active: number; children: ComponentChildren; label?: string }) {
  const { t } = useI18n();
  const shown = label ?? t('browse.searchAndFilters');
  return (
    <details class="filter-box" id="filter-box" data-open-wide>
      <summary id="filter-toggle">{active > 0 ? t('browse.filtersSet', { label: shown, active }) : shown}</summary>
      {children}
    </details>
  );
}
