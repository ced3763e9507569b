// Device sync keys for KOReader's stock Progress sync: KOReader sends the username and md5 of what was
// typed as the password. When that is a device's sync key, the md5 matches the argon2id verifier the
// devices projection keeps for one of the user's devices (device-sync's `sync-key-issued` event). A
// deleted device's row is gone from the projection, so its key stops working with it.
import argon2 from 'argon2';
import { sql } from 'kysely';
import type { Db } from '@bindery/platform';
import { SCHEMA } from '../read-model/migrations';
import { deviceTables } from '../read-model/device-tables';
import { identityTables } from '../read-model/tables';
import type { Verified } from '../http/verified-cache';
import type { GatewayDb } from '../read-model/database';

const KEY = /^[0-9a-f]{32}$/;

export function syncKeys(db: Db<GatewayDb>) {
  const D = deviceTables();
  const U = identityTables();

  /** The devices with a sync key of the user this login (username or e-mail) names, newest key first. */
  async function candidates(login: string) {
    const l = login.trim().toLowerCase();
    if (l === '' || l.length > 320) return [];
    return db
      .withSchema(SCHEMA)
      .selectFrom(`${U.users} as u`)
      .innerJoin(`${D.devices} as d`, 'd.user_id', 'u.id')
      .select(['u.id as user_id', 'u.role', 'd.id as device_id', 'd.doc', 'd.sync_key_verifier'])
      .where((eb) => eb.or([eb(sql`lower(u.profile->>'username')`, '=', l), eb(sql`lower(u.profile->>'email')`, '=', l)]))
      .where('d.sync_key_verifier', 'is not', null)
      .orderBy('d.sync_key_issued_at', 'desc')
      .limit(100)
      .execute();
  }

  /** The user and device whose sync key has this md5 (KOReader's `x-auth-key`), or null. */
  async function verify(login: string, key: string): Promise<Verified | null> {
    const k = key.toLowerCase();
    if (!KEY.test(k)) return null;
    for (const c of await candidates(login)) {
      let match = false;
      try {
        match = await argon2.verify(c.sync_key_verifier as string, k);
      } catch {
        match = false;
      }
      if (match)
        return {
          user_id: c.user_id,
          role: c.role === 'admin' ? 'admin' : 'user',
          device: { device_id: c.device_id, name: (c.doc as { name: string }).name },
        };
    }
    return null;
  }

  return { verify };
}

export type SyncKeys = ReturnType<typeof syncKeys>;
