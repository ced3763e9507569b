// The catalogs' small browser formatter (web/src/i18n/format.ts) gives exactly what @formatjs/intl
// gives the pages, for every message of the areas the browser formats, in every language, with
// plurals tried at several counts and selects at each of their options.
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { CATALOGS, i18nOf, LOCALES, negotiate, PSEUDO_RTL, READER_KEYS } from '../src/i18n';
import { formatter } from '../src/i18n/format';

type Sample = Record<string, string | number>;

/** Values to try for a message: each plural at 0, 1, 2, 5, 21 and 1000, each select at each option. */
function samples(message: string): Sample[] {
  const choices = new Map<string, (string | number)[]>();
  const walk = (els: MessageFormatElement[]) => {
    for (const el of els) {
      if (el.type === TYPE.argument) choices.set(el.value, choices.get(el.value) ?? ['Ünïcode <b>&', 7]);
      if (el.type === TYPE.number) choices.set(el.value, [3, 1234.5]);
      if (el.type === TYPE.plural) choices.set(el.value, [0, 1, 2, 5, 21, 1000]);
      if (el.type === TYPE.select) choices.set(el.value, [...Object.keys(el.options), 'unknown']);
      if (el.type === TYPE.plural || el.type === TYPE.select) for (const o of Object.values(el.options)) walk(o.value);
    }
  };
  walk(parse(message));
  let out: Sample[] = [{}];
  for (const [name, values] of choices) out = out.flatMap((s) => values.map((v) => ({ ...s, [name]: v })));
  return out;
}

describe('the browser formatter', () => {
  for (const locale of LOCALES) {
    it(`${locale}: formats every reader message as @formatjs/intl does`, () => {
      const format = formatter(locale);
      const { t } = i18nOf(locale);
      for (const key of READER_KEYS) {
        const message = CATALOGS[locale][key];
        for (const values of samples(message)) expect(format(message, values), `${locale} ${key} ${JSON.stringify(values)}`).toBe(t(key, values));
      }
    });
  }

  it('reads plurals with exact matches, # and nested selects, and leaves a message it cannot read as written', () => {
    const en = formatter('en');
    const m = '{n, plural, =0 {none} one {# {kind, select, note {note} other {mark}}} other {# {kind, select, note {notes} other {marks}}}}';
    expect(en(m, { n: 0, kind: 'note' })).toBe('none');
    expect(en(m, { n: 1, kind: 'note' })).toBe('1 note');
    expect(en(m, { n: 1200, kind: 'x' })).toBe('1,200 marks');
    expect(formatter('de')('{n, number} Bücher', { n: 1234.5 })).toBe('1.234,5 Bücher');
    expect(en('{broken', {})).toBe('{broken');
    expect(en('Hello {name}', {})).toBe('Hello {name}');
  });
});

describe('the pseudo right-to-left language (tests only)', () => {
  it('is offered only while BINDERY_PSEUDO_LOCALE=1, and only to Accept-Language', () => {
    const before = process.env.BINDERY_PSEUDO_LOCALE;
    try {
      delete process.env.BINDERY_PSEUDO_LOCALE;
      expect(negotiate(null, null, 'ar-XB, fr;q=0.5')).toBe('fr');
      expect(negotiate('ar-XB', 'ar-XB', null)).toBe('en');
      process.env.BINDERY_PSEUDO_LOCALE = '1';
      expect(negotiate(null, null, 'ar-XB, fr;q=0.5')).toBe(PSEUDO_RTL);
      expect(negotiate('ar-XB', 'ar-XB', null)).toBe('en');
      expect(negotiate(null, null, 'ar')).toBe('en');
    } finally {
      if (before === undefined) delete process.env.BINDERY_PSEUDO_LOCALE;
      else process.env.BINDERY_PSEUDO_LOCALE = before;
    }
  });

  it('is English between right-to-left marks, laid out right to left', () => {
    const pseudo = i18nOf(PSEUDO_RTL);
    expect(pseudo.dir).toBe('rtl');
    expect(pseudo.t('reader.pageOf', { page: 2, count: 9 })).toBe('\u200FPage 2 of 9\u200F');
    expect(Object.keys(pseudo.catalog).sort()).toEqual(Object.keys(CATALOGS.en).sort());
  });
});
