// The reader page: its own full-height shell (a toolbar and the book), the book's data in data
// attributes for the reader script (reader.<hash>.js, loaded on this page only, by the response's
// nonce), and its own CSP (readerCsp in http.ts: foliate-js shows a book's sections in frames from
// blob: URLs, which inherit it). Every word it shows is the reader's language's (the `reader` area of
// the catalogs); the script's own words come to it as a JSON data block (ReaderMessages).
import type { Assets } from '../assets';
import { type MessageKey, READER_KEYS, useI18n } from '../i18n';
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

/** A setting's choices: its value and the message key of its label. */
type Options = readonly (readonly [string, MessageKey])[];
const FONTS: Options = [
  ['publisher', 'reader.option.publisher'],
  ['serif', 'reader.font.serif'],
  ['sans', 'reader.font.sans'],
  ['mono', 'reader.font.mono'],
];
const SPACINGS: Options = [
  ['publisher', 'reader.option.publisher'],
  ['1.2', 'reader.spacing.tight'],
  ['1.5', 'reader.spacing.normal'],
  ['1.9', 'reader.spacing.loose'],
];
const MARGINS: Options = [
  ['narrow', 'reader.margins.narrow'],
  ['normal', 'reader.margins.normal'],
  ['wide', 'reader.margins.wide'],
];
const ALIGNS: Options = [
  ['publisher', 'reader.option.publisher'],
  ['justify', 'reader.align.justify'],
  ['start', 'reader.align.start'],
];
const HYPHENS: Options = [
  ['publisher', 'reader.option.publisher'],
  ['auto', 'reader.hyphens.on'],
  ['none', 'reader.hyphens.off'],
];
const THEMES: Options = [
  ['profile', 'reader.theme.profile'],
  ['light', 'reader.theme.light'],
  ['sepia', 'reader.theme.sepia'],
  ['dark', 'reader.theme.dark'],
  ['black', 'reader.theme.black'],
];
const FITS: Options = [
  ['screen', 'reader.fit.screen'],
  ['width', 'reader.fit.width'],
  ['height', 'reader.fit.height'],
  ['original', 'reader.fit.original'],
];

/** A labelled <select> of the reader's settings (the script shows the kept value). */
function Choice(p: { id: string; label: string; options: Options }) {
  const { t } = useI18n();
  return (
    <>
      <label for={p.id}>{p.label}</label>
      <select id={p.id}>
        {p.options.map(([value, label]) => (
          <option value={value}>{t(label)}</option>
        ))}
      </select>
    </>
  );
}

/** The reader's theme: the profile's by default, or light, sepia, dark or black for the reader alone (kept in the browser). */
function ThemeChoice() {
  const { t } = useI18n();
  return <Choice id="reader-theme" label={t('reader.theme')} options={THEMES} />;
}

/** What can be done with text selected in the book: highlight it (in a colour) or write a note on it. */
function Selection() {
  const { t } = useI18n();
  return (
    <div id="selection" class="reader-selection" hidden>
      <div role="toolbar" aria-label={t('reader.selectedText')} class="reader-selection-tools">
        {COLOURS.map(([name, key]) => (
          <button type="button" class={`swatch swatch-${name}`} data-colour={name} aria-label={t('reader.highlightIn', { colour: t(key) })}>
            {t(key)}
          </button>
        ))}
        <button type="button" id="selection-note">
          {t('reader.noteButton')}
        </button>
      </div>
      <form id="note-form" class="reader-note-form" hidden>
        <label for="note-text">{t('reader.noteLabel')}</label>
        <textarea id="note-text" rows={3} maxlength={100000} required />
        <div class="reader-note-actions">
          <button type="submit">{t('reader.saveNote')}</button>
          <button type="button" id="note-cancel">
            {t('reader.cancel')}
          </button>
        </div>
      </form>
    </div>
  );
}

/** Highlight colours offered (KOReader's palette names; the reading service stores their hex). */
export const COLOURS = [
  ['yellow', 'reader.colour.yellow'],
  ['green', 'reader.colour.green'],
  ['blue', 'reader.colour.blue'],
  ['red', 'reader.colour.red'],
  ['purple', 'reader.colour.purple'],
] as const satisfies readonly (readonly [string, MessageKey])[];

/**
 * The reader's messages in the page's language, for its script (reader/messages.ts formats them):
 * a JSON data block, which the page's CSP lets be (it runs nothing); `<` is escaped so no message
 * can close the element.
 */
function ReaderMessages() {
  const { catalog } = useI18n();
  const json = JSON.stringify(Object.fromEntries(READER_KEYS.map((k) => [k, catalog[k]]))).replace(/</g, '\\u003c');
  return <script type="application/json" id="reader-messages" dangerouslySetInnerHTML={{ __html: json }} />;
}

/** Search in the book: an EPUB's through foliate, a PDF's text through the gateway (reader/search.ts). */
function SearchMenu() {
  const { t } = useI18n();
  return (
    <details id="search-menu" class="reader-menu">
      <summary>{t('reader.search')}</summary>
      <div class="reader-search">
        <form id="search-form">
          <label for="search-q">{t('reader.searchLabel')}</label>
          <input type="search" id="search-q" name="q" maxlength={200} autocomplete="off" />
          <button type="submit">{t('reader.search')}</button>
        </form>
        <p id="search-status" class="muted" role="status" />
        <ol id="search-results" aria-label={t('reader.searchResults')} />
      </div>
    </details>
  );
}

/** The caller's reader settings from the profile (GET /api/media-items/<id>/reader-settings), or null when unread. */
export type ReaderSettings = { all_books: unknown; this_book: unknown } | null;

export function Reader(p: {
  assets: Assets;
  reader: { script: string; boot: string };
  nonce: string;
  viewer: Viewer;
  item: Item;
  progress: ReadPosition | null;
  settings?: ReaderSettings;
}) {
  const chosen = readableFormat(p.item);
  const { t, locale, dir } = useI18n();
  const position = p.progress ? { percentage: p.progress.percentage, epubcfi: p.progress.epubcfi ?? null, page: p.progress.page ?? null } : null;
  return (
    <html lang={locale} dir={dir} class={`theme-${schemeOf(p.viewer.theme)} reader-page`}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1,viewport-fit=cover" />
        <title>{t('reader.title', { title: p.item.title })}</title>
        <link rel="icon" href="data:," />
        {p.viewer.csrf && <meta name="csrf-token" content={p.viewer.csrf} />}
        <link rel="stylesheet" href={p.assets.css} />
        {chosen && <ReaderMessages />}
        {chosen && <script type="module" src={p.reader.boot} nonce={p.nonce} />}
        {chosen && <script type="module" src={p.reader.script} nonce={p.nonce} />}
      </head>
      <body>
        <a class="skip" href="#main">
          {t('reader.skip')}
        </a>
        <header class="reader-bar">
          <a id="back" href={`/books/${encodeURIComponent(p.item.id)}`}>
            {t('reader.back')}
          </a>
          <h1 id="reader-title">{p.item.title}</h1>
          <p id="reader-position" class="muted" aria-live="polite" />
          {chosen?.kind === 'text' && (
            <>
              <details id="toc" class="reader-menu">
                <summary>{t('reader.contents')}</summary>
                <nav aria-label={t('reader.toc')} id="toc-list" />
              </details>
              <SearchMenu />
              <details id="notes-menu" class="reader-menu">
                <summary>{t('reader.notes')}</summary>
                <div class="reader-notes">
                  <p id="notes-status" class="muted" role="status" />
                  <ul id="notes-list" aria-label={t('reader.notesList')} />
                </div>
              </details>
              <details id="settings" class="reader-menu">
                <summary>{t('reader.text')}</summary>
                <div class="reader-settings reader-grid">
                  <span id="size-label">{t('reader.size')}</span>
                  <div class="reader-size">
                    <button type="button" id="font-smaller" aria-label={t('reader.smaller')}>
                      A−
                    </button>
                    <output id="font-size" aria-live="polite">
                      {t('reader.fontSize', { size: 100 })}
                    </output>
                    <button type="button" id="font-larger" aria-label={t('reader.larger')}>
                      A+
                    </button>
                  </div>
                  <Choice id="font-family" label={t('reader.font')} options={FONTS} />
                  <Choice id="line-spacing" label={t('reader.lineSpacing')} options={SPACINGS} />
                  <Choice id="margins" label={t('reader.margins')} options={MARGINS} />
                  <Choice id="text-align" label={t('reader.alignment')} options={ALIGNS} />
                  <Choice id="hyphens" label={t('reader.hyphenation')} options={HYPHENS} />
                  <label class="inline reader-check">
                    <input type="checkbox" id="only-this-book" /> {t('reader.onlyThisBook')}
                  </label>
                  <ThemeChoice />
                </div>
              </details>
            </>
          )}
          {chosen?.kind === 'pages' && chosen.format.format.toLowerCase() === 'pdf' && <SearchMenu />}
          {chosen?.kind === 'pages' && (
            <div class="reader-settings">
              <Choice id="fit" label={t('reader.size')} options={FITS} />
              <label class="inline">
                <input type="checkbox" id="vertical" /> {t('reader.vertical')}
              </label>
              <label class="inline">
                <input type="checkbox" id="rtl" /> {t('reader.rtl')}
              </label>
              <label class="inline">
                <input type="checkbox" id="spread" /> {t('reader.spread')}
              </label>
              <ThemeChoice />
            </div>
          )}
        </header>
        <main id="main" tabindex={-1} class="reader-main">
          <div id="reader-error" class="alert alert-error" role="alert" hidden={!!chosen}>
            {chosen ? '' : t('reader.noFormat')}
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
              <button type="button" id="prev" class="turn" aria-label={t('reader.previous')}>
                ‹
              </button>
              {chosen.kind === 'text' ? <div id="book-view" class="book-view" /> : <section id="pages" class="pages" tabindex={0} aria-label={t('reader.pages')} />}
              <button type="button" id="next" class="turn" aria-label={t('reader.next')}>
                ›
              </button>
            </div>
          )}
          {chosen && (
            <div id="offer" class="reader-offer" hidden>
              <p id="offer-text" />
              <button type="button" id="offer-go">
                {t('reader.goThere')}
              </button>
              <button type="button" id="offer-dismiss">
                {t('reader.stayHere')}
              </button>
            </div>
          )}
          {chosen?.kind === 'pages' && (
            <div id="page-bar" class="reader-foot">
              <label for="page-slider">{t('reader.page')}</label>
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
