// The OPDS feeds' own catalogs (opds/messages): every language a profile may choose, each with
// exactly English's keys and placeholders; the language of a request from Accept-Language, else
// the profile; the count of books by the language's plural rules.
import { describe, expect, it } from 'vitest';
import { Identity } from '@bindery/contracts';
import { fromAcceptLanguage, fromProfile, OPDS_CATALOGS, opdsWords } from '../src/opds/words';

const placeholders = (m: string) => [...m.matchAll(/\{(\w+)\}/g)].map((x) => x[1]).sort();

describe('the OPDS catalogs', () => {
  const english = OPDS_CATALOGS.en;
  it('ship the languages a profile may choose', () => {
    expect(Object.keys(OPDS_CATALOGS).sort()).toEqual([...Identity.LANGUAGES].sort());
  });
  for (const locale of Identity.LANGUAGES) {
    it(`${locale}: every key of English and no other, with English's placeholders, none empty`, () => {
      const catalog: Record<string, string> = OPDS_CATALOGS[locale];
      expect(Object.keys(catalog).sort()).toEqual(Object.keys(english).sort());
      for (const [k, m] of Object.entries(english)) {
        expect(catalog[k]!.trim(), `${locale} ${k}`).not.toBe('');
        expect(placeholders(catalog[k]!), `${locale} ${k}`).toEqual(placeholders(m));
        // only {name} placeholders: the feeds' formatter knows no other
        expect(catalog[k], `${locale} ${k}`).not.toMatch(/\{[^}]*[,\s][^}]*\}|'/);
      }
    });
  }
  it('fails on a placeholder that differs (the check can fail)', () => {
    expect(placeholders('Suche: {query}')).not.toEqual(placeholders('Suche: {frage}'));
  });
});

describe('the language of a feed', () => {
  it('takes the first shipped Accept-Language tag by weight', () => {
    expect(fromAcceptLanguage('de-DE,de;q=0.9,en;q=0.8')).toBe('de');
    expect(fromAcceptLanguage('pt-BR, ja;q=0.5')).toBe('ja');
    expect(fromAcceptLanguage('en;q=0.3, fr;q=0.7')).toBe('fr');
    expect(fromAcceptLanguage('zh-CN')).toBe('zh-Hans');
    expect(fromAcceptLanguage('zh-TW')).toBeNull();
    expect(fromAcceptLanguage('de;q=0, <x>, it')).toBeNull();
    expect(fromAcceptLanguage(undefined)).toBeNull();
  });
  it("reads the profile's language, and nothing from a profile without one or a broken one", () => {
    expect(fromProfile(JSON.stringify({ id: 'u', language: 'es' }))).toBe('es');
    expect(fromProfile(JSON.stringify({ id: 'u' }))).toBeNull();
    expect(fromProfile(JSON.stringify({ language: 'xx' }))).toBeNull();
    expect(fromProfile('{')).toBeNull();
    expect(fromProfile(null)).toBeNull();
  });
  it('fills placeholders and counts books by the language', () => {
    expect(opdsWords('en').books(1)).toBe('1 book');
    expect(opdsWords('en').books(1200)).toBe('1,200 books');
    expect(opdsWords('de').books(2)).toBe('2 Bücher');
    expect(opdsWords('fr').books(0)).toBe('0 livre');
    expect(opdsWords('ja').t('search.title', { query: '猫' })).toBe('検索: 猫');
  });
});
