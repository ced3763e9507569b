import { describe, expect, it } from 'vitest';
import { decideProfileUpdate, parseField, parseProfile, type ProfileFacts } from '../src/domain/update-profile';
import { fold, profileOf, stateProfiles, type UserState } from '../src/domain/user';
import { userRegistered } from '../src/domain/register';

const ID = '00000000-0000-4000-8000-0000000000aa';
const OTHER = '00000000-0000-4000-8000-0000000000bb';
const ADMIN = '00000000-0000-4000-8000-0000000000cc';
const registered = (role: 'user' | 'admin' = 'user') => [
  userRegistered(ID, { email: 'u@example.com', username: 'user1', password: 'x', first_name: 'Ann', last_name: 'Lee', role }, role, null, true),
];
const user = (role: 'user' | 'admin' = 'user'): UserState => fold(ID, registered(role));
/** the profile of user() as GET /api/auth/profile shows it, with what a test changed */
const profile = (over: Record<string, string> = {}) => ({
  id: ID,
  email: 'u@example.com',
  username: 'user1',
  first_name: 'Ann',
  last_name: 'Lee',
  role: 'user',
  theme: 'tokyo-night',
  ...over,
});
const facts = (f: Partial<ProfileFacts> = {}): ProfileFacts => ({ adminCount: 2, usernameOwner: null, emailOwner: null, ...f });
const parse = (raw: Record<string, unknown>) => {
  const r = parseProfile(raw);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

describe('decideProfileUpdate', () => {
  it('applies role only by id', () => {
    expect(decideProfileUpdate(user(), parse({ role: 'admin' }), false, ID, facts()).events).toEqual([]);
    // self mode: the role is ignored (interface, profile update rule 2), whatever it asks; the rest applies
    const self = decideProfileUpdate(user(), parse({ role: 'admin', theme: 'x' }), false, ID, facts());
    expect(self.error).toBeNull();
    expect(self.events.map((e) => e.type)).toEqual(['identity.profile-changed.v1']);
    expect(self.events[0]!.data).toMatchObject({ user_id: ID, changes: { theme: 'x' } });
    expect(decideProfileUpdate(user(), parse({ role: 'user' }), false, ID, facts())).toEqual({ events: [], error: null });
    expect(decideProfileUpdate(user('admin'), parse({ role: 'user' }), false, ID, facts())).toEqual({ events: [], error: null });
    expect(decideProfileUpdate(user(), parse({ role: 'admin' }), true, ADMIN, facts()).events).toEqual([
      { type: 'identity.role-changed.v1', data: { user_id: ID, role: 'admin', previous_role: 'user', changed_by: ADMIN, profile: profile({ role: 'admin' }) } },
    ]);
  });
  it('refuses to demote the last admin', () => {
    expect(decideProfileUpdate(user('admin'), parse({ role: 'user' }), true, ADMIN, facts({ adminCount: 1 }))).toEqual({
      events: [],
      error: { code: 'last_admin', message: 'cannot demote the last admin' },
    });
  });
  it('keeps groups decided before a failure (role, then username conflict)', () => {
    const d = decideProfileUpdate(user(), parse({ role: 'admin', username: 'taken' }), true, ADMIN, facts({ usernameOwner: OTHER }));
    expect(d.error).toEqual({ code: 'conflict', message: 'username already taken' });
    expect(d.events.map((e) => e.type)).toEqual(['identity.role-changed.v1']);
  });
  it('a bad timezone keeps the username change before it', () => {
    const d = decideProfileUpdate(user(), parse({ username: 'newname', timezone: 'Mars/Olympus' }), false, ID, facts());
    expect(d.error).toEqual({ code: 'invalid_timezone', message: 'Invalid timezone' });
    expect(d.events).toEqual([
      { type: 'identity.profile-changed.v1', data: { user_id: ID, changes: { username: 'newname' }, changed_by: ID, profile: profile({ username: 'newname' }) } },
    ]);
  });
  it('an email taken by another account is 409 after timezone applied', () => {
    const d = decideProfileUpdate(user(), parse({ timezone: 'Europe/Berlin', email: 'x@example.com' }), false, ID, facts({ emailOwner: OTHER }));
    expect(d.error).toEqual({ code: 'conflict', message: 'email already taken' });
    expect(d.events).toEqual([{ type: 'identity.profile-changed.v1', data: { user_id: ID, changes: { timezone: 'Europe/Berlin' }, changed_by: ID, profile: profile() } }]);
  });
  it('each profile and role change states the profile it leaves, after the changes before it', () => {
    const d = decideProfileUpdate(user(), parse({ role: 'admin', username: 'newname', first_name: 'Anna', theme: 'paper' }), true, ADMIN, facts());
    expect(d.error).toBeNull();
    expect(d.events).toEqual([
      { type: 'identity.role-changed.v1', data: { user_id: ID, role: 'admin', previous_role: 'user', changed_by: ADMIN, profile: profile({ role: 'admin' }) } },
      {
        type: 'identity.profile-changed.v1',
        data: {
          user_id: ID,
          changes: { username: 'newname', first_name: 'Anna', last_name: '', theme: 'paper' },
          changed_by: ADMIN,
          profile: profile({ role: 'admin', username: 'newname', first_name: 'Anna', last_name: '', theme: 'paper' }),
        },
      },
    ]);
    // the stated profile is the one the user's state gives after every event
    expect(d.events.at(-1)!.data).toMatchObject({ profile: profileOf(fold(ID, [...registered(), ...d.events])) });
  });
  it('a state without a theme states a profile without one', () => {
    const bare = { ...user(), theme: '' };
    const [e] = stateProfiles(bare, [{ type: 'identity.profile-changed.v1', data: { user_id: ID, changes: { email: 'new@example.com' }, changed_by: ID } }]);
    expect(e!.data).toEqual({ user_id: ID, changes: { email: 'new@example.com' }, changed_by: ID, profile: { ...profile({ email: 'new@example.com' }), theme: undefined } });
    expect(Object.keys((e!.data as { profile: object }).profile)).not.toContain('theme');
  });
  it('one name given writes both; the omitted one becomes unset', () => {
    const d = decideProfileUpdate(user(), parse({ first_name: 'Anna' }), false, ID, facts());
    expect(d.events[0]!.data).toMatchObject({ changes: { first_name: 'Anna', last_name: '' } });
  });
  it('empty strings count as absent', () => {
    expect(decideProfileUpdate(user(), parse({ username: '', email: '', theme: '', first_name: '', last_name: '' }), false, ID, facts())).toEqual({ events: [], error: null });
  });
  it('share_statistics is changed when it differs, and the profile says it only while it is on (decision 120)', () => {
    const on = decideProfileUpdate(user(), parse({ share_statistics: true }), false, ID, facts());
    expect(on).toEqual({
      events: [
        { type: 'identity.profile-changed.v1', data: { user_id: ID, changes: { share_statistics: true }, changed_by: ID, profile: { ...profile(), share_statistics: true } } },
      ],
      error: null,
    });
    const sharing = fold(ID, [...registered(), ...on.events]);
    expect(sharing.share_statistics).toBe(true);
    expect(decideProfileUpdate(sharing, parse({ share_statistics: true }), false, ID, facts())).toEqual({ events: [], error: null });
    const off = decideProfileUpdate(sharing, parse({ share_statistics: false }), false, ID, facts());
    expect(off.events[0]!.data).toEqual({ user_id: ID, changes: { share_statistics: false }, changed_by: ID, profile: profile() });
    // absent and null leave it as it is
    expect(decideProfileUpdate(sharing, parse({ share_statistics: null }), false, ID, facts())).toEqual({ events: [], error: null });
    // the person's own consent: an admin's update by id neither gives it nor takes it back
    expect(decideProfileUpdate(user(), parse({ share_statistics: true }), true, ADMIN, facts())).toEqual({ events: [], error: null });
    expect(decideProfileUpdate(sharing, parse({ share_statistics: false, theme: 'paper' }), true, ADMIN, facts()).events[0]!.data).toMatchObject({
      changes: { theme: 'paper' },
      profile: { share_statistics: true },
    });
  });
  it('own username (any case) is not a conflict', () => {
    expect(decideProfileUpdate(user(), parse({ username: 'USER1' }), false, ID, facts({ usernameOwner: ID })).error).toBeNull();
  });
});

describe('parseProfile / parseField', () => {
  it('role must be user or admin (update wording)', () => {
    expect(parseProfile({ role: 'root' })).toEqual({ ok: false, error: { code: 'invalid_role', message: "invalid role. must be 'admin' or 'user'" } });
  });
  it('share_statistics is a JSON boolean', () => {
    for (const v of ['true', 1, 0, [], {}])
      expect(parseProfile({ share_statistics: v })).toEqual({ ok: false, error: { code: 'validation', message: 'share_statistics must be true or false' } });
  });
  it('names are at most 100 characters', () => {
    expect(parseProfile({ last_name: 'x'.repeat(101) })).toEqual({ ok: false, error: { code: 'validation', message: 'last_name must be at most 100 characters' } });
  });
  it('setters require their field', () => {
    expect(parseField('theme', {})).toEqual({ ok: false, error: { code: 'validation', message: 'theme is required' } });
    expect(parseField('username', { username: 'ab' })).toEqual({ ok: false, error: { code: 'validation', message: 'username must be between 3 and 50 characters' } });
    expect(parseField('email', { email: 'bad' })).toEqual({ ok: false, error: { code: 'validation', message: 'email must be a valid email address' } });
    expect(parseField('email', { email: ' ok@example.com ' })).toEqual({ ok: true, value: 'ok@example.com' });
  });
});
