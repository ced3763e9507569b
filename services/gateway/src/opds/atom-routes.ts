// The OPDS 1.2 feeds (Atom): the root, libraries, recently added, authors and series, the caller's
// collections and reading, and search (OpenSearch).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Catalog, fail, Messages, ok, type Result } from '@bindery/contracts';
import { q1 } from '@bindery/catalog/query';
import { sendFailure } from '../http/reply';
import type { Origins } from '../http/origin';
import type { ReadContext } from '../read-model/reads';
import { acquisitionFeed, nameUuid, navigationFeed, openSearchDescription, segment, TYPE, type FeedHead, type NavEntry } from './atom';
import type { FeedKit } from './deps';
import { type OpdsWords, wordsOf } from './words';
import type { Paging } from './paging';
import { GROUP_KINDS, NAME_GROUPS, type ItemFilter } from './queries';
import { baseOf, collectionPage, otherParams, pathOf, queryOf, send } from './request';
import { atomFeed, searchFeed } from './schemas';

export function atomFeeds(app: FastifyInstance, k: FeedKit, origins: Origins): void {
  rootFeeds(app, k);
  nameFeeds(app, k);
  readingFeeds(app, k);
  searchFeeds(app, k, origins);
}

/** An entry leading to an acquisition feed of `count` books. */
const booksEntry = (words: OpdsWords, id: string, title: string, href: string, count: number, updated: string): NavEntry => ({
  id,
  title,
  href,
  kind: 'acquisition',
  content: words.books(count),
  updated,
});

/** A paged acquisition feed of the items one filter selects. */
async function itemsFeed(
  { queries, streams, now }: FeedKit,
  req: FastifyRequest,
  c: ReadContext,
  p: Paging,
  f: ItemFilter,
  title: string,
  up: string,
  emptyIs?: string,
): Promise<Result<string>> {
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
    words: wordsOf(req),
    paging: { ...p, total: page.total, path: pathOf(req), query: otherParams(queryOf(req)) },
  };
  return ok(acquisitionFeed(head, page.items, await streams.infoFor(req.caller!.user_id, page.items)));
}

/** An acquisition feed of a page of the reading read model's books. */
async function bookFeed({ streams, now }: FeedKit, req: FastifyRequest, p: Paging, key: string, title: string, up: string, page: { total: number; books: { item: unknown }[] }) {
  const list = page.books.map((b) => b.item as Catalog.MediaItem);
  const head: FeedHead = {
    key,
    title,
    kind: 'acquisition',
    words: wordsOf(req),
    base: baseOf(req),
    self: req.url,
    up,
    updated: list.reduce((m, i) => (i.updated_at > m ? i.updated_at : m), '') || now(),
    paging: { ...p, total: page.total, path: pathOf(req), query: otherParams(queryOf(req)) },
  };
  return acquisitionFeed(head, list, await streams.infoFor(req.caller!.user_id, list));
}

/** The root, the libraries, a library's books and the recently added. */
function rootFeeds(app: FastifyInstance, k: FeedKit): void {
  const { reads, cachedFeed, now, paged } = k;
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
    const r = await cachedFeed(req, async () => {
      const words = wordsOf(req);
      const { t } = words;
      return ok(
        navigationFeed({ key: 'root', title: 'Bindery', kind: 'navigation', base, self: req.url, updated: now(), words }, [
          nav(base, 'root/libraries', t('root.libraries'), '/libraries', 'navigation', t('root.libraries.about')),
          nav(base, 'root/recent', t('root.recent'), '/recent', 'acquisition', t('root.recent.about'), 'http://opds-spec.org/sort/new'),
          nav(base, 'root/authors', t('root.authors'), '/authors', 'navigation', t('root.authors.about')),
          nav(base, 'root/series', t('root.series'), '/series', 'navigation', t('root.series.about')),
          nav(base, 'root/collections', t('root.collections'), '/collections', 'navigation', t('root.collections.about')),
          nav(base, 'root/continue-reading', t('root.continue'), '/continue-reading', 'acquisition', t('root.continue.about')),
        ]),
      );
    });
    return send(reply, r, TYPE.navigation);
  });

  app.get('/libraries', atomFeed('navigation', 'libraries'), async (req, reply) => {
    const base = baseOf(req);
    const r = await cachedFeed(req, async (c) => {
      const libs = await reads.catalog.libraries(c.access, false);
      const words = wordsOf(req);
      return ok(
        navigationFeed(
          { key: 'libraries', title: words.t('root.libraries'), kind: 'navigation', base, self: req.url, up: base, updated: now(), words },
          libs.map((l) => booksEntry(words, `urn:uuid:${l.id}`, l.name, `${base}/libraries/${l.id}`, l.item_count, l.updated_at)),
        ),
      );
    });
    return send(reply, r, TYPE.navigation);
  });

  app.get<{ Params: { id: string } }>('/libraries/:id', atomFeed('acquisition', "a library's books", { id: 'the library' }, { sort: 'title or new' }), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const lib = await reads.catalog.library(c.access, false, req.params.id);
      if (!lib.ok) return lib.error.code === 'validation' ? { ok: false, error: fail('not_found', Messages.libraryNotFound) } : lib;
      return itemsFeed(k, req, c, p.value, { by: 'library', id: lib.value.id }, lib.value.name, `${baseOf(req)}/libraries`);
    });
    return send(reply, r, TYPE.acquisition);
  });

  app.get('/recent', atomFeed('acquisition', 'recently added'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, (c) => itemsFeed(k, req, c, p.value, { by: 'recent' }, wordsOf(req).t('root.recent'), baseOf(req)));
    return send(reply, r, TYPE.acquisition);
  });
}

/** Authors and series: the names, and the books of one. */
function nameFeeds(app: FastifyInstance, k: FeedKit): void {
  const { queries, cachedFeed, now, paged } = k;
  for (const kind of GROUP_KINDS) {
    const group = NAME_GROUPS[kind];
    app.get(`/${kind}`, atomFeed('navigation', `by ${kind}`), async (req, reply) => {
      const p = paged(req);
      if (!p.ok) return sendFailure(reply, p.error);
      const base = baseOf(req);
      const r = await cachedFeed(req, async (c) => {
        const { groups, total } = await queries.groups(kind, c.access, p.value.perPage, p.value.offset);
        const words = wordsOf(req);
        const head: FeedHead = {
          key: kind,
          title: words.t(group.titleKey),
          words,
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
            groups.map((g) => booksEntry(words, `urn:uuid:${nameUuid(`${kind}/${g.name}`)}`, g.name, `${base}/${kind}/${segment(g.name)}`, g.count, head.updated)),
          ),
        );
      });
      return send(reply, r, TYPE.navigation);
    });
    app.get<{ Params: { name: string } }>(`/${kind}/:name`, atomFeed('acquisition', `the books of one of the ${kind}`, { name: 'the name' }), async (req, reply) => {
      const p = paged(req);
      if (!p.ok) return sendFailure(reply, p.error);
      const name = req.params.name;
      const r = await cachedFeed(req, (c) => itemsFeed(k, req, c, p.value, group.filter(name), name, `${baseOf(req)}/${kind}`, group.notFound));
      return send(reply, r, TYPE.acquisition);
    });
  }
}

/** The caller's collections (system and their own), each an acquisition feed of its books, and the books they are reading. */
function readingFeeds(app: FastifyInstance, k: FeedKit): void {
  const { dashboard, cachedFeed, now, paged } = k;
  app.get('/collections', atomFeed('navigation', 'your collections'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const base = baseOf(req);
    const r = await cachedFeed(req, async (c) => {
      const all = (await dashboard.collections(req.caller!.user_id, c.access)) as { id: string; name: string; item_count: number }[];
      const words = wordsOf(req);
      const head: FeedHead = {
        key: `collections/${req.caller!.user_id}`,
        title: words.t('root.collections'),
        words,
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
            .map((col) => booksEntry(words, `urn:uuid:${col.id}`, col.name, `${base}/collections/${col.id}`, col.item_count, head.updated)),
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
      return col.ok ? ok(await bookFeed(k, req, p.value, `collections/${id}`, col.value.name, `${baseOf(req)}/collections`, col.value.page)) : col;
    });
    return send(reply, r, TYPE.acquisition);
  });

  app.get('/continue-reading', atomFeed('acquisition', 'books you are reading'), async (req, reply) => {
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const page = await dashboard.books(req.caller!.user_id, c.access, { is_system: true, query_type: 'continue-reading' }, p.value.perPage, p.value.offset);
      return ok(await bookFeed(k, req, p.value, `continue-reading/${req.caller!.user_id}`, wordsOf(req).t('root.continue'), baseOf(req), page));
    });
    return send(reply, r, TYPE.acquisition);
  });
}

/** Search: the OpenSearch description without `q`, a feed of results with it. */
function searchFeeds(app: FastifyInstance, { reads, streams, cachedFeed, now, paged }: FeedKit, origins: Origins): void {
  app.get('/search', searchFeed, async (req, reply) => {
    const q = queryOf(req);
    const text = q1(q, 'q');
    const base = baseOf(req);
    if (text === undefined || text.trim() === '') {
      // a Host this server may not believe gives a relative template (most apps resolve it)
      const origin = origins.publicBase(req) ?? '';
      const r = await cachedFeed(req, async () => ok(openSearchDescription(origin, base, wordsOf(req))), origin);
      return send(reply, r, TYPE.openSearch);
    }
    const p = paged(req);
    if (!p.ok) return sendFailure(reply, p.error);
    const r = await cachedFeed(req, async (c) => {
      const found = await reads.catalog.search(c.access, { q: text, limit: String(p.value.perPage), offset: String(p.value.offset) });
      if (!found.ok) return found;
      const body = JSON.parse(found.value) as { data: Catalog.MediaItem[]; total: number };
      const words = wordsOf(req);
      const head: FeedHead = {
        key: `search/${text}`,
        title: words.t('search.title', { query: text }),
        words,
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
}
