import { describe, expect, it } from 'vitest';
import { decidePasswordChange, parsePasswordChange, sessionCutoff } from '../src/domain/change-password';
import { decideDelete } from '../src/domain/delete-user';
import { parseMaxDevices } from '../src/domain/max-devices';
import { activeLock, afterFailure, remainingMinutes } from '../src/domain/login-lock';
import { parseConfigPut, parseSettingsPut, resolveSettings, settingEntries } from '../src/domain/settings';
import { initialUser, fold } from '../src/domain/user';
import { userRegistered } from '../src/domain/register';
import { isTimezone, usernameProblem } from '../src/domain/validate';

const ID = '00000000-0000-4000-8000-000000000001';
const A2 = '00000000-0000-4000-8000-000000000002';
const admin = fold(ID, [userRegistered(ID, { email: 'a@example.com', username: 'adm', password: '', first_name: '', last_name: '', role: '' }, 'admin', null, true)]);

describe('password change', () => {
  it('checks complexity, confirmation, then current password (self mode)', () => {
    expect(parsePasswordChange({ new_password: 'short', confirm_password: 'short' }, false)).toEqual({
      ok: false,
      error: { code: 'validation', message: 'new_password must be at least 8 characters' },
    });
    expect(parsePasswordChange({ new_password: 'passw0rd-x' }, false)).toEqual({ ok: false, error: { code: 'validation', message: 'confirm_password is required' } });
    expect(parsePasswordChange({ new_password: 'passw0rd-x', confirm_password: 'x' }, true)).toEqual({
      ok: false,
      error: { code: 'validation', message: 'current password required' },
    });
    expect(parsePasswordChange({ new_password: 'passw0rd-x', confirm_password: 'x' }, false).ok).toBe(true);
  });
  it('wrong current is 401 before a mismatch is 400', () => {
    const input = { current_password: 'a', new_password: 'passw0rd-x', confirm_password: 'other' };
    expect(decidePasswordChange(input, false)).toEqual({ ok: false, error: { code: 'current_password_incorrect', message: 'current password is incorrect' } });
    expect(decidePasswordChange(input, true)).toEqual({ ok: false, error: { code: 'password_mismatch', message: 'passwords do not match' } });
    expect(decidePasswordChange({ ...input, confirm_password: 'passw0rd-x' }, 'skipped')).toEqual({ ok: true, value: true });
  });
  it('an admin reset cuts sessions at the next whole second, so same-second logins after it stay valid', () => {
    expect(sessionCutoff(new Date('2026-01-01T00:00:00.400Z')).toISOString()).toBe('2026-01-01T00:00:01.000Z');
    expect(sessionCutoff(new Date('2026-01-01T00:00:00.000Z')).toISOString()).toBe('2026-01-01T00:00:01.000Z');
  });
});

describe('delete', () => {
  it('unknown user is 404', () => {
    expect(decideDelete(initialUser(ID), A2, [])).toEqual({ ok: false, error: { code: 'user_not_found', message: 'user not found' } });
  });
  it('the last admin stays', () => {
    expect(decideDelete(admin, ID, [])).toEqual({ ok: false, error: { code: 'last_admin', message: 'cannot delete the last admin account' } });
  });
  it('a deleted admin names the first other admin as successor', () => {
    expect(decideDelete(admin, A2, [A2, '00000000-0000-4000-8000-000000000003'])).toEqual({
      ok: true,
      value: { type: 'identity.user-deleted.v1', data: { user_id: ID, role: 'admin', deleted_by: A2, successor_admin_id: A2 } },
    });
  });
});

describe('max devices', () => {
  it('binds, then validates 1..100', () => {
    expect(parseMaxDevices({ max_devices: true })).toEqual({ ok: false, error: { code: 'invalid_request', message: 'invalid request' } });
    expect(parseMaxDevices({})).toEqual({ ok: false, error: { code: 'validation', message: 'max_devices is required' } });
    expect(parseMaxDevices({ max_devices: 0 })).toEqual({ ok: false, error: { code: 'validation', message: 'max_devices must be an integer between 1 and 100' } });
    expect(parseMaxDevices({ max_devices: 101 }).ok).toBe(false);
    expect(parseMaxDevices({ max_devices: 2.5 }).ok).toBe(false);
    expect(parseMaxDevices({ max_devices: 100 })).toEqual({ ok: true, value: 100 });
    // a string is the wrong JSON type; the gateway converts a form's digits before it calls
    expect(parseMaxDevices({ max_devices: '7' })).toEqual({ ok: false, error: { code: 'invalid_request', message: 'invalid request' } });
  });
});

describe('login lock', () => {
  const policy = { maxAttempts: 3, lockMinutes: 15 };
  const t0 = new Date('2026-01-01T00:00:00Z');
  const at = (s: number) => new Date(t0.getTime() + s * 1000);
  it('locks on the threshold-th failure', () => {
    let row = afterFailure(null, t0, policy);
    expect(row).toMatchObject({ failures: 1, lockedNow: false });
    row = afterFailure(row, at(1), policy);
    row = afterFailure(row, at(2), policy);
    expect(row.lockedNow).toBe(true);
    expect(row.locked_until).toEqual(at(2 + 900));
    expect(activeLock(row, at(3))).toEqual(at(902));
  });
  it('counts whole remaining minutes plus one', () => {
    const until = at(900);
    expect(remainingMinutes(until, t0)).toBe(16);
    expect(remainingMinutes(until, at(1))).toBe(15);
    expect(remainingMinutes(until, at(899))).toBe(1);
  });
  it('an expired lock and failures outside the window start over', () => {
    const locked = { failures: 3, first_failed_at: t0, locked_until: at(900) };
    expect(activeLock(locked, at(900))).toBeNull();
    expect(afterFailure(locked, at(901), policy)).toMatchObject({ failures: 1, lockedNow: false });
    expect(afterFailure({ failures: 2, first_failed_at: t0, locked_until: null }, at(901), policy)).toMatchObject({ failures: 1 });
  });
});

describe('settings', () => {
  it('have the spec attributes and defaults', () => {
    const e = settingEntries({}).find((x) => x.key === 'scan_poll_interval_seconds')!;
    expect(e).toMatchObject({ type: 'integer', min: 1, max: 3600, requires_restart: false, category: 'scanner', is_default: true });
    expect(resolveSettings({}).session_duration_seconds).toBe(604800);
    expect(settingEntries({ scan_poll_interval_seconds: 30 }).find((x) => x.key === 'scan_poll_interval_seconds')!.is_default).toBe(false);
  });
  it('PUT validates type, min and max, all or nothing', () => {
    expect(parseSettingsPut({ scan_poll_interval_seconds: 0 })).toEqual({
      ok: false,
      error: { code: 'validation', message: 'scan_poll_interval_seconds must be between 1 and 3600' },
    });
    expect(parseSettingsPut({ scan_poll_interval_seconds: 3601 }).ok).toBe(false);
    expect(parseSettingsPut({ scan_poll_interval_seconds: 'abc' })).toEqual({ ok: false, error: { code: 'validation', message: 'scan_poll_interval_seconds must be an integer' } });
    expect(parseSettingsPut({ registration_enabled: 'maybe' })).toEqual({ ok: false, error: { code: 'validation', message: 'registration_enabled must be true or false' } });
    expect(parseSettingsPut({ nope: 1 })).toEqual({ ok: false, error: { code: 'validation', message: 'unknown setting: nope' } });
    expect(parseSettingsPut({ settings: { scan_poll_interval_seconds: 3600, registration_enabled: false } })).toEqual({
      ok: true,
      value: { scan_poll_interval_seconds: 3600, registration_enabled: false },
    });
  });
  it('config takes strings, null removes, registry keys are refused', () => {
    expect(parseConfigPut({ base_url: 'https://books.example.com', old: null })).toEqual({ ok: true, value: { base_url: 'https://books.example.com', old: null } });
    expect(parseConfigPut({ registration_enabled: 'true' })).toEqual({
      ok: false,
      error: { code: 'validation', message: 'registration_enabled is a typed setting: use /api/system/settings' },
    });
    expect(parseConfigPut({ 'Bad Key': 'x' }).ok).toBe(false);
    expect(parseConfigPut({ k: { nested: true } })).toEqual({ ok: false, error: { code: 'invalid_request', message: 'invalid request' } });
  });
});

describe('timezones', () => {
  it('accepts IANA names and refuses others', () => {
    for (const tz of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata']) expect(isTimezone(tz)).toBe(true);
    for (const tz of ['Mars/Olympus', '+01:00', '', 'Europe/../etc/passwd', 'berlin']) expect(isTimezone(tz)).toBe(false);
  });
});

describe('usernames', () => {
  it('refuse control and bidirectional formatting characters inside, not surrounding whitespace', () => {
    const refused = 'username must not contain control or bidirectional formatting characters';
    for (const c of ['\u0001', '\t', '\u007f', '\u0085', '\u061c', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069'])
      expect(usernameProblem(`ab${c}cd`), JSON.stringify(c)).toBe(refused);
    expect(usernameProblem(' \tname\t ')).toBeNull();
    expect(usernameProblem('Zoë-ودود')).toBeNull();
  });
});
