// Keeps the exact messages in contracts equal to the spec's Errors table.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accountLockedMessage, httpStatusOf, Messages, tooManyAttemptsMessage, type ErrorCode } from '../src/errors';

// ../shared sits next to the repository: resolved from the repo root; skipped when it is absent.
const SPEC = join(import.meta.dirname, '../..', '../shared/spec/interface.md');
const HAVE_SPEC = existsSync(SPEC);
if (!HAVE_SPEC) console.warn(`skipped: the error-message checks need ${SPEC}, which is absent`);
const spec = HAVE_SPEC ? readFileSync(SPEC, 'utf8') : '';
const start = spec.indexOf('## Errors');
const table = spec.slice(start, spec.indexOf('Browser-fragment requests', start));
/** status → every backticked message in that status's rows */
const rows = new Map<number, string[]>();
for (const line of table.split('\n')) {
  const m = /^\| (\d{3}) \|[^|]*\|(.*)\|\s*$/.exec(line);
  if (!m) continue;
  const msgs = [...m[2]!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
  rows.set(Number(m[1]), [...(rows.get(Number(m[1])) ?? []), ...msgs]);
}

const fromSpec: [keyof typeof Messages, number, ErrorCode][] = [
  ['invalidRequest', 400, 'invalid_request'],
  ['usernameBlank', 400, 'username_blank'],
  ['invalidRoleRegister', 400, 'invalid_role'],
  ['invalidRoleUpdate', 400, 'invalid_role'],
  ['invalidUserId', 400, 'invalid_user_id'],
  ['userIdRequired', 400, 'user_id_required'],
  ['lastAdminDemote', 400, 'last_admin'],
  ['lastAdminDelete', 400, 'last_admin'],
  ['invalidTimezone', 400, 'invalid_timezone'],
  ['currentPasswordRequired', 400, 'validation'],
  ['passwordMismatch', 400, 'password_mismatch'],
  ['invalidCredentials', 401, 'invalid_credentials'],
  ['currentPasswordIncorrect', 401, 'current_password_incorrect'],
  ['adminRequired', 403, 'admin_required'],
  ['registrationDisabled', 403, 'registration_disabled'],
  ['adminCreateForbidden', 403, 'admin_create_forbidden'],
  ['userNotFound', 404, 'user_not_found'],
  ['emailExists', 409, 'conflict'],
  ['usernameExists', 409, 'conflict'],
  ['usernameTaken', 409, 'conflict'],
  ['emailTaken', 409, 'conflict'],
  ['failedToCheckUsers', 500, 'internal'],
  ['failedToHashPassword', 500, 'internal'],
  ['failedToCreateDefaultCollections', 500, 'internal'],
  ['failedToGenerateToken', 500, 'internal'],
  ['failedToGenerateRefreshToken', 500, 'internal'],
  ['failedToLoadProfile', 500, 'internal'],
];

describe.skipIf(!HAVE_SPEC)('error messages match the spec (../shared/spec/interface.md)', () => {
  it('found the Errors table', () => {
    expect(rows.get(400)?.length).toBeGreaterThan(5);
  });
  for (const [key, status, code] of fromSpec) {
    it(`${key} is listed under ${status} and maps to ${status}`, () => {
      expect(rows.get(status)).toContain(Messages[key]);
      expect(httpStatusOf(code)).toBe(status);
    });
  }
  it('lock messages follow the spec templates', () => {
    const templates = rows.get(429)!;
    expect(templates).toContain('Account locked. Try again in <n> minutes');
    expect(templates).toContain('Too many failed attempts. Account locked for <n> minutes');
    expect(accountLockedMessage(3)).toBe('Account locked. Try again in 3 minutes');
    expect(tooManyAttemptsMessage(15)).toBe('Too many failed attempts. Account locked for 15 minutes');
    expect(httpStatusOf('login_locked')).toBe(429);
  });
  it('every spec message of the account area is one of ours', () => {
    const ours = new Set<string>(Object.values(Messages));
    const specOnly = [...rows.entries()]
      .filter(([s]) => s !== 429)
      .flatMap(([, m]) => m)
      .filter((m) => !ours.has(m));
    expect(specOnly).toEqual([]);
  });
});
