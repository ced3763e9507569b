// Reset links, invitations and e-reader addresses (issue 47): identity's mail events folded into
// its tables (the one writer, in the append transaction and at replay), and the queries on them.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { DbOrTrx } from '@bindery/platform';
import type { Identity } from '@bindery/contracts';
import type { IdentityDb } from './database';
import { SCHEMA } from './migrations';

export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

type MailEvent = Extract<
  Identity.IdentityEvent,
  {
    type:
      | 'identity.password-reset-requested.v1'
      | 'identity.password-reset-used.v1'
      | 'identity.invitation-created.v1'
      | 'identity.invitation-accepted.v1'
      | 'identity.invitation-revoked.v1'
      | 'identity.ereader-address-changed.v1'
      | 'identity.book-send-requested.v1'
      | 'identity.book-send-claimed.v1'
      | 'identity.book-send-attempted.v1';
  }
>;

/** Applies a mail event to identity's tables in `q` (already bound to its schema); false for any other event. */
export async function projectMail(q: DbOrTrx<IdentityDb>, e: Identity.IdentityEvent, at: string): Promise<boolean> {
  const m = e as MailEvent;
  switch (m.type) {
    case 'identity.password-reset-requested.v1':
      await q
        .insertInto('password_resets')
        .values({ token_hash: m.data.token_hash, user_id: m.data.user_id, requested_at: at, expires_at: m.data.expires_at })
        .onConflict((oc) => oc.column('token_hash').doNothing())
        .execute();
      return true;
    case 'identity.password-reset-used.v1':
      // the link used and every other open link of the account end together
      await q.updateTable('password_resets').set({ used_at: at }).where('user_id', '=', m.data.user_id).where('used_at', 'is', null).execute();
      return true;
    case 'identity.invitation-created.v1': {
      const d = m.data;
      await q
        .insertInto('invitations')
        .values({
          id: d.invitation_id,
          email: d.email,
          role: d.role,
          all_libraries: d.all_libraries,
          library_ids: JSON.stringify(d.library_ids),
          token_hash: d.token_hash,
          expires_at: d.expires_at,
          invited_by: d.invited_by,
          created_at: at,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return true;
    }
    case 'identity.invitation-accepted.v1':
      await q.updateTable('invitations').set({ accepted_by: m.data.user_id, ended_at: at }).where('id', '=', m.data.invitation_id).execute();
      return true;
    case 'identity.invitation-revoked.v1':
      await q.updateTable('invitations').set({ ended_at: at }).where('id', '=', m.data.invitation_id).execute();
      return true;
    case 'identity.ereader-address-changed.v1':
      await q.updateTable('users').set({ ereader_address: m.data.address }).where('id', '=', m.data.user_id).execute();
      return true;
    case 'identity.book-send-requested.v1': {
      const d = m.data;
      await q
        .insertInto('book_sends')
        .values({
          id: d.send_id,
          user_id: d.user_id,
          item_id: d.item_id,
          title: d.title,
          format: d.format,
          file_name: d.file_name,
          size: d.size,
          address: d.address,
          convert_from: d.convert_from ?? null,
          status: 'pending',
          attempts: 0,
          detail: '',
          next_attempt_at: at,
          claimed_until: null,
          created_at: at,
          updated_at: at,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return true;
    }
    case 'identity.book-send-claimed.v1':
      await q.updateTable('book_sends').set({ claimed_until: m.data.until }).where('id', '=', m.data.send_id).execute();
      return true;
    case 'identity.book-send-attempted.v1': {
      const d = m.data;
      await q
        .updateTable('book_sends')
        .set({
          status: d.outcome === 'retrying' ? 'pending' : d.outcome,
          attempts: d.attempt,
          detail: d.detail,
          next_attempt_at: d.next_attempt_at,
          claimed_until: null,
          updated_at: at,
        })
        .where('id', '=', d.send_id)
        .execute();
      return true;
    }
    default:
      return false;
  }
}

const t = (q: DbOrTrx<IdentityDb>) => q.withSchema(SCHEMA);

/** How many reset links the account was given since `since` (its per-account limit). */
export async function resetsSince(q: DbOrTrx<IdentityDb>, userId: string, since: Date): Promise<number> {
  const r = await t(q)
    .selectFrom('password_resets')
    .select(sql<string | number>`count(*)`.as('n'))
    .where('user_id', '=', userId)
    .where('requested_at', '>=', since)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** An open reset link's account, locked until the transaction ends (a second use waits, then finds it used). */
export async function openReset(q: DbOrTrx<IdentityDb>, hash: string, now: Date): Promise<string | null> {
  const r = await t(q)
    .selectFrom('password_resets')
    .select('user_id')
    .where('token_hash', '=', hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
  return r?.user_id ?? null;
}

export type InvitationRow = Awaited<ReturnType<typeof openInvitation>>;

/** An invitation not yet accepted, revoked or expired, by its link's hash. */
export async function openInvitation(q: DbOrTrx<IdentityDb>, hash: string, now: Date, lock = false) {
  let s = t(q).selectFrom('invitations').selectAll().where('token_hash', '=', hash).where('ended_at', 'is', null).where('expires_at', '>', now);
  if (lock) s = s.forUpdate();
  return s.executeTakeFirst();
}

export async function openInvitations(q: DbOrTrx<IdentityDb>, now: Date) {
  return t(q).selectFrom('invitations').selectAll().where('ended_at', 'is', null).where('expires_at', '>', now).orderBy('created_at', 'desc').limit(500).execute();
}

export async function invitationById(q: DbOrTrx<IdentityDb>, id: string) {
  return t(q).selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function openInvitationFor(q: DbOrTrx<IdentityDb>, email: string, now: Date) {
  return t(q)
    .selectFrom('invitations')
    .select('id')
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export async function ereaderAddress(q: DbOrTrx<IdentityDb>, userId: string): Promise<string | null> {
  const r = await t(q).selectFrom('users').select('ereader_address').where('id', '=', userId).executeTakeFirst();
  return r ? r.ereader_address : null;
}

export type SendRow = Awaited<ReturnType<typeof sendById>>;

export async function sendById(q: DbOrTrx<IdentityDb>, id: string, lock = false) {
  let s = t(q).selectFrom('book_sends').selectAll().where('id', '=', id);
  if (lock) s = s.forUpdate();
  return s.executeTakeFirst();
}

/** A person's sends, newest first. */
export async function sendsOf(q: DbOrTrx<IdentityDb>, userId: string) {
  return t(q).selectFrom('book_sends').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').limit(200).execute();
}

/** Sends due now and taken by nobody (or by a gateway whose lease ran out), oldest first, locked (others skip them). */
export async function dueSends(q: DbOrTrx<IdentityDb>, now: Date, limit: number) {
  return t(q)
    .selectFrom('book_sends')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}
