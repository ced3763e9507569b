// The library's own pages and writes besides the grid: series and author pages, saved filters of the
// library, and the collections page's smart-collection builder (rows, live preview, create) and the
// order of custom collections. Everything reads and writes through the gateway's /api routes.
import { Reading } from '@bindery/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { action, type Form, field } from './actions';
import { apiFor } from './api';
import { isHtmx, securityHeaders, sendHtml } from './http';
import type { Live, Viewer } from './layout';
import { AuthorPage } from './pages/authors';
import type { Item } from './pages/books';
import type { CollectionRow } from './pages/collections';
import { LIBRARY_FILTERS, libraryQuery, type SavedFilter, SavedFilters } from './pages/library';
import { inSeriesOrder, SeriesPage } from './pages/series';
import { type LibraryChoice, newKey, Preview, type PreviewBook, RuleRow, rowOf, rulesOf } from './pages/smart-collection';
import type { PageContext } from './routes';

type Page = (path: string, opts: { admin?: boolean }, handler: (c: PageContext) => Promise<unknown>) => unknown;
type Render = (reply: FastifyReply, title: string, viewer: Viewer | null, current: string | undefined, body: VNode, status?: number, live?: Live) => FastifyReply;

/** The most books a series or author page shows. */
const MOST = 200;
const nameOf = (params: unknown) => ((params as { name?: string }).name ?? '').trim().slice(0, 200);

function Missing({ what }: { what: string }) {
  return (
    <>
      <h1>Not found</h1>
      <p id="failure">
        {what} <a href="/library">Back to the library</a>
      </p>
    </>
  );
}

export function libraryRoutes(app: FastifyInstance, page: Page, render: Render): void {
  // a series: its books (the read model's exact series filter) in series order, with the caller's
  // progress (the reading service's preview of the rule "series is <name>": one request for all)
  page('/series/:name', {}, async ({ req, reply, api, viewer }) => {
    const name = nameOf(req.params);
    if (name === '') return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such series." />, 404);
    const found = await api<{ data: Item[] }>('GET', `/api/media-items/search?${new URLSearchParams({ series_filter: `"${name}"`, limit: String(MOST) })}`);
    if (found.status !== 200) return render(reply, 'Series', viewer, '/library', <Missing what="The series could not be read." />, found.status === 400 ? 400 : 502);
    const read = await api<{ data: { media_item_id: string; percentage: number | null }[] }>('POST', `/api/collections/preview?limit=${MOST}`, {
      rules: { match: 'all', conditions: [{ field: 'series', op: 'equals', value: name }] },
    });
    const pct = new Map(read.status === 200 ? read.body.data.map((b) => [b.media_item_id, b.percentage] as const) : []);
    const books = inSeriesOrder(found.body.data.map((item) => ({ item, percentage: pct.get(item.id) ?? null })));
    if (books.length === 0) return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such series." />, 404);
    return render(reply, books[0]!.item.series ?? name, viewer, '/library', <SeriesPage name={books[0]!.item.series ?? name} books={books} />, 200, {
      topic: 'progress',
      refresh: '#grid',
    });
  });

  // an author: their books the caller may see (the read model's exact author filter), by title
  page('/authors/:name', {}, async ({ req, reply, api, viewer }) => {
    const name = nameOf(req.params);
    if (name === '') return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such author." />, 404);
    const found = await api<{ data: Item[]; total: number }>('GET', `/api/media-items/search?${new URLSearchParams({ author_filter: `"${name}"`, limit: String(MOST) })}`);
    if (found.status !== 200) return render(reply, 'Author', viewer, '/library', <Missing what="The author could not be read." />, found.status === 400 ? 400 : 502);
    if (found.body.data.length === 0) return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such author." />, 404);
    // the name as the books spell it
    const spelled = found.body.data[0]!.authors.find((a) => a.toLowerCase() === name.toLowerCase()) ?? name;
    return render(reply, spelled, viewer, '/library', <AuthorPage name={spelled} items={found.body.data} total={found.body.total} />);
  });

  // the library's saved filters and "Save this filter" for the query the page shows (a fragment)
  page('/library/saved', {}, async ({ req, reply, api }) => {
    const r = await api<{ data: SavedFilter[] }>('GET', `/api/saved-filters?resource_type=${LIBRARY_FILTERS}`);
    return sendHtml(reply, <SavedFilters q={libraryQuery(req.query as Record<string, unknown>)} saved={r.status === 200 ? r.body.data : []} />, 200, true);
  });

  // "Save this filter": the library's current query (the grid's own fields) under a name
  action(app, '/library/filters', { done: 'filter saved', refresh: true }, async (a, f) => {
    const { offset: _o, ...filter } = libraryQuery(f as Record<string, unknown>);
    return a('POST', '/api/saved-filters', { name: field(f, 'name') ?? '', resource_type: LIBRARY_FILTERS, filter });
  });

  // the rule builder: one row (a new one, or one redrawn for its field and operator), a removed row
  page('/collections/rule-row', {}, async ({ req, reply, api }) => {
    const q = req.query as Record<string, unknown>;
    const key = typeof q.key === 'string' && /^[a-z0-9]{1,20}$/.test(q.key) ? q.key : newKey();
    const r = rowOf(key, q[`field-${key}`], q[`op-${key}`], q[`value-${key}`]);
    // the `library` field chooses among the libraries the caller may see
    const libs = r.field === 'library' ? await api<LibraryChoice[]>('GET', '/api/libraries') : null;
    reply.header('HX-Trigger', 'rules-changed');
    return sendHtml(reply, <RuleRow r={r} libraries={libs?.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : []} />, 200, true);
  });
  page('/collections/rule-removed', {}, async ({ reply }) => {
    reply.header('HX-Trigger', 'rules-changed');
    return securityHeaders(reply).code(200).type('text/html; charset=utf-8').send('');
  });

  // the live preview: how many books the rules match and the first of them
  app.post('/collections/preview', async (req, reply) => {
    if (!isHtmx(req)) return reply.code(403).type('text/plain; charset=utf-8').send('forms of this page are sent by the page itself');
    const rules = rulesOf((req.body && typeof req.body === 'object' ? req.body : {}) as Form);
    if (rules.conditions.length === 0) return sendHtml(reply, <p class="muted">Type a value to see the matching books.</p>, 200, true);
    const r = await apiFor(app, req)<{ data: PreviewBook[]; total: number; error?: string }>('POST', '/api/collections/preview?limit=8', { rules });
    if (r.status === 401) return reply.code(401).header('HX-Redirect', '/login').send('');
    if (r.status !== 200) return sendHtml(reply, <Preview total={0} books={[]} error={r.body?.error ?? `The preview failed (${r.status}).`} />, 200, true);
    return sendHtml(reply, <Preview total={r.body.total} books={r.body.data} />, 200, true);
  });

  // create the smart collection the builder shows
  action(app, '/collections/smart', { done: 'collection created', refresh: true }, async (a, f) =>
    a('POST', '/api/collections', { name: field(f, 'name') ?? '', rules: rulesOf(f) }),
  );

  // move a custom collection up or down: the custom collections' priorities (the order the API lists
  // them in) rewritten as 100, 101, … in the new order, only those that change
  action(app, '/collections/:id/move', { done: 'order saved', refresh: true }, async (a, _f, req) => {
    const id = (req.params as { id: string }).id.toLowerCase();
    const dir = (req.query as Record<string, unknown>).dir === 'up' ? -1 : 1;
    const all = await a<{ data: (CollectionRow & { priority: number })[] }>('GET', '/api/collections');
    if (all.status !== 200) return all;
    const own = all.body.data.filter((c) => !c.is_system);
    const at = own.findIndex((c) => c.id === id);
    if (at < 0) return { status: 404, body: { error: Reading.ReadingMessages.collectionNotFound } };
    const to = at + dir;
    if (to >= 0 && to < own.length) [own[at], own[to]] = [own[to]!, own[at]!];
    for (const [i, c] of own.entries()) {
      if (c.priority === 100 + i) continue;
      const r = await a('PUT', `/api/collections/${c.id}`, { priority: 100 + i });
      if (r.status >= 400) return r;
    }
    return { status: 200, body: { message: 'order saved' } };
  });
}
