// The reader's words in the page's language: the page hands its script the reader area's messages
// (a JSON data block, #reader-messages, in the language of <html lang>), and this formats them with
// the catalogs' own small formatter (i18n/format.ts). A key the block lacks (a page older than the
// script) shows English's message, bundled for that alone.
import { type FormatValues, formatter } from '../i18n/format';
import english from '../i18n/messages/en/reader.json';

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

/** A number in the page's language (at most one decimal: positions in per cent). */
const numbers = new Intl.NumberFormat(locale, { maximumFractionDigits: 1 });
export const num = (n: number): string => numbers.format(n);
