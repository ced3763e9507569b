// Folds identity's events into the gateway's user table: the profile as GET /api/auth/profile shows
// it, the role, and which libraries the user may see.
import { Identity, type StoredEvent } from '@bindery/contracts';
import { eventSchemas, type Trx } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { identityTables } from './tables';
import type { GatewayDb, Suffix } from './database';

/** The setting that decided what a new account sees, for `user-registered` events from before they said it. */
export const NEW_USER_ACCESS_KEY = 'new_users_see_all_libraries';

const identityEvents = eventSchemas(Identity.IdentityEvents);
type ProfileChanges = Extract<Identity.IdentityEvent, { type: 'identity.profile-changed.v1' }>['data']['changes'];

function profileOf(d: { user_id: string; email: string; username: string; first_name: string; last_name: string; role: Identity.Role; theme: string }): Identity.UserProfile {
  return {
    id: d.user_id,
    email: d.email,
    username: d.username,
    first_name: d.first_name,
    last_name: d.last_name,
    role: d.role,
    ...(d.theme !== '' ? { theme: d.theme } : {}),
  };
}

/** A profile with a `profile-changed` event's changes folded in (for events that do not state the result). */
function mergeChanges(profile: Identity.UserProfile, changes: ProfileChanges): Identity.UserProfile {
  const p = { ...profile } as Record<string, unknown>;
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || k === 'timezone') continue;
    // the profile says `share_statistics` only while it is on, as `language` only while one is chosen
    if (((k === 'theme' || k === 'language') && v === '') || (k === 'share_statistics' && v === false)) delete p[k];
    else p[k] = v;
  }
  return p as Identity.UserProfile;
}

export async function projectIdentity(trx: Trx<GatewayDb>, ev: StoredEvent, suffix: Suffix = ''): Promise<void> {
  const t = identityTables(suffix);
  const s = trx.withSchema(SCHEMA);
  const e = identityEvents.decode(ev);
  if (!e) return;
  const load = async (id: string) => s.selectFrom(t.users).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  switch (e.type) {
    case 'identity.user-registered.v1': {
      // identity states what a new account sees; events from before it did: the setting in force then
      const all = e.data.all_libraries ?? (await s.selectFrom(t.settings).select('value').where('key', '=', NEW_USER_ACCESS_KEY).executeTakeFirst())?.value !== false;
      const profile = JSON.stringify(profileOf(e.data));
      await s
        .insertInto(t.users)
        .values({ id: e.data.user_id, role: e.data.role, profile, all_libraries: all, library_ids: JSON.stringify(e.data.library_ids ?? []), timezone: e.data.timezone })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return;
    }
    case 'identity.profile-changed.v1': {
      const row = await load(e.data.user_id);
      if (!row) return;
      // identity states the profile the change leaves; events from before it did: fold the changes
      const p = e.data.profile ?? mergeChanges(row.profile, e.data.changes);
      const { timezone, share_statistics } = e.data.changes;
      await s
        .updateTable(t.users)
        .set({
          profile: JSON.stringify(p),
          ...(timezone !== undefined ? { timezone } : {}),
          ...(share_statistics !== undefined ? { share_statistics } : {}),
        })
        .where('id', '=', e.data.user_id)
        .execute();
      return;
    }
    case 'identity.role-changed.v1': {
      const row = await load(e.data.user_id);
      if (!row) return;
      const p = e.data.profile ?? { ...row.profile, role: e.data.role };
      await s
        .updateTable(t.users)
        .set({ role: e.data.role, profile: JSON.stringify(p) })
        .where('id', '=', e.data.user_id)
        .execute();
      return;
    }
    case 'identity.permissions-changed.v1': {
      const row = await load(e.data.user_id);
      if (!row) return;
      const { can_edit_metadata: _, ...rest } = row.profile;
      const p = e.data.profile ?? (e.data.can_edit_metadata ? { ...rest, can_edit_metadata: true } : rest);
      await s
        .updateTable(t.users)
        .set({ profile: JSON.stringify(p) })
        .where('id', '=', e.data.user_id)
        .execute();
      return;
    }
    case 'identity.user-deleted.v1':
      await s.deleteFrom(t.users).where('id', '=', e.data.user_id).execute();
      await s.deleteFrom(t.sessions).where('user_id', '=', e.data.user_id).execute();
      return;
    case 'identity.session-started.v1':
      await s
        .insertInto(t.sessions)
        .values({
          id: e.data.session_id,
          user_id: e.data.user_id,
          client: e.data.client,
          started_at: ev.recordedAt,
          last_used_at: ev.recordedAt,
          expires_at: e.data.expires_at,
          jti: e.data.jti,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return;
    case 'identity.session-renewed.v1':
      await s
        .updateTable(t.sessions)
        .set({ jti: e.data.jti, last_used_at: ev.recordedAt, expires_at: e.data.expires_at })
        .where('id', '=', e.data.session_id)
        .where('user_id', '=', e.data.user_id)
        .execute();
      return;
    case 'identity.session-revoked.v1':
      // the session's current token revoked (a logout, a sign-out from the list): the session is over
      if (e.data.jti) await s.updateTable(t.sessions).set({ ended: true }).where('user_id', '=', e.data.user_id).where('jti', '=', e.data.jti).execute();
      return;
    case 'identity.password-changed.v1':
      // every session that got its token before the change ends, but the one that made it
      if (e.data.sessions_revoked_before) {
        let u = s.updateTable(t.sessions).set({ ended: true }).where('user_id', '=', e.data.user_id).where('last_used_at', '<', new Date(e.data.sessions_revoked_before));
        if (e.data.session_kept) u = u.where('jti', '<>', e.data.session_kept);
        await u.execute();
      }
      return;
    case 'identity.settings-changed.v1':
      for (const [key, value] of Object.entries(e.data.changes)) {
        const v = JSON.stringify(value);
        await s
          .insertInto(t.settings)
          .values({ key, value: v })
          .onConflict((oc) => oc.column('key').doUpdateSet({ value: v }))
          .execute();
      }
      return;
    case 'identity.library-access-changed.v1':
      await s
        .updateTable(t.users)
        .set({ all_libraries: e.data.all_libraries, library_ids: JSON.stringify(e.data.library_ids) })
        .where('id', '=', e.data.user_id)
        .execute();
      return;
    default:
      return;
  }
}
