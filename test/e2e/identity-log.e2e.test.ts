// Identity's tables are a projection of its own log: after a realistic mix of what accounts and an
// admin do through the API, identity's log replayed into fresh tables (made by identity's own
// migrations) gives the live tables row for row. Credentials (password hashes, the KOReader
// verifier) and refresh tokens are secrets that never go into the published log: they are not
// compared. `users.seq` is a serial number, so it is compared as the order of the rows.
import { sql } from 'kysely';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityMigrations, IDENTITY_SCHEMA, replayIdentityLog, type IdentityDb } from '@bindery/identity';
import { Identity } from '@bindery/contracts';
import { asTables, EventStore, eventSchemas, migrate, openPGlite, openPostgres, type Db, type NoTables } from '@bindery/platform';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { api, eventually, expectMessage, login, PASSWORD, putSettings, register, type Call } from './helpers';

const modes = await availableModes();
const REPLAY = 'identity_replay';

/** Each compared table with the columns that order it. */
const TABLES: Record<string, string> = {
  users: 'seq',
  login_attempts: 'login',
  reader_keys: 'user_id',
  settings: 'key',
  config: 'key',
};

async function rows(db: Db<IdentityDb>, schema: string, table: string): Promise<Record<string, unknown>[]> {
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(`${schema}.${table}`)} order by ${sql.ref(TABLES[table]!)}`.execute(db);
  return rows.map((r) => {
    const { seq: _seq, ...rest } = r;
    return table === 'users' ? rest : r;
  });
}

describe.each(modes)("identity's log rebuilds its tables (%s)", (mode) => {
  let b: Bindery;
  let call: Call;

  beforeAll(async () => {
    b = await startBindery(mode);
    call = api(b);
  }, 180_000);

  afterAll(async () => {
    await b?.stop();
  });

  it('replays a mix of every kind of change into the same rows', async () => {
    const admin = await register(call);
    expect(admin.role).toBe('admin');
    const alice = await register(call);
    const bob = await register(call);
    await putSettings(call, admin.token, { login_max_attempts: 3, new_users_see_all_libraries: false });
    const carol = await register(call);
    for (const body of [{ motd: 'hello', footer: 'x' }, { footer: null }]) {
      const r = await call('PUT', '/api/system/config', { token: admin.token, body });
      expect(r.status, r.text).toBe(200);
    }

    // failures until a lockout; an unknown login's failure; a failure cleared by a good login
    for (let i = 1; i <= 2; i++) expect((await login(call, bob.username, 'wrong-password')).status).toBe(401);
    expect((await login(call, bob.username, 'wrong-password')).status).toBe(429);
    expect((await login(call, bob.username, PASSWORD)).status).toBe(429);
    expect((await login(call, 'nobody-at-all', 'wrong-password')).status).toBe(401);
    expect((await login(call, alice.email, 'wrong-password')).status).toBe(401);
    const aliceAgain = await login(call, alice.email, PASSWORD);
    expect(aliceAgain.status, aliceAgain.text).toBe(200);

    // reader keys: made, replaced, revoked, and revoked by a password change
    for (const who of [alice, alice, bob, carol]) expect((await call('POST', '/api/auth/opds-key', { token: who.token })).status).toBe(201);
    expect((await call('DELETE', '/api/auth/opds-key', { token: bob.token })).status).toBe(200);

    // profile, username, theme; a password change; sessions refreshed, ended, signed out
    expectMessage(await call('PUT', '/api/auth/profile', { token: alice.token, body: { first_name: 'Alice', last_name: 'Liddell' } }), 'profile updated successfully');
    expectMessage(await call('PUT', '/api/auth/username', { token: carol.token, body: { username: `${carol.username}x` } }), 'username updated successfully');
    expectMessage(
      await call('PUT', '/api/auth/password', { token: carol.token, body: { current_password: PASSWORD, new_password: 'another-passw0rd', confirm_password: 'another-passw0rd' } }),
      'password updated successfully',
    );
    const refreshed = await call('POST', '/api/auth/refresh', { body: { refresh_token: alice.refresh } });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect((await call('DELETE', '/api/auth/sessions', { token: refreshed.json.access_token })).status).toBe(200);
    expect((await call('POST', '/api/auth/logout', { token: refreshed.json.access_token, body: { refresh_token: refreshed.json.refresh_token } })).status).toBe(200);

    // the admin's changes: a role, a device limit, library access; a deletion
    expectMessage(await call('PUT', `/api/auth/profile/${alice.id}`, { token: admin.token, body: { role: 'admin' } }), 'profile updated successfully');
    expectMessage(await call('PUT', `/api/auth/users/${carol.id}/max-devices`, { token: admin.token, body: { max_devices: 9 } }), 'max devices updated');
    const access = await call('PUT', `/api/auth/users/${carol.id}/libraries`, { token: admin.token, body: { all_libraries: true, library_ids: [] } });
    expect(access.status, access.text).toBe(200);
    expectMessage(await call('DELETE', `/api/auth/profile/${bob.id}`, { token: admin.token }), 'user account deleted successfully');
    // what GET /api/auth/profile shows alice (from the gateway's read model), once her promotion reached it
    const aliceToken = (await login(call, alice.email, PASSWORD)).json.access_token;
    const shown = await eventually(async () => {
      const r = await call('GET', '/api/auth/profile', { token: aliceToken });
      expect(r.status, r.text).toBe(200);
      expect(r.json.role).toBe('admin');
      return r.json;
    }, 10_000);

    // embedded: the one process holds the database, so stop it and open its data directory
    if (mode === 'embedded') await b.procs[0]!.stop();
    const database = mode === 'embedded' ? await openPGlite(join(b.env.DATA_DIR!, 'db')) : await openPostgres(b.env.DATABASE_URL!);
    try {
      const db = asTables<IdentityDb, NoTables>(database.db);
      await migrate(db, REPLAY, identityMigrations);
      const store = new EventStore(db, IDENTITY_SCHEMA);
      const applied = await replayIdentityLog(db, store, REPLAY);
      // identity states what a new account sees: every library before the setting went off, none after
      const identityEvents = eventSchemas(Identity.IdentityEvents);
      const registered = new Map<string, unknown>();
      for (const ev of await store.readAll(0, 10_000)) {
        const e = identityEvents.decode(ev);
        if (e?.type === 'identity.user-registered.v1') registered.set(e.data.user_id, e.data);
      }
      // each profile and role change states the profile it leaves; the gateway keeps the last one as stated
      const stated = new Map<string, unknown[]>();
      for (const ev of await store.readAll(0, 10_000)) {
        const e = identityEvents.decode(ev);
        if (e?.type === 'identity.profile-changed.v1' || e?.type === 'identity.role-changed.v1')
          stated.set(e.data.user_id, [...(stated.get(e.data.user_id) ?? []), e.data.profile]);
      }
      expect(stated.get(alice.id)).toEqual([
        { id: alice.id, email: alice.email, username: alice.username, first_name: 'Alice', last_name: 'Liddell', role: 'user', theme: shown.theme },
        { id: alice.id, email: alice.email, username: alice.username, first_name: 'Alice', last_name: 'Liddell', role: 'admin', theme: shown.theme },
      ]);
      expect(shown).toEqual(stated.get(alice.id)!.at(-1));
      const gatewayRow = await sql<{ profile: unknown }>`select profile from gateway.iv_users where id = ${alice.id}`.execute(db);
      expect(gatewayRow.rows).toEqual([{ profile: shown }]);
      expect(registered.get(alice.id)).toMatchObject({ all_libraries: true, library_ids: [] });
      expect(registered.get(carol.id)).toMatchObject({ all_libraries: false, library_ids: [] });
      expect(applied).toBeGreaterThan(20);
      const live: Record<string, Record<string, unknown>[]> = {};
      for (const table of Object.keys(TABLES)) {
        live[table] = await rows(db, IDENTITY_SCHEMA, table);
        expect(await rows(db, REPLAY, table), table).toEqual(live[table]);
      }
      // the mix reached every table it should
      expect(live.users!.map((u) => u.id)).toEqual([admin.id, alice.id, carol.id]);
      expect(live.users!.find((u) => u.id === alice.id)).toMatchObject({ first_name: 'Alice', role: 'admin' });
      expect(live.users!.find((u) => u.id === carol.id)).toMatchObject({ username: `${carol.username}x`, max_devices: 9 });
      expect(live.login_attempts!.map((r) => r.login).sort()).toEqual([bob.username, 'nobody-at-all'].sort());
      expect(live.login_attempts!.find((r) => r.login === bob.username)?.locked_until).not.toBeNull();
      expect(live.reader_keys!.map((r) => r.user_id)).toEqual([alice.id]);
      expect(live.config!.map((r) => [r.key, r.value])).toEqual([['motd', 'hello']]);
      expect(live.settings!.map((r) => r.key).sort()).toEqual(['login_max_attempts', 'new_users_see_all_libraries']);
    } finally {
      await database.close();
    }
  }, 240_000);
});
