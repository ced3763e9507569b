// Identity's tables as a projection of its own log: every append goes through here in the
// transaction that appends it, and a replay of the log through here rebuilds the same rows.
// Credentials (password hashes, the KOReader verifier) and refresh tokens are the exceptions: their
// secrets never go into the log, which is published on the bus.
import { type DbOrTrx, eventSchemas } from '@bindery/platform';
import { Identity } from '@bindery/contracts';
import { userChange } from '../domain/user';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';
import * as oidcLinks from './oidc-links';
import { projectMail } from './mail';

/** Identity's events and their contract schemas: checked before every append, decoded when read back. */
export const identityEvents = eventSchemas(Identity.IdentityEvents);

/** An identity event as appended: its type, data and when it was recorded (the rows' timestamps). */
export type Recorded = Identity.IdentityEvent & { recordedAt: string };

/** Applies one event to identity's tables in `schema` (another schema made by the same migrations: a replay beside the live tables). */
export async function project(q: DbOrTrx<IdentityDb>, e: Recorded, schema = SCHEMA): Promise<void> {
  const t = (x: DbOrTrx<IdentityDb>) => x.withSchema(schema);
  const at = e.recordedAt;
  const user = userChange(e);
  if (user && 'user_id' in e.data) {
    const id = e.data.user_id;
    if (user.kind === 'registered')
      await t(q)
        .insertInto('users')
        .values({ id, ...user.fields, created_at: at, updated_at: at })
        .execute();
    else if (user.kind === 'changed')
      await t(q)
        .updateTable('users')
        .set({ ...user.fields, updated_at: at })
        .where('id', '=', id)
        .execute();
    // credentials, refresh tokens and the reader key go with the row (on delete cascade)
    else await t(q).deleteFrom('users').where('id', '=', id).execute();
    return;
  }
  if (await projectMail(t(q), e, at)) return;
  switch (e.type) {
    case 'identity.reader-key-changed.v1': {
      const d = e.data;
      if (d.action === 'revoked') {
        await t(q).deleteFrom('reader_keys').where('user_id', '=', d.user_id).execute();
        return;
      }
      // a key created before events carried its hash cannot be restored: none is better than a wrong one
      if (d.key_hash === undefined) return;
      const created_at = d.created_at ?? at;
      await t(q)
        .insertInto('reader_keys')
        .values({ user_id: d.user_id, key_hash: d.key_hash, created_at })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ key_hash: d.key_hash, created_at }))
        .execute();
      return;
    }
    case 'identity.login-failed.v1': {
      const d = e.data;
      const row = { failures: d.failures, first_failed_at: d.first_failed_at, locked_until: d.locked_until };
      await t(q)
        .insertInto('login_attempts')
        .values({ login: d.login, ...row })
        .onConflict((oc) => oc.column('login').doUpdateSet(row))
        .execute();
      return;
    }
    case 'identity.login-failures-cleared.v1':
      await t(q).deleteFrom('login_attempts').where('login', '=', e.data.login).execute();
      return;
    case 'identity.settings-changed.v1':
      for (const [key, value] of Object.entries(e.data.changes)) {
        const v = JSON.stringify(value);
        await t(q)
          .insertInto('settings')
          .values({ key, value: v, updated_at: at })
          .onConflict((oc) => oc.column('key').doUpdateSet({ value: v, updated_at: at }))
          .execute();
      }
      return;
    case 'identity.config-changed.v1':
      for (const [key, value] of Object.entries(e.data.changes)) {
        if (value === null) await t(q).deleteFrom('config').where('key', '=', key).execute();
        else
          await t(q)
            .insertInto('config')
            .values({ key, value, updated_at: at })
            .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: at }))
            .execute();
      }
      return;
    case 'identity.oidc-linked.v1':
      await oidcLinks.insert(q, { issuer: e.data.issuer, subject: e.data.subject, user_id: e.data.user_id, linked_at: at }, schema);
      return;
    default:
      // sessions (the gateway's list), password changes and library access keep no identity table
      return;
  }
}
