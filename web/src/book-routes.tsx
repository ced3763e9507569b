// A book's page, the parts of it fetched after the page (the collection picker, the annotations) and
// settling a progress conflict from it; everything read through the gateway's /api routes.
import { action, field } from './actions';
import type { Web } from './context';
import { sendHtml } from './http';
import { i18nFor } from './i18n/request';
import { Failed, mayEdit, NotFound } from './layout';
import { type Annotation, Annotations } from './pages/annotations';
import { Book, CollectionPicker, type Progress } from './pages/book';
import type { ProgressConflict } from './pages/progress-conflicts';

export function bookFragmentRoutes({ page }: Web): void {
  page('/books/:id/collections', {}, async ({ req, reply, api }) => {
    const id = (req.params as { id: string }).id;
    const [item, collections] = await Promise.all([api.get('/api/media-items/:id', { params: { id } }), api.get('/api/collections')]);
    if (item.status !== 200) return sendHtml(reply, <div id="collection-picker" />, 404, true);
    return sendHtml(reply, <CollectionPicker item={item.body} collections={collections.status === 200 ? collections.body.data : []} />, 200, true);
  });

  page('/books/:id/annotations', {}, async ({ req, reply, api }) => {
    const id = (req.params as { id: string }).id;
    const [hl, notes, deleted] = await Promise.all([
      api.get('/api/media-items/:id/highlights', { params: { id } }),
      api.get('/api/media-items/:id/notes', { params: { id } }),
      api.get('/api/media-items/:id/annotations/deleted', { params: { id } }),
    ]);
    if (hl.status !== 200) return sendHtml(reply, <div id="annotations" />, hl.status === 404 ? 404 : 502, true);
    const live = [...(hl.body.data as Annotation[]), ...(notes.status === 200 ? (notes.body.data as Annotation[]) : [])].sort(
      (a, b) => (a.position?.percentage ?? 0) - (b.position?.percentage ?? 0),
    );
    return sendHtml(reply, <Annotations live={live} deleted={deleted.status === 200 ? (deleted.body.data as Annotation[]) : []} />, 200, true);
  });
}

export function progressConflictRoutes({ app }: Web): void {
  // a progress conflict settled from the book page: the place to go on from, as the reading service keeps it
  action(app, '/books/:id/conflicts/:conflict', { done: (req) => i18nFor(req).t('conflict.resolved'), refresh: true }, (a, f, req) =>
    a.post('/api/progress-conflicts/:id/resolve', { params: { id: (req.params as { conflict: string }).conflict }, body: { keep: field(f, 'keep') ?? '' } }),
  );
}

export function bookPageRoutes({ page, render }: Web): void {
  page('/books/:id', {}, async ({ req, reply, api, viewer }) => {
    const id = (req.params as { id: string }).id;
    const r = await api.get('/api/media-items/:id', { params: { id } });
    const { t } = i18nFor(req);
    if (r.status === 404 || r.status === 400) return render(reply, t('notFound.title'), viewer, undefined, <NotFound />, 404);
    if (r.status !== 200) return render(reply, t('book.title'), viewer, undefined, <Failed status={r.status} />, 502);
    const [progress, rating, conflicts, ereader] = await Promise.all([
      api.get('/api/media-items/:id/progress', { params: { id } }),
      api.get('/api/media-items/:id/rating', { params: { id } }),
      api.get('/api/media-items/:id/progress-conflicts', { params: { id } }),
      // 503 when this server sends no mail: no Send button then
      api.get('/api/auth/ereader'),
    ]);
    return render(
      reply,
      r.body.title,
      viewer,
      undefined,
      <Book
        item={r.body}
        canEdit={mayEdit(viewer)}
        saved={(req.query as Record<string, unknown>).saved === '1'}
        progress={progress.status === 200 ? ((progress.body as { progress?: Progress } & Progress).progress ?? progress.body) : null}
        rating={rating.status === 200 && typeof rating.body.rating === 'number' ? rating.body.rating : null}
        conflicts={conflicts.status === 200 ? (conflicts.body.data as ProgressConflict[]) : []}
        sendTo={ereader.status === 200 ? ereader.body.address : null}
      />,
      200,
      { topic: 'progress', refresh: '#book-progress', item: r.body.id },
    );
  });
}
