// Mail (issue 47) against a real SMTP server in this process: the test mail, password reset links
// (once, 30 minutes, every session ended, the same answer for every address, a limit per account),
// invitations that make the account, the e-reader address, and 503 without SMTP_URL.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityMigrations, IDENTITY_SCHEMA, replayIdentityLog, type IdentityDb } from '@bindery/identity';
import { asTables, EventStore, migrate, openPostgres, type NoTables } from '@bindery/platform';
import { availableModes, startBindery, type Bindery, type Mode } from '../support/bindery';
import { api, eventually, expectError as err, expectMessage, login, PASSWORD, register, uniq, type Account, type Call } from './helpers';
import { linkIn, REFUSING_DOMAIN, startMailServer, type MailServer } from './mail-helpers';

const NOT_CONFIGURED = 'mail is not configured';
const REQUESTED = 'if an account has this e-mail address, a link to reset its password is on its way';
const RESET_INVALID = 'this password reset link is invalid, used or expired';
const INVITATION_INVALID = 'this invitation is invalid, used or expired';
const NEW = 'n3w-passphrase';

const modes = await availableModes();

for (const mode of modes) {
  describe(`mail (${mode})`, () => {
    let smtp: MailServer;
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      smtp = await startMailServer();
      b = await startBindery(mode as Mode, smtp.env);
      call = api(b);
      admin = await register(call, { name: uniq('chief') });
    }, 240_000);
    afterAll(async () => {
      await b?.stop();
      await smtp?.stop();
    });

    it('the status says mail is on; the test mail reaches the admin, a plain user may not send one', async () => {
      const s = await call('GET', '/api/mail/status');
      expect(s.status).toBe(200);
      expect(s.json).toEqual({ configured: true, max_attachment_bytes: 50_000_000 });
      const r = await call('POST', '/api/admin/mail/test', { token: admin.token });
      expectMessage(r, `test mail sent to ${admin.email}`);
      const m = await smtp.next(admin.email);
      expect(m.mail.subject).toBe('Bindery test mail');
      expect(m.mail.from?.value).toEqual([{ address: 'books@bindery.test', name: 'Bindery' }]);
      const u = await register(call);
      err(await call('POST', '/api/admin/mail/test', { token: u.token }), 403, 'admin access required');
    });

    it('a reset link works once, ends every session of the account, and the new password signs in', async () => {
      const u = await register(call);
      const other = await login(call, u.username, PASSWORD);
      expect(other.status).toBe(200);
      const r = await call('POST', '/api/auth/password-reset/request', { body: { email: u.email.toUpperCase() } });
      expect(r.status, r.text).toBe(202);
      expect(r.json).toEqual({ message: REQUESTED });
      const m = await smtp.next(u.email);
      expect(m.mail.subject).toBe('Reset your Bindery password');
      expect(m.mail.text).toContain(`Hello ${u.username},`);
      const { url, token } = linkIn(m, '/reset-password');
      expect(url.startsWith(`${b.url}/reset-password?token=`)).toBe(true);
      // the token is in no event: only its SHA-256
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

      // hostile and wrong input first: nothing changes
      err(
        await call('POST', '/api/auth/password-reset', { body: { token, new_password: 'short1', confirm_password: 'short1' } }),
        400,
        'new_password must be at least 8 characters',
      );
      err(await call('POST', '/api/auth/password-reset', { body: { token, new_password: NEW, confirm_password: 'other-pass1' } }), 400, 'passwords do not match');
      err(await call('POST', '/api/auth/password-reset', { body: { token: 'x'.repeat(43), new_password: NEW, confirm_password: NEW } }), 400, RESET_INVALID);
      err(
        await call('POST', '/api/auth/password-reset', { body: { token: `${token}\u0000`, new_password: NEW, confirm_password: NEW } }),
        400,
        'token must not contain control characters',
      );
      expect((await call('GET', '/api/auth/profile', { token: u.token })).status).toBe(200);

      expectMessage(
        await call('POST', '/api/auth/password-reset', { body: { token, new_password: NEW, confirm_password: NEW } }),
        'password updated: sign in with the new password',
      );
      // every session ends: the registration's and the other sign-in's, access and refresh tokens alike
      await eventually(async () => err(await call('GET', '/api/auth/profile', { token: u.token }), 401, 'invalid or expired token'));
      await eventually(async () => err(await call('GET', '/api/auth/profile', { token: other.json.access_token }), 401, 'invalid or expired token'));
      err(await call('POST', '/api/auth/refresh', { body: { refresh_token: u.refresh } }), 401, 'invalid or expired refresh token');
      err(await login(call, u.username, PASSWORD), 401, 'invalid credentials');
      expect((await login(call, u.username, NEW)).status).toBe(200);
      // once only
      err(await call('POST', '/api/auth/password-reset', { body: { token, new_password: 'th1rd-password', confirm_password: 'th1rd-password' } }), 400, RESET_INVALID);
      expect((await login(call, u.username, NEW)).status).toBe(200);
    });

    it('each mail is in its recipient’s language: a German person’s reset link and a German admin’s test mail (issue 48)', async () => {
      const u = await register(call);
      expect((await call('PUT', '/api/auth/profile', { token: u.token, body: { language: 'de' } })).status).toBe(200);
      expect((await call('POST', '/api/auth/password-reset/request', { body: { email: u.email } })).status).toBe(202);
      const m = await smtp.next(u.email);
      expect(m.mail.subject).toBe('Ihr Bindery-Passwort zurücksetzen');
      expect(m.mail.text).toContain(`Hallo ${u.username},`);
      expect(m.mail.text).toContain('Um ein neues Passwort zu wählen, öffnen Sie:');
      expect(m.mail.text).toContain('Der Link funktioniert einmal, in den nächsten 30 Minuten.');
      expect(m.mail.text).not.toContain('Hello');
      // the link in the German mail works as the English one does
      const { token } = linkIn(m, '/reset-password');
      expectMessage(
        await call('POST', '/api/auth/password-reset', { body: { token, new_password: NEW, confirm_password: NEW } }),
        'password updated: sign in with the new password',
      );

      const boss = await register(call, { name: uniq('chef'), role: 'admin', caller: admin.token });
      expect((await call('PUT', '/api/auth/profile', { token: boss.token, body: { language: 'de' } })).status).toBe(200);
      expectMessage(await call('POST', '/api/admin/mail/test', { token: boss.token }), `test mail sent to ${boss.email}`);
      const t = await smtp.next(boss.email);
      expect(t.mail.subject).toBe('Bindery-Test-E-Mail');
      expect(t.mail.text?.trim()).toBe('Dies ist eine Test-E-Mail Ihres Bindery-Servers: Der E-Mail-Versand funktioniert.');
    });

    it('an unknown address gets the same answer and no mail; a malformed one is a 400', async () => {
      const nobody = `${uniq('nobody')}@example.com`;
      const r = await call('POST', '/api/auth/password-reset/request', { body: { email: nobody } });
      expect(r.status).toBe(202);
      expect(r.json).toEqual({ message: REQUESTED });
      const known = await register(call);
      const k = await call('POST', '/api/auth/password-reset/request', { body: { email: known.email } });
      expect([k.status, k.json, k.headers.get('content-type')]).toEqual([r.status, r.json, r.headers.get('content-type')]);
      await smtp.next(known.email);
      expect(smtp.to(nobody)).toEqual([]);
      err(await call('POST', '/api/auth/password-reset/request', { body: { email: 'not-an-address' } }), 400, 'email must be a valid email address');
      err(await call('POST', '/api/auth/password-reset/request', { body: { email: 'a\u0000@example.com' } }), 400, 'email must not contain control characters');
      err(await call('POST', '/api/auth/password-reset/request', { body: [1] }), 400, 'invalid request');
    });

    it('an account gets at most 3 reset mails an hour; the answer does not change', async () => {
      const u = await register(call);
      for (let i = 0; i < 4; i++) {
        const r = await call('POST', '/api/auth/password-reset/request', { body: { email: u.email } });
        expect(r.status).toBe(202);
        expect(r.json).toEqual({ message: REQUESTED });
      }
      for (let i = 0; i < 3; i++) await smtp.next(u.email);
      // a later account's mail arriving after them shows the fourth was never sent (the sends are in order of the requests)
      const later = await register(call);
      await call('POST', '/api/auth/password-reset/request', { body: { email: later.email } });
      await smtp.next(later.email);
      expect(smtp.to(u.email)).toHaveLength(3);
    });

    it('an invitation makes the account with its role and library access, once', async () => {
      const email = `${uniq('guest')}@example.com`;
      err(await call('POST', '/api/admin/invitations', { token: (await register(call)).token, body: { email } }), 403, 'admin access required');
      err(await call('POST', '/api/admin/invitations', { token: admin.token, body: { email: 'nope' } }), 400, 'email must be a valid email address');
      err(await call('POST', '/api/admin/invitations', { token: admin.token, body: { email, role: 'owner' } }), 400, "role must be 'user' or 'admin'");
      err(await call('POST', '/api/admin/invitations', { token: admin.token, body: { email: admin.email } }), 409, 'email already exists');
      const r = await call('POST', '/api/admin/invitations', { token: admin.token, body: { email, role: 'user', all_libraries: true } });
      expect(r.status, r.text).toBe(201);
      expect(r.json.message).toBe(`invitation sent to ${email}`);
      expect(r.json.invitation).toMatchObject({ email, role: 'user', all_libraries: true, library_ids: [] });
      err(await call('POST', '/api/admin/invitations', { token: admin.token, body: { email } }), 409, 'an open invitation for this email already exists');
      const list = await call('GET', '/api/admin/invitations', { token: admin.token });
      expect(list.json.invitations.map((i: { email: string }) => i.email)).toContain(email);

      const m = await smtp.next(email);
      expect(m.mail.subject).toBe('You are invited to a Bindery library');
      const { token } = linkIn(m, '/invitation');
      const peek = await call('GET', `/api/invitations/${token}`);
      expect(peek.status).toBe(200);
      expect(peek.json).toMatchObject({ email, role: 'user' });
      const username = uniq('guest');
      err(
        await call('POST', '/api/auth/invitations/accept', { body: { token, username, password: 'abc', confirm_password: 'abc' } }),
        400,
        'password must be at least 8 characters',
      );
      err(
        await call('POST', '/api/auth/invitations/accept', { body: { token, username: admin.username, password: PASSWORD, confirm_password: PASSWORD } }),
        409,
        'username already exists',
      );
      const a = await call('POST', '/api/auth/invitations/accept', { body: { token, username, password: PASSWORD, confirm_password: PASSWORD } });
      expect(a.status, a.text).toBe(201);
      expect(a.json.user).toMatchObject({ email, username, role: 'user' });
      expect((await call('GET', '/api/auth/profile', { token: a.json.access_token })).json).toMatchObject({ email, username });
      expect((await login(call, username, PASSWORD)).status).toBe(200);
      const grants = await call('GET', `/api/auth/users/${a.json.user.id}/libraries`, { token: admin.token });
      expect(grants.json).toMatchObject({ all_libraries: true });
      // once only
      err(
        await call('POST', '/api/auth/invitations/accept', { body: { token, username: uniq('again'), password: PASSWORD, confirm_password: PASSWORD } }),
        400,
        INVITATION_INVALID,
      );
      err(await call('GET', `/api/invitations/${token}`), 404, INVITATION_INVALID);
      const after = await call('GET', '/api/admin/invitations', { token: admin.token });
      expect(after.json.invitations.map((i: { email: string }) => i.email)).not.toContain(email);
    });

    it('an invitation the mail server refuses is a visible failure and is withdrawn', async () => {
      const email = `${uniq('x')}@${REFUSING_DOMAIN}`;
      const r = await call('POST', '/api/admin/invitations', { token: admin.token, body: { email } });
      expect(r.status, r.text).toBe(502);
      expect(r.json.error).toMatch(/^the mail server refused the message: .*550.*refused by policy/);
      const list = await call('GET', '/api/admin/invitations', { token: admin.token });
      expect(list.json.invitations.map((i: { email: string }) => i.email)).not.toContain(email);
    });

    it('each person sets their own e-reader address', async () => {
      const u = await register(call);
      expect((await call('GET', '/api/auth/ereader', { token: u.token })).json).toEqual({ address: '' });
      err(await call('PUT', '/api/auth/ereader', { token: u.token, body: { address: 'not mail' } }), 400, 'address must be a valid email address');
      const r = await call('PUT', '/api/auth/ereader', { token: u.token, body: { address: ' reader_1@kindle.com ' } });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ message: 'e-reader address saved', address: 'reader_1@kindle.com' });
      expect((await call('GET', '/api/auth/ereader', { token: u.token })).json).toEqual({ address: 'reader_1@kindle.com' });
      const v = await register(call);
      expect((await call('GET', '/api/auth/ereader', { token: v.token })).json).toEqual({ address: '' });
      err(await call('GET', '/api/auth/ereader'), 401, 'authentication required');
    });

    // distributed: Postgres is reachable while the services run (embedded's PGlite is the process's own)
    it.skipIf(mode !== 'distributed')("identity's log rebuilds the reset links, invitations and e-reader addresses row for row", async () => {
      const database = await openPostgres(b.env.DATABASE_URL!);
      try {
        const db = asTables<IdentityDb, NoTables>(database.db);
        const schema = `identity_mail_replay_${Date.now()}`;
        await migrate(db, schema, identityMigrations);
        await replayIdentityLog(db, new EventStore(db, IDENTITY_SCHEMA), schema);
        const rows = async (s: string, q: string) => (await sql.raw<Record<string, unknown>>(q.replaceAll('$s', s)).execute(db)).rows;
        for (const q of [
          'select * from $s.password_resets order by token_hash',
          'select * from $s.invitations order by id',
          "select id, ereader_address from $s.users where ereader_address <> '' order by id",
        ]) {
          const live = await rows(IDENTITY_SCHEMA, q);
          expect(live.length, q).toBeGreaterThan(0);
          expect(await rows(schema, q), q).toEqual(live);
        }
        await sql.raw(`drop schema ${schema} cascade`).execute(db);
      } finally {
        await database.close();
      }
    });
  });
}

describe('mail without SMTP_URL (embedded)', () => {
  let b: Bindery;
  let call: Call;
  beforeAll(async () => {
    b = await startBindery('embedded');
    call = api(b);
  }, 240_000);
  afterAll(async () => b?.stop());

  it('every mail route answers 503 and the status says so', async () => {
    const admin = await register(call, { name: uniq('chief') });
    expect((await call('GET', '/api/mail/status')).json).toEqual({ configured: false, max_attachment_bytes: 0 });
    err(await call('POST', '/api/auth/password-reset/request', { body: { email: admin.email } }), 503, NOT_CONFIGURED);
    err(await call('POST', '/api/auth/password-reset', { body: { token: 'x', new_password: NEW, confirm_password: NEW } }), 503, NOT_CONFIGURED);
    err(await call('POST', '/api/admin/mail/test', { token: admin.token }), 503, NOT_CONFIGURED);
    err(await call('POST', '/api/admin/invitations', { token: admin.token, body: { email: 'a@example.com' } }), 503, NOT_CONFIGURED);
    err(await call('POST', '/api/auth/invitations/accept', { body: {} }), 503, NOT_CONFIGURED);
    err(await call('PUT', '/api/auth/ereader', { token: admin.token, body: { address: 'a@kindle.com' } }), 503, NOT_CONFIGURED);
    // the admin check comes first: a plain user learns nothing about the mail setup from an admin route
    const u = await register(call);
    err(await call('POST', '/api/admin/mail/test', { token: u.token }), 403, 'admin access required');
  });
});
