// Field rules shared by the deciders. Messages are Bindery's wording (the spec leaves it open);
// docs/decisions.md lists them.
import { fail, Messages, type Failure } from '@bindery/contracts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
export const USERNAME_MIN = 3;
export const USERNAME_MAX = 50;
export const NAME_MAX = 100;
export const THEME_MAX = 50;
export const EMAIL_MAX = 254;
/** a login string is an e-mail or a username; anything longer cannot match an account */
export const LOGIN_MAX = 320;
/** a stored password has at most 128 code points; longer input is refused before hashing */
export const LOGIN_PASSWORD_MAX = 1024;

const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[^\s@"<>()[\]\\,;:]{2,}$/;

export const validation = (message: string): Failure => fail('validation', message);
export const invalidRequest = (): Failure => fail('invalid_request', Messages.invalidRequest);

export { isUuid } from '@bindery/contracts';
export const isEmail = (s: string): boolean => s.length <= EMAIL_MAX && EMAIL.test(s);
/** characters as a person counts them (code points), not UTF-16 units */
export const length = (s: string): number => [...s].length;

/** The complexity rule: 8 to 128 characters with at least one letter and one digit. */
export function passwordProblem(field: string, pw: string): string | null {
  if (pw === '') return `${field} is required`;
  if (length(pw) < PASSWORD_MIN) return `${field} must be at least ${PASSWORD_MIN} characters`;
  if (length(pw) > PASSWORD_MAX) return `${field} must be at most ${PASSWORD_MAX} characters`;
  if (!/\p{L}/u.test(pw) || !/\p{N}/u.test(pw)) return `${field} must contain at least one letter and one digit`;
  return null;
}

/** control characters (C0, DEL, C1) and the bidirectional formatting marks, embeddings, overrides and isolates */
const UNSEEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

export function usernameProblem(u: string): string | null {
  if (u === '') return 'username is required';
  // a name that reads as another one (or hides its characters) cannot tell accounts apart
  // (surrounding whitespace, tabs included, is trimmed away at registration, not refused)
  if (UNSEEN.test(u.trim())) return Messages.usernameCharacters;
  const n = length(u);
  if (n < USERNAME_MIN || n > USERNAME_MAX) return `username must be between ${USERNAME_MIN} and ${USERNAME_MAX} characters`;
  return null;
}

export function emailProblem(e: string): string | null {
  if (e === '') return 'email is required';
  if (!isEmail(e)) return 'email must be a valid email address';
  return null;
}

let zones: Set<string> | null = null;
/** An IANA zone name as the runtime's tz database knows it (canonical names and links). */
export function isTimezone(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(tz)) return false;
  zones ??= new Set(Intl.supportedValuesOf('timeZone'));
  if (zones.has(tz) || tz === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads a body as the spec's binder would: absent or null fields are '', strings are kept,
 * any other JSON type means the body cannot be bound (400 invalid request).
 */
export function readStrings<K extends string>(input: Record<string, unknown>, keys: readonly K[]): Record<K, string> | null {
  const out = {} as Record<K, string>;
  for (const k of keys) {
    const v = input[k];
    if (v === undefined || v === null) out[k] = '';
    else if (typeof v === 'string') out[k] = v;
    else return null;
  }
  return out;
}
