// Editing books (issue 43): the edit page of one book and its writes (save, reset a locked field,
// the cover), and the bulk actions of the library grid and the series page. Every write is the
// API's own route called as the signed-in person (the API decides who may: auth.requireEditor),
// from our own pages only (the session's CSRF token), answered with the API's own words.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Catalog, isUuid } from '@bindery/contracts';
import { action, type Form, field, fields } from './actions';
import { type Answer, type Api, apiFor, refusal } from './api';
import { fromOurPage, sendHtml } from './http';
import { apiError, type I18n } from './i18n';
import { i18nFor } from './i18n/request';
import { mayEdit, NotFound } from './layout';
import { EditBook, type EditableItem, editNotice, FIELD_LABELS } from './pages/edit';
import { libraryQuery, searchQuery } from './pages/library';
import type { Web } from './context';

const idOf = (req: FastifyRequest) => ((req.params as { id?: string }).id ?? '').slice(0, 100);
const lines = (s: string) => s.replace(/\r\n?/g, '\n');
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A number field: empty is null, a number is sent as one, anything else as typed (the API's message says why not). */
function numberOf(v: string): number | string | null {
  const t = v.trim();
  if (t === '') return null;
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : v;
}

/** A text field that may be empty: empty is null. */
const orNull = (v: string) => (v.trim() === '' ? null : v);

/** A list typed with commas: trimmed, empty entries left out. */
export const listOf = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

/**
 * The fields of the form that differ from the item as it is: only these are sent, because the API
 * locks every field it is given (a rescan would otherwise keep values nobody chose).
 */
export function changesOf(item: EditableItem, f: Form): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const text = (k: string) => field(f, k) ?? '';
  if (field(f, 'title') !== undefined && text('title') !== item.title) out.title = text('title');
  if (field(f, 'sort_title') !== undefined && text('sort_title') !== item.sort_title) out.sort_title = orNull(text('sort_title'));
  for (const k of ['series', 'language', ...Catalog.TEXT_FIELD_NAMES] as const) {
    if (field(f, k) === undefined) continue;
    const v = orNull(text(k));
    if (v !== item[k]) out[k] = v;
  }
  if (field(f, 'description') !== undefined) {
    const v = orNull(lines(text('description')));
    if (v !== (item.description === null ? null : lines(item.description))) out.description = v;
  }
  if (field(f, 'series_index') !== undefined) {
    const v = numberOf(text('series_index'));
    if (v !== item.series_index) out.series_index = v;
  }
  if (field(f, 'year') !== undefined) {
    const v = numberOf(text('year'));
    if (v !== item.year) out.year = v;
  }
  if (field(f, 'reading_direction') !== undefined) {
    const v = orNull(text('reading_direction'));
    if (v !== item.reading_direction) out.reading_direction = v;
  }
  if (field(f, 'tags') !== undefined) {
    const v = listOf(text('tags'));
    if (!same(v, item.tags)) out.tags = v;
  }
  const names = fields(f, 'contributor_name');
  if (names.length > 0) {
    const roles = fields(f, 'contributor_role');
    const v = names.map((name, i) => ({ name: name.trim(), role: roles[i] ?? 'author' })).filter((c) => c.name !== '');
    if (!same(v, item.contributors)) out.contributors = v;
  }
  const schemes = fields(f, 'identifier_scheme');
  if (schemes.length > 0) {
    const values = fields(f, 'identifier_value');
    const v: Record<string, string> = {};
    schemes.forEach((s, i) => {
      const k = s.trim();
      if (k !== '' && (values[i] ?? '').trim() !== '') v[k] = (values[i] ?? '').trim();
    });
    if (!same(v, item.identifiers)) out.identifiers = v;
  }
  return out;
}

export function editRoutes({ app, page, render }: Web): void {
  page('/books/:id/edit', {}, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req, viewer);
    const notFound = () => render(reply, t('notFound.title'), viewer, undefined, <NotFound href="/library" back={t('lib.back')} />, 404);
    // people who may not edit get what any unknown page gives them (the API refuses them too)
    if (!mayEdit(viewer)) return notFound();
    const r = await api.get('/api/media-items/:id', { params: { id: idOf(req) } });
    if (r.status === 404 || r.status === 400) return notFound();
    if (r.status !== 200) return render(reply, t('edit.title'), viewer, undefined, <p id="failure">{t('edit.readFailed', { status: String(r.status) })}</p>, 502);
    return render(reply, t('edit.heading', { title: r.body.title }), viewer, undefined, <EditBook item={r.body} notice={editNotice(req.query as Record<string, unknown>)} />);
  });

  // save: only what differs from the book as it is now; the book's page afterwards says it is saved
  action(app, '/books/:id/edit', { done: 'saved', goTo: (_f, req) => `/books/${encodeURIComponent(idOf(req))}?saved=1` }, async (api, f, req) => {
    const now = await api.get('/api/media-items/:id', { params: { id: idOf(req) } });
    if (now.status !== 200) return now;
    const changes = changesOf(now.body, f);
    if (Object.keys(changes).length === 0) return refusal(400, i18nFor(req).t('edit.nothingChanged'));
    return api.put('/api/media-items/:id', { params: { id: idOf(req) }, body: changes });
  });

  // a locked field back to the file's value (the API unlocks it and reads the file again)
  const resetField = (f: Form) => {
    const k = field(f, 'field') ?? '';
    return k in FIELD_LABELS && k !== 'cover' ? k : null;
  };
  action(app, '/books/:id/edit/reset', { done: 'reset', goTo: (f, req) => `/books/${encodeURIComponent(idOf(req))}/edit?reset=${resetField(f)}` }, async (api, f, req) => {
    const k = resetField(f);
    if (!k) return refusal(400, i18nFor(req).t('edit.unknownField'));
    return api.put('/api/media-items/:id', { params: { id: idOf(req) }, body: { reset_fields: [k] } });
  });

  // the cover: a page of a comic or PDF (1-based, as typed or picked), or the file's own again
  action(app, '/books/:id/cover/page', { done: 'cover set', goTo: (_f, req) => `/books/${encodeURIComponent(idOf(req))}/edit?cover=page` }, async (api, f, req) => {
    const typed = (field(f, 'page') ?? '').trim();
    const v = typed !== '' ? typed : (field(f, 'page_choice') ?? '').trim();
    if (v === '') return refusal(400, i18nFor(req).t('edit.choosePage'));
    return api.put('/api/media-items/:id/cover', { params: { id: idOf(req) }, body: { page: /^\d{1,9}$/.test(v) ? Number(v) : v } });
  });
  action(app, '/books/:id/cover/reset', { done: 'cover reset', goTo: (_f, req) => `/books/${encodeURIComponent(idOf(req))}/edit?cover=reset` }, (api, _f, req) =>
    api.delete('/api/media-items/:id/cover', { params: { id: idOf(req) } }),
  );

  bulkRoutes(app);
}

/** The most books one bulk action takes (the API's bulk-update takes as many ids at once). */
export const BULK_MOST = 1000;

/** The ids a bulk action is for: the ticked ones, or every book the page's filters match. */
async function selection(api: Api, f: Form, { t }: I18n): Promise<{ ids: string[]; capped: boolean } | { error: string }> {
  if (field(f, 'all_matching') !== '1') {
    const ids = [...new Set(fields(f, 'ids').filter((x) => isUuid(x)))];
    return ids.length > BULK_MOST ? { error: t('bulk.atMost', { most: BULK_MOST }) } : { ids, capped: false };
  }
  const series = field(f, 'series_scope');
  if (series !== undefined) {
    const r = await api.get('/api/series/:name', { params: { name: series.trim().slice(0, 200) }, query: { limit: String(BULK_MOST) } });
    if (r.status !== 200) return { error: t('bulk.seriesFailed', { status: String(r.status) }) };
    return { ids: r.body.data.map((b) => b.media_item_id), capped: r.body.data.length >= BULK_MOST };
  }
  // the library's filters as its page reads them, every page of the search's matches
  const q = libraryQuery(Object.fromEntries(new URLSearchParams(field(f, 'query') ?? '')));
  const ids: string[] = [];
  for (let offset = 0; ids.length < BULK_MOST; ) {
    const r = await api.get('/api/media-items/search', { query: searchQuery({ ...q, offset }, 100) });
    if (r.status !== 200) return { error: t('bulk.matchingFailed', { status: String(r.status) }) };
    ids.push(...r.body.data.map((b) => b.id));
    offset += r.body.data.length;
    if (r.body.data.length === 0 || offset >= r.body.total) return { ids: ids.slice(0, BULK_MOST), capped: false };
  }
  return { ids: ids.slice(0, BULK_MOST), capped: true };
}

const READING: Record<string, { done: 'bulk.done.read' | 'bulk.done.unread' | 'bulk.done.reset'; run: (api: Api, id: string) => Promise<Answer<unknown>> }> = {
  read: {
    done: 'bulk.done.read',
    run: (api, id) => api.put('/api/media-items/:id/progress', { params: { id }, body: { percentage: 1, force: true, client: 'Bindery web', device: 'web' } }),
  },
  unread: {
    done: 'bulk.done.unread',
    run: (api, id) => api.put('/api/media-items/:id/progress', { params: { id }, body: { percentage: 0, force: true, client: 'Bindery web', device: 'web' } }),
  },
  reset: { done: 'bulk.done.reset', run: (api, id) => api.delete('/api/media-items/:id/progress', { params: { id } }) },
};

/** A bulk-update body for the metadata actions (null: not one of them). */
export function bulkChanges(action: string, value: string): Record<string, unknown> | null {
  switch (action) {
    case 'series':
      return { series: orNull(value) };
    case 'add_tags':
      return { add_tags: listOf(value) };
    case 'remove_tags':
      return { remove_tags: listOf(value) };
    case 'authors':
      return { authors: listOf(value) };
    case 'language':
      return { language: orNull(value) };
    case 'reading_direction': {
      const v = value.trim().toLowerCase();
      return { reading_direction: v === '' ? null : v === 'left to right' ? 'ltr' : v === 'right to left' ? 'rtl' : value.trim() };
    }
    default:
      return null;
  }
}

function Told({ failed, text }: { failed: boolean; text: string }) {
  return (
    <div class={failed ? 'alert alert-error' : 'alert alert-success'} role={failed ? 'alert' : 'status'} data-bulk-done={failed ? undefined : 'true'}>
      {text}
    </div>
  );
}

function bulkRoutes(app: FastifyInstance): void {
  app.post('/library/bulk', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!(await fromOurPage(app, req))) return reply.code(403).type('text/plain; charset=utf-8').send('forms of this page are sent by the page itself');
    const f = (req.body && typeof req.body === 'object' ? req.body : {}) as Form;
    const api = apiFor(app, req);
    const i18n = i18nFor(req);
    const { t } = i18n;
    const books = (n: number) => t('count.books', { count: n });
    const say = (status: number, text: string) => sendHtml(reply.header('X-Api-Status', String(status)), <Told failed={status >= 400} text={text} />, 200, true);
    const act = field(f, 'action') ?? '';
    const changes = bulkChanges(act, field(f, 'value') ?? '');
    if (!changes && !READING[act] && act !== 'send') return say(400, t('bulk.chooseAction'));
    const chosen = await selection(api, f, i18n);
    if ('error' in chosen) return say(400, chosen.error);
    if (chosen.ids.length === 0) return say(400, t('bulk.selectOne'));
    const more = chosen.capped ? t('bulk.more', { most: BULK_MOST }) : '';
    if (changes) {
      const r = await api.post('/api/media-items/bulk-update', {
        body: {
          ids: chosen.ids,
          changes,
        },
      });
      if (r.status >= 400) return say(r.status, r.error ? apiError(i18n, r.error) : t('bulk.changeFailed', { status: String(r.status) }));
      const failed = r.body.failed ?? [];
      const done = r.body.succeeded?.length ?? chosen.ids.length - failed.length;
      if (failed.length > 0) return say(207, t('bulk.changedSome', { done: books(done), failed: books(failed.length), error: apiError(i18n, failed[0]?.error ?? ''), more }));
      return say(200, t('bulk.changed', { done: books(done), more }));
    }
    // to the caller's e-reader: one request for the selection, each book on its own
    if (act === 'send') {
      const r = await api.post('/api/media-items/send', { body: { media_item_ids: chosen.ids.slice(0, 100) } });
      if (r.status >= 400) return say(r.status, r.error ? apiError(i18n, r.error) : t('bulk.sendFailed', { status: String(r.status) }));
      const sent = r.body.message ?? t('bulk.sent');
      return say(200, chosen.ids.length > 100 ? t('bulk.sentFirst', { sent }) : t('bulk.sentAll', { sent }));
    }
    // progress is the caller's own, one book at a time through the reading API (a few at once)
    const run = READING[act]!;
    const errors: string[] = [];
    let done = 0;
    const queue = [...chosen.ids];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          const r = await run.run(api, id);
          if (r.status < 400) done++;
          else {
            const why = (r.body as { error?: string } | undefined)?.error;
            errors.push(why ? apiError(i18n, why) : t('bulk.oneFailed', { status: String(r.status) }));
          }
        }
      }),
    );
    if (errors.length > 0)
      return say(done === 0 ? 400 : 207, t('bulk.partly', { done: t(run.done, { books: books(done) }), failed: books(errors.length), error: errors[0] ?? '', more }));
    return say(200, t('bulk.whole', { done: t(run.done, { books: books(done) }), more }));
  });
}
