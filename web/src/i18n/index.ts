// The pages' languages (issue 48): one message catalog per language (ICU MessageFormat, through
// @formatjs/intl), the choice of language for a request, and numbers and dates in the person's
// locale and time zone. English is the source: its catalog names every key; the others hold the
// same keys with the same placeholders (test/unit/i18n-catalogs).
import { createIntl, createIntlCache, type IntlShape } from '@formatjs/intl';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { Identity } from '@bindery/contracts';
import { localizeError } from './api-errors';
import enCore from './messages/en/core.json';
import enLibrary from './messages/en/library.json';
import enAdmin from './messages/en/admin.json';
import enReader from './messages/en/reader.json';
import enErrors from './messages/en/errors.json';
import deCore from './messages/de/core.json';
import deLibrary from './messages/de/library.json';
import deAdmin from './messages/de/admin.json';
import deReader from './messages/de/reader.json';
import deErrors from './messages/de/errors.json';
import frCore from './messages/fr/core.json';
import frLibrary from './messages/fr/library.json';
import frAdmin from './messages/fr/admin.json';
import frReader from './messages/fr/reader.json';
import frErrors from './messages/fr/errors.json';
import esCore from './messages/es/core.json';
import esLibrary from './messages/es/library.json';
import esAdmin from './messages/es/admin.json';
import esReader from './messages/es/reader.json';
import esErrors from './messages/es/errors.json';
import jaCore from './messages/ja/core.json';
import jaLibrary from './messages/ja/library.json';
import jaAdmin from './messages/ja/admin.json';
import jaReader from './messages/ja/reader.json';
import jaErrors from './messages/ja/errors.json';
import zhHansCore from './messages/zh-Hans/core.json';
import zhHansLibrary from './messages/zh-Hans/library.json';
import zhHansAdmin from './messages/zh-Hans/admin.json';
import zhHansReader from './messages/zh-Hans/reader.json';
import zhHansErrors from './messages/zh-Hans/errors.json';

export type Locale = Identity.Language;
export const LOCALES: readonly Locale[] = Identity.LANGUAGES;
// Each language's catalog is kept in areas (the core pages, the library's, the admin's, the
// reader's, and the API's errors as a page shows them: api-errors.ts), one file each, so that work on one area never touches another's file.
const en = { ...enCore, ...enLibrary, ...enAdmin, ...enReader, ...enErrors };
export type MessageKey = keyof typeof en;
export type Catalog = Record<MessageKey, string>;
const partial = (...parts: Record<string, string>[]): Catalog => Object.assign({}, ...parts) as Catalog;

export const CATALOGS: Record<Locale, Catalog> = {
  en,
  de: partial(deCore, deLibrary, deAdmin, deReader, deErrors),
  fr: partial(frCore, frLibrary, frAdmin, frReader, frErrors),
  es: partial(esCore, esLibrary, esAdmin, esReader, esErrors),
  ja: partial(jaCore, jaLibrary, jaAdmin, jaReader, jaErrors),
  'zh-Hans': partial(zhHansCore, zhHansLibrary, zhHansAdmin, zhHansReader, zhHansErrors),
};

/** The reader area's keys and the API errors': the reader page hands these messages to its script (decision: the reader's words in the browser). */
export const READER_KEYS = [...Object.keys(enReader), ...Object.keys(enErrors)] as MessageKey[];

/** Each language's name in itself, for the pickers. */
export const LOCALE_NAMES: Record<Locale, string> = { en: 'English', de: 'Deutsch', fr: 'Français', es: 'Español', ja: '日本語', 'zh-Hans': '简体中文' };

/** The cookie that keeps the choice of someone not signed in (the sign-in page's picker). */
export const LANGUAGE_COOKIE = 'bindery_lang';

/** A placeholder's value: text, a number (formatted by the locale) or a date. */
export type Values = Record<string, string | number | Date>;

/**
 * A pseudo language for tests of the right-to-left layout: English's messages between right-to-left
 * marks, `dir="rtl"` (its primary subtag is Arabic's). Never shipped: a request gets it only by
 * asking for `ar-XB` in Accept-Language while the server runs with BINDERY_PSEUDO_LOCALE=1
 * (test/e2e/web-rtl.e2e.test.ts); it is no profile language, no picker entry, no catalog file.
 */
export const PSEUDO_RTL = 'ar-XB';
/** A page's language: a shipped one, or the test-only pseudo one. */
export type PageLocale = Locale | typeof PSEUDO_RTL;
const pseudoOn = () => process.env.BINDERY_PSEUDO_LOCALE === '1';
const RLM = '\u200F';
let pseudoCatalog: Catalog | null = null;
const pseudo = (): Catalog => {
  pseudoCatalog ??= Object.fromEntries(Object.entries(en).map(([k, m]) => [k, `${RLM}${m}${RLM}`])) as Catalog;
  return pseudoCatalog;
};

export interface I18n {
  locale: PageLocale;
  /** the language's messages as written (the reader page hands some to its script) */
  catalog: Catalog;
  /** the writing direction of the language (every shipped one is left to right; the layout is ready for both) */
  dir: 'ltr' | 'rtl';
  timeZone: string;
  /** a message of the catalog with its placeholders filled (plurals, numbers and dates by the locale) */
  t(key: MessageKey, values?: Values): string;
  number(n: number, opts?: Parameters<IntlShape['formatNumber']>[1]): string;
  date(d: Date | string | number, opts?: Parameters<IntlShape['formatDate']>[1]): string;
}

const RTL = new Set(['ar', 'he', 'fa', 'ur']);
const cache = createIntlCache();
const made = new Map<string, I18n>();

const isLocale = (v: unknown): v is Locale => typeof v === 'string' && (LOCALES as readonly string[]).includes(v);

/** Time zones already checked (a profile's zone is asked for on every page): at most ZONES_KEPT names. */
const zones = new Map<string, string>();
const ZONES_KEPT = 1000;

/** The zone itself when Intl knows it, else UTC. Checking makes a formatter (costly): each name is checked once. */
function validTimeZone(tz: string | undefined): string {
  if (!tz) return 'UTC';
  const known = zones.get(tz);
  if (known !== undefined) return known;
  let valid: string;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    valid = tz;
  } catch {
    valid = 'UTC';
  }
  if (zones.size >= ZONES_KEPT) zones.clear();
  zones.set(tz, valid);
  return valid;
}

/** The translator of a language, in a time zone (made once for each pair). */
export function i18nOf(locale: PageLocale, timeZone?: string): I18n {
  const tz = validTimeZone(timeZone);
  const key = `${locale}\u0000${tz}`;
  const have = made.get(key);
  if (have) return have;
  const catalog = locale === PSEUDO_RTL ? pseudo() : CATALOGS[locale];
  const intl: IntlShape<string> = createIntl(
    {
      locale,
      defaultLocale: 'en',
      timeZone: tz,
      messages: catalog,
      // a missing key is reported by the catalogs' test, not logged on every page
      onError: () => {},
    },
    cache,
  );
  const one: I18n = {
    locale,
    catalog,
    dir: RTL.has(locale.split('-')[0]!) ? 'rtl' : 'ltr',
    timeZone: tz,
    // English's message is the default: a key a catalog lacks (never shipped: the test fails) shows it
    t: (id, values) => intl.formatMessage({ id, defaultMessage: en[id] }, values) as string,
    number: (n, opts) => intl.formatNumber(n, opts),
    date: (d, opts) => intl.formatDate(d, opts),
  };
  made.set(key, one);
  return one;
}

/**
 * The language a request is shown in: the person's own choice (their profile), else what they
 * picked before signing in (the cookie), else the first of the browser's `Accept-Language` that
 * Bindery has (a region falls back to its language: `de-AT` is `de`; any Chinese but traditional is
 * `zh-Hans`), else English.
 */
export function negotiate(profile: string | undefined | null, cookie: string | undefined | null, acceptLanguage: string | undefined | null): PageLocale {
  if (isLocale(profile)) return profile;
  if (isLocale(cookie)) return cookie;
  for (const tag of Identity.acceptedTags(acceptLanguage ?? '')) {
    const found = match(tag);
    if (found) return found;
  }
  return 'en';
}

/** A tag of Accept-Language as a page's language: a shipped one (contracts), or the pseudo language when it is on. */
function match(tag: string): PageLocale | null {
  if (tag.toLowerCase() === PSEUDO_RTL.toLowerCase()) return pseudoOn() ? PSEUDO_RTL : null;
  return Identity.shippedLanguage(tag);
}

/** An API error message as a page shows it: in English the API's own words, untouched; else the catalog's when the map knows it (api-errors.ts). */
export const apiError = (i18n: I18n, message: string): string => (i18n.locale === 'en' ? message : localizeError(message, (key, values) => i18n.t(key, values)));

/** What every component of a page reads its language from (the layout provides it). */
export const I18nContext = createContext<I18n>(i18nOf('en'));
/** The page's translator, inside the layout. */
export const useI18n = (): I18n => useContext(I18nContext);
