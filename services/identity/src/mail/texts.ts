// The words of the mails Bindery sends (issue 48): a password reset, an invitation, the admin's test
// mail and a book sent to an e-reader, each in its recipient's language (their profile's; English
// when they chose none, and for an invitation, whose recipient has no account yet). Identity's own
// catalogs, one per language, ICU MessageFormat through @formatjs/intl like the web's; pure, so the
// gateway that mails them composes them with the link's address it alone knows.
import { createIntl, createIntlCache, type IntlShape } from '@formatjs/intl';
import { Identity } from '@bindery/contracts';
import en from './messages/en.json';
import de from './messages/de.json';
import fr from './messages/fr.json';
import es from './messages/es.json';
import ja from './messages/ja.json';
import zhHans from './messages/zh-Hans.json';

export type MailKey = keyof typeof en;
export const MAIL_CATALOGS: Record<Identity.Language, Record<MailKey, string>> = { en, de, fr, es, ja, 'zh-Hans': zhHans };

/** A mail's subject and plain-text body. */
export interface MailText {
  subject: string;
  text: string;
}

const cache = createIntlCache();
const made = new Map<Identity.Language, IntlShape<string>>();

const isLanguage = (v: unknown): v is Identity.Language => typeof v === 'string' && (Identity.LANGUAGES as readonly string[]).includes(v);

/** The formatter of a recipient's language (English for none, or one Bindery does not ship). */
function intlOf(language: string | null | undefined): IntlShape<string> {
  const lang = isLanguage(language) ? language : 'en';
  let intl = made.get(lang);
  if (!intl) {
    // a missing key is the catalogs' test's to report; English's message stands in for it
    intl = createIntl({ locale: lang, defaultLocale: 'en', timeZone: 'UTC', messages: MAIL_CATALOGS[lang], onError: () => {} }, cache);
    made.set(lang, intl);
  }
  return intl;
}

const say = (intl: IntlShape<string>, id: MailKey, values?: Record<string, string | number>) => intl.formatMessage({ id, defaultMessage: en[id] }, values) as string;

/** Minutes from now until `iso`, at least one. */
const minutesUntil = (iso: string, now = Date.now()) => Math.max(1, Math.round((new Date(iso).getTime() - now) / 60_000));

export function resetText(language: string | null | undefined, username: string, link: string, expiresAt: string, now = Date.now()): MailText {
  const intl = intlOf(language);
  return { subject: say(intl, 'reset.subject'), text: say(intl, 'reset.body', { username, link, minutes: minutesUntil(expiresAt, now) }) };
}

export function invitationText(language: string | null | undefined, link: string, expiresAt: string): MailText {
  const intl = intlOf(language);
  const until = intl.formatDate(expiresAt, { dateStyle: 'full', timeStyle: 'short', timeZone: 'UTC' });
  return { subject: say(intl, 'invitation.subject'), text: say(intl, 'invitation.body', { link, until }) };
}

export function testText(language: string | null | undefined): MailText {
  const intl = intlOf(language);
  return { subject: say(intl, 'test.subject'), text: say(intl, 'test.body') };
}

/** A book mailed to an e-reader: its subject is the book's title (Kindles file it by that), the body a line. */
export function sendText(language: string | null | undefined, title: string): MailText {
  return { subject: title, text: say(intlOf(language), 'send.body', { title }) };
}
