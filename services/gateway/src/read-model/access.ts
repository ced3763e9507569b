// Who sees what: the libraries a caller may see, and their profile, from the identity projection.
// Every read surface asks `access()` and filters by it (docs/decisions.md, "Library access").
import { sql, type RawBuilder } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Identity } from '@bindery/contracts';
import type { Db } from '@bindery/platform';
import { SCHEMA } from './migrations';
import { identityTables } from './tables';
import type { GatewayDb } from './database';

/** Every library, or only the listed ones (possibly none). */
export type Access = { all: true } | { all: false; ids: string[] };

/** The SQL condition that keeps rows of the libraries `access` lets a caller see (`col` names the library id). */
export function visible(access: Access, col = 'library_id'): RawBuilder<boolean> {
  if (access.all) return sql<boolean>`true`;
  if (access.ids.length === 0) return sql<boolean>`false`;
  return sql<boolean>`${sql.ref(col)} in (${sql.join(access.ids)})`;
}

const T = identityTables();
const ALL: Access = { all: true };

interface UserFacts {
  access: Access;
  profile: string | null;
}

export class IdentityView {
  /** keyed by the identity projection's position, so a change is seen on the very next request */
  private cache = new LRUCache<string, UserFacts>({ max: 20_000 });

  constructor(private db: Db<GatewayDb>) {}

  private async facts(userId: string, identityPosition: number): Promise<UserFacts> {
    const key = `${identityPosition}|${userId}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const row = await this.db.withSchema(SCHEMA).selectFrom(T.users).select(['profile', 'all_libraries', 'library_ids']).where('id', '=', userId).executeTakeFirst();
    const facts: UserFacts = row
      ? {
          access: row.all_libraries ? ALL : { all: false, ids: [...row.library_ids].sort() },
          profile: JSON.stringify(row.profile),
        }
      : { access: { all: false, ids: [] }, profile: null };
    this.cache.set(key, facts);
    return facts;
  }

  /** Admins see every library; a user what was granted; an unknown user nothing. */
  async access(caller: Identity.Caller, identityPosition: number): Promise<Access> {
    if (caller.role === 'admin') return ALL;
    return (await this.facts(caller.user_id, identityPosition)).access;
  }

  /** `profile` from the cache alone (no promise): undefined when it must be read. */
  profileCached(userId: string, identityPosition: number): string | null | undefined {
    return this.cache.get(`${identityPosition}|${userId}`)?.profile;
  }

  /** The profile JSON as GET /api/auth/profile answers it, or null when there is no such user. */
  async profile(userId: string, identityPosition: number): Promise<string | null> {
    return (await this.facts(userId, identityPosition)).profile;
  }

  sessions(userId: string): Promise<SessionRow[]> {
    return sessionsOf(this.db, userId);
  }

  async grants(userId: string): Promise<{ all_libraries: boolean; library_ids: string[] } | null> {
    const row = await this.db.withSchema(SCHEMA).selectFrom(T.users).select(['all_libraries', 'library_ids', 'role']).where('id', '=', userId).executeTakeFirst();
    if (!row) return null;
    return { all_libraries: Boolean(row.all_libraries), library_ids: row.library_ids };
  }
}

export interface SessionRow {
  id: string;
  client: string;
  started_at: string;
  last_used_at: string;
  expires_at: string;
  jti: string;
}

/** A user's sessions that still stand (not ended, not expired), the most recently used first. */
export async function sessionsOf(db: Db<GatewayDb>, userId: string): Promise<SessionRow[]> {
  const rows = await db
    .withSchema(SCHEMA)
    .selectFrom(T.sessions)
    .select(['id', 'client', 'started_at', 'last_used_at', 'expires_at', 'jti'])
    .where('user_id', '=', userId)
    .where('ended', '=', false)
    .where('expires_at', '>', new Date())
    .orderBy('last_used_at', 'desc')
    .orderBy('id')
    .execute();
  const iso = (d: unknown) => new Date(d as string).toISOString();
  return rows.map((r) => ({
    id: r.id,
    client: r.client,
    started_at: iso(r.started_at),
    last_used_at: iso(r.last_used_at),
    expires_at: iso(r.expires_at),
    jti: r.jti,
  }));
}

/** A short stable text of an access, for cache keys. */
export const accessKey = (a: Access): string => (a.all ? '*' : a.ids.join(','));
