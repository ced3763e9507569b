// Native Kobo sync: the Kobo store's API under `/kobo/<token>` (the address written in the device's
// configuration), and the reading-services host the device calls at this server's root. Books,
// covers and tags come from the gateway's read models; reading states and tag changes go to the
// reading service, removals to device-sync, KEPUBs from the catalog. docs/decisions.md, "Native Kobo
// sync", has the shapes and the choices.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import pLimit from 'p-limit';
import { Catalog, type Result } from '@bindery/contracts';
import type { AuthFailures } from '../http/auth-failures';
import type { CallDeviceSync } from '../http/device-sync-client';
import type { Origins } from '../http/origin';
import type { Reader } from '../http/reading-client';
import type { CallCatalog } from '../http/rpc';
import { publicBase, koboPath } from '../kobo/address';
import type { Kobo, KoboAuth } from '../kobo/auth';
import { fractionToPlace, type KepubSource, locationToPlace, placeToLocation, type SpanMap } from '../kobo/kepubs';
import { koboResources } from '../kobo/resources';
import { koboAnnotationRoutes } from '../kobo/annotations';
import { bookEntitlement, bookMetadata, koboTime, readingState, type StateFacts, tag } from '../kobo/shapes';
import { type Difference, KoboSyncState } from '../kobo/sync-state';
import { makeSyncToken, parseSyncToken } from '../kobo/sync-token';
import { SCHEMA } from '../projections/migrations';
import { readingTables } from '../read-model/reading-tables';
import type { Reads } from '../read-model/reads';
import { catalogTables, identityTables } from '../read-model/tables';

/** entries in one sync answer, as the store and its emulators page them */
export const SYNC_PAGE = 100;
/** how long a sync page waits for its books' span maps (a KEPUB not yet made is made meanwhile) */
const SPAN_BUDGET_MS = 1500;

export interface KoboDeps {
  reads: Reads;
  koboAuth: KoboAuth;
  kepubs: KepubSource;
  reading: Reader;
  devices: CallDeviceSync;
  catalog: CallCatalog;
  origins?: Origins;
  /** the real Kobo store (KOBO_STORE_URL), for what an admin lets through */
  storeUrl?: string;
  /** the per-address budget of failed credential checks every surface shares */
  failures?: AuthFailures;
}

declare module 'fastify' {
  interface FastifyRequest {
    kobo?: Kobo;
  }
}

const R = readingTables();
const I = identityTables();
/** headers that belong to this hop or to Bindery, not to the store */
const NOT_PASSED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'cookie', 'authorization', 'accept-encoding', 'keep-alive', 'upgrade']);
const C = catalogTables();
type Item = Catalog.MediaItem;
const ok = <T>(r: Result<T>): T | null => (r.ok ? r.value : null);

export function koboRoutes(app: FastifyInstance, deps: KoboDeps): void {
  const { reads } = deps;
  const state = new KoboSyncState(reads.db);
  const P = '/kobo/:token';

  /** onRequest of every store route: the token names a Kobo, or the answer is 401. */
  const requireKobo = async (req: FastifyRequest, reply: FastifyReply) => {
    // a wrong token counts against the address's budget of failed checks, like a password
    if (deps.failures?.refuse(req, reply)) return;
    const kobo = await deps.koboAuth.verify((req.params as { token?: string }).token);
    if (!kobo) {
      deps.failures?.failed(req.ip);
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

  /** The visible EPUB items among `ids`, by id. */
  async function itemsOf(req: FastifyRequest, ids: string[]): Promise<Map<string, Item>> {
    const out = new Map<string, Item>();
    if (ids.length === 0) return out;
    const a = await access(req);
    if (!a.all && a.ids.length === 0) return out;
    let q = reads.db.withSchema(SCHEMA).selectFrom(C.items).select(['id', 'doc']).where('id', 'in', ids);
    if (!a.all) q = q.where('library_id', 'in', a.ids);
    for (const r of await q.execute()) out.set(r.id, JSON.parse(r.doc as string) as Item);
    return out;
  }
  const epubOf = (item: Item) => item.formats.find((f) => f.format.toLowerCase() === 'epub' && f.sha256) ?? null;

  async function progressOf(user: string, ids: string[]) {
    const out = new Map<string, { percentage: number; updated_at: string; spot: { spine_index?: number; doc_offset?: number } | null }>();
    if (ids.length === 0) return out;
    const rows = await reads.db
      .withSchema(SCHEMA)
      .selectFrom(R.progress)
      .select(['item_id', 'percentage', (eb) => eb.cast<string>('updated_at', 'text').as('at'), 'spot'])
      .where('user_id', '=', user)
      .where('item_id', 'in', ids)
      .execute();
    for (const r of rows) out.set(r.item_id, { percentage: Number(r.percentage), updated_at: r.at, spot: (typeof r.spot === 'string' ? JSON.parse(r.spot) : r.spot) ?? null });
    return out;
  }

  /** A book's reading state as the Kobo reads it, its place as a span of our KEPUB when known. */
  async function stateFacts(
    item: Item,
    p: { percentage: number; updated_at: string; spot: { spine_index?: number; doc_offset?: number } | null } | undefined,
    maps?: Map<string, SpanMap | null>,
  ): Promise<StateFacts> {
    if (!p) return { percentage: null, updated_at: null, location: null };
    let location: StateFacts['location'] = null;
    const epub = epubOf(item);
    if (epub && p.percentage < 1) {
      // in a sync page only the maps that arrived within the page's budget (see `mapsFor`)
      const map = maps ? (maps.get(epub.sha256!) ?? null) : await deps.kepubs.spans(epub.sha256!).catch(() => null);
      if (map) {
        const at =
          p.spot?.spine_index !== undefined && p.spot.doc_offset !== undefined ? { spine: p.spot.spine_index, offset: p.spot.doc_offset } : fractionToPlace(map, p.percentage);
        location = placeToLocation(map, at.spine, at.offset);
      }
    }
    return { percentage: p.percentage, updated_at: new Date(p.updated_at).toISOString(), location };
  }

  // ------------------------------------------------------------------ start-up calls

  const tokens = (req: FastifyRequest) => {
    const t = (req.params as { token: string }).token;
    return { AccessToken: t, RefreshToken: t, TokenType: 'Bearer', TrackingId: req.kobo!.device_id, UserKey: req.kobo!.user_id };
  };
  app.post(`${P}/v1/auth/device`, hook, async (req) => tokens(req));
  app.post(`${P}/v1/auth/refresh`, hook, async (req) => tokens(req));
  app.get(`${P}/v1/initialization`, hook, async (req, reply) =>
    reply.header('x-kobo-apitoken', 'e30=').send({ Resources: koboResources(base(req), origin(req) || base(req).replace(/\/kobo\/.*$/, '')) }),
  );
  app.get(`${P}/v1/user/profile`, hook, async (req) => ({
    UserKey: req.kobo!.user_id,
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
    await state.confirm(kobo.device_id, token.gen);
    const a = await access(req);
    const diff = await state.differences(kobo, a, SYNC_PAGE + 1);
    const bookIds = diff.filter((d) => d.key.startsWith('i:')).map((d) => d.key.slice(2));
    const [items, progress] = await Promise.all([itemsOf(req, bookIds), progressOf(kobo.user_id, bookIds)]);
    const tagIds = diff.filter((d) => d.key.startsWith('t:')).map((d) => d.key.slice(2));
    const [tagRows, maps] = await Promise.all([tagsOf(kobo.user_id, tagIds), mapsFor(diff, items, progress)]);
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
    reply.header('x-kobo-synctoken', makeSyncToken(gen, token.store));
    if (more) reply.header('x-kobo-sync', 'continue');
    return reply.send(entries);
  });

  /**
   * The span maps of the page's books whose state is sent, fetched together within SPAN_BUDGET_MS: a
   * book never downloaded has its KEPUB made on the first fetch, which must not hold the page up; a
   * map that is late is used at the next sync (the conversion goes on and is kept).
   */
  async function mapsFor(diff: Difference[], items: Map<string, Item>, progress: Awaited<ReturnType<typeof progressOf>>): Promise<Map<string, SpanMap | null>> {
    const out = new Map<string, SpanMap | null>();
    const want = new Set<string>();
    for (const d of diff) {
      const item = items.get(d.key.slice(2));
      const p = progress.get(d.key.slice(2));
      const epub = item && epubOf(item);
      if (epub && p && p.percentage < 1 && d.sver !== null && d.sver !== d.hsver) want.add(epub.sha256!);
    }
    if (want.size === 0) return out;
    const limit = pLimit(4);
    const all = Promise.all(
      [...want].map((sha) =>
        limit(async () => {
          out.set(sha, await deps.kepubs.spans(sha).catch(() => null));
        }),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, SPAN_BUDGET_MS)))]);
    clearTimeout(timer);
    limit.clearQueue();
    return new Map(out);
  }

  async function tagsOf(user: string, ids: string[]) {
    const out = new Map<string, { name: string; created: string; modified: string; items: string[] }>();
    if (ids.length === 0) return out;
    const rows = await reads.db.withSchema(SCHEMA).selectFrom(R.collections).select(['id', 'name', 'doc']).where('user_id', '=', user).where('id', 'in', ids).execute();
    const members = await reads.db.withSchema(SCHEMA).selectFrom(R.members).select(['collection_id', 'item_id']).where('collection_id', 'in', ids).orderBy('item_id').execute();
    for (const r of rows) {
      const doc = (typeof r.doc === 'string' ? JSON.parse(r.doc) : r.doc) as { created_at?: string; updated_at?: string };
      out.set(r.id, { name: r.name, created: doc.created_at ?? new Date(0).toISOString(), modified: doc.updated_at ?? new Date().toISOString(), items: [] });
    }
    for (const m of members) out.get(m.collection_id)?.items.push(m.item_id);
    return out;
  }

  /** The entries one difference makes (none when the book became invisible between the two reads). */
  async function entriesOf(
    req: FastifyRequest,
    d: Difference,
    items: Map<string, Item>,
    progress: Awaited<ReturnType<typeof progressOf>>,
    tagRows: Awaited<ReturnType<typeof tagsOf>>,
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
    const facts = await stateFacts(item, progress.get(id), maps);
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
    const item = Catalog.isUuid(id) ? (await itemsOf(req, [id.toLowerCase()])).get(id.toLowerCase()) : undefined;
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
    const p = (await progressOf(req.kobo!.user_id, [item.id])).get(item.id);
    return [readingState(item.id, item.created_at, await stateFacts(item, p))];
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
        const p = (await progressOf(req.kobo!.user_id, [item.id])).get(item.id);
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
    if (!Catalog.isUuid(id)) return reply.code(400).send({ error: 'invalid media item id' });
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
    if (!Catalog.isUuid(id) || !(await itemsOf(req, [id.toLowerCase()])).size) return reply.code(404).send({ error: 'cover not found' });
    const r = ok(await deps.catalog('item-cover', { caller: req.caller!, id: id.toLowerCase(), kind: w <= 200 && h <= 300 ? 'thumbnail' : 'cover' })) as Catalog.CoverFile | null;
    if (!r) return reply.code(404).send({ error: 'cover not found' });
    const { default: sharp } = await import('sharp');
    const data = await sharp(Buffer.from(r.data_base64, 'base64'), { failOn: 'none' }).resize(w, h, { fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
    return reply.header('Content-Type', 'image/jpeg').header('Cache-Control', 'private, max-age=86400').send(data);
  };
  app.get(`${P}/v1/books/:imageId/thumbnail/:w/:h/false/image.jpg`, hook, cover);
  app.get(`${P}/v1/books/:imageId/thumbnail/:w/:h/:quality/:grey/image.jpg`, hook, cover);

  registerTagRoutes(app, P, hook, deps);

  // ------------------------------------------------------------------ everything else

  // any other store call: an empty answer, never an error the device would show — or, when an admin
  // turned on `kobo_store_proxy`, the real store's answer
  const other = async (req: FastifyRequest, reply: FastifyReply) => ((await storeProxyOn()) ? passOn(req, reply) : {});
  app.all(`${P}/*`, hook, other);
  app.all(`${P}`, hook, other);

  async function storeProxyOn(): Promise<boolean> {
    const r = await reads.db.withSchema(SCHEMA).selectFrom(I.settings).select('value').where('key', '=', 'kobo_store_proxy').executeTakeFirst();
    return r?.value === true || r?.value === 'true';
  }

  /** The call as the device made it, to the store (our token and the device's bearer for us stay here). */
  async function passOn(req: FastifyRequest, reply: FastifyReply) {
    const rest = req.url.replace(/^\/kobo\/[^/?]+/, '') || '/';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !NOT_PASSED.has(k.toLowerCase()) && !k.startsWith('x-forwarded-')) headers[k] = v;
    try {
      const r = await fetch(`${deps.storeUrl ?? 'https://storeapi.kobo.com'}${rest}`, {
        method: req.method,
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' || req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      });
      const body = Buffer.from(await r.arrayBuffer());
      for (const h of ['content-type', 'x-kobo-apitoken', 'x-kobo-synctoken', 'x-kobo-sync']) {
        const v = r.headers.get(h);
        if (v) reply.header(h, v);
      }
      return reply.code(r.status).send(body);
    } catch (e) {
      req.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'Kobo store unreachable');
      return reply.code(200).send({});
    }
  }

  // the reading-services host (the device strips our path): answered, never a 401 (one aborts the device's whole sync)
  koboAnnotationRoutes(app, deps);
  app.all('/api/UserStorage/*', async () => ({}));
}

/** Tags on the device are the owner's collections: create, rename, delete, add and remove books. */
function registerTagRoutes(app: FastifyInstance, P: string, hook: { onRequest: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown> }, deps: KoboDeps) {
  const itemIds = (body: unknown): string[] | null => {
    const items = (body as { Items?: unknown } | null)?.Items;
    if (items === undefined) return [];
    if (!Array.isArray(items) || items.length > 1000) return null;
    const out: string[] = [];
    for (const i of items) {
      const id = (i as { RevisionId?: unknown } | null)?.RevisionId;
      if (typeof id !== 'string' || !Catalog.isUuid(id)) return null;
      out.push(id.toLowerCase());
    }
    return out;
  };
  const nameOf = (body: unknown): string | null => {
    const n = (body as { Name?: unknown } | null)?.Name;
    return typeof n === 'string' && n.trim() !== '' && n.length <= 200 ? n.trim() : null;
  };
  const visibleIds = async (req: FastifyRequest, ids: string[]) => {
    const a = (await deps.reads.context(req.caller!)).access;
    const out: string[] = [];
    for (const id of ids) if (await deps.reads.catalog.itemLibrary(a, id)) out.push(id);
    return out;
  };
  const send = (reply: FastifyReply, r: Result<unknown>, status = 200) =>
    r.ok ? reply.code(status).send(r.value ?? {}) : reply.code(r.error.code === 'not_found' ? 404 : 400).send({ error: r.error.message });
  const tagId = (req: FastifyRequest) => (req.params as { tagId: string }).tagId;

  app.post(`${P}/v1/library/tags`, hook, async (req, reply) => {
    const name = nameOf(req.body);
    const ids = itemIds(req.body);
    if (!name || !ids) return reply.code(400).send({ error: 'invalid request' });
    const r = await deps.reading(req, 'collection-create', { input: { name } });
    if (!r.ok) return send(reply, r);
    const id = (r.value as { id: string }).id;
    const add = await visibleIds(req, ids);
    if (add.length) await deps.reading(req, 'collection-add', { id, input: { media_item_ids: add } });
    // on a device that gets only its shelves, a tag made there is one of them
    if (req.kobo!.books === 'shelves') await deps.devices('shelf-add', { caller: req.caller!, id: req.kobo!.device_id, input: { collection_id: id, collection_name: name } });
    return reply.code(201).send(JSON.stringify(id));
  });
  app.put(`${P}/v1/library/tags/:tagId`, hook, async (req, reply) => {
    const name = nameOf(req.body);
    if (!name || !Catalog.isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
    return send(reply, await deps.reading(req, 'collection-update', { id: tagId(req), input: { name } }));
  });
  app.delete(`${P}/v1/library/tags/:tagId`, hook, async (req, reply) => {
    if (!Catalog.isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
    return send(reply, await deps.reading(req, 'collection-delete', { id: tagId(req) }));
  });
  for (const items of ['items', 'Items']) {
    app.post(`${P}/v1/library/tags/:tagId/${items}`, hook, async (req, reply) => {
      const ids = itemIds(req.body);
      if (!ids || !Catalog.isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
      const add = await visibleIds(req, ids);
      if (add.length === 0) return reply.code(201).send({});
      return send(reply, await deps.reading(req, 'collection-add', { id: tagId(req), input: { media_item_ids: add } }), 201);
    });
    app.post(`${P}/v1/library/tags/:tagId/${items}/delete`, hook, async (req, reply) => {
      const ids = itemIds(req.body);
      if (!ids || !Catalog.isUuid(tagId(req))) return reply.code(400).send({ error: 'invalid request' });
      for (const id of ids) {
        const r = await deps.reading(req, 'collection-remove', { id: tagId(req), item_id: id });
        if (!r.ok && r.error.code !== 'not_found') return send(reply, r);
      }
      return reply.send({});
    });
  }
}
