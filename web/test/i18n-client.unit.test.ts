// The catalogs' small browser formatter (web/src/i18n/format.ts) gives exactly what @formatjs/intl
// gives the pages, for every message of the areas the browser formats, in every language, with
// plurals tried at several counts and selects at each of their options.
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { CATALOGS, i18nOf, LOCALES, READER_KEYS } from '../src/i18n';
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
