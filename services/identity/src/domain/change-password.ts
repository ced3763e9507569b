// ChangePassword (self and admin reset): rules 2-4; the current-password check needs the hash, so
// the handler verifies it between parse and decide.
import { err, fail, Messages, ok, type Result } from '@bindery/contracts';
import { invalidRequest, passwordProblem, readStrings, validation } from './validate';

export interface PasswordInput {
  current_password: string;
  new_password: string;
  confirm_password: string;
}

export function parsePasswordChange(raw: Record<string, unknown>, selfMode: boolean): Result<PasswordInput> {
  const f = readStrings(raw, ['current_password', 'new_password', 'confirm_password'] as const);
  if (!f) return err(invalidRequest());
  const p = passwordProblem('new_password', f.new_password);
  if (p) return err(validation(p));
  if (f.confirm_password === '') return err(validation('confirm_password is required'));
  if (selfMode && f.current_password === '') return err(fail('validation', Messages.currentPasswordRequired));
  return ok(f);
}

export function decidePasswordChange(input: PasswordInput, currentMatches: boolean | 'skipped'): Result<true> {
  if (currentMatches === false) return err(fail('current_password_incorrect', Messages.currentPasswordIncorrect));
  if (input.new_password !== input.confirm_password) return err(fail('password_mismatch', Messages.passwordMismatch));
  return ok(true);
}

/**
 * When an admin reset ends the target's sessions: the first whole second after `now`, taken once
 * the reset holds the credentials row. Access tokens carry a whole-second `iat`, so every token
 * issued before the reset has `iat` below it; a login with the new password inside that second
 * waits for the cutoff before its token is signed (see `untilValid` in handlers/auth.ts).
 */
export function sessionCutoff(now: Date): Date {
  return new Date(Math.floor(now.getTime() / 1000) * 1000 + 1000);
}
