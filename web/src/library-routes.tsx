// The library's own pages and writes besides the grid: series and author pages, saved filters of the
// library, and the collections page's smart-collection builder (rows, live preview, create) and the
// order of custom collections. Everything reads and writes through the gateway's /api routes.
import { Reading } from '@bindery/contracts';
import type { FastifyInstance } from 'fastify';
import { action, type Form, field } from './actions';
import { type Answer, type Api, apiFor } from './api';
import { fromOurPage, securityHeaders, sendHtml } from './http';
import { mayEdit, type Render, type RenderKept } from './layout';
import { AuthorPage } from './pages/authors';
import type { Item } from './pages/books';
import type { CollectionRow } from './pages/collections';
import { LIBRARY_FILTERS, libraryQuery, type SavedFilter, SavedFilters } from './pages/library';
import { SERIES_BOOKS_PAGE, type SeriesBook, type SeriesDetail, SeriesPage } from './pages/series';
import { SeriesList, type SeriesSummary, seriesApiUrl, seriesListQuery } from './pages/series-list';
import { type AuthorSummary, AuthorList, authorListQuery, authorsApiUrl } from './pages/authors-list';
import { countOf, type LibraryName, offsetParam } from './pages/browse';
import { type LibraryChoice, newKey, Preview, type PreviewBook, RuleRow, rowOf, rulesOf } from './pages/smart-collection';
import type { PageContext } from './routes';

type Page = (path: string, opts: { admin?: boolean }, handler: (c: PageContext) => Promise<unknown>) => unknown;

/** A smart collection's rules with no complete condition (the builder leaves out a row without its value). */
const NO_CONDITION = { status: 400, body: { error: 'Add at least one condition with a value.' } };

/** The most books an author page shows. */
const MOST = 200;
const idOf = (req: { params: unknown }) => ((req.params as { id?: string }).id ?? '').slice(0, 100);
const nameOf = (params: unknown) => ((params as { name?: string }).name ?? '').trim().slice(0, 200);

/** The libraries the caller may see (for the library filter), [] when they cannot be read. */
async function librariesOf(api: Api): Promise<LibraryName[]> {
  const r = await api<LibraryName[]>('GET', '/api/libraries');
  return r.status === 200 ? r.body.map((l) => ({ id: l.id, name: l.name })) : [];
}

/** Every book of a series the caller may see, or the API's answer when there is none. */
async function seriesBooks(a: Api, name: string): Promise<{ ok: true; list: SeriesBook[] } | { ok: false; answer: Answer<unknown> }> {
  const r = await a<SeriesDetail>('GET', `/api/series/${encodeURIComponent(name.trim())}?limit=1000`);
  return r.status === 200 ? { ok: true, list: r.body.data } : { ok: false, answer: r.body ? r : { status: 404, body: { error: 'series not found' } } };
}

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

export function libraryRoutes(app: FastifyInstance, page: Page, render: Render, kept: RenderKept, mail: boolean): void {
  // every series and every author the caller may see: searched as they type (htmx takes the results
  // part of the same page), by letter, library, read state and sort
  page('/series', {}, async ({ req, reply, api, viewer }) => {
    const q = seriesListQuery(req.query as Record<string, unknown>);
    const [r, libraries] = await Promise.all([api<{ data: SeriesSummary[]; total: number }>('GET', seriesApiUrl(q)), librariesOf(api)]);
    if (q.library && !libraries.some((l) => l.id === q.library)) return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such library." />, 404);
    if (r.status !== 200) return render(reply, 'Series', viewer, '/library', <Missing what="The series could not be read." />, 502);
    return kept(reply, [JSON.stringify(q), r.text, JSON.stringify(libraries)], viewer, '/library', () => ({
      title: 'Series',
      body: <SeriesList q={q} series={r.body.data} total={r.body.total} libraries={libraries} />,
    }));
  });
  page('/authors', {}, async ({ req, reply, api, viewer }) => {
    const q = authorListQuery(req.query as Record<string, unknown>);
    const [r, libraries] = await Promise.all([api<{ data: AuthorSummary[]; total: number }>('GET', authorsApiUrl(q)), librariesOf(api)]);
    if (q.library && !libraries.some((l) => l.id === q.library)) return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such library." />, 404);
    if (r.status !== 200) return render(reply, 'Authors', viewer, '/library', <Missing what="The authors could not be read." />, 502);
    return render(reply, 'Authors', viewer, '/library', <AuthorList q={q} authors={r.body.data} total={r.body.total} libraries={libraries} />);
  });

  // a series: its books the caller may see in index order with their progress, what to read next,
  // the numbers missing (the read model's series answer), and the caller's collections for "add all"
  page('/series/:name', {}, async ({ req, reply, api, viewer }) => {
    const name = nameOf(req.params);
    if (name === '') return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such series." />, 404);
    // a page of books at a time (a 500-book series is 9 pages, as Komga pages a series' books)
    const offset = offsetParam((req.query as Record<string, unknown>).offset);
    const [found, colls] = await Promise.all([
      api<SeriesDetail>('GET', `/api/series/${encodeURIComponent(name)}?limit=${SERIES_BOOKS_PAGE}&offset=${offset}`),
      api<{ data: (CollectionRow & { rules?: unknown })[] }>('GET', '/api/collections'),
    ]);
    if (found.status === 404) return render(reply, 'Not found', viewer, '/library', <Missing what="There is no such series." />, 404);
    if (found.status !== 200) return render(reply, 'Series', viewer, '/library', <Missing what="The series could not be read." />, found.status === 400 ? 400 : 502);
    // kept as rendered: a repeat with the same answers neither parses nor renders them
    return kept(
      reply,
      [found.text, colls.text],
      viewer,
      '/library',
      () => {
        const s = found.body;
        const own = colls.status === 200 ? colls.body.data.filter((c) => !c.is_system && !c.is_smart).map((c) => ({ id: c.id, name: c.name })) : [];
        return { title: s.name, body: <SeriesPage s={s} collections={own} editor={mayEdit(viewer)} mail={mail} /> };
      },
      { topic: 'progress', refresh: '#series-body' },
    );
  });

  // every book of a series read (each unfinished one at its end) or unread (each position removed);
  // the page is live: its books' bars follow the positions as they are saved
  action(app, '/series/mark', { done: 'marked' }, async (a, f) => {
    const state = field(f, 'state');
    if (state !== 'read' && state !== 'unread') return { status: 400, body: { error: 'state must be read or unread' } };
    const books = await seriesBooks(a, field(f, 'series') ?? '');
    if (!books.ok) return books.answer;
    const todo = books.list.filter((b) => (state === 'read' ? (b.percentage ?? 0) < 1 : b.percentage !== null));
    if (todo.length === 0) return { status: 200, body: { message: state === 'read' ? 'Every book was read already.' : 'No book was begun.' } };
    const failed: string[] = [];
    // a few at a time: the reading service takes the position writes of one moment together
    for (let i = 0; i < todo.length; i += 16) {
      const answers = await Promise.all(
        todo
          .slice(i, i + 16)
          .map((b) =>
            state === 'read' ? a('PUT', `/api/media-items/${b.media_item_id}/progress`, { percentage: 1 }) : a('DELETE', `/api/media-items/${b.media_item_id}/progress`),
          ),
      );
      for (const r of answers) if (r.status >= 400) failed.push((r.body as { error?: string } | undefined)?.error ?? `status ${r.status}`);
    }
    if (failed.length > 0) return { status: 502, body: { error: `${failed.length} of ${todo.length} books could not be marked: ${failed[0]}` } };
    return { status: 200, body: { message: `${countOf(todo.length, ['book', 'books'])} marked as ${state}.` } };
  });

  // every book of a series into one of the caller's collections
  action(app, '/series/collect', { done: 'added' }, async (a, f) => {
    const books = await seriesBooks(a, field(f, 'series') ?? '');
    if (!books.ok) return books.answer;
    const id = encodeURIComponent(field(f, 'collection') ?? '');
    const r = await a<{ added?: string[]; error?: string }>('POST', `/api/collections/${id}/items`, { media_item_ids: books.list.map((b) => b.media_item_id) });
    if (r.status >= 400) return r;
    const added = r.body.added?.length ?? 0;
    const already = books.list.length - added;
    return {
      status: 200,
      body: { message: `${countOf(added, ['book', 'books'])} added to the collection${already > 0 ? `; ${already} ${already === 1 ? 'was' : 'were'} there already` : ''}.` },
    };
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
    if (!(await fromOurPage(app, req))) return reply.code(403).type('text/plain; charset=utf-8').send('forms of this page are sent by the page itself');
    const rules = rulesOf((req.body && typeof req.body === 'object' ? req.body : {}) as Form);
    if (rules.conditions.length === 0) return sendHtml(reply, <p class="muted">Type a value to see the matching books.</p>, 200, true);
    const r = await apiFor(app, req)<{ data: PreviewBook[]; total: number; error?: string }>('POST', '/api/collections/preview?limit=8', { rules });
    if (r.status === 401) return reply.code(401).header('HX-Redirect', '/login').send('');
    if (r.status !== 200) return sendHtml(reply, <Preview total={0} books={[]} error={r.body?.error ?? `The preview failed (${r.status}).`} />, 200, true);
    return sendHtml(reply, <Preview total={r.body.total} books={r.body.data} />, 200, true);
  });

  // create the smart collection the builder shows
  action(app, '/collections/smart', { done: 'collection created', refresh: true }, async (a, f) => {
    const rules = rulesOf(f);
    if (rules.conditions.length === 0) return NO_CONDITION;
    return a('POST', '/api/collections', { name: field(f, 'name') ?? '', rules });
  });

  // a smart collection's name and rules, as the builder on its page shows them; back to the page, which says so
  action(app, '/collections/:id/rules', { done: 'rules saved', goTo: (_f, req) => `/collections/${encodeURIComponent(idOf(req))}?done=rules` }, async (a, f, req) => {
    const rules = rulesOf(f);
    if (rules.conditions.length === 0) return NO_CONDITION;
    return a('PUT', `/api/collections/${encodeURIComponent(idOf(req))}`, { name: field(f, 'name') ?? '', rules });
  });

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
