// The reader: the item as the caller may see it (404 otherwise, like the book page), their position
// and reader settings, and the reader's own script, which alone may run on the page (readerCsp).
import { randomBytes } from 'node:crypto';
import type { Web } from './context';
import { readerCsp, sendHtml } from './http';
import { i18nFor } from './i18n/request';
import { Failed, NotFound } from './layout';
import { type ReadPosition, Reader } from './pages/reader';

export function readerRoutes({ page, render }: Web): void {
  page('/read/:id', {}, async ({ req, reply, api, viewer, assets }) => {
    const id = (req.params as { id: string }).id;
    const r = await api.get('/api/media-items/:id', { params: { id } });
    const { t } = i18nFor(req, viewer);
    if (r.status === 404 || r.status === 400) return render(reply, t('notFound.title'), viewer, undefined, <NotFound />, 404);
    if (r.status !== 200) return render(reply, t('reader.heading'), viewer, undefined, <Failed status={r.status} />, 502);
    const p = await api.get('/api/media-items/:id/progress', { params: { id } });
    const progress = p.status === 200 ? ((p.body as { progress?: ReadPosition } & ReadPosition).progress ?? p.body) : null;
    const st = await api.get('/api/media-items/:id/reader-settings', { params: { id } });
    const settings = st.status === 200 ? { all_books: st.body.all_books, this_book: st.body.this_book } : null;
    // the reader's own script runs by this response's nonce; nothing else may (a book's chapters inherit this policy)
    const nonce = randomBytes(18).toString('base64');
    return sendHtml(
      reply,
      <Reader assets={assets} reader={assets.reader()} nonce={nonce} viewer={viewer} item={r.body} progress={progress} settings={settings} />,
      200,
      false,
      readerCsp(nonce),
    );
  });
}
