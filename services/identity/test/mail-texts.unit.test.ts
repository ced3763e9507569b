// The mails' catalogs (issue 48): every language Bindery ships holds exactly English's keys, each
// message parsing as ICU MessageFormat with English's placeholders (name and kind, plural branches
// included); then the words each mail comes to, in English as before and in a recipient's language.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { Identity } from '@bindery/contracts';
import { invitationText, MAIL_CATALOGS, resetText, sendText, testText } from '../src/mail/texts';

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

describe('the mails’ catalogs', () => {
  const english: Record<string, string> = MAIL_CATALOGS.en;
  const keys = Object.keys(english).sort();

  it('has a catalog for each language a profile may choose, and no other', () => {
    expect(Object.keys(MAIL_CATALOGS).sort()).toEqual([...Identity.LANGUAGES].sort());
    const files = readdirSync(join(import.meta.dirname, '../src/mail/messages')).sort();
    expect(files).toEqual([...Identity.LANGUAGES].map((l) => `${l}.json`).sort());
  });

  for (const language of Identity.LANGUAGES) {
    it(`${language}: every key of English and no other, each with English’s placeholders`, () => {
      const catalog: Record<string, string> = MAIL_CATALOGS[language];
      expect(Object.keys(catalog).sort()).toEqual(keys);
      for (const k of keys) {
        expect(catalog[k]!.trim(), `${language} ${k} is empty`).not.toBe('');
        expect(placeholders(catalog[k]!), `${language} ${k}`).toEqual(placeholders(english[k]!));
      }
    });
  }

  it('finds a placeholder that differs (the check can fail)', () => {
    expect(placeholders('{title}, sent')).not.toEqual(placeholders('{titel}, gesendet'));
  });
});

describe('the words of each mail', () => {
  const now = Date.parse('2026-12-03T10:00:00Z');
  const expires = '2026-12-03T10:30:00Z';
  const link = 'https://books.example/reset-password?token=abc';

  it('in English when the recipient chose no language (or one Bindery does not ship)', () => {
    for (const none of [undefined, null, '', 'pt']) {
      const m = resetText(none, 'alice', link, expires, now);
      expect(m.subject).toBe('Reset your Bindery password');
      expect(m.text).toBe(
        [
          'Hello alice,',
          '',
          'Someone (we hope you) asked to reset the password of your Bindery account. To choose a new password, open:',
          '',
          link,
          '',
          'The link works once, for the next 30 minutes. Using it signs your account out everywhere.',
          'If you did not ask for this, ignore this mail: your password stays as it is.',
        ].join('\n'),
      );
    }
    expect(testText(undefined)).toEqual({ subject: 'Bindery test mail', text: 'This is a test mail from your Bindery server: mail works.' });
    expect(sendText(undefined, 'A Novel')).toEqual({ subject: 'A Novel', text: 'A Novel, sent from Bindery.' });
    const inv = invitationText(undefined, 'https://books.example/invitation?token=x', '2026-12-10T09:05:00Z');
    expect(inv.subject).toBe('You are invited to a Bindery library');
    expect(inv.text).toContain('\n\nhttps://books.example/invitation?token=x\n\nThe link works once, until Thursday, December 10, 2026 at 9:05 AM (UTC).');
  });

  it('in the recipient’s language: German, Japanese, French', () => {
    const de = resetText('de', 'anna', link, expires, now);
    expect(de.subject).toBe('Ihr Bindery-Passwort zurücksetzen');
    expect(de.text).toContain('Hallo anna,');
    expect(de.text).toContain('in den nächsten 30 Minuten');
    expect(de.text).toContain(`\n\n${link}\n\n`);
    expect(resetText('de', 'anna', link, '2026-12-03T10:01:00Z', now).text).toContain('in den nächsten 1 Minute.');
    expect(testText('ja').subject).toBe('Bindery のテストメール');
    expect(sendText('fr', 'Le Livre')).toEqual({ subject: 'Le Livre', text: 'Le Livre, envoyé depuis Bindery.' });
    expect(invitationText('fr', 'x', '2026-12-10T09:05:00Z').text).toContain('jusqu’au jeudi 10 décembre 2026 à 09:05 (UTC).');
  });
});
