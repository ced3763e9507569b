// OPDS 2.0 (application/opds+json): the OPDS 1.2 catalog again under <base>/v2, from the same read
// models, access filter, paging and answer cache; publications carry a Divina page list and the
// OPDS-PSE template when their pages can be streamed (docs/decisions.md, "OPDS 2.0 and page streaming").
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Catalog, fail, Messages, ok, type Result } from '@bindery/contracts';
import { q1 } from '@bindery/catalog/query';
import { sendFailure } from '../http/reply';
import type { ReadContext } from '../read-model/reads';
import { segment } from './atom';
import type { FeedKit } from './deps';
import { wordsOf } from './words';
import { feed2, nav2, pageManifest, publication, TYPE2, V2, type Feed2Head, type Group2 } from './json';
import type { Paging } from './paging';
import { GROUP_KINDS, NAME_GROUPS, type ItemFilter } from './queries';
import { baseOf, collectionPage, otherParams, pathOf, queryOf, send } from './request';
import { jsonFeed, jsonPublication, noCover as noCoverSchema } from './schemas';

const SORT_MESSAGE = 'sort must be one of: title, new';
const QUERY_MESSAGE = 'query is required';
/** publications shown in each group of the root feed */
const GROUP_SIZE = 10;

let placeholder: Promise<Buffer> | undefined;
/** A plain cover for publications without one (OPDS 2.0 requires an image per publication). */
function noCover(): Promise<Buffer> {
  placeholder ??= import('sharp').then(({ default: sharp }) =>
    sharp({ create: { width: 300, height: 450, channels: 3, background: '#d8d4cc' } })
      .png()
      .toBuffer(),
  );
  return placeholder;
}

export function jsonFeeds(app: FastifyInstance, k: FeedKit): void {
  rootFeeds(app, k);
  nameFeeds(app, k);
  readingFeeds(app, k);
  searchFeeds(app, k);
  publicationRoutes(app, k);
}

const v2 = (req: FastifyRequest) => `${baseOf(req)}${V2}`;
const head = (req: FastifyRequest, title: string, up: string | undefined, p?: Paging, total?: number, modified?: string): Feed2Head => ({
  title,
  base: baseOf(req),
  self: req.url,
  ...(up ? { up } : {}),
  ...(modified ? { modified } : {}),
  ...(p ? { paging: { page: p.page, perPage: p.perPage, total: total ?? 0, path: pathOf(req), query: otherParams(queryOf(req)) } } : {}),
});
const newest = ({ now }: FeedKit, items: Catalog.MediaItem[]) => items.reduce((m, i) => (i.updated_at > m ? i.updated_at : m), '') || now();

async function publications({ streams }: FeedKit, req: FastifyRequest, items: Catalog.MediaItem[]): Promise<object[]> {
  const s = await streams.infoFor(req.caller!.user_id, items);
  return items.map((i) => publication(i, baseOf(req), s.get(i.id), wordsOf(req)));
}

async function itemsFeed(
  k: FeedKit,
  req: FastifyRequest,
  c: ReadContext,
  p: Paging,
  f: ItemFilter,
  title: string,
  up: string,
  opts: { emptyIs?: string; sortable?: boolean } = {},
): Promise<Result<string>> {
  const sort = q1(queryOf(req), 'sort');
  if (opts.sortable && sort !== undefined && sort !== 'title' && sort !== 'new') return { ok: false, error: fail('validation', SORT_MESSAGE) };
  const page = await k.queries.items(c.access, f, p.perPage, p.offset, sort === 'new');
  if (opts.emptyIs !== undefined && page.total === 0) return { ok: false, error: fail('not_found', opts.emptyIs) };
  const { t } = wordsOf(req);
  const facets = opts.sortable
    ? [
        {
          title: t('sort'),
          links: [
            { href: `${pathOf(req)}?sort=title`, title: t('sort.title'), type: TYPE2.feed, ...(sort === 'new' ? {} : { rel: 'self' }) },
            { href: `${pathOf(req)}?sort=new`, title: t('root.recent'), type: TYPE2.feed, ...(sort === 'new' ? { rel: 'self' } : {}) },
          ],
        },
      ]
    : undefined;
  return ok(feed2(head(req, title, up, p, page.total, newest(k, page.items)), { publications: await publications(k, req, page.items), ...(facets ? { facets } : {}) }));
}

/** A feed of a page of the reading read model's books. */
async function booksFeed(k: FeedKit, req: FastifyRequest, p: Paging, title: string, up: string, page: { total: number; books: { item: unknown }[] }): Promise<string> {
  const items = page.books.map((b) => b.item as Catalog.MediaItem);
  return feed2(head(req, title, up, p, page.total, newest(k, items)), { publications: await publications(k, req, items) });
}

/** The root (navigation and the groups of reading and recent), the libraries, a library's publications and the recently added. */
function rootFeeds(app: FastifyInstance, k: FeedKit): void {
  const { reads, queries, dashboard, cachedFeed, paged } = k;
  app.get(`${V2}`, jsonFeed('the OPDS 2.0 catalog root'), async (req, reply) => {
    const base = v2(req);
    const r = await cachedFeed(req, async (c) => {
      const user = req.caller!.user_id;
      const [reading, recent] = await Promise.all([
        dashboard.books(user, c.access, { is_system: true, query_type: 'continue-reading' }, GROUP_SIZE, 0),
        queries.items(c.access, { by: 'recent' }, GROUP_SIZE, 0),
      ]);
      const { t } = wordsOf(req);
      const groups: Group2[] = [];
      const readingItems = reading.books.map((b) => b.item as Catalog.MediaItem);
      if (readingItems.length) groups.push({ title: t('root.continue'), href: `${base}/continue-reading`, publications: await publications(k, req, readingItems) });
      if (recent.items.length) groups.push({ title: t('root.recent'), href: `${base}/recent`, publications: await publications(k, req, recent.items) });
      const navigation = [
        nav2(t('root.libraries'), `${base}/libraries`),
        nav2(t('root.recent'), `${base}/recent`, recent.total, 'http://opds-spec.org/sort/new'),
        nav2(t('root.authors'), `${base}/authors`),
        nav2(t('root.series'), `${base}/series`),
        nav2(t('root.collections'), `${base}/collections`),
        nav2(t('root.continue'), `${base}/continue-reading`, reading.total),
      ];
      return ok(feed2(head(req, 'Bindery', undefined), { navigation, groups }));
    });
    return send(reply, r, TYPE2.feed);
  });

  app.get(`${V2}/libraries`, jsonFeed('libraries'), async (req, reply) => {
    const base = v2(req);
    const r = await cachedFeed(req, async (c) => {
      const libs = await reads.catalog.libraries(c.access, false);
      return ok(feed2(head(req, wordsOf(req).t('root.libraries'), base), { navigation: libs.map((l) => nav2(l.name, `${base}/libraries/${l.id}`, l.item_count)) }));
    });
    return send(reply, r, TYPE2.feed);
  });

  app.get<{ Params: { id: string } }>(`${V2}/libraries/:id`, jsonFeed("a library's publications", { id: 'the library' }, { sort: 'title or new' }), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const lib = await reads.catalog.library(c.access, false, req.params.id);
      if (!lib.ok) return lib.error.code === 'validation' ? { ok: false, error: fail('not_found', Messages.libraryNotFound) } : lib;
      return itemsFeed(k, req, c, p.value, { by: 'library', id: lib.value.id }, lib.value.name, `${v2(req)}/libraries`, { sortable: true });
    });
    return send(reply, r, TYPE2.feed);
  });

  app.get(`${V2}/recent`, jsonFeed('recently added'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, (c) => itemsFeed(k, req, c, p.value, { by: 'recent' }, wordsOf(req).t('root.recent'), v2(req)));
    return send(reply, r, TYPE2.feed);
  });
}

/** Authors and series: the names, and the publications of one. */
function nameFeeds(app: FastifyInstance, k: FeedKit): void {
  const { queries, cachedFeed, paged } = k;
  for (const kind of GROUP_KINDS) {
    const group = NAME_GROUPS[kind];
    app.get(`${V2}/${kind}`, jsonFeed(`by ${kind}`), async (req, reply) => {
      const p = paged(req);
      if (!p.ok) return sendFailure(reply, p.error);
      const base = v2(req);
      const r = await cachedFeed(req, async (c) => {
        const { groups, total } = await queries.groups(kind, c.access, p.value.perPage, p.value.offset);
        const navigation = groups.map((g) => nav2(g.name, `${base}/${kind}/${segment(g.name)}`, g.count));
        // an empty page still needs a collection: an empty navigation list
        return ok(feed2(head(req, wordsOf(req).t(group.titleKey), base, p.value, total), { navigation }));
      });
      return send(reply, r, TYPE2.feed);
    });
    app.get<{ Params: { name: string } }>(
      `${V2}/${kind}/:name`,
      jsonFeed(`the publications of one of the ${kind}`, { name: 'the name' }, { sort: 'title or new' }),
      async (req, reply) => {
        const p = paged(req);
        if (!p.ok) return sendFailure(reply, p.error);
        const name = req.params.name;
        const r = await cachedFeed(req, (c) => itemsFeed(k, req, c, p.value, group.filter(name), name, `${v2(req)}/${kind}`, { emptyIs: group.notFound }));
        return send(reply, r, TYPE2.feed);
      },
    );
  }
}

/** The caller's collections, the publications of one, and the publications they are reading. */
function readingFeeds(app: FastifyInstance, k: FeedKit): void {
  const { dashboard, cachedFeed, paged } = k;
  app.get(`${V2}/collections`, jsonFeed('your collections'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const base = v2(req);
    const r = await cachedFeed(req, async (c) => {
      const all = (await dashboard.collections(req.caller!.user_id, c.access)) as { id: string; name: string; item_count: number }[];
      const navigation = all.slice(p.value.offset, p.value.offset + p.value.perPage).map((col) => nav2(col.name, `${base}/collections/${col.id}`, col.item_count));
      return ok(feed2(head(req, wordsOf(req).t('root.collections'), base, p.value, all.length), { navigation }));
    });
    return send(reply, r, TYPE2.feed);
  });

  app.get<{ Params: { id: string } }>(`${V2}/collections/:id`, jsonFeed("a collection's publications", { id: 'the collection' }), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const id = req.params.id;
    const r = await cachedFeed(req, async (c) => {
      const col = await collectionPage(dashboard, req, c, id, p.value);
      return col.ok ? ok(await booksFeed(k, req, p.value, col.value.name, `${v2(req)}/collections`, col.value.page)) : col;
    });
    return send(reply, r, TYPE2.feed);
  });

  app.get(`${V2}/continue-reading`, jsonFeed('publications you are reading'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const page = await dashboard.books(req.caller!.user_id, c.access, { is_system: true, query_type: 'continue-reading' }, p.value.perPage, p.value.offset);
      return ok(await booksFeed(k, req, p.value, wordsOf(req).t('root.continue'), v2(req), page));
    });
    return send(reply, r, TYPE2.feed);
  });
}

function searchFeeds(app: FastifyInstance, k: FeedKit): void {
  const { reads, cachedFeed, paged } = k;
  app.get(`${V2}/search`, jsonFeed('search', undefined, { query: 'what to look for', q: 'the same (an alias)' }), async (req, reply) => {
    const q = queryOf(req);
    const text = q1(q, 'query') ?? q1(q, 'q');
    if (text === undefined || text.trim() === '') return sendFailure(reply, fail('validation', QUERY_MESSAGE));
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const found = await reads.catalog.search(c.access, { q: text, limit: String(p.value.perPage), offset: String(p.value.offset) });
      if (!found.ok) return found;
      const body = JSON.parse(found.value) as { data: Catalog.MediaItem[]; total: number };
      return ok(
        feed2(head(req, wordsOf(req).t('search.title', { query: text }), v2(req), p.value, body.total, newest(k, body.data)), {
          publications: await publications(k, req, body.data),
        }),
      );
    });
    return send(reply, r, TYPE2.feed);
  });
}

/** One publication, the page list (Divina manifest) of one whose pages can be streamed, and the plain cover. */
function publicationRoutes(app: FastifyInstance, { reads, streams, cachedFeed }: FeedKit): void {
  for (const manifest of [false, true]) {
    app.get<{ Params: { id: string } }>(`${V2}/publications/:id${manifest ? '/manifest' : ''}`, jsonPublication(manifest), async (req, reply) => {
      const r = await cachedFeed(req, async (c) => {
        const doc = await reads.catalog.item(c.access, req.params.id);
        if (!doc.ok) return { ok: false, error: fail('not_found', Messages.mediaItemNotFound) };
        const item = JSON.parse(doc.value) as Catalog.MediaItem;
        const stream = (await streams.infoFor(req.caller!.user_id, [item])).get(item.id);
        if (!manifest) return ok(JSON.stringify(publication(item, baseOf(req), stream, wordsOf(req))));
        if (!stream) return { ok: false, error: fail('not_found', 'no pages to stream') };
        return ok(pageManifest(item, baseOf(req), stream));
      });
      return send(reply, r, manifest ? TYPE2.divina : TYPE2.publication);
    });
  }

  app.get(`${V2}/no-cover.png`, noCoverSchema, async (_req, reply) =>
    reply
      .header('Cache-Control', 'public, max-age=86400')
      .type('image/png')
      .send(await noCover()),
  );
}
