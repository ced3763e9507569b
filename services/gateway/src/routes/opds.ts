// The OPDS 1.2 catalog for reader apps, under /opds and again under /opds/key/<key> for apps that
// drop credentials on image and download requests. Feeds come from the gateway's read models only
// (no bus call per feed), filtered by the caller's library access, and are cached by the
// projections' positions, the access and the URL. Paths and page sizes: docs/decisions.md,
// "OPDS and the live channel".
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Catalog, fail, Messages, ok, type Result } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import type { Auth } from '../http/authenticate';
import type { CallCatalog, CallIdentity } from '../http/rpc';
import { sendFailure } from '../http/reply';
import type { Reads, ReadContext } from '../read-model/reads';
import { sendFile } from '../files/send';
import { UPLOADS_CACHE_CONTROL } from './uploads';
import { acquisitionFeed, nameUuid, navigationFeed, openSearchDescription, segment, TYPE, type FeedHead, type NavEntry } from '../opds/atom';
import { parsePaging, type Paging } from '../opds/paging';
import { OpdsQueries, type ItemFilter } from '../opds/queries';
import { readerAuth } from '../opds/reader-auth';
import { cbzPage, showable } from '../opds/comic-pages';
import { STREAMED_FORMATS } from '../opds/atom';

export interface OpdsDeps {
  auth: Auth;
  identity: CallIdentity;
  catalog: CallCatalog;
  reads: Reads;
}

export const OPDS_ROOT = '/opds';
const FEED_CACHE_CONTROL = 'private, max-age=0, must-revalidate';
const authorNotFound = 'author not found';
const seriesNotFound = 'series not found';
const PAGE_NOT_FOUND = 'page not found';
const MAX_WIDTH = 10_000;
const PAGE_NUMBER_MESSAGE = 'page number must be a whole number from 0';
const WIDTH_MESSAGE = `width must be a whole number from 1 to ${MAX_WIDTH}`;

type Query = Record<string, string | string[]>;
const queryOf = (req: FastifyRequest) => (req.query ?? {}) as Query;
/** The request's query without paging, to carry into first/next/previous/last links. */
function otherParams(q: Query): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) if (k !== 'page' && k !== 'per_page') out[k] = Array.isArray(v) ? v[v.length - 1]! : v;
  return out;
}

export function opdsRoutes(app: FastifyInstance, deps: OpdsDeps): void {
  const requireReader = readerAuth(deps.auth, deps.identity);
  const queries = new OpdsQueries(deps.reads.db);
  const tree = async (sub: FastifyInstance) => {
    sub.addHook('onRequest', requireReader);
    feeds(sub, deps, queries);
  };
  void app.register(tree, { prefix: OPDS_ROOT });
  void app.register(tree, { prefix: `${OPDS_ROOT}/key/:key` });
}

/** The base every link of a feed starts with: the reader-key tree keeps its key. */
const baseOf = (req: FastifyRequest) => {
  const key = (req.params as { key?: string }).key;
  return key === undefined ? OPDS_ROOT : `${OPDS_ROOT}/key/${segment(key)}`;
};
/** The request path as the client sent it, without the query. */
const pathOf = (req: FastifyRequest) => req.url.split('?', 1)[0]!;

function send(reply: FastifyReply, r: Result<string | Buffer>, type: string): FastifyReply {
  if (!r.ok) return sendFailure(reply, r.error);
  return reply.code(200).header('Cache-Control', FEED_CACHE_CONTROL).type(`${type};charset=utf-8`).send(r.value);
}

function feeds(app: FastifyInstance, { reads, catalog }: OpdsDeps, queries: OpdsQueries): void {
  const now = () => new Date().toISOString();

  /** A rendered feed from the answer cache, keyed by what it depends on. */
  async function cachedFeed(req: FastifyRequest, render: (c: ReadContext) => Promise<Result<string>>, extra = ''): Promise<Result<Buffer>> {
    const c = await reads.context(req.caller!);
    return reads.cached(`opds|${c.key}|${extra}|${req.url}`, () => render(c));
  }

  const nav = (base: string, key: string, title: string, href: string, kind: NavEntry['kind'], content: string, rel?: string): NavEntry => ({
    id: `urn:uuid:${nameUuid(key)}`,
    title,
    href: `${base}${href}`,
    kind,
    content,
    updated: now(),
    ...(rel ? { rel } : {}),
  });

  app.get('/', async (req, reply) => {
    const base = baseOf(req);
    const r = await cachedFeed(req, async () =>
      ok(
        navigationFeed({ key: 'root', title: 'Bindery', kind: 'navigation', base, self: req.url, updated: now() }, [
          nav(base, 'root/libraries', 'Libraries', '/libraries', 'navigation', 'Every library you can read'),
          nav(base, 'root/recent', 'Recently added', '/recent', 'acquisition', 'The newest books first', 'http://opds-spec.org/sort/new'),
          nav(base, 'root/authors', 'Authors', '/authors', 'navigation', 'Books by author'),
          nav(base, 'root/series', 'Series', '/series', 'navigation', 'Books by series'),
        ]),
      ),
    );
    return send(reply, r, TYPE.navigation);
  });

  app.get('/libraries', async (req, reply) => {
    const base = baseOf(req);
    const r = await cachedFeed(req, async (c) => {
      const libs = await reads.catalog.libraries(c.access, false);
      return ok(
        navigationFeed(
          { key: 'libraries', title: 'Libraries', kind: 'navigation', base, self: req.url, up: base, updated: now() },
          libs.map((l) => ({
            id: `urn:uuid:${l.id}`,
            title: l.name,
            href: `${base}/libraries/${l.id}`,
            kind: 'acquisition' as const,
            content: `${l.item_count} ${l.item_count === 1 ? 'book' : 'books'}`,
            updated: l.updated_at,
          })),
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
    return ok(acquisitionFeed(head, page.items));
  }

  const paged = (req: FastifyRequest) => parsePaging(queryOf(req));

  app.get<{ Params: { id: string } }>('/libraries/:id', async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const lib = await reads.catalog.library(c.access, false, req.params.id);
      if (!lib.ok) return lib.error.code === 'validation' ? { ok: false, error: fail('not_found', Messages.libraryNotFound) } : lib;
      return itemsFeed(req, c, p.value, { by: 'library', id: lib.value.id }, lib.value.name, `${baseOf(req)}/libraries`);
    });
    return send(reply, r, TYPE.acquisition);
  });

  app.get('/recent', async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, (c) => itemsFeed(req, c, p.value, { by: 'recent' }, 'Recently added', baseOf(req)));
    return send(reply, r, TYPE.acquisition);
  });

  for (const kind of ['authors', 'series'] as const) {
    app.get(`/${kind}`, async (req, reply) => {
      const p = paged(req);
      if (!p.ok) return sendFailure(reply, p.error);
      const base = baseOf(req);
      const r = await cachedFeed(req, async (c) => {
        const { groups, total } =
          kind === 'authors' ? await queries.authors(c.access, p.value.perPage, p.value.offset) : await queries.series(c.access, p.value.perPage, p.value.offset);
        const head: FeedHead = {
          key: kind,
          title: kind === 'authors' ? 'Authors' : 'Series',
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
            groups.map((g) => ({
              id: `urn:uuid:${nameUuid(`${kind}/${g.name}`)}`,
              title: g.name,
              href: `${base}/${kind}/${segment(g.name)}`,
              kind: 'acquisition' as const,
              content: `${g.count} ${g.count === 1 ? 'book' : 'books'}`,
              updated: head.updated,
            })),
          ),
        );
      });
      return send(reply, r, TYPE.navigation);
    });
    app.get<{ Params: { name: string } }>(`/${kind}/:name`, async (req, reply) => {
      const p = paged(req);
      if (!p.ok) return sendFailure(reply, p.error);
      const name = req.params.name;
      const r = await cachedFeed(req, async (c) => {
        const f: ItemFilter = kind === 'authors' ? { by: 'author', name } : { by: 'series', name };
        return itemsFeed(req, c, p.value, f, name, `${baseOf(req)}/${kind}`, kind === 'authors' ? authorNotFound : seriesNotFound);
      });
      return send(reply, r, TYPE.acquisition);
    });
  }

  app.get('/search', async (req, reply) => {
    const q = queryOf(req);
    const text = Catalog.q1(q, 'q');
    const base = baseOf(req);
    if (text === undefined || text.trim() === '') {
      const origin = `${req.protocol}://${req.host}`;
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
      return ok(acquisitionFeed(head, body.data));
    });
    return send(reply, r, TYPE.acquisition);
  });

  // The files of catalogued items, as /uploads serves them, named for download (KOReader's
  // "use server filenames" reads Content-Disposition).
  app.get<{ Params: { libraryId: string; '*': string } }>('/uploads/library-:libraryId/*', async (req, reply) => {
    const { libraryId, '*': rel } = req.params;
    if (!Catalog.isUuid(libraryId)) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    const id = libraryId.toLowerCase();
    const c = await reads.context(req.caller!);
    if (!(await reads.catalog.library(c.access, false, id)).ok) return sendFailure(reply, fail('not_found', Messages.libraryNotFound));
    if ((await reads.catalog.fileItem(c.access, id, rel)) === null) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    const found = await resolveInside((await reads.catalog.folders(id)) ?? [], rel);
    if (!found) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    return sendFile(req, reply, found.abs, { cacheControl: UPLOADS_CACHE_CONTROL, downloadName: path.posix.basename(rel) });
  });

  // OPDS-PSE: one page of a comic, 0-based, converted to JPEG and scaled when asked or needed.
  // Reading progress from page fetches waits for the reading service (docs/decisions.md).
  app.get<{ Params: { id: string; n: string }; Querystring: { width?: string } }>('/pages/:id/:n', async (req, reply) => {
    const { id, n } = req.params;
    if (!/^\d{1,6}$/.test(n)) return sendFailure(reply, fail('validation', PAGE_NUMBER_MESSAGE));
    const w = req.query.width;
    // an app that does not fill {maxWidth} sends the template text: that means no limit
    const width = w === undefined || w === '' || w === '{maxWidth}' ? null : /^\d{1,5}$/.test(w) && Number(w) >= 1 && Number(w) <= MAX_WIDTH ? Number(w) : NaN;
    if (Number.isNaN(width)) return sendFailure(reply, fail('validation', WIDTH_MESSAGE));
    const c = await reads.context(req.caller!);
    const doc = await reads.catalog.item(c.access, id);
    if (!doc.ok) return sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
    const item = JSON.parse(doc.value) as Catalog.MediaItem;
    const f = item.formats.find((x) => STREAMED_FORMATS.has(x.format.toLowerCase()));
    if (!f) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    const found = await resolveInside((await reads.catalog.folders(item.library_id)) ?? [], f.file_path);
    if (!found) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    let out: Awaited<ReturnType<typeof showable>>;
    try {
      const page = await cbzPage(found.abs, Number(n));
      if (!page) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
      out = await showable(page, width);
    } catch (e) {
      // a broken archive or image is a missing page to the reader, and a warning here
      req.log.warn({ err: e, item: item.id, page: n }, 'comic page unreadable');
      return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    }
    return reply.header('Cache-Control', 'private, max-age=86400').type(out.type).send(out.data);
  });

  for (const [route, kind] of [
    ['covers', 'cover'],
    ['thumbnails', 'thumbnail'],
  ] as const) {
    app.get<{ Params: { id: string } }>(`/${route}/:id`, async (req, reply) => {
      const id = req.params.id;
      const c = await reads.context(req.caller!);
      if (!Catalog.isUuid(id) || !(await reads.catalog.itemLibrary(c.access, id))) return sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
      const r = await catalog('item-cover', { caller: req.caller!, id, kind });
      if (!r.ok) return sendFailure(reply, r.error);
      const cover = r.value as Catalog.CoverFile;
      reply.header('ETag', cover.etag).header('Cache-Control', 'private, max-age=86400');
      if (req.headers['if-none-match'] === cover.etag) return reply.code(304).send();
      return reply.type(cover.content_type).send(Buffer.from(cover.data_base64, 'base64'));
    });
  }
}
