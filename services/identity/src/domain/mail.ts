// Reset links, invitations and e-reader addresses (issue 47): the rules, without I/O.
import { err, ok, type Result } from '@bindery/contracts';
import type { LibraryAccess } from './library-access';
import { parseLibraryAccess } from './library-access';
import { emailProblem, invalidRequest, passwordProblem, readStrings, validation } from './validate';

/** A reset link works this long (the 30 minutes). */
export const RESET_TTL_MS = 30 * 60 * 1000;
/** At most this many reset mails per account within RESET_WINDOW_MS; more are dropped without a word. */
export const RESET_PER_ACCOUNT = 3;
export const RESET_WINDOW_MS = 60 * 60 * 1000;
/** An invitation's link works this long (decided: a week, time for someone to see the mail). */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const RESET_INVALID = 'this password reset link is invalid, used or expired';
export const INVITATION_INVALID = 'this invitation is invalid, used or expired';
export const TOKEN_MAX = 256;

export function parseResetRequest(raw: Record<string, unknown>): Result<string> {
  const f = readStrings(raw, ['email'] as const);
  if (!f) return err(invalidRequest());
  const email = f.email.trim();
  const p = emailProblem(email);
  return p ? err(validation(p)) : ok(email);
}

export interface NewPassword {
  token: string;
  password: string;
}

/** A link's token and a new password given twice (`password_field` names it in messages). */
export function parseNewPassword(raw: Record<string, unknown>, passwordField: 'new_password' | 'password'): Result<NewPassword> {
  const f = readStrings(raw, ['token', passwordField, 'confirm_password'] as const);
  if (!f) return err(invalidRequest());
  if (f.token === '') return err(validation('token is required'));
  if (f.token.length > TOKEN_MAX) return err(validation(`token must be at most ${TOKEN_MAX} characters`));
  const pw = f[passwordField];
  const p = passwordProblem(passwordField, pw);
  if (p) return err(validation(p));
  if (f.confirm_password === '') return err(validation('confirm_password is required'));
  if (pw !== f.confirm_password) return err(validation('passwords do not match'));
  return ok({ token: f.token, password: pw });
}

export interface InvitationInput extends LibraryAccess {
  email: string;
  role: 'user' | 'admin';
}

export function parseInvitation(raw: Record<string, unknown>): Result<InvitationInput> {
  const email = typeof raw.email === 'string' ? raw.email.trim() : raw.email === undefined || raw.email === null ? '' : null;
  if (email === null) return err(invalidRequest());
  const p = emailProblem(email);
  if (p) return err(validation(p));
  const role = raw.role === undefined || raw.role === null || raw.role === '' ? 'user' : raw.role;
  if (role !== 'user' && role !== 'admin') return err(validation("role must be 'user' or 'admin'"));
  const access = raw.all_libraries === undefined && raw.library_ids === undefined ? ok({ all_libraries: false, library_ids: [] }) : parseLibraryAccess(raw);
  if (!access.ok) return access;
  return ok({ email, role, ...access.value });
}

export function parseEreaderAddress(raw: Record<string, unknown>): Result<string> {
  const f = readStrings(raw, ['address'] as const);
  if (!f) return err(invalidRequest());
  const a = f.address.trim();
  if (a === '') return ok('');
  const p = emailProblem(a);
  return p ? err(validation(p.replace('email', 'address'))) : ok(a);
}

/** How long after each failed try a send is tried again; after the last, it has failed for good. */
export const SEND_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 60 * 60_000] as const;

export interface SendInput {
  item_id: string;
  title: string;
  format: string;
  file_name: string;
  size: number;
  convert_from?: string;
}

/** What the gateway asks to send (it has checked the item and chosen its file); every field checked again. */
export function parseSendInput(raw: Record<string, unknown>): Result<SendInput> {
  const { item_id, title, format, file_name, size, convert_from } = raw;
  if (typeof item_id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(item_id)) return err(validation('item_id must be a media item id'));
  if (typeof title !== 'string' || title.length > 1000) return err(validation('title must be text of at most 1000 characters'));
  if (typeof format !== 'string' || !/^[a-z0-9]{2,8}$/.test(format)) return err(validation('format must be a book format'));
  if (typeof file_name !== 'string' || file_name === '' || file_name.length > 255 || /[\u0000-\u001f/\\]/.test(file_name)) return err(validation('file_name must be a file name'));
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return err(validation('size must be a whole number of bytes'));
  if (convert_from !== undefined && (typeof convert_from !== 'string' || !/^[a-z0-9]{2,8}$/.test(convert_from))) return err(validation('convert_from must be a book format'));
  return ok({ item_id: item_id.toLowerCase(), title, format, file_name, size, ...(convert_from !== undefined ? { convert_from } : {}) });
}

/**
 * What one try of a send comes to: sent; tried again after the next delay (a server that may take it
 * later); or failed for good (a server's final refusal, or no tries left).
 */
export function sendOutcome(attempt: number, sent: boolean, permanent: boolean, now: Date): { outcome: 'sent' | 'retrying' | 'failed'; next_attempt_at: string | null } {
  if (sent) return { outcome: 'sent', next_attempt_at: null };
  const delay = SEND_RETRY_DELAYS_MS[attempt - 1];
  if (permanent || delay === undefined) return { outcome: 'failed', next_attempt_at: null };
  return { outcome: 'retrying', next_attempt_at: new Date(now.getTime() + delay).toISOString() };
}
