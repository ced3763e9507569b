// The gateway's view of who may still use a token: roles as they are now, deleted accounts,
// sessions revoked by logout, a refresh token's reuse or a password change. Rebuilt from identity's events by a
// durable consumer; each replica reads it through a short-lived cache.
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import { Identity, type StoredEvent } from '@bindery/contracts';
import { applyOnce, consumerCheckpoint, type AccessClaims, type Bus, type Db, type DecodedEvent, eventSchemas, type Subscription, type Trx } from '@bindery/platform';
import { SCHEMA } from './migrations';
import type { GatewayDb } from './database';

export const CONSUMER = 'gateway-auth-view';
const TYPES = [
  'identity.user-registered.v1',
  'identity.role-changed.v1',
  'identity.permissions-changed.v1',
  'identity.user-deleted.v1',
  'identity.password-changed.v1',
  'identity.session-revoked.v1',
] as const;
const CACHE_MS = 1000;
const identityEvents = eventSchemas(Identity.IdentityEvents);

interface UserFacts {
  role: Identity.Role;
  /** the admin allowed this user to edit metadata and covers (issue 43) */
  canEditMetadata: boolean;
  deleted: boolean;
  validAfter: number | null;
  /** the access token (jti) exempt from `validAfter`: the session that changed its own password */
  kept: string | null;
}

export type Verdict = { ok: true; role: Identity.Role; can_edit_metadata: boolean } | { ok: false };

function verdict(claims: AccessClaims, facts: UserFacts | null, revoked: boolean): Verdict {
  if (revoked) return { ok: false };
  // not projected yet: the token's own word for the role; no permission beyond it (none was granted before the account was projected)
  if (!facts) return { ok: true, role: claims.user_role, can_edit_metadata: false };
  if (facts.deleted) return { ok: false };
  if (facts.validAfter !== null && claims.iat * 1000 < facts.validAfter && claims.jti !== facts.kept) return { ok: false };
  return { ok: true, role: facts.role, can_edit_metadata: facts.canEditMetadata };
}

export class AuthView {
  // short-lived: another replica's consumer may have applied a change this one has not heard of
  private users = new LRUCache<string, { facts: UserFacts | null }>({ max: 50_000, ttl: CACHE_MS, ttlAutopurge: false });
  private revoked = new LRUCache<string, { revoked: boolean }>({ max: 50_000, ttl: CACHE_MS, ttlAutopurge: false });
  private sub: Subscription | null = null;

  constructor(private db: Db<GatewayDb>) {}

  async start(bus: Bus): Promise<void> {
    this.sub = await bus.consume({
      source: 'identity',
      durable: CONSUMER,
      types: TYPES,
      checkpoint: () => consumerCheckpoint(this.db, SCHEMA, CONSUMER, 'identity'),
      handler: (ev) => this.apply(ev).then(() => undefined),
    });
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
  }

  apply(ev: StoredEvent): Promise<boolean> {
    return applyOnce(this.db, SCHEMA, CONSUMER, ev, async (trx) => {
      const e = identityEvents.decode(ev);
      if (e) await this.project(trx, e);
    });
  }

  private async project(trx: Trx<GatewayDb>, e: DecodedEvent<typeof Identity.IdentityEvents>): Promise<void> {
    const t = trx.withSchema(SCHEMA);
    switch (e.type) {
      case 'identity.user-registered.v1':
        await t
          .insertInto('auth_users')
          .values({ user_id: e.data.user_id, role: e.data.role })
          .onConflict((oc) => oc.column('user_id').doNothing())
          .execute();
        break;
      case 'identity.role-changed.v1':
        await t
          .insertInto('auth_users')
          .values({ user_id: e.data.user_id, role: e.data.role })
          .onConflict((oc) => oc.column('user_id').doUpdateSet({ role: e.data.role }))
          .execute();
        this.users.delete(e.data.user_id);
        break;
      case 'identity.permissions-changed.v1':
        await t.updateTable('auth_users').set({ can_edit_metadata: e.data.can_edit_metadata }).where('user_id', '=', e.data.user_id).execute();
        this.users.delete(e.data.user_id);
        break;
      case 'identity.user-deleted.v1':
        await t
          .insertInto('auth_users')
          .values({ user_id: e.data.user_id, role: e.data.role, deleted: true })
          .onConflict((oc) => oc.column('user_id').doUpdateSet({ deleted: true }))
          .execute();
        this.users.delete(e.data.user_id);
        break;
      case 'identity.password-changed.v1':
        if (e.data.sessions_revoked_before) {
          await t
            .updateTable('auth_users')
            .set({ sessions_valid_after: e.data.sessions_revoked_before, session_kept: e.data.session_kept ?? null })
            .where('user_id', '=', e.data.user_id)
            .execute();
          this.users.delete(e.data.user_id);
        }
        break;
      case 'identity.session-revoked.v1':
        if (e.data.jti) {
          await t
            .insertInto('revoked_tokens')
            .values({ jti: e.data.jti, expires_at: e.data.expires_at })
            .onConflict((oc) => oc.column('jti').doNothing())
            .execute();
          this.revoked.delete(e.data.jti);
        }
        await t.deleteFrom('revoked_tokens').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
        break;
      default:
        break;
    }
  }

  /** `check` from the caches alone, without a promise: undefined when either is not cached. */
  checkCached(claims: AccessClaims): Verdict | undefined {
    const facts = this.users.get(claims.user_id);
    const revoked = this.revoked.get(claims.jti);
    if (!facts || !revoked) return undefined;
    return verdict(claims, facts.facts, revoked.revoked);
  }

  /** Whether a verified token still stands, and the role its holder has now. */
  async check(claims: AccessClaims): Promise<Verdict> {
    const [facts, revoked] = await Promise.all([this.userFacts(claims.user_id), this.isRevoked(claims.jti)]);
    return verdict(claims, facts, revoked);
  }

  private async userFacts(id: string): Promise<UserFacts | null> {
    const hit = this.users.get(id);
    if (hit) return hit.facts;
    const row = await this.db.withSchema(SCHEMA).selectFrom('auth_users').selectAll().where('user_id', '=', id).executeTakeFirst();
    const facts = row
      ? {
          role: row.role,
          canEditMetadata: row.can_edit_metadata === true,
          deleted: Boolean(row.deleted),
          validAfter: row.sessions_valid_after ? new Date(row.sessions_valid_after).getTime() : null,
          kept: row.session_kept,
        }
      : null;
    this.users.set(id, { facts });
    return facts;
  }

  private async isRevoked(jti: string): Promise<boolean> {
    const hit = this.revoked.get(jti);
    if (hit) return hit.revoked;
    const row = await this.db.withSchema(SCHEMA).selectFrom('revoked_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
    this.revoked.set(jti, { revoked: !!row });
    return !!row;
  }
}
