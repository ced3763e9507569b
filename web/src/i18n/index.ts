// The pages' languages (issue 48): one message catalog per language (ICU MessageFormat, through
// @formatjs/intl), the choice of language for a request, and numbers and dates in the person's
// locale and time zone. English is the source: its catalog names every key; the others hold the
// same keys with the same placeholders (test/unit/i18n-catalogs).
import { createIntl, createIntlCache, type IntlShape } from '@formatjs/intl';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { Identity } from '@bindery/contracts';
import enCore from './messages/en/core.json';
import enLibrary from './messages/en/library.json';
import enAdmin from './messages/en/admin.json';
import enReader from './messages/en/reader.json';
import deCore from './messages/de/core.json';
import deLibrary from './messages/de/library.json';
import deAdmin from './messages/de/admin.json';
import deReader from './messages/de/reader.json';
import frCore from './messages/fr/core.json';
import frLibrary from './messages/fr/library.json';
import frAdmin from './messages/fr/admin.json';
import frReader from './messages/fr/reader.json';
import esCore from './messages/es/core.json';
import esLibrary from './messages/es/library.json';
import esAdmin from './messages/es/admin.json';
import esReader from './messages/es/reader.json';
import jaCore from './messages/ja/core.json';
import jaLibrary from './messages/ja/library.json';
import jaAdmin from './messages/ja/admin.json';
import jaReader from './messages/ja/reader.json';
import zhHansCore from './messages/zh-Hans/core.json';
import zhHansLibrary from './messages/zh-Hans/library.json';
import zhHansAdmin from './messages/zh-Hans/admin.json';
import zhHansReader from './messages/zh-Hans/reader.json';

export type Locale = Identity.Language;
export const LOCALES: readonly Locale[] = Identity.LANGUAGES;
// Each language's catalog is kept in areas (the core pages, the library's, the admin's, the
// reader's), one file each, so that work on one area never touches another's file.
const en = { ...enCore, ...enLibrary, ...enAdmin, ...enReader };
export type MessageKey = keyof typeof en;
export type Catalog = Record<MessageKey, string>;
const partial = (...parts: Record<string, string>[]): Catalog => Object.assign({}, ...parts) as Catalog;

export const CATALOGS: Record<Locale, Catalog> = {
  en,
  de: partial(deCore, deLibrary, deAdmin, deReader),
  fr: partial(frCore, frLibrary, frAdmin, frReader),
  es: partial(esCore, esLibrary, esAdmin, esReader),
  ja: partial(jaCore, jaLibrary, jaAdmin, jaReader),
  'zh-Hans': partial(zhHansCore, zhHansLibrary, zhHansAdmin, zhHansReader),
};

/** The reader area's keys: the reader page hands these messages to its script (decision: the reader's messages in the browser). */
export const READER_KEYS = Object.keys(enReader) as MessageKey[];

/** Each language's name in itself, for the pickers. */
export const LOCALE_NAMES: Record<Locale, string> = { en: 'English', de: 'Deutsch', fr: 'Français', es: 'Español', ja: '日本語', 'zh-Hans': '简体中文' };

/** The cookie that keeps the choice of someone not signed in (the sign-in page's picker). */
export const LANGUAGE_COOKIE = 'bindery_lang';

/** A placeholder's value: text, a number (formatted by the locale) or a date. */
export type Values = Record<string, string | number | Date>;

export interface I18n {
  locale: Locale;
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

function validTimeZone(tz: string | undefined): string {
  if (!tz) return 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return tz;
  } catch {
    return 'UTC';
  }
}

/** The translator of a language, in a time zone (made once for each pair). */
export function i18nOf(locale: Locale, timeZone?: string): I18n {
  const tz = validTimeZone(timeZone);
  const key = `${locale}\u0000${tz}`;
  const have = made.get(key);
  if (have) return have;
  const intl: IntlShape<string> = createIntl(
    {
      locale,
      defaultLocale: 'en',
      timeZone: tz,
      messages: CATALOGS[locale],
      // a missing key is reported by the catalogs' test, not logged on every page
      onError: () => {},
    },
    cache,
  );
  const one: I18n = {
    locale,
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
export function negotiate(profile: string | undefined | null, cookie: string | undefined | null, acceptLanguage: string | undefined | null): Locale {
  if (isLocale(profile)) return profile;
  if (isLocale(cookie)) return cookie;
  for (const tag of preferred(acceptLanguage ?? '')) {
    const found = match(tag);
    if (found) return found;
  }
  return 'en';
}

/** The tags of an Accept-Language header, most wanted first (q=0 left out). */
function preferred(header: string): string[] {
  const out: { tag: string; q: number; i: number }[] = [];
  header
    .slice(0, 1024)
    .split(',')
    .forEach((part, i) => {
      const [rawTag, ...params] = part.trim().split(';');
      const tag = (rawTag ?? '').trim();
      if (!/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$|^\*$/.test(tag)) return;
      let q = 1;
      for (const p of params) {
        const m = /^\s*q\s*=\s*([01](\.\d{0,3})?)\s*$/.exec(p);
        if (m) q = Number(m[1]);
      }
      if (q > 0) out.push({ tag, q, i });
    });
  return out.sort((a, b) => b.q - a.q || a.i - b.i).map((x) => x.tag);
}

function match(tag: string): Locale | null {
  const lower = tag.toLowerCase();
  for (const l of LOCALES) if (l.toLowerCase() === lower) return l;
  const [lang, ...rest] = lower.split('-');
  if (lang === 'zh') {
    // traditional script or its regions: none shipped
    if (rest.includes('hant') || rest.includes('tw') || rest.includes('hk') || rest.includes('mo')) return null;
    return 'zh-Hans';
  }
  return LOCALES.find((l) => l === lang) ?? null;
}

/** What every component of a page reads its language from (the layout provides it). */
export const I18nContext = createContext<I18n>(i18nOf('en'));
/** The page's translator, inside the layout. */
export const useI18n = (): I18n => useContext(I18nContext);
