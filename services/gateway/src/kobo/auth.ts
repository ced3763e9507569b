// Which Kobo is calling: the token in its store address (`/kobo/<token>/…`), or on the reading-services
// host (which the device calls without our path) the bearer token we gave it at `auth/device` — the
// same token. Checked by its SHA-256 against the gateway's devices projection through a one-second
// cache that this process clears whenever it applies a device-sync or identity event, like device
// credentials: a deleted device, or a replaced token, stops working at once here, on other replicas
// within a second.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FastifyRequest } from 'fastify';
import { DeviceSync } from '@bindery/contracts';
import type { Db } from '@bindery/platform';
import type { AuthenticatedDevice } from '../http/device-auth';
import { SCHEMA } from '../read-model/migrations';
import { deviceTables } from '../read-model/device-tables';
import type { ReadModels } from '../read-model/read-model';
import { identityTables } from '../read-model/tables';
import type { GatewayDb } from '../read-model/database';

export interface Kobo extends AuthenticatedDevice {
  /** every book of the libraries the owner sees, or only the collections shelved on the device */
  books: 'all' | 'shelves';
}

const CACHE_MS = 1000;

export function koboAuthenticator(db: Db<GatewayDb>, models: Pick<ReadModels, 'onChange'>) {
  const cache = new LRUCache<string, { kobo: Kobo | null }>({ max: 10_000, ttl: CACHE_MS, ttlAutopurge: false });
  models.onChange((source) => {
    if (source === DeviceSync.SOURCE || source === 'identity') cache.clear();
  });
  const D = deviceTables();
  const U = identityTables();

  async function verify(token: string | undefined): Promise<Kobo | null> {
    if (!token || !DeviceSync.KOBO_TOKEN_PATTERN.test(token)) return null;
    const key = createHash('sha256').update(token, 'utf8').digest('hex');
    const hit = cache.get(key);
    if (hit) return hit.kobo;
    const row = await db
      .withSchema(SCHEMA)
      .selectFrom(`${D.devices} as d`)
      .innerJoin(`${U.users} as u`, 'u.id', 'd.user_id')
      .select(['d.id', 'd.user_id', 'd.doc', 'd.kobo_books', 'u.role'])
      .where('d.kobo_token_hash', '=', key)
      .executeTakeFirst();
    const kobo: Kobo | null = row
      ? {
          device_id: row.id,
          user_id: row.user_id,
          name: row.doc.name,
          role: row.role === 'admin' ? 'admin' : 'user',
          books: row.kobo_books === 'shelves' ? 'shelves' : 'all',
        }
      : null;
    cache.set(key, { kobo });
    return kobo;
  }

  /** The bearer token of a reading-services call (the device sends what `auth/device` gave it). */
  const bearer = (req: FastifyRequest): string | undefined => /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];

  return { verify, bearer };
}

export type KoboAuth = ReturnType<typeof koboAuthenticator>;
