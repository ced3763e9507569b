// Who is the device: its credential (`Authorization: Device <token>`, `Authorization: Bearer bdt_…`
// or `X-Device-Token: <token>`), checked by its SHA-256 against the gateway's devices projection,
// never by a bus round trip. A device credential opens device routes only; a session token (JWT)
// is never a device credential, and requireUser refuses device credentials (they are no JWT).
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DeviceSync, fail, type Identity } from '@bindery/contracts';
import type { Db } from '@bindery/platform';
import { SCHEMA } from '../read-model/migrations';
import { deviceTables } from '../read-model/device-tables';
import { identityTables } from '../read-model/tables';
import type { ReadModels } from '../read-model/read-model';
import type { AuthFailures } from './auth-failures';
import { sendFailure } from './reply';
import type { GatewayDb } from '../read-model/database';

/** A device the gateway authenticated: its id, its owner, its name, and its owner's role now. */
export interface AuthenticatedDevice extends DeviceSync.DeviceCaller {
  name: string;
  role: Identity.Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** set by `requireDevice` (null on every other route) */
    device: AuthenticatedDevice | null;
  }
}

/** A revoked or deleted device stops working within this long on every replica. */
export const DEVICE_CACHE_MS = 1000;
const M = DeviceSync.DeviceSyncMessages;

/** The device credential a request carries, if any (not whether it is valid). */
export function deviceCredentialOf(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (h) {
    const m = /^(Device|Bearer)\s+(\S+)\s*$/i.exec(h);
    if (m && (m[1]!.toLowerCase() === 'device' || m[2]!.startsWith(DeviceSync.TOKEN_PREFIX))) return m[2]!;
  }
  const x = req.headers['x-device-token'];
  return typeof x === 'string' && x.trim() !== '' ? x.trim() : null;
}

export const credentialDigest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export function deviceAuthenticator(db: Db<GatewayDb>, models?: Pick<ReadModels, 'onChange'>, failures?: AuthFailures) {
  const cache = new LRUCache<string, { device: AuthenticatedDevice | null }>({ max: 20_000, ttl: DEVICE_CACHE_MS, ttlAutopurge: false });
  // what this process applies (a deletion, a new credential) counts at once; another replica's within DEVICE_CACHE_MS
  models?.onChange((source) => {
    if (source === DeviceSync.SOURCE || source === 'identity') cache.clear();
  });
  const D = deviceTables();
  const U = identityTables();

  /** The device a credential belongs to, or null (unknown, revoked, deleted, or not a device credential). */
  async function verify(token: string): Promise<AuthenticatedDevice | null> {
    if (!token.startsWith(DeviceSync.TOKEN_PREFIX) || token.length > 200) return null;
    const key = credentialDigest(token);
    const hit = cache.get(key);
    if (hit) return hit.device;
    const row = await db
      .withSchema(SCHEMA)
      .selectFrom(`${D.devices} as d`)
      .leftJoin(`${U.users} as u`, 'u.id', 'd.user_id')
      .select(['d.id', 'd.user_id', 'd.doc', 'u.role'])
      .where('d.credential_hash', '=', key)
      .executeTakeFirst();
    const device: AuthenticatedDevice | null = row ? { device_id: row.id, user_id: row.user_id, name: row.doc.name, role: row.role === 'admin' ? 'admin' : 'user' } : null;
    cache.set(key, { device });
    return device;
  }

  /** The request's device, or null; sends nothing. */
  async function device(req: FastifyRequest): Promise<AuthenticatedDevice | null> {
    const token = deviceCredentialOf(req);
    return token ? verify(token) : null;
  }

  /**
   * onRequest hook of every device route: sets `req.device` or answers 401 (429 once the address is
   * over its budget of bad device credentials; a valid credential always passes).
   */
  async function requireDevice(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const token = deviceCredentialOf(req);
    if (!token) return sendFailure(reply, fail('unauthorized', M.deviceCredentialRequired));
    const d = await verify(token);
    if (!d) {
      // an answer sent here is returned, which stops the request
      if (failures?.refuseFailed(req, reply, 'device-credential')) return reply;
      return sendFailure(reply, fail('unauthorized', M.invalidDeviceCredential));
    }
    req.device = d;
  }

  /** The device's owner as a caller of other services (reading): never more than the owner is. */
  const callerOf = (d: AuthenticatedDevice): Identity.Caller => ({ user_id: d.user_id, role: d.role });

  /** What device-sync is told about the calling device. */
  const deviceOf = (d: AuthenticatedDevice): DeviceSync.DeviceCaller => ({ device_id: d.device_id, user_id: d.user_id });

  return { requireDevice, device, verify, callerOf, deviceOf };
}

export type DeviceAuth = ReturnType<typeof deviceAuthenticator>;
