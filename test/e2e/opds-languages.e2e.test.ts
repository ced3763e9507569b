// The OPDS feeds' own words in the reading app's language (issue 48): the navigation titles, the
// link titles, the count of books and the OpenSearch description follow Accept-Language (what OPDS
// apps send), else the profile's language, else English; OPDS 1.2 (Atom) and 2.0 (JSON) alike. Book
// data is never translated, the answers say their language, and a German feed is still a valid one.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import { createLibrary, emptyDir, FIXTURE, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { basic, linkOf, parseFeed, parseXml } from './opds-helpers';
import { opds2Validator } from './opds2-schemas';

const modes = await availableModes();
const get = instances(modes);
const schemas = opds2Validator();
const EPUB = 'J. R. Hartley/The Hidden Crown (1864).epub';

const ROOT_TITLES: Record<string, string[]> = {
  en: ['Libraries', 'Recently added', 'Authors', 'Series', 'Collections', 'Continue reading'],
  de: ['Bibliotheken', 'Neu hinzugefügt', 'Autoren', 'Reihen', 'Sammlungen', 'Weiterlesen'],
  ja: ['ライブラリ', '最近追加', '著者', 'シリーズ', 'コレクション', '続きを読む'],
  fr: ['Bibliothèques', 'Ajouts récents', 'Auteurs', 'Séries', 'Collections', 'Continuer la lecture'],
};

describe.each(modes)('OPDS in the reading app’s language (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  let reader: Account;
  let libraryId: string;
  const as = (who: Account, language?: string) => ({ headers: { ...basic(who.username, who.password), ...(language ? { 'accept-language': language } : {}) } });

  beforeAll(async () => {
    b = await get(mode);
    call = api(b);
    const admin = await register(call);
    reader = await register(call);
    const dir = emptyDir();
    mkdirSync(join(dir, 'crown'), { recursive: true });
    copyFileSync(join(FIXTURE, EPUB), join(dir, 'crown/The Hidden Crown.epub'));
    const lib = await createLibrary(call, admin.token, { name: 'Bücherei', folders: [dir], watch: false });
    libraryId = lib.id;
    await scan(call, admin.token, lib.id);
  }, 240_000);

  const atom = async (path: string, who: Account, language?: string) => {
    const r = await call('GET', path, as(who, language));
    expect(r.status, r.text).toBe(200);
    return { r, feed: parseFeed(r.text) };
  };
  const json = async (path: string, who: Account, language?: string) => {
    const r = await call('GET', path, as(who, language));
    expect(r.status, r.text).toBe(200);
    const doc = JSON.parse(r.text);
    expect(schemas.feed(doc), path).toEqual([]);
    return { r, doc };
  };

  it('OPDS 1.2: German and Japanese navigation titles, link titles, counts and search description; English without a language', async () => {
    for (const language of ['de', 'ja'] as const) {
      const { r, feed } = await atom('/opds', reader, language === 'de' ? 'de-DE,de;q=0.9,en;q=0.5' : 'ja-JP');
      expect(r.headers.get('content-language')).toBe(language);
      expect(r.headers.get('vary')).toContain('Accept-Language');
      expect(feed.entries.map((e) => e.title)).toEqual(ROOT_TITLES[language]);
      expect(feed.entries[1]!.content).toBe(language === 'de' ? 'Die neuesten Bücher zuerst' : '新しい本から順に');
      expect(linkOf(feed.links, 'search')?.title).toBe(language === 'de' ? 'Suchen' : '検索');
      // a library's name is data: as it is; its count of books in the language
      const libs = (await atom('/opds/libraries', reader, language)).feed;
      expect(libs.title).toBe(language === 'de' ? 'Bibliotheken' : 'ライブラリ');
      expect(libs.entries.map((e) => [e.title, e.content])).toEqual([['Bücherei', language === 'de' ? '1 Buch' : '1 冊']]);
      expect((await atom('/opds/authors', reader, language)).feed.title).toBe(language === 'de' ? 'Autoren' : '著者');
      expect((await atom('/opds/recent', reader, language)).feed.title).toBe(language === 'de' ? 'Neu hinzugefügt' : '最近追加');
      expect((await atom('/opds/search?q=crown', reader, language)).feed.title).toBe(language === 'de' ? 'Suche: crown' : '検索: crown');
      const os = await call('GET', '/opds/search', as(reader, language));
      expect(os.status).toBe(200);
      expect(parseXml(os.text).OpenSearchDescription.Description).toBe(
        language === 'de'
          ? 'Die Bindery-Bibliothek nach Titel, Autor, Reihe, Schlagwort oder ISBN durchsuchen.'
          : 'Bindery のライブラリをタイトル、著者、シリーズ、タグ、ISBN で検索します。',
      );
    }
    // no language asked, or one Bindery lacks: English, word for word as before
    for (const language of [undefined, 'pt-BR']) {
      const { r, feed } = await atom('/opds', reader, language);
      expect(r.headers.get('content-language')).toBe('en');
      expect(feed.entries.map((e) => e.title)).toEqual(ROOT_TITLES.en);
      expect((await atom('/opds/libraries', reader, language)).feed.entries[0]!.content).toBe('1 book');
    }
  });

  it('OPDS 2.0: German and Japanese navigation, groups and facets, valid against the OPDS 2.0 schema', async () => {
    for (const language of ['de', 'ja'] as const) {
      const { r, doc } = await json('/opds/v2', reader, language);
      expect(r.headers.get('content-language')).toBe(language);
      expect(doc.navigation.map((n: { title: string }) => n.title)).toEqual(ROOT_TITLES[language]);
      expect(doc.groups.map((g: { metadata: { title: string } }) => g.metadata.title)).toEqual([language === 'de' ? 'Neu hinzugefügt' : '最近追加']);
      const lib = (await json(`/opds/v2/libraries/${libraryId}`, reader, language)).doc;
      expect(lib.metadata.title).toBe('Bücherei');
      expect(lib.facets[0].metadata.title).toBe(language === 'de' ? 'Sortieren' : '並べ替え');
      expect(lib.facets[0].links.map((l: { title: string }) => l.title)).toEqual(language === 'de' ? ['Titel', 'Neu hinzugefügt'] : ['タイトル', '最近追加']);
      expect((await json('/opds/v2/series', reader, language)).doc.metadata.title).toBe(language === 'de' ? 'Reihen' : 'シリーズ');
      expect((await json('/opds/v2/search?query=crown', reader, language)).doc.metadata.title).toBe(language === 'de' ? 'Suche: crown' : '検索: crown');
    }
    expect((await json('/opds/v2', reader)).doc.navigation.map((n: { title: string }) => n.title)).toEqual(ROOT_TITLES.en);
  });

  it('the profile’s language when the app asks for none Bindery has; the app’s when it does', async () => {
    const fr = await register(call);
    const p = await call('PUT', '/api/auth/profile', { token: fr.token, body: { language: 'fr' } });
    expect(p.status, p.text).toBe(200);
    const eventuallyFrench = async () => {
      for (let i = 0; i < 50; i++) {
        const { feed } = await atom('/opds', fr);
        if (feed.entries[0]!.title === ROOT_TITLES.fr![0]) return feed;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('the profile’s language never reached the feeds');
    };
    expect((await eventuallyFrench()).entries.map((e) => e.title)).toEqual(ROOT_TITLES.fr);
    expect((await json('/opds/v2', fr, 'it')).doc.navigation.map((n: { title: string }) => n.title)).toEqual(ROOT_TITLES.fr);
    expect((await atom('/opds', fr, 'ja')).feed.entries.map((e) => e.title)).toEqual(ROOT_TITLES.ja);
  });
});
