// The pages' message catalogs (issue 48): every shipped language holds exactly English's keys, each
// message parses as ICU MessageFormat with the same placeholders (by name and kind) as English's, and
// the languages are the ones a profile may choose. Then the choice of language and the formatting.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { Identity } from '@bindery/contracts';
import { CATALOGS, i18nOf, LOCALE_NAMES, LOCALES, negotiate } from '../src/i18n';

/** A message's placeholders as `name:kind`, sorted (nested plural and select branches included). */
function placeholders(message: string): string[] {
  const out = new Set<string>();
  const walk = (els: MessageFormatElement[]) => {
    for (const el of els) {
      if (el.type === TYPE.literal || el.type === TYPE.pound) continue;
      if (el.type === TYPE.tag) {
        out.add(`<${el.value}>`);
        walk(el.children);
        continue;
      }
      out.add(`${el.value}:${TYPE[el.type]}`);
      if (el.type === TYPE.plural || el.type === TYPE.select) for (const o of Object.values(el.options)) walk(o.value);
    }
  };
  walk(parse(message));
  return [...out].sort();
}

describe('message catalogs', () => {
  const english = CATALOGS.en;
  const keys = Object.keys(english).sort();

  it('ships the languages a profile may choose, each named in itself', () => {
    expect([...LOCALES]).toEqual([...Identity.LANGUAGES]);
    expect(Object.keys(CATALOGS).sort()).toEqual([...Identity.LANGUAGES].sort());
    for (const l of LOCALES) expect(LOCALE_NAMES[l].length).toBeGreaterThan(0);
  });

  it('keeps each key in one area file of each language, the same area in every language', () => {
    const root = join(import.meta.dirname, '../src/i18n/messages');
    const areaOf = (locale: string) => {
      const where = new Map<string, string>();
      for (const f of readdirSync(join(root, locale)).sort()) {
        for (const k of Object.keys(JSON.parse(readFileSync(join(root, locale, f), 'utf8')))) {
          expect(where.get(k), `${locale}: ${k} is in ${where.get(k)} and ${f}`).toBeUndefined();
          where.set(k, f);
        }
      }
      return where;
    };
    expect(readdirSync(root).sort()).toEqual([...LOCALES].sort());
    const english = areaOf('en');
    for (const l of LOCALES) expect(Object.fromEntries(areaOf(l)), l).toEqual(Object.fromEntries(english));
  });

  for (const locale of LOCALES) {
    it(`${locale}: every key of English and no other, each with English's placeholders`, () => {
      const catalog: Record<string, string> = CATALOGS[locale];
      expect(Object.keys(catalog).sort()).toEqual(keys);
      for (const k of keys) {
        const m = catalog[k]!;
        expect(m.trim(), `${locale} ${k} is empty`).not.toBe('');
        expect(placeholders(m), `${locale} ${k}`).toEqual(placeholders(english[k as keyof typeof english]));
      }
    });
  }

  it('finds a placeholder that differs (the check can fail)', () => {
    expect(placeholders('Current ({theme})')).not.toEqual(placeholders('Actuel ({thème})'));
    expect(placeholders('{n, plural, one {# book} other {# books}}')).toEqual(['n:plural']);
  });
});

describe('the language of a request', () => {
  it("takes the profile's choice, then the cookie, then Accept-Language, then English", () => {
    expect(negotiate('ja', 'de', 'fr-FR,fr;q=0.9')).toBe('ja');
    expect(negotiate(undefined, 'de', 'fr-FR,fr;q=0.9')).toBe('de');
    expect(negotiate(undefined, null, 'fr-FR,fr;q=0.9,en;q=0.5')).toBe('fr');
    expect(negotiate(undefined, null, 'pt-BR,pt;q=0.9')).toBe('en');
    expect(negotiate(undefined, null, undefined)).toBe('en');
  });

  it('weighs Accept-Language by q, falls back from a region to its language, and maps Chinese', () => {
    expect(negotiate(null, null, 'en;q=0.4, de-AT;q=0.8, es;q=0.6')).toBe('de');
    expect(negotiate(null, null, 'it, es-MX')).toBe('es');
    expect(negotiate(null, null, 'zh-CN,zh;q=0.9')).toBe('zh-Hans');
    expect(negotiate(null, null, 'zh-TW')).toBe('en');
    expect(negotiate(null, null, 'ja;q=0, fr')).toBe('fr');
    // what is not a language tag is passed over; an unknown profile value or cookie counts as none
    expect(negotiate('xx', '<script>', 'de\u0000, fr')).toBe('fr');
  });
});

describe('formatting', () => {
  it('formats numbers, plurals and dates by the locale, in the time zone', () => {
    expect(i18nOf('de').number(1234.5)).toBe('1.234,5');
    expect(i18nOf('fr').number(1234.5)).toBe('1\u202f234,5');
    expect(i18nOf('en').number(1234.5)).toBe('1,234.5');
    const at = new Date('2026-12-31T23:30:00Z');
    expect(i18nOf('de', 'Europe/Berlin').date(at, { dateStyle: 'short' })).toBe('01.01.27');
    expect(i18nOf('en', 'UTC').date(at, { dateStyle: 'short' })).toBe('12/31/26');
    expect(i18nOf('ja', 'Asia/Tokyo').date(at, { year: 'numeric', month: 'long', day: 'numeric' })).toBe('2027年1月1日');
    expect(i18nOf('fr').t('failed.text', { status: '502' })).toBe('Le serveur n’a pas pu répondre pour cette page (502). Réessayez dans un instant.');
    // an unknown time zone is UTC
    expect(i18nOf('en', 'Mars/Olympus').timeZone).toBe('UTC');
  });
});

describe('right-to-left ready', () => {
  it('lays out with logical properties only: no left or right in the stylesheets', () => {
    const dir = join(import.meta.dirname, '../src/assets/css');
    const physical = /(^|[\s;{])((margin|padding|border)-(left|right)|left|right)\s*:|text-align:\s*(left|right)|float:\s*(left|right)/;
    const found: string[] = [];
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.css'))) {
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (physical.test(line)) found.push(`${f}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
    // the check finds what it looks for
    expect(physical.test('  margin-left: 1rem;')).toBe(true);
    expect(physical.test('  right: 0;')).toBe(true);
    expect(physical.test('  inset-inline-end: 0;')).toBe(false);
  });
});
