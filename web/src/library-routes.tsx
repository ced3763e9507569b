// The library: its grid (kept as rendered for each caller, query and API answer), a library's own
// address, the search's suggestions, the series and author lists and pages, and saved filters of the
// library. Everything reads and writes through the gateway's /api routes.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { action, field } from './actions';
import { type Answer, type Api, answerKey, refusal, success } from './api';
import type { Web } from './context';
import { inLanguage, isHtmx, redirectTo, renderHtml, sendHtml, sendRendered } from './http';
import { apiError, type MessageKey, useI18n } from './i18n';
import { i18nFor } from './i18n/request';
import { Failed, Layout, mayEdit } from './layout';
import { AuthorPage } from './pages/authors';
import { Books, searchQuery, LIBRARY_FILTERS, Library, LibraryPages, LoadMore, libraryQuery, PAGE, type SavedFilter, SavedFilters, SUGGEST, Suggestions } from './pages/library';
import { SERIES_BOOKS_PAGE, type SeriesBook, SeriesPage } from './pages/series';
import { SeriesList, seriesApiQuery, seriesListQuery } from './pages/series-list';
import { AuthorList, authorListQuery, authorsApiQuery } from './pages/authors-list';
import { countOf, type LibraryName, offsetParam } from './pages/browse';
import { UploadDrop } from './pages/upload';

/** The most books an author page shows. */
const MOST = 200;
const nameOf = (params: unknown) => ((params as { name?: string }).name ?? '').trim().slice(0, 200);

/** The libraries the caller may see (for the library filter), [] when they cannot be read. */
async function librariesOf(api: Api): Promise<LibraryName[]> {
  const r = await api.get('/api/libraries');
  return r.status === 200 ? r.body.map((l) => ({ id: l.id, name: l.name })) : [];
}

/** Every book of a series the caller may see, or the API's answer when there is none. */
async function seriesBooks(a: Api, name: string): Promise<{ ok: true; list: SeriesBook[] } | { ok: false; answer: Answer<unknown> }> {
  const r = await a.get('/api/series/:name', { params: { name: name.trim() }, query: { limit: '1000' } });
  return r.status === 200 ? { ok: true, list: r.body.data } : { ok: false, answer: r.body ? r : refusal(404, 'series not found') };
}

/** What a library page says when what it shows is not there or could not be read, with the way back. */
function Missing({ what }: { what: MessageKey }) {
  const { t } = useI18n();
  return (
    <>
      <h1>{t('notFound.title')}</h1>
      <p id="failure">
        {t(what)} <a href="/library">{t('lib.back')}</a>
      </p>
    </>
  );
}

function NoSuchLibrary() {
  return <Missing what="lib.noLibrary" />;
}

export function libraryGridRoutes({ page, render, assets, deps }: Web): void {
  // The library page, the app's most frequent, is kept as rendered for each caller, query and exact
  // API answer: the same answer to the same viewer renders the same HTML, so a repeat skips parsing
  // and rendering (a changed book, position or access changes the answer, and so the key).
  const libraryPages = new LRUCache<string, Buffer>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (html) => html.length + 200 });
  page('/library', {}, async ({ req, reply, api, viewer }) => {
    const q = libraryQuery(req.query as Record<string, unknown>);
    const i18n = i18nFor(req, viewer);
    const { t } = i18n;
    const [r, libs] = await Promise.all([api.get('/api/media-items/search', { query: searchQuery(q) }), api.get('/api/libraries')]);
    const libraries = libs.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : [];
    // a library the caller may not see is not there for them
    if (q.library && libs.status === 200 && !libraries.some((l) => l.id === q.library)) return render(reply, t('notFound.title'), viewer, '/library', <NoSuchLibrary />, 404);
    if (r.status === 400) return render(reply, t('browse.library'), viewer, '/library', <Library q={q} items={[]} total={0} libraries={libraries} />);
    if (r.status !== 200) return render(reply, t('browse.library'), viewer, '/library', <Failed status={r.status} />, 502);
    const htmx = isHtmx(req);
    const key = JSON.stringify([
      viewer.id,
      viewer.username,
      viewer.role,
      viewer.can_edit_metadata === true,
      viewer.theme ?? '',
      viewer.csrf ?? '',
      i18n.locale,
      i18n.timeZone,
      htmx,
      q,
      // the answers' entity tags (record 129), else their texts, as answerKey gives them
      createHash('sha256')
        .update(answerKey(r) ?? '')
        .update('\u0000')
        .update(answerKey(libs) ?? '')
        .digest('base64'),
    ]);
    const hit = libraryPages.get(key);
    if (hit !== undefined) return sendRendered(reply.header('Content-Language', i18n.locale), hit);
    const items = r.body.data.slice(0, PAGE);
    const total = r.body.total;
    const title = libraries.find((l) => l.id === q.library)?.name ?? t('browse.library');
    // "Load more" with htmx: the next books for the grid, and the link and pager after them
    const html = Buffer.from(
      htmx
        ? renderHtml(
            inLanguage(
              i18n,
              <>
                <Books items={items} />
                <LoadMore q={q} total={total} oob />
                <LibraryPages q={q} total={total} oob />
              </>,
            ),
            true,
          )
        : renderHtml(
            inLanguage(
              i18n,
              <Layout assets={assets} title={title} viewer={viewer} current="/library">
                <Library q={q} items={items} total={total} libraries={libraries} editor={mayEdit(viewer)} mail={deps.mail === true} />
                {mayEdit(viewer) && <UploadDrop library={q.library} />}
              </Layout>,
            ),
          ),
    );
    libraryPages.set(key, html);
    return sendRendered(reply.header('Content-Language', i18n.locale), html);
  });
  // a library's own page is the library narrowed to it
  page('/libraries/:id', {}, async ({ req, reply }) => redirectTo(req, reply, `/library?${new URLSearchParams({ library: (req.params as { id: string }).id.slice(0, 100) })}`));

  // autocomplete for the library's author, series and tag fields: the search API's suggestions
  page('/library/suggest', {}, async ({ req, reply, api }) => {
    const q = req.query as Record<string, unknown>;
    const field = typeof q.field === 'string' && q.field in SUGGEST ? q.field : null;
    if (!field) return sendHtml(reply, <p>{i18nFor(req).t('edit.unknownField')}</p>, 400, true);
    const typed = typeof q[field] === 'string' ? (q[field] as string).replace(/^"|"$/g, '').slice(0, 100) : '';
    const key = SUGGEST[field]!;
    const r = await api.get('/api/media-items/search', { query: { [key]: typed, limit: '1' } });
    return sendHtml(reply, <Suggestions field={field} values={r.status === 200 ? (r.body.suggestions?.[key] ?? []) : []} />, 200, true);
  });
}

/** The series and authors, in this order: their lists, a series' page and writes, an author's page, the saved filters. */
export function libraryRoutes(web: Web): void {
  listRoutes(web);
  seriesRoutes(web);
  authorRoutes(web);
  savedFilterRoutes(web);
}

function listRoutes({ page, render, kept }: Web): void {
  // every series and every author the caller may see: searched as they type (htmx takes the results
  // part of the same page), by letter, library, read state and sort
  page('/series', {}, async ({ req, reply, api, viewer }) => {
    const q = seriesListQuery(req.query as Record<string, unknown>);
    const { t } = i18nFor(req, viewer);
    const [r, libraries] = await Promise.all([api.get('/api/series', { query: seriesApiQuery(q) }), librariesOf(api)]);
    if (q.library && !libraries.some((l) => l.id === q.library)) return render(reply, t('notFound.title'), viewer, '/library', <Missing what="lib.noLibrary" />, 404);
    if (r.status !== 200) return render(reply, t('browse.series'), viewer, '/library', <Missing what="lib.seriesFailed" />, 502);
    return kept(reply, [JSON.stringify(q), answerKey(r), JSON.stringify(libraries)], viewer, '/library', () => ({
      title: t('browse.series'),
      body: <SeriesList q={q} series={r.body.data} total={r.body.total} libraries={libraries} />,
    }));
  });
  page('/authors', {}, async ({ req, reply, api, viewer }) => {
    const q = authorListQuery(req.query as Record<string, unknown>);
    const { t } = i18nFor(req, viewer);
    const [r, libraries] = await Promise.all([api.get('/api/authors', { query: authorsApiQuery(q) }), librariesOf(api)]);
    if (q.library && !libraries.some((l) => l.id === q.library)) return render(reply, t('notFound.title'), viewer, '/library', <Missing what="lib.noLibrary" />, 404);
    if (r.status !== 200) return render(reply, t('browse.authors'), viewer, '/library', <Missing what="lib.authorsFailed" />, 502);
    return render(reply, t('browse.authors'), viewer, '/library', <AuthorList q={q} authors={r.body.data} total={r.body.total} libraries={libraries} />);
  });
}

function seriesRoutes({ app, page, kept, render, deps }: Web): void {
  const mail = deps.mail === true;
  // a series: its books the caller may see in index order with their progress, what to read next,
  // the numbers missing (the read model's series answer), and the caller's collections for "add all"
  page('/series/:name', {}, async ({ req, reply, api, viewer }) => {
    const name = nameOf(req.params);
    const { t } = i18nFor(req, viewer);
    if (name === '') return render(reply, t('notFound.title'), viewer, '/library', <Missing what="lib.noSeries" />, 404);
    // a page of books at a time (a 500-book series is 9 pages, as Komga pages a series' books)
    const offset = offsetParam((req.query as Record<string, unknown>).offset);
    const [found, colls] = await Promise.all([
      api.get('/api/series/:name', { params: { name }, query: { limit: String(SERIES_BOOKS_PAGE), offset: String(offset) } }),
      api.get('/api/collections'),
    ]);
    if (found.status === 404) return render(reply, t('notFound.title'), viewer, '/library', <Missing what="lib.noSeries" />, 404);
    if (found.status !== 200) return render(reply, t('browse.series'), viewer, '/library', <Missing what="lib.seriesFailed" />, found.status === 400 ? 400 : 502);
    // kept as rendered: a repeat with the same answers neither parses nor renders them
    return kept(
      reply,
      [answerKey(found), answerKey(colls)],
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
  action(app, '/series/mark', { done: 'marked' }, async (a, f, req) => {
    const i18n = i18nFor(req);
    const { t } = i18n;
    const state = field(f, 'state');
    if (state !== 'read' && state !== 'unread') return refusal(400, 'state must be read or unread');
    const books = await seriesBooks(a, field(f, 'series') ?? '');
    if (!books.ok) return books.answer;
    const todo = books.list.filter((b) => (state === 'read' ? (b.percentage ?? 0) < 1 : b.percentage !== null));
    if (todo.length === 0) return success(t(state === 'read' ? 'lib.allReadAlready' : 'lib.noneBegun'));
    const failed: string[] = [];
    // a few at a time: the reading service takes the position writes of one moment together
    for (let i = 0; i < todo.length; i += 16) {
      const answers = await Promise.all(
        todo
          .slice(i, i + 16)
          .map((b) =>
            state === 'read'
              ? a.put('/api/media-items/:id/progress', { params: { id: b.media_item_id }, body: { percentage: 1 } })
              : a.delete('/api/media-items/:id/progress', { params: { id: b.media_item_id } }),
          ),
      );
      for (const r of answers) {
        if (r.status < 400) continue;
        const why = (r.body as { error?: string } | undefined)?.error;
        failed.push(why ? apiError(i18n, why) : `status ${r.status}`);
      }
    }
    if (failed.length > 0) return refusal(502, t('lib.markFailed', { failed: failed.length, total: todo.length, error: failed[0] ?? '' }));
    return success(t(state === 'read' ? 'lib.markedRead' : 'lib.markedUnread', { books: countOf(i18n, todo.length, 'count.books') }));
  });

  // every book of a series into one of the caller's collections
  action(app, '/series/collect', { done: 'added' }, async (a, f, req) => {
    const i18n = i18nFor(req);
    const books = await seriesBooks(a, field(f, 'series') ?? '');
    if (!books.ok) return books.answer;
    const id = field(f, 'collection') ?? '';
    const r = await a.post('/api/collections/:id/items', { params: { id }, body: { media_item_ids: books.list.map((b) => b.media_item_id) } });
    if (r.status >= 400) return r;
    const added = r.body.added?.length ?? 0;
    const already = books.list.length - added;
    const count = countOf(i18n, added, 'count.books');
    return success(already > 0 ? i18n.t('lib.addedAlready', { books: count, already }) : i18n.t('lib.added', { books: count }));
  });
}

function authorRoutes({ page, render }: Web): void {
  // an author: their books the caller may see (the read model's exact author filter), by title
  page('/authors/:name', {}, async ({ req, reply, api, viewer }) => {
    const name = nameOf(req.params);
    const { t } = i18nFor(req, viewer);
    if (name === '') return render(reply, t('notFound.title'), viewer, '/library', <Missing what="lib.noAuthor" />, 404);
    const found = await api.get('/api/media-items/search', { query: { author_filter: `"${name}"`, limit: String(MOST) } });
    if (found.status !== 200) return render(reply, t('library.author'), viewer, '/library', <Missing what="lib.authorFailed" />, found.status === 400 ? 400 : 502);
    if (found.body.data.length === 0) return render(reply, t('notFound.title'), viewer, '/library', <Missing what="lib.noAuthor" />, 404);
    // the name as the books spell it
    const spelled = found.body.data[0]!.authors.find((a) => a.toLowerCase() === name.toLowerCase()) ?? name;
    return render(reply, spelled, viewer, '/library', <AuthorPage name={spelled} items={found.body.data} total={found.body.total} />);
  });
}

function savedFilterRoutes({ app, page }: Web): void {
  // the library's saved filters and "Save this filter" for the query the page shows (a fragment)
  page('/library/saved', {}, async ({ req, reply, api }) => {
    const r = await api.get('/api/saved-filters', { query: { resource_type: String(LIBRARY_FILTERS) } });
    return sendHtml(reply, <SavedFilters q={libraryQuery(req.query as Record<string, unknown>)} saved={r.status === 200 ? (r.body.data as SavedFilter[]) : []} />, 200, true);
  });

  // "Save this filter": the library's current query (the grid's own fields) under a name
  action(app, '/library/filters', { done: (req) => i18nFor(req).t('lib.filterSaved'), refresh: true }, async (a, f) => {
    const { offset: _o, ...filter } = libraryQuery(f as Record<string, unknown>);
    return a.post('/api/saved-filters', { body: { name: field(f, 'name') ?? '', resource_type: LIBRARY_FILTERS, filter } });
  });
}
