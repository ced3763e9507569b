// The OPDS 1.2 catalog for reader apps, under /opds and again under /opds/key/<key> for apps that
// drop credentials on image and download requests. Feeds come from the gateway's read models only
// (no bus call per feed), filtered by the caller's library access, and are cached by the
// projections' positions, the access and the URL. Paths and page sizes: docs/decisions.md,
// "OPDS and the live channel".
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Catalog, fail, isUuid, Messages, ok, type Result } from '@bindery/contracts';
import { q1 } from '@bindery/catalog/query';
import { resolveInside } from '@bindery/platform';
import type { Auth } from '../http/authenticate';
import type { CallCatalog, CallIdentity } from '../http/rpc';
import { sendFailure } from '../http/reply';
import type { Reads, ReadContext } from '../read-model/reads';
import { sendFile } from '../files/send';
import { UPLOADS_CACHE_CONTROL } from './uploads';
import { acquisitionFeed, nameUuid, navigationFeed, openSearchDescription, segment, TYPE, type FeedHead, type NavEntry } from '../opds/atom';
import { parsePaging, type Paging } from '../opds/paging';
import { GROUP_KINDS, NAME_GROUPS, OpdsQueries, type ItemFilter } from '../opds/queries';
import { readerAuth } from '../opds/reader-auth';
import { opds2Feeds } from './opds2';
import { baseOf, collectionPage, feedCache, OPDS_ROOT, otherParams, pathOf, queryOf, send } from '../opds/request';
import { BUSY_RETRY_SECONDS, findPdftoppm, PageBusyError, PageSourceError, PDFTOPPM_MISSING, RenderLimitError } from '../opds/page-sources';
import { PSE_CLIENT, PSE_DEVICE, type Streams } from '../opds/streams';
import { DashboardView } from '../read-model/dashboard-view';
import type { Reader } from '../http/reading-client';
import type { VerifiedCache } from '../http/verified-cache';
import type { AuthFailures } from '../http/auth-failures';
import type { Origins } from '../http/origin';
import type { CoverSource } from '../files/covers';
import { atomFeed, coverSchema, fileSchema, keyParam, pageSchema, searchFeed } from './opds-schemas';

export interface OpdsDeps {
  /** covers and thumbnails, from the catalog's directory where reachable */
  covers: CoverSource;
  auth: Auth;
  identity: CallIdentity;
  catalog: CallCatalog;
  reads: Reads;
  reading: Reader;
  /** the sign-ins taken on trust, shared with KOReader's stock sync */
  verified?: VerifiedCache;
  /** the budgets of failed credential checks per address and kind (Basic is a password, a key a reader key) */
  failures?: AuthFailures;
  /** which Host may go into absolute addresses (the OpenSearch template) */
  origins: Origins;
  /** the page streams (one per gateway: its render pool's limits hold for every route that renders pages) */
  streams: Streams;
}

const PAGE_NOT_FOUND = 'page not found';
const MAX_WIDTH = 10_000;
const PAGE_NUMBER_MESSAGE = 'page number must be a whole number from 0';
const CONVERT_MESSAGE = 'convert must be jpeg';
const WIDTH_MESSAGE = `width must be a whole number from 1 to ${MAX_WIDTH}`;
const PAGE_TOO_LARGE = 'page too large to render within the server limits';
const PAGES_BUSY = `too many pages are being rendered: try again in ${BUSY_RETRY_SECONDS} seconds`;

/** `width` of a page request: null for none (an app that does not fill {maxWidth} sends the template text), NaN when invalid. */
export function parseWidth(w: string | undefined): number | null {
  if (w === undefined || w === '' || w === '{maxWidth}') return null;
  return /^\d{1,5}$/.test(w) && Number(w) >= 1 && Number(w) <= MAX_WIDTH ? Number(w) : NaN;
}

export function opdsRoutes(app: FastifyInstance, deps: OpdsDeps): void {
  const requireReader = readerAuth(deps.auth, deps.identity, deps.verified, deps.failures);
  const queries = new OpdsQueries(deps.reads.db);
  const streams = deps.streams;
  const tree = async (sub: FastifyInstance) => {
    sub.addHook('onRequest', requireReader);
    feeds(sub, deps, queries, streams);
    opds2Feeds(sub, deps, queries, streams);
  };
  void app.register(tree, { prefix: OPDS_ROOT });
  void app.register(
    async (sub: FastifyInstance) => {
      sub.addHook('onRoute', keyParam);
      await tree(sub);
    },
    { prefix: `${OPDS_ROOT}/key/:key` },
  );
}

function feeds(app: FastifyInstance, { reads, reading, origins, covers }: OpdsDeps, queries: OpdsQueries, streams: Streams): void {
  const now = () => new Date().toISOString();
  const dashboard = new DashboardView(reads.db);
  const cachedFeed = feedCache(reads);

  /** An entry leading to an acquisition feed of `count` books. */
  const booksEntry = (id: string, title: string, href: string, count: number, updated: string): NavEntry => ({
    id,
    title,
    href,
    kind: 'acquisition',
    content: `${count} ${count === 1 ? 'book' : 'books'}`,
    updated,
  });
  const nav = (base: string, key: string, title: string, href: string, kind: NavEntry['kind'], content: string, rel?: string): NavEntry => ({
    id: `urn:uuid:${nameUuid(key)}`,
    title,
    href: `${base}${href}`,
    kind,
    content,
    updated: now(),
    ...(rel ? { rel } : {}),
  });

  app.get('/', atomFeed('navigation', 'the OPDS 1.2 catalog root'), async (req, reply) => {
    const base = baseOf(req);
    const r = await cachedFeed(req, async () =>
      ok(
        navigationFeed({ key: 'root', title: 'Bindery', kind: 'navigation', base, self: req.url, updated: now() }, [
          nav(base, 'root/libraries', 'Libraries', '/libraries', 'navigation', 'Every library you can read'),
          nav(base, 'root/recent', 'Recently added', '/recent', 'acquisition', 'The newest books first', 'http://opds-spec.org/sort/new'),
          nav(base, 'root/authors', 'Authors', '/authors', 'navigation', 'Books by author'),
          nav(base, 'root/series', 'Series', '/series', 'navigation', 'Books by series'),
          nav(base, 'root/collections', 'Collections', '/collections', 'navigation', 'Your collections'),
          nav(base, 'root/continue-reading', 'Continue reading', '/continue-reading', 'acquisition', 'The books you are reading, last read first'),
        ]),
      ),
    );
    return send(reply, r, TYPE.navigation);
  });

  app.get('/libraries', atomFeed('navigation', 'libraries'), async (req, reply) => {
    const base = baseOf(req);
    const r = await cachedFeed(req, async (c) => {
      const libs = await reads.catalog.libraries(c.access, false);
      return ok(
        navigationFeed(
          { key: 'libraries', title: 'Libraries', kind: 'navigation', base, self: req.url, up: base, updated: now() },
          libs.map((l) => booksEntry(`urn:uuid:${l.id}`, l.name, `${base}/libraries/${l.id}`, l.item_count, l.updated_at)),
        ),
      );
    });
    return send(reply, r, TYPE.navigation);
  });

  /** A paged acquisition feed of the items one filter selects. */
  async function itemsFeed(req: FastifyRequest, c: ReadContext, p: Paging, f: ItemFilter, title: string, up: string, emptyIs?: string): Promise<Result<string>> {
    const base = baseOf(req);
    const page = await queries.items(c.access, f, p.perPage, p.offset);
    // a name with nothing the caller may see is as absent as a library they can't see
    if (emptyIs !== undefined && page.total === 0) return { ok: false, error: fail('not_found', emptyIs) };
    const updated = page.items.reduce((m, i) => (i.updated_at > m ? i.updated_at : m), '') || now();
    const key = `${f.by}/${'id' in f ? f.id : 'name' in f ? f.name : ''}`;
    const head: FeedHead = {
      key,
      title,
      kind: 'acquisition',
      base,
      self: req.url,
      up,
      updated,
      paging: { ...p, total: page.total, path: pathOf(req), query: otherParams(queryOf(req)) },
    };
    return ok(acquisitionFeed(head, page.items, await streams.infoFor(req.caller!.user_id, page.items)));
  }

  const paged = (req: FastifyRequest) => parsePaging(queryOf(req));

  app.get<{ Params: { id: string } }>('/libraries/:id', atomFeed('acquisition', "a library's books", { id: 'the library' }, { sort: 'title or new' }), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const lib = await reads.catalog.library(c.access, false, req.params.id);
      if (!lib.ok) return lib.error.code === 'validation' ? { ok: false, error: fail('not_found', Messages.libraryNotFound) } : lib;
      return itemsFeed(req, c, p.value, { by: 'library', id: lib.value.id }, lib.value.name, `${baseOf(req)}/libraries`);
    });
    return send(reply, r, TYPE.acquisition);
  });

  app.get('/recent', atomFeed('acquisition', 'recently added'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, (c) => itemsFeed(req, c, p.value, { by: 'recent' }, 'Recently added', baseOf(req)));
    return send(reply, r, TYPE.acquisition);
  });

  for (const kind of GROUP_KINDS) {
    const group = NAME_GROUPS[kind];
    app.get(`/${kind}`, atomFeed('navigation', `by ${kind}`), async (req, reply) => {
      const p = paged(req);
      if (!p.ok) return sendFailure(reply, p.error);
      const base = baseOf(req);
      const r = await cachedFeed(req, async (c) => {
        const { groups, total } = await queries.groups(kind, c.access, p.value.perPage, p.value.offset);
        const head: FeedHead = {
          key: kind,
          title: group.title,
          kind: 'navigation',
          base,
          self: req.url,
          up: base,
          updated: now(),
          paging: { ...p.value, total, path: pathOf(req), query: otherParams(queryOf(req)) },
        };
        return ok(
          navigationFeed(
            head,
            groups.map((g) => booksEntry(`urn:uuid:${nameUuid(`${kind}/${g.name}`)}`, g.name, `${base}/${kind}/${segment(g.name)}`, g.count, head.updated)),
          ),
        );
      });
      return send(reply, r, TYPE.navigation);
    });
    app.get<{ Params: { name: string } }>(`/${kind}/:name`, atomFeed('acquisition', `the books of one of the ${kind}`, { name: 'the name' }), async (req, reply) => {
      const p = paged(req);
      if (!p.ok) return sendFailure(reply, p.error);
      const name = req.params.name;
      const r = await cachedFeed(req, (c) => itemsFeed(req, c, p.value, group.filter(name), name, `${baseOf(req)}/${kind}`, group.notFound));
      return send(reply, r, TYPE.acquisition);
    });
  }

  // the caller's collections (system and their own), each an acquisition feed of its books
  app.get('/collections', atomFeed('navigation', 'your collections'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const base = baseOf(req);
    const r = await cachedFeed(req, async (c) => {
      const all = (await dashboard.collections(req.caller!.user_id, c.access)) as { id: string; name: string; item_count: number }[];
      const head: FeedHead = {
        key: `collections/${req.caller!.user_id}`,
        title: 'Collections',
        kind: 'navigation',
        base,
        self: req.url,
        up: base,
        updated: now(),
        paging: { ...p.value, total: all.length, path: pathOf(req), query: otherParams(queryOf(req)) },
      };
      return ok(
        navigationFeed(
          head,
          all
            .slice(p.value.offset, p.value.offset + p.value.perPage)
            .map((col) => booksEntry(`urn:uuid:${col.id}`, col.name, `${base}/collections/${col.id}`, col.item_count, head.updated)),
        ),
      );
    });
    return send(reply, r, TYPE.navigation);
  });

  app.get<{ Params: { id: string } }>('/collections/:id', atomFeed('acquisition', "a collection's books", { id: 'the collection' }), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const id = req.params.id;
    const r = await cachedFeed(req, async (c) => {
      const col = await collectionPage(dashboard, req, c, id, p.value);
      return col.ok ? ok(await bookFeed(req, p.value, `collections/${id}`, col.value.name, `${baseOf(req)}/collections`, col.value.page)) : col;
    });
    return send(reply, r, TYPE.acquisition);
  });

  app.get('/continue-reading', atomFeed('acquisition', 'books you are reading'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const page = await dashboard.books(req.caller!.user_id, c.access, { is_system: true, query_type: 'continue-reading' }, p.value.perPage, p.value.offset);
      return ok(await bookFeed(req, p.value, `continue-reading/${req.caller!.user_id}`, 'Continue reading', baseOf(req), page));
    });
    return send(reply, r, TYPE.acquisition);
  });

  /** An acquisition feed of a page of the reading read model's books. */
  async function bookFeed(req: FastifyRequest, p: Paging, key: string, title: string, up: string, page: { total: number; books: { item: unknown }[] }) {
    const list = page.books.map((b) => b.item as Catalog.MediaItem);
    const head: FeedHead = {
      key,
      title,
      kind: 'acquisition',
      base: baseOf(req),
      self: req.url,
      up,
      updated: list.reduce((m, i) => (i.updated_at > m ? i.updated_at : m), '') || now(),
      paging: { ...p, total: page.total, path: pathOf(req), query: otherParams(queryOf(req)) },
    };
    return acquisitionFeed(head, list, await streams.infoFor(req.caller!.user_id, list));
  }

  app.get('/search', searchFeed, async (req, reply) => {
    const q = queryOf(req);
    const text = q1(q, 'q');
    const base = baseOf(req);
    if (text === undefined || text.trim() === '') {
      // a Host this server may not believe gives a relative template (most apps resolve it)
      const origin = origins.publicBase(req) ?? '';
      const r = await cachedFeed(req, async () => ok(openSearchDescription(origin, base)), origin);
      return send(reply, r, TYPE.openSearch);
    }
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const found = await reads.catalog.search(c.access, { q: text, limit: String(p.value.perPage), offset: String(p.value.offset) });
      if (!found.ok) return found;
      const body = JSON.parse(found.value) as { data: Catalog.MediaItem[]; total: number };
      const head: FeedHead = {
        key: `search/${text}`,
        title: `Search: ${text}`,
        kind: 'acquisition',
        base,
        self: req.url,
        up: base,
        updated: body.data.reduce((m, i) => (i.updated_at > m ? i.updated_at : m), '') || now(),
        paging: { ...p.value, total: body.total, path: pathOf(req), query: otherParams(q) },
      };
      return ok(acquisitionFeed(head, body.data, await streams.infoFor(req.caller!.user_id, body.data)));
    });
    return send(reply, r, TYPE.acquisition);
  });

  // The files of catalogued items, as /uploads serves them, named for download (KOReader's
  // "use server filenames" reads Content-Disposition).
  app.get<{ Params: { libraryId: string; '*': string } }>('/uploads/library-:libraryId/*', fileSchema, async (req, reply) => {
    const { libraryId, '*': rel } = req.params;
    if (!isUuid(libraryId)) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    const id = libraryId.toLowerCase();
    const c = await reads.context(req.caller!);
    if (!(await reads.catalog.library(c.access, false, id)).ok) return sendFailure(reply, fail('not_found', Messages.libraryNotFound));
    if ((await reads.catalog.fileItem(c.access, id, rel)) === null) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    const found = await resolveInside((await reads.catalog.folders(id)) ?? [], rel);
    if (!found) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    return sendFile(req, reply, found.abs, { cacheControl: UPLOADS_CACHE_CONTROL, downloadName: path.posix.basename(rel) });
  });

  // OPDS-PSE: one page of a comic, a PDF or an image-only EPUB, 0-based, converted to JPEG and
  // scaled when asked or needed; a fetch past the user's position records their progress.
  app.get<{ Params: { id: string; n: string }; Querystring: { width?: string; convert?: string } }>('/pages/:id/:n', pageSchema, async (req, reply) => {
    const { id, n } = req.params;
    if (!/^\d{1,6}$/.test(n)) return sendFailure(reply, fail('validation', PAGE_NUMBER_MESSAGE));
    const width = parseWidth(req.query.width);
    if (Number.isNaN(width)) return sendFailure(reply, fail('validation', WIDTH_MESSAGE));
    const convert = req.query.convert;
    if (convert !== undefined && convert !== 'jpeg') return sendFailure(reply, fail('validation', CONVERT_MESSAGE));
    const c = await reads.context(req.caller!);
    const doc = await reads.catalog.item(c.access, id);
    if (!doc.ok) return sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
    const item = JSON.parse(doc.value) as Catalog.MediaItem;
    const index = Number(n);
    if (item.formats.some((f) => f.format.toLowerCase() === 'pdf') && !item.formats.some((f) => ['cbz', 'cbr'].includes(f.format.toLowerCase())) && !(await findPdftoppm())) {
      return sendFailure(reply, fail('service_unavailable', PDFTOPPM_MISSING));
    }
    const stream = await streams.streamOf(item);
    if (!stream || index >= stream.count) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    let out: Awaited<ReturnType<Streams['sources']['page']>>;
    try {
      out = await streams.sources.page(stream, index, width, convert === 'jpeg');
    } catch (e) {
      if (e instanceof PageSourceError && e.message === PDFTOPPM_MISSING) return sendFailure(reply, fail('service_unavailable', PDFTOPPM_MISSING));
      if (e instanceof PageBusyError) return sendFailure(reply.header('Retry-After', String(BUSY_RETRY_SECONDS)), fail('service_unavailable', PAGES_BUSY));
      if (e instanceof RenderLimitError) {
        req.log.warn({ err: e, item: item.id, page: n }, 'page over the render limits');
        return sendFailure(reply, fail('unprocessable', PAGE_TOO_LARGE));
      }
      // a broken archive or image is a missing page to the reader, and a warning here
      req.log.warn({ err: e, item: item.id, page: n }, 'page unreadable');
      return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    }
    if (!out) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    // only a reader app's own credential (Basic, a key in the path, Bearer) moves the position: a cookie
    // rides along on any navigation, so another site could otherwise move someone's place in a book
    const byApp = req.headers.authorization !== undefined || (req.params as { key?: string }).key !== undefined;
    if (byApp && (await streams.advances(req.caller!.user_id, item.id, index, stream.count))) {
      // not awaited: the page goes out now; the reading service keeps its own rules (guard, conflicts)
      const input = { page: index + 1, page_count: stream.count, client: PSE_CLIENT, device: PSE_DEVICE };
      reading(req, 'progress-put', { item_id: item.id, input }).then(
        (r) => {
          if (!r.ok) req.log.warn({ item: item.id, page: index, error: r.error }, 'page progress not recorded');
        },
        (e: unknown) => req.log.warn({ err: e, item: item.id }, 'page progress not recorded'),
      );
    }
    return reply.header('Cache-Control', 'private, max-age=86400').type(out.type).send(out.data);
  });

  for (const [route, kind] of [
    ['covers', 'cover'],
    ['thumbnails', 'thumbnail'],
  ] as const) {
    app.get<{ Params: { id: string } }>(`/${route}/:id`, coverSchema(kind), async (req, reply) => {
      const id = req.params.id;
      const c = await reads.context(req.caller!);
      if (!isUuid(id)) return sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
      const r = await covers.get(req.caller!, c.access, id, kind);
      if (!r.ok) return sendFailure(reply, r.error);
      const cover = r.value;
      reply.header('ETag', cover.etag).header('Cache-Control', 'private, max-age=86400');
      if (req.headers['if-none-match'] === cover.etag) return reply.code(304).send();
      return reply.type(cover.content_type).send(cover.data);
    });
  }
}
