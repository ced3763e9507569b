// The library's pages in the reader's language (issue 48), in headless Chromium: a German reader
// (their browser's Accept-Language), a Japanese reader (their profile's language, whatever the
// browser says) and a French reader (Accept-Language) open the library, a series, an author, the
// collections and one of their own, the upload page and a book's edit page, and see each in their
// language: exact translated words, the page's `lang`, none of the English words translated left,
// plural counts as the language says them; the words upload.js and edit.js show come from the page.
// Every page axe clean, no console error. Embedded mode only (PAGE_MODES, decision 97).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir } from './catalog-helpers';
import { storedZip } from './kobo-helpers';
import { makeItem } from './reading-helpers';
import { type Account, api, instances, register, type Call } from './helpers';
import { axeProblems, CHROMIUM, HAS_CHROMIUM, launch, openAs, PAGE_MODES, type Tab } from './web-browser';

declare const document: { body: { textContent: string | null }; getElementById(id: string): { textContent: string | null } | null };

const get = instances(PAGE_MODES);
if (!HAS_CHROMIUM) describe.skip(`library pages in the reader's language (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const SERIES = 'The Long Road';
const AUTHOR = 'Ann Walker';

/** A small EPUB of its own (each reader uploads a different book: the same file twice is a duplicate). */
function epub(title: string): Buffer {
  return storedZip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">urn:uuid:${crypto.randomUUID()}</dc:identifier><dc:title>${title}</dc:title><dc:creator>Uploader</dc:creator><dc:language>en</dc:language></metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>`,
    ],
    ['OEBPS/c1.xhtml', `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${title}</title></head><body><p>It begins here.</p></body></html>`],
  ]);
}

/** English words of the pages translated here: none may be left on a page in another language. */
const ENGLISH = [
  'Load more',
  'Saved filters',
  'Search and filters',
  'Filters and sort',
  'Apply',
  'Read state',
  'Selected books',
  'Tick the books',
  'Add books',
  'Find a series',
  'Find an author',
  'Series by first letter',
  'Every book of the series',
  'Mark all as read',
  'Missing number',
  'Read next',
  'All authors',
  'All series',
  'Your collections',
  'A new smart collection',
  'Add a condition',
  'Made for you',
  'Continue Reading',
  'Upload books',
  'Book files',
  'Subfolder',
  'Save changes',
  'Reading direction',
  'Sort title',
  'Use this page',
  'Upload cover',
  ' books',
  ' book.',
  'matching',
];

/** What each reader's pages say, in their language. */
interface Words {
  locale: string;
  library: string;
  total: string;
  apply: string;
  search: string;
  selection: string;
  oneSelected: string;
  addBooks: string;
  folder: string;
  sortTitle: string;
  series: string;
  seriesTotal: string;
  seriesSummary: string;
  missing: string;
  readNext: string;
  everyBook: string;
  authorsTotal: string;
  authorSummary: string;
  collections: string;
  yours: string;
  smartTitle: string;
  continueReading: string;
  ownKind: string;
  empty: string;
  uploadTitle: string;
  files: string;
  editTitle: string;
  sortTitleLabel: string;
  save: string;
  role: string;
  catalogued: RegExp;
}

const GERMAN: Words = {
  locale: 'de',
  library: 'Bibliothek',
  total: '3 Bücher.',
  apply: 'Anwenden',
  search: 'Suche',
  selection: 'Ausgewählte Bücher',
  oneSelected: '1 Buch ausgewählt.',
  addBooks: 'Bücher hinzufügen',
  folder: 'Ordner',
  sortTitle: 'Titel',
  series: 'Reihen',
  seriesTotal: '1 Reihe.',
  seriesSummary: '2 Bücher, 0 fertig gelesen.',
  missing: 'Fehlende Nummer: 2.',
  readNext: 'Als Nächstes lesen: Road One',
  everyBook: 'Alle Bücher der Reihe',
  authorsTotal: '1 Autor.',
  authorSummary: '3 Bücher. Alle Autoren',
  collections: 'Sammlungen',
  yours: 'Deine Sammlungen',
  smartTitle: 'Eine neue intelligente Sammlung',
  continueReading: 'Weiterlesen',
  ownKind: 'Deine Sammlung. 0 Bücher. Alle Sammlungen',
  empty: 'Keine Bücher in dieser Sammlung.',
  uploadTitle: 'Bücher hochladen',
  files: 'Buchdateien',
  editTitle: 'Road One bearbeiten',
  sortTitleLabel: 'Sortiertitel',
  save: 'Änderungen speichern',
  role: 'Übersetzer',
  catalogued: /^(Katalogisiert\.|Gespeichert; die Datei wird in Kürze katalogisiert\.)/,
};

const JAPANESE: Words = {
  locale: 'ja',
  library: 'ライブラリ',
  total: '3 冊。',
  apply: '適用',
  search: '検索',
  selection: '選択した本',
  oneSelected: '1 冊を選択中。',
  addBooks: '本を追加',
  folder: 'フォルダー',
  sortTitle: 'タイトル',
  series: 'シリーズ',
  seriesTotal: '1 シリーズ。',
  seriesSummary: '2 冊、0 冊読了。',
  missing: '欠けている巻：2。',
  readNext: '次を読む：Road One',
  everyBook: 'シリーズのすべての本',
  authorsTotal: '1 人の著者。',
  authorSummary: '3 冊。 すべての著者',
  collections: 'コレクション',
  yours: '自分のコレクション',
  smartTitle: '新しいスマートコレクション',
  continueReading: '続きを読む',
  ownKind: 'あなたのコレクション。 0 冊。 すべてのコレクション',
  empty: 'このコレクションに本はありません。',
  uploadTitle: '本をアップロード',
  files: '本のファイル',
  editTitle: 'Road One を編集',
  sortTitleLabel: '並べ替え用タイトル',
  save: '変更を保存',
  role: '翻訳者',
  catalogued: /^(カタログに登録しました。|保存しました。まもなくカタログに登録されます。)/,
};

const FRENCH: Words = {
  locale: 'fr',
  library: 'Bibliothèque',
  total: '3 livres.',
  apply: 'Appliquer',
  search: 'Recherche',
  selection: 'Livres sélectionnés',
  oneSelected: '1 livre sélectionné.',
  addBooks: 'Ajouter des livres',
  folder: 'Dossier',
  sortTitle: 'Titre',
  series: 'Séries',
  seriesTotal: '1 série.',
  seriesSummary: '2 livres, 0 terminés.',
  missing: 'Numéro manquant : 2.',
  readNext: 'Lire la suite : Road One',
  everyBook: 'Tous les livres de la série',
  authorsTotal: '1 auteur.',
  authorSummary: '3 livres. Tous les auteurs',
  collections: 'Collections',
  yours: 'Vos collections',
  smartTitle: 'Une nouvelle collection intelligente',
  continueReading: 'Continuer la lecture',
  ownKind: 'Votre collection. 0 livre. Toutes les collections',
  empty: 'Aucun livre dans cette collection.',
  uploadTitle: 'Envoyer des livres',
  files: 'Fichiers de livres',
  editTitle: 'Modifier Road One',
  sortTitleLabel: 'Titre de tri',
  save: 'Enregistrer les modifications',
  role: 'Traducteur',
  catalogued: /^(Catalogué\.|Enregistré ; il sera catalogué sous peu\.)/,
};

for (const mode of PAGE_MODES) {
  describe.skipIf(!HAS_CHROMIUM)(`library pages in the reader's language (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let libraryId: string;
    let uploadsId: string;
    let roadOne: string;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      const lib = await createLibrary(call, admin.token, { name: 'Sprachen', folders: [emptyDir()], watch: false });
      libraryId = lib.id;
      // uploads go to a library of their own: the books of the first stay three
      uploadsId = (await createLibrary(call, admin.token, { name: 'Uploads', folders: [emptyDir()], watch: false })).id;
      roadOne = (await makeItem(call, admin, libraryId, { title: 'Road One', authors: [AUTHOR], series: SERIES, series_index: 1 })).id;
      await makeItem(call, admin, libraryId, { title: 'Road Three', authors: [AUTHOR], series: SERIES, series_index: 3 });
      await makeItem(call, admin, libraryId, { title: 'Lone Book', authors: [AUTHOR] });
    }, 240_000);

    /** An administrator (may upload and edit) who sees the pages in `w`'s language, by browser or by profile. */
    async function reader(w: Words, by: 'browser' | 'profile'): Promise<{ t: Tab; who: Account }> {
      const who = await register(call, { role: 'admin', caller: admin.token });
      if (by === 'profile') {
        const r = await call('PUT', '/api/auth/profile', { token: who.token, body: { language: w.locale } });
        expect(r.status, r.text).toBe(200);
      }
      const t = await openAs(browser, b.url, who.token);
      await t.ctx.setExtraHTTPHeaders({ 'accept-language': by === 'browser' ? `${w.locale};q=0.9, en;q=0.5` : 'en-US,en;q=0.9' });
      return { t, who };
    }

    const text = async (t: Tab, selector: string) => ((await t.page.textContent(selector)) ?? '').replace(/\s+/g, ' ').trim();

    /** The page is in the reader's language: its `lang`, axe clean, no English word translated here left. */
    async function inLanguage(t: Tab, w: Words, name: string): Promise<void> {
      expect(await t.page.getAttribute('html', 'lang'), name).toBe(w.locale);
      const shown = await t.page.evaluate(() => document.body.textContent ?? '');
      const left = ENGLISH.filter((e) => shown.includes(e) && !(w.locale === 'fr' && e === 'Collections'));
      expect(left, `${name}: English left`).toEqual([]);
      expect(await axeProblems(t.page), `${name}: axe`).toEqual([]);
      expect(t.errors, `${name}: console errors`).toEqual([]);
    }

    const cases: [Words, 'browser' | 'profile'][] = [
      [GERMAN, 'browser'],
      [JAPANESE, 'profile'],
      [FRENCH, 'browser'],
    ];
    for (const [w, by] of cases) {
      it(`shows the library, a series, an author, collections, upload and edit in ${w.locale} (${by})`, async () => {
        const { t, who } = await reader(w, by);
        try {
          // the library: heading, filters, the total as a plural, the selection bar and its script's words, the drop zone
          const r = await t.page.goto(`${b.url}/library?library=${libraryId}`);
          expect(r?.headers()['content-language']).toBe(w.locale);
          expect(await text(t, '#list-title')).toBe('Sprachen');
          expect(await text(t, '.eyebrow')).toBe(w.library);
          expect(await text(t, '#library-total')).toBe(w.total);
          expect(await text(t, '#apply')).toBe(w.apply);
          expect(await text(t, 'label[for=f-q]')).toBe(w.search);
          expect(await text(t, '#selection-title')).toBe(w.selection);
          expect(await text(t, '#upload-drop-title')).toBe(w.addBooks);
          expect(await text(t, '#f-sort option[value=title]')).toBe(w.sortTitle);
          await t.page.waitForSelector('#no-saved');
          await t.page.waitForSelector('label[for=drop-folder]');
          expect(await text(t, 'label[for=drop-folder]')).toBe(w.folder);
          await t.page.check(`#pick-${roadOne}`);
          await t.page.waitForFunction((want) => document.getElementById('selection-count')?.textContent === want, w.oneSelected);
          await inLanguage(t, w, `${w.locale} library`);

          // the series list and a series: counts, the missing number, read next
          await t.page.goto(`${b.url}/series`);
          expect(await text(t, '#list-title')).toBe(w.series);
          expect(await text(t, '#series-total')).toBe(w.seriesTotal);
          await inLanguage(t, w, `${w.locale} series list`);
          await t.page.goto(`${b.url}/series/${encodeURIComponent(SERIES)}`);
          expect(await text(t, '#series-summary')).toContain(w.seriesSummary);
          expect(await text(t, '#series-missing')).toBe(w.missing);
          expect(await text(t, '#read-next')).toBe(w.readNext);
          expect(await text(t, '#bulk-title')).toBe(w.everyBook);
          await inLanguage(t, w, `${w.locale} series`);

          // the author list and an author
          await t.page.goto(`${b.url}/authors?library=${libraryId}`);
          expect(await text(t, '#authors-total')).toBe(w.authorsTotal);
          await inLanguage(t, w, `${w.locale} authors`);
          await t.page.goto(`${b.url}/authors/${encodeURIComponent(AUTHOR)}`);
          expect(await text(t, '#author-summary')).toBe(w.authorSummary);
          await inLanguage(t, w, `${w.locale} author`);

          // the collections, a system one named in the language, and one of the reader's own
          const own = await call('POST', '/api/collections', { token: who.token, body: { name: 'Regal' } });
          expect(own.status, own.text).toBe(201);
          await t.page.goto(`${b.url}/collections`);
          expect(await text(t, 'h1')).toBe(w.collections);
          expect(await text(t, '#own-title')).toBe(w.yours);
          expect(await text(t, '#smart-title')).toBe(w.smartTitle);
          expect(await t.page.locator('#system-collections a').allTextContents()).toContain(w.continueReading);
          await inLanguage(t, w, `${w.locale} collections`);
          await t.page.goto(`${b.url}/collections/${own.json.id}`);
          expect(await text(t, '#collection-kind')).toBe(w.ownKind);
          expect(await text(t, '#empty-collection')).toBe(w.empty);
          await inLanguage(t, w, `${w.locale} collection`);

          // the upload page, and a book sent through it: upload.js says what came of it in the language
          await t.page.goto(`${b.url}/upload?library=${uploadsId}`);
          expect(await text(t, 'h1')).toBe(w.uploadTitle);
          expect(await text(t, 'label[for=upload-files]')).toBe(w.files);
          await inLanguage(t, w, `${w.locale} upload`);
          const file = join(emptyDir(), `upload-${w.locale}.epub`);
          writeFileSync(file, epub(`Upload ${w.locale}`));
          await t.page.setInputFiles('#upload-files', file);
          await t.page.click('#upload button[type=submit]');
          const outcome = t.page.locator('.upload-entry[data-outcome=ok] .upload-status');
          await outcome.waitFor({ timeout: 30_000 });
          expect(await outcome.textContent()).toMatch(w.catalogued);

          // a book's edit page
          await t.page.goto(`${b.url}/books/${roadOne}/edit`);
          expect(await text(t, '#edit-title')).toBe(w.editTitle);
          expect(await t.page.title()).toBe(`${w.editTitle} · Bindery`);
          expect(await text(t, 'label[for=e-sort_title]')).toBe(w.sortTitleLabel);
          expect(await text(t, '#save-edit')).toBe(w.save);
          expect(await t.page.locator('#e-role-0 option').allTextContents()).toContain(w.role);
          await inLanguage(t, w, `${w.locale} edit`);
          expect(t.dialogs).toEqual([]);
        } finally {
          await t.ctx.close();
        }
      }, 120_000);
    }

    it('keeps English where the browser asks for nothing else', async () => {
      const t = await openAs(browser, b.url, admin.token);
      try {
        await t.page.goto(`${b.url}/library?library=${libraryId}`);
        expect(await t.page.getAttribute('html', 'lang')).toBe('en');
        expect(await text(t, '#library-total')).toBe('3 books.');
        await t.page.goto(`${b.url}/series/${encodeURIComponent(SERIES)}`);
        expect(await text(t, '#series-missing')).toBe('Missing number: 2.');
        expect(await text(t, '#read-next')).toBe('Read next: Road One');
      } finally {
        await t.ctx.close();
      }
    });
  });
}
