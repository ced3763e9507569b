// The API's error messages as pages show them (issue 48, message_localized): the `errors` area's
// English messages are the API's own words, each one the interface really says; the map finds a
// message (placeholders included) and gives the catalog's translation; English and unknown messages
// stay as the API worded them.
import { describe, expect, it } from 'vitest';
import { accountLockedMessage, Messages, rateLimitedMessage, Reading, tooManyAttemptsMessage } from '@bindery/contracts';
import { apiError, CATALOGS, i18nOf } from '../src/i18n';
import { errorKeyOf, localizeError } from '../src/i18n/api-errors';
import english from '../src/i18n/messages/en/errors.json';

/** Every message the API can answer with that the map may know: fixed ones, and the numbered ones at a sample number. */
const API_MESSAGES = new Set<string>([
  ...Object.values(Messages),
  ...Object.values(Reading.ReadingMessages),
  accountLockedMessage(15),
  tooManyAttemptsMessage(15),
  rateLimitedMessage(15),
]);

describe('the map of the API’s messages', () => {
  it('holds only the API’s own words, each one the interface says', () => {
    for (const [key, message] of Object.entries(english)) {
      const sample = message.replace(/\{\w+\}/g, '15');
      expect(API_MESSAGES.has(sample), `${key}: “${message}” is no API message`).toBe(true);
      expect(errorKeyOf(sample)?.key, key).toBe(key);
    }
  });

  it('finds a message with its numbers, and nothing for another', () => {
    expect(errorKeyOf(accountLockedMessage(30))).toEqual({ key: 'error.accountLocked', values: { minutes: 30 } });
    expect(errorKeyOf('invalid credentials')).toEqual({ key: 'error.invalidCredentials', values: {} });
    expect(errorKeyOf('invalid credentials!')).toBeNull();
    expect(errorKeyOf('title must not contain control characters')).toBeNull();
  });

  it('translates in the page’s language; English and unknown messages stay the API’s words', () => {
    expect(apiError(i18nOf('de'), 'invalid credentials')).toBe('Anmeldedaten ungültig');
    expect(apiError(i18nOf('ja'), accountLockedMessage(15))).toBe('アカウントはロックされています。15 分後にもう一度お試しください');
    expect(apiError(i18nOf('fr'), tooManyAttemptsMessage(30))).toBe('Trop de tentatives échouées. Compte verrouillé pendant 30 minutes');
    expect(apiError(i18nOf('de'), 'something the map does not know')).toBe('something the map does not know');
    expect(apiError(i18nOf('en'), tooManyAttemptsMessage(1000))).toBe('Too many failed attempts. Account locked for 1000 minutes');
    expect(localizeError('passwords do not match', (k) => CATALOGS.es[k])).toBe('las contraseñas no coinciden');
  });
});
