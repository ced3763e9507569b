// The reader page: its own full-height shell (a toolbar and the book), the book's data in data
// attributes for the reader script (reader.<hash>.js, loaded on this page only, by the response's
// nonce), and its own CSP (readerCsp in http.ts: foliate-js shows a book's sections in frames from
// blob: URLs, which inherit it).
import type { Assets } from '../assets';
import type { Viewer } from '../layout';
import { schemeOf } from '../theme';
import type { Item } from './books';

/** Formats foliate-js lays out as text, in the order one is chosen; then those read as page pictures. */
export const REFLOWABLE = ['epub', 'kepub', 'azw3', 'mobi', 'azw', 'fb2', 'fbz'];
export const PICTURES = ['cbz', 'cbr', 'pdf'];

export interface ReadPosition {
  percentage: number | null;
  epubcfi?: string | null;
  page?: number | null;
  page_count?: number | null;
}

export function readableFormat(item: Item): { kind: 'text' | 'pages'; format: Item['formats'][number] } | null {
  for (const f of REFLOWABLE) {
    const hit = item.formats.find((x) => x.format.toLowerCase() === f);
    if (hit) return { kind: 'text', format: hit };
  }
  for (const f of PICTURES) {
    const hit = item.formats.find((x) => x.format.toLowerCase() === f);
    if (hit) return { kind: 'pages', format: hit };
  }
  return null;
}

type Options = readonly (readonly [string, string])[];
const FONTS: Options = [
  ['publisher', "The book's own"],
  ['serif', 'Serif'],
  ['sans', 'Sans-serif'],
  ['mono', 'Monospace'],
];
const SPACINGS: Options = [
  ['publisher', "The book's own"],
  ['1.2', 'Tight'],
  ['1.5', 'Normal'],
  ['1.9', 'Loose'],
];
const MARGINS: Options = [
  ['narrow', 'Narrow'],
  ['normal', 'Normal'],
  ['wide', 'Wide'],
];
const ALIGNS: Options = [
  ['publisher', "The book's own"],
  ['justify', 'Justified'],
  ['start', 'Ragged'],
];
const HYPHENS: Options = [
  ['publisher', "The book's own"],
  ['auto', 'On'],
  ['none', 'Off'],
];
const THEMES: Options = [
  ['profile', 'As my profile'],
  ['light', 'Light'],
  ['sepia', 'Sepia'],
  ['dark', 'Dark'],
  ['black', 'Black'],
];
const FITS: Options = [
  ['screen', 'Fit screen'],
  ['width', 'Fit width'],
  ['height', 'Fit height'],
  ['original', 'Original size'],
];

/** A labelled <select> of the reader's settings (the script shows the kept value). */
function Choice(p: { id: string; label: string; options: Options }) {
  return (
    <>
      <label for={p.id}>{p.label}</label>
      <select id={p.id}>
        {p.options.map(([value, label]) => (
          <option value={value}>{label}</option>
        ))}
      </select>
    </>
  );
}

/** The reader's theme: the profile's by default, or light, sepia, dark or black for the reader alone (kept in the browser). */
const ThemeChoice = () => <Choice id="reader-theme" label="Theme" options={THEMES} />;

/** What can be done with text selected in the book: highlight it (in a colour) or write a note on it. */
function Selection() {
  return (
    <div id="selection" class="reader-selection" hidden>
      <div role="toolbar" aria-label="Selected text" class="reader-selection-tools">
        {COLOURS.map(([name, label]) => (
          <button type="button" class={`swatch swatch-${name}`} data-colour={name} aria-label={`Highlight in ${label}`}>
            {label}
          </button>
        ))}
        <button type="button" id="selection-note">
          Note…
        </button>
      </div>
      <form id="note-form" class="reader-note-form" hidden>
        <label for="note-text">Note on the selected text</label>
        <textarea id="note-text" rows={3} maxlength={100000} required />
        <div class="reader-note-actions">
          <button type="submit">Save note</button>
          <button type="button" id="note-cancel">
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}

/** Highlight colours offered (KOReader's palette names; the reading service stores their hex). */
export const COLOURS = [
  ['yellow', 'Yellow'],
  ['green', 'Green'],
  ['blue', 'Blue'],
  ['red', 'Red'],
  ['purple', 'Purple'],
] as const;

/** The caller's reader settings from the profile (GET /api/media-items/<id>/reader-settings), or null when unread. */
export type ReaderSettings = { all_books: unknown; this_book: unknown } | null;

export function Reader(p: { assets: Assets; reader: string; nonce: string; viewer: Viewer; item: Item; progress: ReadPosition | null; settings?: ReaderSettings }) {
  const chosen = readableFormat(p.item);
  const position = p.progress ? { percentage: p.progress.percentage, epubcfi: p.progress.epubcfi ?? null, page: p.progress.page ?? null } : null;
  return (
    <html lang="en" class={`theme-${schemeOf(p.viewer.theme)} reader-page`}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1,viewport-fit=cover" />
        <title>{`${p.item.title} · Reading · Bindery`}</title>
        <link rel="icon" href="data:," />
        {p.viewer.csrf && <meta name="csrf-token" content={p.viewer.csrf} />}
        <link rel="stylesheet" href={p.assets.css} />
        {chosen && <script type="module" src={p.reader} nonce={p.nonce} />}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to the book
        </a>
        <header class="reader-bar">
          <a id="back" href={`/books/${encodeURIComponent(p.item.id)}`}>
            ← Book
          </a>
          <h1 id="reader-title">{p.item.title}</h1>
          <p id="reader-position" class="muted" aria-live="polite" />
          {chosen?.kind === 'text' && (
            <>
              <details id="toc" class="reader-menu">
                <summary>Contents</summary>
                <nav aria-label="Table of contents" id="toc-list" />
              </details>
              <details id="search-menu" class="reader-menu">
                <summary>Search</summary>
                <div class="reader-search">
                  <form id="search-form">
                    <label for="search-q">Search in the book</label>
                    <input type="search" id="search-q" name="q" maxlength={200} autocomplete="off" />
                    <button type="submit">Search</button>
                  </form>
                  <p id="search-status" class="muted" role="status" />
                  <ol id="search-results" aria-label="Search results" />
                </div>
              </details>
              <details id="notes-menu" class="reader-menu">
                <summary>Notes</summary>
                <div class="reader-notes">
                  <p id="notes-status" class="muted" role="status" />
                  <ul id="notes-list" aria-label="Highlights and notes" />
                </div>
              </details>
              <details id="settings" class="reader-menu">
                <summary>Text</summary>
                <div class="reader-settings reader-grid">
                  <span id="size-label">Size</span>
                  <div class="reader-size">
                    <button type="button" id="font-smaller" aria-label="A− smaller text">
                      A−
                    </button>
                    <output id="font-size" aria-live="polite">
                      100 %
                    </output>
                    <button type="button" id="font-larger" aria-label="A+ larger text">
                      A+
                    </button>
                  </div>
                  <Choice id="font-family" label="Font" options={FONTS} />
                  <Choice id="line-spacing" label="Line spacing" options={SPACINGS} />
                  <Choice id="margins" label="Margins" options={MARGINS} />
                  <Choice id="text-align" label="Alignment" options={ALIGNS} />
                  <Choice id="hyphens" label="Hyphenation" options={HYPHENS} />
                  <label class="inline reader-check">
                    <input type="checkbox" id="only-this-book" /> Only this book
                  </label>
                  <ThemeChoice />
                </div>
              </details>
            </>
          )}
          {chosen?.kind === 'pages' && (
            <div class="reader-settings">
              <Choice id="fit" label="Size" options={FITS} />
              <label class="inline">
                <input type="checkbox" id="vertical" /> Scroll down (webtoon)
              </label>
              <label class="inline">
                <input type="checkbox" id="rtl" /> Right to left
              </label>
              <label class="inline">
                <input type="checkbox" id="spread" /> Two pages
              </label>
              <ThemeChoice />
            </div>
          )}
        </header>
        <main id="main" tabindex={-1} class="reader-main">
          <div id="reader-error" class="alert alert-error" role="alert" hidden={!!chosen}>
            {chosen ? '' : 'This book has no file the web reader can open (EPUB, MOBI, AZW3, FB2, CBZ, CBR or PDF).'}
          </div>
          {chosen && (
            <div
              id="reader"
              class="reader"
              data-item={p.item.id}
              data-kind={chosen.kind}
              data-format={chosen.format.format.toLowerCase()}
              data-file={chosen.format.file_url}
              data-name={chosen.format.file_path.split('/').pop()}
              data-page-count={p.item.page_count ?? undefined}
              data-progress={JSON.stringify(position)}
              data-settings={JSON.stringify(p.settings ?? null)}
              data-rendered-at={new Date().toISOString()}
              data-sha256={chosen.format.sha256 ?? undefined}
            >
              <button type="button" id="prev" class="turn" aria-label="Previous page">
                ‹
              </button>
              {chosen.kind === 'text' ? <div id="book-view" class="book-view" /> : <section id="pages" class="pages" tabindex={0} aria-label="Pages" />}
              <button type="button" id="next" class="turn" aria-label="Next page">
                ›
              </button>
            </div>
          )}
          {chosen && (
            <div id="offer" class="reader-offer" hidden>
              <p id="offer-text" />
              <button type="button" id="offer-go">
                Go there
              </button>
              <button type="button" id="offer-dismiss">
                Stay here
              </button>
            </div>
          )}
          {chosen?.kind === 'pages' && (
            <div id="page-bar" class="reader-foot">
              <label for="page-slider">Page</label>
              <input type="range" id="page-slider" min={1} max={Math.max(1, p.item.page_count ?? 1)} value={1} step={1} />
              <figure id="thumb" class="reader-thumb" hidden>
                <img id="thumb-image" alt="" />
                <figcaption id="thumb-caption" />
              </figure>
            </div>
          )}
          {chosen?.kind === 'text' && <Selection />}
          {chosen && <p id="reader-status" class="reader-toast" role="status" />}
        </main>
      </body>
    </html>
  );
}
