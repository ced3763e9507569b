// The words of the OPDS feeds (navigation titles, link titles, the search description) in the
// language the reading app asks for: its Accept-Language (OPDS apps send their device's), else the
// language of the user's profile, else English. OPDS keeps its own small catalogs (messages/<tag>.json,
// the languages a profile may choose; English is the source) rather than the web's: a feed has a
// few dozen words and no pages. Book data (titles, names, descriptions) is never translated.
import type { FastifyRequest } from 'fastify';
import { Identity } from '@bindery/contracts';
import en from './messages/en.json';
import de from './messages/de.json';
import fr from './messages/fr.json';
import es from './messages/es.json';
import ja from './messages/ja.json';
import zhHans from './messages/zh-Hans.json';

export type OpdsLocale = Identity.Language;
export type OpdsKey = keyof typeof en;
export const OPDS_CATALOGS: Record<OpdsLocale, Record<OpdsKey, string>> = { en, de, fr, es, ja, 'zh-Hans': zhHans };

/** A feed's words in one language: `t(key, {name: value})` fills `{name}`; `books(n)` is "n books". */
export interface OpdsWords {
  locale: OpdsLocale;
  t(key: OpdsKey, values?: Record<string, string>): string;
  books(count: number): string;
}

const made = new Map<OpdsLocale, OpdsWords>();
export function opdsWords(locale: OpdsLocale): OpdsWords {
  const have = made.get(locale);
  if (have) return have;
  const catalog = OPDS_CATALOGS[locale];
  const plural = new Intl.PluralRules(locale);
  const number = new Intl.NumberFormat(locale);
  const t = (key: OpdsKey, values: Record<string, string> = {}) => (catalog[key] ?? en[key]).replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
  const words: OpdsWords = {
    locale,
    t,
    books: (count) => t(plural.select(count) === 'one' ? 'books.one' : 'books.other', { count: number.format(count) }),
  };
  made.set(locale, words);
  return words;
}
export const ENGLISH = opdsWords('en');

/** The first language of an Accept-Language header, by weight, that Bindery ships (the pages read it the same way). */
export const fromAcceptLanguage = (header: string | undefined): OpdsLocale | null => Identity.languageFromHeader(header);

/** The profile's chosen language, from the profile JSON the read model keeps (null when none). */
export const fromProfile = (profileJson: string | null | undefined): OpdsLocale | null => Identity.profileLanguage(profileJson);

/** The language of each OPDS request, once worked out (feedCache does, before a feed renders). */
const chosen = new WeakMap<FastifyRequest, OpdsWords>();
export const chooseWords = (req: FastifyRequest, locale: OpdsLocale): OpdsWords => {
  const w = opdsWords(locale);
  chosen.set(req, w);
  return w;
};
/** The request's words (English until its language is worked out). */
export const wordsOf = (req: FastifyRequest): OpdsWords => chosen.get(req) ?? ENGLISH;
