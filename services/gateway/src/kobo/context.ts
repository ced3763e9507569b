// What the Kobo store routes share, made once for them all: their dependencies, the guard that
// names the Kobo, its sync state (read here, recorded by device-sync), the library reads, and the helpers more than one route group uses.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isUuid } from '@bindery/contracts';
import type { AuthFailures } from '../http/auth-failures';
import type { CallDeviceSync } from '../http/device-sync-client';
import type { Origins } from '../http/origin';
import type { Reader } from '../http/reading-client';
import type { CallCatalog } from '../http/rpc';
import type { CoverSource } from '../files/covers';
import type { LocatorIndexOf } from '../read-model/locator-indexes';
import type { Reads } from '../read-model/reads';
import { koboPath, publicBase } from './address';
import type { Kobo, KoboAuth } from './auth';
import type { KepubSource } from './kepubs';
import { epubOf, type Item, koboLibrary, type Progress } from './library';
import { koboSyncLog } from './sync-log';
import { type Difference, KoboSyncState } from './sync-state';

export interface KoboDeps {
  /** covers and thumbnails, from the catalog's directory where reachable */
  covers: CoverSource;
  reads: Reads;
  koboAuth: KoboAuth;
  kepubs: KepubSource;
  reading: Reader;
  devices: CallDeviceSync;
  catalog: CallCatalog;
  /** books' locator indexes, shared with the web reader's sections route (one cache) */
  locatorIndex: LocatorIndexOf;
  /** which Host may go into the absolute addresses of the store's answers */
  origins: Origins;
  /** the real Kobo store (KOBO_STORE_URL), for what an admin lets through */
  storeUrl?: string;
  /** the budgets of failed credential checks per address and kind (Kobo tokens are one kind) */
  failures?: AuthFailures;
}

declare module 'fastify' {
  interface FastifyRequest {
    kobo?: Kobo;
  }
}

export type KoboContext = ReturnType<typeof koboContext>;

export function koboContext(deps: KoboDeps) {
  const { reads } = deps;
  const state = new KoboSyncState(reads.db);
  const syncLog = koboSyncLog(deps.devices);
  const P = '/kobo/:token';

  /**
   * onRequest of every store route: the token names a Kobo, or the answer is 401 (429 once the
   * address is over its budget of bad Kobo tokens). A valid token always passes: one lookup by
   * its hash is all it costs. An answer sent here is returned, which stops the request.
   */
  const requireKobo = async (req: FastifyRequest, reply: FastifyReply) => {
    const kobo = await deps.koboAuth.verify((req.params as { token?: string }).token);
    if (!kobo) {
      if (deps.failures?.refuseFailed(req, reply, 'kobo-token')) return reply;
      return reply.code(401).send({ error: 'invalid or revoked Kobo token' });
    }
    req.kobo = kobo;
    req.device = kobo;
    req.caller = { user_id: kobo.user_id, role: kobo.role };
  };
  const hook = { onRequest: requireKobo };
  const base = (req: FastifyRequest) => `${publicBase(req, deps.origins)}${koboPath((req.params as { token: string }).token)}`;
  const origin = (req: FastifyRequest) => publicBase(req, deps.origins);
  const access = async (req: FastifyRequest) => (await reads.context(req.caller!)).access;
  const lib = koboLibrary(reads, deps.kepubs);
  const itemsOf = async (req: FastifyRequest, ids: string[]) => lib.itemsOf(await access(req), ids);

  /** The book a route's `:id` names: a visible EPUB, or null once the answer (404) is sent. */
  const bookOf = async (req: FastifyRequest, reply: FastifyReply): Promise<Item | null> => {
    const id = (req.params as { id: string }).id;
    const item = isUuid(id) ? (await itemsOf(req, [id.toLowerCase()])).get(id.toLowerCase()) : undefined;
    if (!item || !epubOf(item)) {
      reply.code(404).send({ error: 'book not found' });
      return null;
    }
    return item;
  };

  /**
   * Tells the reading service which positions the Kobo was given (`progress-delivered`, by the time
   * each was written: the read model keeps no version), so that its next push of those books
   * follows them (docs/decisions.md, "Devices follow the position they were given"). A failure is
   * logged; the answer goes anyway.
   */
  async function delivered(req: FastifyRequest, via: string, diff: Pick<Difference, 'key'>[], progress: Progress): Promise<void> {
    const list = diff.map((d) => ({ media_item_id: d.key.slice(2), updated_at: progress.get(d.key.slice(2))!.updated_at }));
    if (list.length === 0) return;
    const r = await deps.reading(req, 'progress-delivered', { input: { via, delivered: list } });
    if (!r.ok) req.log.warn({ err: r.error.message }, 'kobo: the reading states sent were not recorded');
  }

  return { deps, state, syncLog, P, hook, base, origin, access, lib, itemsOf, bookOf, delivered };
}
