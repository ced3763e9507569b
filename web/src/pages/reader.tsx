// The reader page: its own full-height shell (a toolbar and the book), the book's data in data
// attributes for the reader script (reader.<hash>.js, loaded on this page only), and its own CSP
// (READER_CSP in http.ts: foliate-js shows a book's sections in frames from blob: URLs).
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

/** The reader's theme: the profile's by default, or light, sepia or dark for the reader alone (kept in the browser). */
function ThemeChoice() {
  return (
    <>
      <label for="reader-theme">Theme</label>
      <select id="reader-theme">
        <option value="profile">As my profile</option>
        <option value="light">Light</option>
        <option value="sepia">Sepia</option>
        <option value="dark">Dark</option>
      </select>
    </>
  );
}

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

export function Reader(p: { assets: Assets; reader: string; viewer: Viewer; item: Item; progress: ReadPosition | null }) {
  const chosen = readableFormat(p.item);
  const position = p.progress ? { percentage: p.progress.percentage, epubcfi: p.progress.epubcfi ?? null, page: p.progress.page ?? null } : null;
  return (
    <html lang="en" class={`theme-${schemeOf(p.viewer.theme)} reader-page`}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>{`${p.item.title} · Reading · Bindery`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={p.assets.css} />
        {chosen && <script type="module" src={p.reader} />}
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
                <div class="reader-settings">
                  <button type="button" id="font-smaller" aria-label="A− smaller text">
                    A−
                  </button>
                  <button type="button" id="font-larger" aria-label="A+ larger text">
                    A+
                  </button>
                  <label for="font-family">Font</label>
                  <select id="font-family">
                    <option value="publisher">The book's own</option>
                    <option value="serif">Serif</option>
                    <option value="sans">Sans-serif</option>
                  </select>
                  <label for="line-spacing">Line spacing</label>
                  <select id="line-spacing">
                    <option value="1.2">Tight</option>
                    <option value="1.5">Normal</option>
                    <option value="1.9">Loose</option>
                  </select>
                  <label for="margins">Margins</label>
                  <select id="margins">
                    <option value="narrow">Narrow</option>
                    <option value="normal">Normal</option>
                    <option value="wide">Wide</option>
                  </select>
                  <ThemeChoice />
                </div>
              </details>
            </>
          )}
          {chosen?.kind === 'pages' && (
            <div class="reader-settings">
              <label>
                <input type="checkbox" id="rtl" /> Right to left
              </label>
              <label>
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
            >
              <button type="button" id="prev" class="turn" aria-label="Previous page">
                ‹
              </button>
              {chosen.kind === 'text' ? <div id="book-view" class="book-view" /> : <div id="pages" class="pages" />}
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
          {chosen?.kind === 'text' && <Selection />}
          {chosen && <p id="reader-status" class="reader-toast" role="status" />}
        </main>
      </body>
    </html>
  );
}
