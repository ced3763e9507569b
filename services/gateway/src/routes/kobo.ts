// Native Kobo sync: the Kobo store's API under `/kobo/<token>` (the address written in the device's
// configuration), and the reading-services host the device calls at this server's root. Books,
// covers and tags come from the gateway's read models; reading states and tag changes go to the
// reading service, removals to device-sync, KEPUBs from the catalog. docs/decisions.md, "Native Kobo
// sync", has the shapes and the choices.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import Type from 'typebox';
import { Binary, content, Empty, errors } from '../http/schemas';
import { paramsOf } from '../openapi';
import { isUuid, type Result } from '@bindery/contracts';
import type { AuthFailures } from '../http/auth-failures';
import type { CallDeviceSync } from '../http/device-sync-client';
import type { Origins } from '../http/origin';
import type { Reader } from '../http/reading-client';
import type { LocatorIndexOf } from '../read-model/locator-indexes';
import type { CallCatalog } from '../http/rpc';
import { koboPath, publicBase } from '../kobo/address';
import { koboAnnotationRoutes } from '../kobo/annotations';
import type { Kobo, KoboAuth } from '../kobo/auth';
import { type KepubSource, locationToPlace, type SpanMap } from '../kobo/kepubs';
import { epubOf, type Item, koboLibrary, type Progress, type TagRows } from '../kobo/library';
import { koboResources } from '../kobo/resources';
import { bookEntitlement, bookMetadata, koboTime, readingState, tag } from '../kobo/shapes';
import { koboStoreProxy } from '../kobo/store-proxy';
import { type Difference, KoboSyncState } from '../kobo/sync-state';
import { makeSyncToken, parseSyncToken } from '../kobo/sync-token';
import { koboTagRoutes } from '../kobo/tags';
import type { Reads } from '../read-model/reads';
import type { CoverSource } from '../files/covers';

/** entries in one sync answer, as the store and its emulators page them */
export const SYNC_PAGE = 100;

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

const ok = <T>(r: Result<T>): T | null => (r.ok ? r.value : null);

/** a user key a device may send: printable text the store would have given it */
const USER_KEY = /^[\x21-\x7e]{1,256}$/;

/**
 * The `UserKey` the store's answers carry: the one the device sends (its body's `UserKey`, else its
 * `X-Kobo-UserKey` header), echoed as the peers echo it, so the device keeps the account it knows;
 * a device that sends none gets its owner's id. The same for the same request, every time.
 */
export function userKeyOf(req: FastifyRequest): string {
  const body = req.body as { UserKey?: unknown } | null | undefined;
  const sent = body && typeof body === 'object' && !Array.isArray(body) ? body.UserKey : undefined;
  if (typeof sent === 'string' && USER_KEY.test(sent)) return sent;
  const header = req.headers['x-kobo-userkey'];
  if (typeof header === 'string' && USER_KEY.test(header)) return header;
  return req.kobo!.user_id;
}

/**
 * The schema of each Kobo route (given by app.ts as they are registered): the store protocol is
 * the device's, under active development, and its shapes are not part of the interface, so answers
 * are any JSON, a KEPUB or a cover; the device's bodies reach the routes as sent.
 */
export function koboSchema(r: RouteOptions): FastifySchema {
  const methods = Array.isArray(r.method) ? r.method : [r.method];
  const response = r.url.endsWith('/file/kepub')
    ? { 200: content('application/kepub+zip', 'the book as a KEPUB', Binary) }
    : r.url.endsWith('/image.jpg')
      ? { 200: content('image/jpeg', 'a cover, scaled', Binary) }
      : { 200: Type.Unknown({ description: 'the Kobo store protocol’s answer (JSON)' }), 201: Type.Unknown({ description: 'created' }), 204: Empty('done') };
  return {
    tags: ['kobo'],
    summary: `Kobo store protocol (coming soon; may change): ${r.url.replace(/^.*\/:token/, '')}`,
    params: paramsOf(r.url),
    ...(methods.some((m) => m === 'GET' || m === 'HEAD') ? {} : { body: Type.Unknown({ description: 'as the device sends it' }) }),
    response: { ...response, ...errors(400, 401, 404, 429, 502) },
  };
}

export function koboRoutes(app: FastifyInstance, deps: KoboDeps): void {
  const { reads } = deps;
  const state = new KoboSyncState(reads.db);
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

  // ------------------------------------------------------------------ start-up calls

  const tokens = (req: FastifyRequest) => {
    const t = (req.params as { token: string }).token;
    return { AccessToken: t, RefreshToken: t, TokenType: 'Bearer', TrackingId: req.kobo!.device_id, UserKey: userKeyOf(req) };
  };
  app.post(`${P}/v1/auth/device`, hook, async (req) => tokens(req));
  app.post(`${P}/v1/auth/refresh`, hook, async (req) => tokens(req));
  app.get(`${P}/v1/initialization`, hook, async (req, reply) =>
    reply.header('x-kobo-apitoken', 'e30=').send({ Resources: koboResources(base(req), origin(req) || base(req).replace(/\/kobo\/.*$/, '')) }),
  );
  app.get(`${P}/v1/user/profile`, hook, async (req) => ({
    UserKey: userKeyOf(req),
    UserDisplayName: req.kobo!.name,
    HasPurchasedBook: true,
    HasPurchasedAudiobook: false,
    IsOneStoreAccount: false,
  }));
  app.get(`${P}/v1/user/loyalty/benefits`, hook, async () => ({ Benefits: {} }));
  app.get(`${P}/v1/analytics/gettests`, hook, async () => ({ Result: 'Success', TestKey: '', Tests: {} }));
  app.post(`${P}/v1/analytics/event`, hook, async () => ({ Result: 'Success' }));
  app.get(`${P}/v1/user/wishlist`, hook, async () => ({ Items: [], TotalCountByProfile: {} }));

  // ------------------------------------------------------------------ sync

  app.get(`${P}/v1/library/sync`, hook, async (req, reply) => {
    const kobo = req.kobo!;
    const token = parseSyncToken(req.headers['x-kobo-synctoken']);
    // a token that is not one of ours for this Kobo (none, the store's, another server's, garbage):
    // the device holds nothing we sent, so everything is sent again — a full sync (Komga does this)
    if (!(await state.ours(kobo.device_id, token))) await state.reset(kobo.device_id);
    else await state.confirm(kobo.device_id, token.gen);
    const a = await access(req);
    const diff = await state.differences(kobo, a, SYNC_PAGE + 1, token.after ?? null);
    const bookIds = diff.filter((d) => d.key.startsWith('i:')).map((d) => d.key.slice(2));
    const [items, progress] = await Promise.all([itemsOf(req, bookIds), lib.progressOf(kobo.user_id, bookIds)]);
    const tagIds = diff.filter((d) => d.key.startsWith('t:')).map((d) => d.key.slice(2));
    const [tagRows, maps] = await Promise.all([lib.tagsOf(kobo.user_id, tagIds), lib.mapsFor(diff, items, progress)]);
    const entries: unknown[] = [];
    const sent: Difference[] = [];
    let more = false;
    for (const d of diff) {
      const page = await entriesOf(req, d, items, progress, tagRows, maps);
      if (entries.length + page.length > SYNC_PAGE) {
        more = true;
        break;
      }
      entries.push(...page);
      // a state sent without its place (the book's span map was not ready) is sent again next time
      const epub = items.get(d.key.slice(2)) && epubOf(items.get(d.key.slice(2))!);
      const unplaced = d.sver !== null && epub && (progress.get(d.key.slice(2))?.percentage ?? 1) < 1 && !maps.has(epub.sha256!);
      sent.push(unplaced ? { ...d, sver: `${d.sver}~unplaced` } : d);
    }
    const gen = await state.record(kobo.device_id, sent);
    // the reading states this answer gives the device: its next push of those books follows them
    await delivered(
      req,
      'kobo-sync',
      sent.filter((d) => d.key.startsWith('i:') && d.sver !== null && d.sver !== d.hsver && items.has(d.key.slice(2)) && progress.has(d.key.slice(2))),
      progress,
    );
    reply.header('x-kobo-synctoken', makeSyncToken(gen, token.store, more ? sent.at(-1)?.key : undefined, kobo.device_id));
    if (more) reply.header('x-kobo-sync', 'continue');
    return reply.send(entries);
  });

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

  /** The entries one difference makes (none when the book became invisible between the two reads). */
  async function entriesOf(
    req: FastifyRequest,
    d: Difference,
    items: Map<string, Item>,
    progress: Progress,
    tagRows: TagRows,
    maps: Map<string, SpanMap | null>,
  ): Promise<unknown[]> {
    const id = d.key.slice(2);
    if (d.key.startsWith('t:')) {
      const t = tagRows.get(id);
      if (d.ever === null || !t) return [{ DeletedTag: { Tag: { Id: id, LastModified: koboTime(new Date()) } } }];
      return [{ [d.hever === null ? 'NewTag' : 'ChangedTag']: tag(id, t.name, t.created, t.modified, t.items) }];
    }
    const item = items.get(id);
    if (d.ever === null || !item) {
      const now = new Date().toISOString();
      return [{ ChangedEntitlement: { BookEntitlement: bookEntitlement(id, now, now, true) } }];
    }
    const out: unknown[] = [];
    const facts = await lib.stateFacts(item, progress.get(id), maps);
    const rs = readingState(id, item.created_at, facts);
    if (d.ever !== d.hever) {
      const epub = epubOf(item)!;
      const ent = {
        BookEntitlement: bookEntitlement(id, item.created_at, item.updated_at, false),
        BookMetadata: bookMetadata(item, epub, null, { base: base(req) }),
        ReadingState: rs,
      };
      out.push(d.hever === null ? { NewEntitlement: ent } : { ChangedEntitlement: ent });
    }
    // the device ignores a state inside an entitlement: it travels on its own as well
    if (d.sver !== null && d.sver !== d.hsver) out.push({ ChangedReadingState: { ReadingState: rs } });
    return out;
  }

  // ------------------------------------------------------------------ one book

  const bookOf = async (req: FastifyRequest, reply: FastifyReply): Promise<Item | null> => {
    const id = (req.params as { id: string }).id;
    const item = isUuid(id) ? (await itemsOf(req, [id.toLowerCase()])).get(id.toLowerCase()) : undefined;
    if (!item || !epubOf(item)) {
      reply.code(404).send({ error: 'book not found' });
      return null;
    }
    return item;
  };

  app.get(`${P}/v1/library/:id/metadata`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    return [bookMetadata(item, epubOf(item)!, null, { base: base(req) })];
  });

  app.get(`${P}/v1/library/:id/state`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    const progress = await lib.progressOf(req.kobo!.user_id, [item.id]);
    const p = progress.get(item.id);
    if (p) await delivered(req, 'kobo-state', [{ key: `i:${item.id}` }], progress);
    return [readingState(item.id, item.created_at, await lib.stateFacts(item, p))];
  });

  app.put(`${P}/v1/library/:id/state`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    const body = req.body as { ReadingStates?: unknown } | null;
    const states = body && typeof body === 'object' && Array.isArray(body.ReadingStates) ? body.ReadingStates : null;
    if (!states || states.length !== 1 || typeof states[0] !== 'object' || states[0] === null) return reply.code(400).send({ error: 'invalid request' });
    const s = states[0] as {
      CurrentBookmark?: { ProgressPercent?: unknown; Location?: { Value?: unknown; Type?: unknown; Source?: unknown } };
      StatusInfo?: { Status?: unknown };
    };
    const status = s.StatusInfo?.Status;
    const rawPct = s.CurrentBookmark?.ProgressPercent;
    if (rawPct !== undefined && rawPct !== null && (typeof rawPct !== 'number' || !Number.isFinite(rawPct) || rawPct < 0 || rawPct > 100))
      return reply.code(400).send({ error: 'invalid request' });
    const pct = typeof rawPct === 'number' ? rawPct : null;
    const loc = s.CurrentBookmark?.Location;
    const input: Record<string, unknown> = { client: 'kobo', device: req.kobo!.name };
    let write = true;
    if (status === 'Finished') {
      // the device sends the first span with Finished: the state is what counts, not that place
      input.percentage = 1;
    } else {
      if (pct !== null) input.percentage = pct / 100;
      const epub = epubOf(item)!;
      if (loc && loc.Type === 'KoboSpan' && typeof loc.Value === 'string' && typeof loc.Source === 'string' && loc.Value.length <= 200 && loc.Source.length <= 2048) {
        const map = await deps.kepubs.spans(epub.sha256!).catch(() => null);
        const place = map && locationToPlace(map, loc.Source, loc.Value);
        if (place) Object.assign(input, { anchor_href: place.anchor_href, css_selector: 'body', char_offset: place.offset });
      }
      // a book merely on the device (ReadyToRead at the start) writes nothing
      if (status === 'ReadyToRead' && !(pct && pct > 0)) write = false;
      if (input.percentage === undefined && input.anchor_href === undefined) write = false;
    }
    const at = koboTime(new Date());
    let result = 'Success';
    if (write) {
      const r = await deps.reading(req, 'progress-put', { item_id: item.id, input });
      if (!r.ok) result = 'Failure';
      else {
        // the device has the state it wrote: it is not sent back at the next sync
        const p = (await lib.progressOf(req.kobo!.user_id, [item.id])).get(item.id);
        if (p) await state.stateKnown(req.kobo!.device_id, item.id, p.updated_at);
      }
    }
    return {
      RequestResult: result,
      UpdateResults: [
        {
          EntitlementId: item.id,
          CurrentBookmarkResult: { Result: result },
          StatisticsResult: { Result: 'Ignored' },
          StatusInfoResult: { Result: result },
          LastModified: at,
          PriorityTimestamp: at,
        },
      ],
    };
  });

  // removed from the device (or archived): recorded, never the file
  app.delete(`${P}/v1/library/:id`, hook, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    if (!isUuid(id)) return reply.code(400).send({ error: 'invalid media item id' });
    const r = await deps.devices('kobo-book-remove', { device: { device_id: req.kobo!.device_id, user_id: req.kobo!.user_id }, input: { media_item_id: id } });
    if (!r.ok) return reply.code(502).send({ error: r.error.message });
    await state.forget(req.kobo!.device_id, `i:${id.toLowerCase()}`);
    return reply.code(204).send();
  });

  // ------------------------------------------------------------------ files

  app.get(`${P}/v1/books/:id/file/kepub`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    const k = await deps.kepubs.download(epubOf(item)!.sha256!);
    if (!k) return reply.code(404).send({ error: 'book not found' });
    return reply
      .header('Content-Type', 'application/kepub+zip')
      .header('Content-Length', String(k.size))
      .header('Content-Disposition', `attachment; filename="${item.id}.kepub.epub"`)
      .send(k.stream);
  });

  const cover = async (req: FastifyRequest, reply: FastifyReply) => {
    const p = req.params as { imageId: string; w: string; h: string };
    const id = p.imageId.split('.')[0]!;
    const w = Math.min(2000, Math.max(1, Number.parseInt(p.w, 10) || 0));
    const h = Math.min(3000, Math.max(1, Number.parseInt(p.h, 10) || 0));
    if (!isUuid(id) || !(await itemsOf(req, [id.toLowerCase()])).size) return reply.code(404).send({ error: 'cover not found' });
    const r = ok(await deps.covers.get(req.caller!, await access(req), id.toLowerCase(), w <= 200 && h <= 300 ? 'thumbnail' : 'cover'));
    if (!r) return reply.code(404).send({ error: 'cover not found' });
    const { default: sharp } = await import('sharp');
    const data = await sharp(r.data, { failOn: 'none' }).resize(w, h, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
    return reply.header('Content-Type', 'image/jpeg').header('Cache-Control', 'private, max-age=86400').send(data);
  };
  app.get(`${P}/v1/books/:imageId/thumbnail/:w/:h/false/image.jpg`, hook, cover);
  app.get(`${P}/v1/books/:imageId/thumbnail/:w/:h/:quality/:grey/image.jpg`, hook, cover);

  koboTagRoutes(app, P, hook, deps);

  // ------------------------------------------------------------------ everything else

  // any other store call: an empty answer, never an error the device would show — or, when an admin
  // turned on `kobo_store_proxy`, the real store's answer
  const store = koboStoreProxy(reads.db, deps.storeUrl ?? 'https://storeapi.kobo.com');
  const other = async (req: FastifyRequest, reply: FastifyReply) => ((await store.on()) ? store.passOn(req, reply) : {});
  app.all(`${P}/*`, hook, other);
  app.all(`${P}`, hook, other);

  koboAnnotationRoutes(app, deps);
  app.all('/api/UserStorage/*', async () => ({}));
}
