// What every identity handler shares: the runtime, the event store, and the transaction helper.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import argon2 from 'argon2';
import { asTables, ConcurrencyError, type Db, EventStore, type ExpectedVersion, type NoTables, type Runtime, type Trx, signAccessToken } from '@bindery/platform';
import { err, fail, Messages, type Failure, type Identity, type Result } from '@bindery/contracts';
import { fold, streamOf, type Ev, type UserState } from '../domain/user';
import { resolveSettings, type SettingDefaults, type Settings } from '../domain/settings';
import { isUuid } from '../domain/validate';
import * as users from '../store/users';
import * as sessions from '../store/sessions';
import { storedSettings } from '../store/settings';
import { identityEvents, project } from '../store/projection';
import { SCHEMA } from '../store/migrations';
import type { IdentityDb } from '../store/database';
import { ProfileCache } from './profile-cache';

/** A User-Agent as a session's client: printable text only, at most 300 characters. */
export const clientOf = (ua: string | undefined): string =>
  (ua ?? '')
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, 300);

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane.
const ARGON = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export class Ctx {
  /** the process's database, seen through identity's own tables */
  readonly db: Db<IdentityDb>;
  readonly store: EventStore<IdentityDb>;
  readonly profiles = new ProfileCache();
  /** users changed by each open transaction, to drop from the cache once it commits */
  private touched = new WeakMap<Trx<IdentityDb>, Set<string>>();
  private setupCache: { value: Identity.SetupStatus; at: number } | null = null;

  constructor(
    readonly rt: Runtime,
    /** the deployment's defaults in place of the registry's (PUBLIC_REGISTRATION) */
    readonly settingDefaults: SettingDefaults = {},
  ) {
    this.db = asTables<IdentityDb, NoTables>(rt.db);
    this.store = new EventStore(this.db, SCHEMA);
  }

  /** Runs a command in one transaction, retrying on a concurrent append, then wakes the relay. */
  async tx<T>(fn: (trx: Trx<IdentityDb>) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        let changed: Set<string> | undefined;
        const out = await this.db.transaction().execute(async (trx) => {
          const r = await fn(trx);
          changed = this.touched.get(trx);
          return r;
        });
        changed?.forEach((id) => this.profiles.invalidate(id));
        if (changed?.size) this.invalidateSetup();
        this.store.notify();
        return out;
      } catch (e) {
        // a concurrent append, or Postgres breaking a deadlock / serialisation conflict: run it again
        if ((e instanceof ConcurrencyError || isRetryable(e)) && attempt < 5) continue;
        throw e;
      }
    }
  }

  /** Serialises the commands that count admins (register, role change, delete). */
  async lockAdmins(trx: Trx<IdentityDb>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtext('bindery.identity.admins'))`.execute(trx);
  }

  async loadUser(trx: Trx<IdentityDb>, id: string): Promise<UserState> {
    const events = await this.store.readStream(trx, streamOf(id));
    const state = fold(
      id,
      events.flatMap((e) => identityEvents.decode(e) ?? []),
    );
    // the version appended at is the stream's, whatever types it holds
    return { ...state, version: events.at(-1)?.version ?? -1 };
  }

  /**
   * Appends identity events (checked against their contract schemas) and projects them into
   * identity's tables, in the caller's transaction. `expected` is the version of the stream the
   * decision read; 'any' only for events no decision of identity's depends on (sessions).
   */
  async emit(trx: Trx<IdentityDb>, streamId: string, expected: ExpectedVersion, events: Ev[]): Promise<void> {
    if (events.length === 0) return;
    identityEvents.check(events);
    const stored = await this.store.append(trx, streamId, expected, events);
    for (const e of stored) {
      const decoded = identityEvents.decode(e);
      if (decoded) await project(trx, decoded);
    }
  }

  /** Appends to a user's stream at the version its state was folded from. */
  async appendUser(trx: Trx<IdentityDb>, user: Pick<UserState, 'id' | 'version'>, events: Ev[]): Promise<void> {
    if (events.length === 0) return;
    await this.emit(trx, streamOf(user.id), user.version, events);
    const set = this.touched.get(trx) ?? new Set<string>();
    this.touched.set(trx, set.add(user.id));
  }

  async settings(q: Trx<IdentityDb> | Db<IdentityDb> = this.db): Promise<Settings> {
    return resolveSettings(await storedSettings(q), this.settingDefaults);
  }

  /** Roles are read from identity's own state, not trusted from the token. */
  async isAdmin(caller: Identity.Caller | null): Promise<boolean> {
    if (!caller || !isUuid(caller.user_id)) return false;
    const u = await users.findById(this.db, caller.user_id);
    return u?.role === 'admin';
  }

  async requireAdmin(caller: Identity.Caller): Promise<Failure | null> {
    return (await this.isAdmin(caller)) ? null : fail('admin_required', Messages.adminRequired);
  }

  /** The spec's id handling for `/<user_id>` routes: 403 for non-admins, then 400 for a malformed id. */
  async target(caller: Identity.Caller, targetId: string | undefined): Promise<Result<{ id: string; byId: boolean }>> {
    if (targetId === undefined) return { ok: true, value: { id: caller.user_id, byId: false } };
    const denied = await this.requireAdmin(caller);
    if (denied) return err(denied);
    if (!isUuid(targetId)) return err(fail('invalid_user_id', Messages.invalidUserId));
    return { ok: true, value: { id: targetId.toLowerCase(), byId: true } };
  }

  async hash(password: string): Promise<string> {
    return argon2.hash(password, ARGON);
  }

  async verify(hash: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  /** A hash to verify against when the login is unknown, so both paths cost the same. */
  private dummy: Promise<string> | null = null;
  async burn(password: string): Promise<void> {
    this.dummy ??= this.hash('bindery-timing-equaliser-1');
    await this.verify(await this.dummy, password);
  }

  /**
   * An access and a refresh token: a new session (a refresh family) for a sign-in, or the next
   * tokens of `familyId` for a refresh. Either is an event of the user's sessions stream, which the
   * gateway folds into the list a user sees of their own sessions.
   */
  async issueSession(trx: Trx<IdentityDb>, u: users.UserRow, settings: Settings, familyId?: string, client = ''): Promise<Identity.AuthResult> {
    const ttl = settings.session_duration_seconds;
    const now = this.rt.now();
    const { token, claims } = await signAccessToken(this.rt.tokenKey, { user_id: u.id, user_role: u.role, user_email: u.email, user_username: u.username }, ttl, now);
    const family = familyId ?? randomUUID();
    const refresh = await sessions.issueRefreshToken(trx, u.id, ttl, now, family, claims.jti);
    const expires_at = new Date(now.getTime() + ttl * 1000).toISOString();
    await this.emit(trx, `sessions-${u.id}`, 'any', [
      familyId
        ? { type: 'identity.session-renewed.v1', data: { user_id: u.id, session_id: family, jti: claims.jti, expires_at } }
        : { type: 'identity.session-started.v1', data: { user_id: u.id, session_id: family, jti: claims.jti, client: clientOf(client), expires_at } },
    ]);
    return {
      session: { access_token: token, refresh_token: refresh, token_type: 'Bearer', expires_in: ttl },
      user: users.toProfile(u, false),
    };
  }

  async setupStatus(): Promise<Identity.SetupStatus> {
    // Refreshed whenever this replica changes users or settings; other replicas' changes show within the TTL.
    if (this.setupCache && Date.now() - this.setupCache.at < 2000) return this.setupCache.value;
    const [admins, settings] = await Promise.all([users.adminIds(this.db), this.settings()]);
    const value = { needs_setup: admins.length === 0, has_admin: admins.length > 0, registration_enabled: settings.registration_enabled };
    this.setupCache = { value, at: Date.now() };
    return value;
  }

  invalidateSetup(): void {
    this.setupCache = null;
  }
}

export const internal = (message: string): Failure => fail('internal', message);

const isRetryable = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
};
