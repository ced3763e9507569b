// The reader's words in the page's language: the page hands its script the reader area's messages
// (a JSON data block, #reader-messages, in the language of <html lang>), and this formats them with
// the catalogs' own small formatter (i18n/format.ts); the API's errors it shows, through the map of
// i18n/api-errors.ts. A key the block lacks (a page older than the
// script) shows English's message, bundled for that alone.
import { localizeError } from '../i18n/api-errors';
import { type FormatValues, formatter } from '../i18n/format';
import englishErrors from '../i18n/messages/en/errors.json';
import englishReader from '../i18n/messages/en/reader.json';

const english = { ...englishReader, ...englishErrors };
export type ReaderKey = keyof typeof english;

function readBlock(): Partial<Record<ReaderKey, string>> {
  try {
    const v: unknown = JSON.parse(document.getElementById('reader-messages')?.textContent ?? 'null');
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

const locale = document.documentElement.lang || 'en';
const messages = readBlock();
const format = formatter(locale);

/** A message of the reader with its placeholders filled. */
export const t = (key: ReaderKey, values?: FormatValues): string => format(messages[key] ?? english[key], values);

/** An API error in the page's language (in English, and for a message the map does not know, the API's own words). */
export const apiError = (message: string): string => (locale === 'en' ? message : localizeError(message, t));

/** A number in the page's language (at most one decimal: positions in per cent). */
let numbers: Intl.NumberFormat | null = null;
export const num = (n: number): string => {
  numbers ??= new Intl.NumberFormat(locale, { maximumFractionDigits: 1 });
  return numbers.format(n);
};
