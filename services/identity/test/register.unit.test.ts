import { describe, expect, it } from 'vitest';
import { decideRegistration, parseRegister, userRegistered, type RegisterFacts } from '../src/domain/register';

const good = { email: 'ann@example.com', username: 'ann', password: 'passw0rd-x' };
const facts = (f: Partial<RegisterFacts> = {}): RegisterFacts => ({
  adminExists: true,
  registrationEnabled: true,
  callerIsAdmin: false,
  emailTaken: false,
  usernameTaken: false,
  ...f,
});
const input = (extra: Record<string, unknown> = {}) => {
  const r = parseRegister({ ...good, ...extra });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

describe('parseRegister', () => {
  it('validates email, then username, then password, with Bindery messages', () => {
    expect(parseRegister({ ...good, email: '' })).toEqual({ ok: false, error: { code: 'validation', message: 'email is required' } });
    expect(parseRegister({ ...good, email: 'nope' })).toEqual({ ok: false, error: { code: 'validation', message: 'email must be a valid email address' } });
    expect(parseRegister({ ...good, username: 'ab' })).toEqual({ ok: false, error: { code: 'validation', message: 'username must be between 3 and 50 characters' } });
    expect(parseRegister({ ...good, username: 'x'.repeat(51) }).ok).toBe(false);
    expect(parseRegister({ ...good, password: 'short1' })).toEqual({ ok: false, error: { code: 'validation', message: 'password must be at least 8 characters' } });
    expect(parseRegister({ ...good, password: 'onlyletters' })).toEqual({
      ok: false,
      error: { code: 'validation', message: 'password must contain at least one letter and one digit' },
    });
    expect(parseRegister({ ...good, password: 'a1'.repeat(65) })).toEqual({ ok: false, error: { code: 'validation', message: 'password must be at most 128 characters' } });
  });
  it('a field of the wrong JSON type means the body cannot be bound', () => {
    expect(parseRegister({ ...good, email: 42 })).toEqual({ ok: false, error: { code: 'invalid_request', message: 'invalid request' } });
  });
  it('a whitespace-only username is its own 400', () => {
    expect(parseRegister({ ...good, username: '     ' })).toEqual({ ok: false, error: { code: 'username_blank', message: 'username cannot be empty or whitespace' } });
  });
  it('trims the username and lower-cases the role', () => {
    expect(input({ username: '  bob  ', role: 'ADMIN' })).toMatchObject({ username: 'bob', role: 'admin' });
  });
});

describe('decideRegistration', () => {
  it('the first account is admin whatever role was asked', () => {
    expect(decideRegistration(input({ role: 'user' }), facts({ adminExists: false }))).toEqual({ ok: true, value: 'admin' });
    expect(decideRegistration(input({ role: 'bogus' }), facts({ adminExists: false, registrationEnabled: false }))).toEqual({ ok: true, value: 'admin' });
  });
  it('later accounts are users by default', () => {
    expect(decideRegistration(input(), facts())).toEqual({ ok: true, value: 'user' });
  });
  it('registration disabled blocks the public but not an admin caller', () => {
    expect(decideRegistration(input(), facts({ registrationEnabled: false }))).toEqual({
      ok: false,
      error: { code: 'registration_disabled', message: 'registration is disabled on this server' },
    });
    expect(decideRegistration(input(), facts({ registrationEnabled: false, callerIsAdmin: true }))).toEqual({ ok: true, value: 'user' });
  });
  it('duplicates: email before username', () => {
    expect(decideRegistration(input(), facts({ emailTaken: true, usernameTaken: true }))).toEqual({ ok: false, error: { code: 'conflict', message: 'email already exists' } });
    expect(decideRegistration(input(), facts({ usernameTaken: true }))).toEqual({ ok: false, error: { code: 'conflict', message: 'username already exists' } });
  });
  it('roles: invalid → 400, admin needs an admin caller', () => {
    expect(decideRegistration(input({ role: 'owner' }), facts())).toEqual({ ok: false, error: { code: 'invalid_role', message: "invalid role. must be 'user' or 'admin'" } });
    expect(decideRegistration(input({ role: 'admin' }), facts())).toEqual({
      ok: false,
      error: { code: 'admin_create_forbidden', message: 'only administrators can create admin accounts' },
    });
    expect(decideRegistration(input({ role: 'admin' }), facts({ callerIsAdmin: true }))).toEqual({ ok: true, value: 'admin' });
  });
  it('the event carries the defaults (tokyo-night theme, UTC, 5 devices) and the libraries the account sees', () => {
    const e = userRegistered('00000000-0000-4000-8000-000000000001', input(), 'user', null, false);
    expect(e).toEqual({
      type: 'identity.user-registered.v1',
      data: {
        user_id: '00000000-0000-4000-8000-000000000001',
        email: 'ann@example.com',
        username: 'ann',
        first_name: '',
        last_name: '',
        role: 'user',
        theme: 'tokyo-night',
        timezone: 'UTC',
        max_devices: 5,
        registered_by: null,
        all_libraries: false,
        library_ids: [],
      },
    });
  });
});
