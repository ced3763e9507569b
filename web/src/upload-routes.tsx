// Uploading books (issue 43): the upload page, the library and folder choice redrawn for another
// library, and the drop zone's form for the library page. The files themselves go from the browser
// straight to POST /api/libraries/<id>/uploads (upload.js), which decides who may (auth.requireEditor).
import type { FastifyReply } from 'fastify';
import type { Api } from './api';
import type { Web } from './context';
import { sendHtml } from './http';
import { i18nFor } from './i18n/request';
import { mayEdit, NotFound, type Viewer } from './layout';
import { type UploadFolder, UploadForm, type UploadLibrary, UploadPage, UploadTargets } from './pages/upload';

/** What the gateway takes when it cannot be asked (no library yet): its default. */
const DEFAULT_MAX_BYTES = 500 * 1024 * 1024;
/** The two forms a page may hold: the upload page's and the library page's drop zone. */
const FORM_IDS = new Set(['upload', 'drop']);

interface Choice {
  libraries: UploadLibrary[];
  library: string | null;
  folders: UploadFolder[];
  maxBytes: number;
}

/** The libraries the caller may see, the one asked for (else the first), its folders and the limit. */
async function choiceOf(api: Api, asked: unknown): Promise<Choice> {
  const libs = await api.get('/api/libraries');
  const libraries = libs.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : [];
  const library = libraries.find((l) => l.id === asked)?.id ?? libraries[0]?.id ?? null;
  if (!library) return { libraries, library, folders: [], maxBytes: DEFAULT_MAX_BYTES };
  const f = await api.get('/api/libraries/:id/upload-folders', { params: { id: library } });
  return f.status === 200 ? { libraries, library, folders: f.body.folders, maxBytes: f.body.max_bytes } : { libraries, library, folders: [], maxBytes: DEFAULT_MAX_BYTES };
}

export function uploadRoutes({ page, render }: Web): void {
  const notFound = (reply: FastifyReply, viewer: Viewer) => {
    const { t } = i18nFor(reply.request, viewer);
    return render(reply, t('notFound.title'), viewer, undefined, <NotFound href="/library" back={t('lib.back')} />, 404);
  };
  const q = (req: { query: unknown }) => (req.query ?? {}) as Record<string, unknown>;

  page('/upload', {}, async ({ req, reply, api, viewer }) => {
    if (!mayEdit(viewer)) return notFound(reply, viewer);
    const c = await choiceOf(api, q(req).library);
    return render(reply, i18nFor(req, viewer).t('upload.title'), viewer, '/upload', <UploadPage {...c} />);
  });

  // the library and folder choice for the library chosen (htmx swaps it into the form)
  page('/upload/targets', {}, async ({ req, reply, api, viewer }) => {
    if (!mayEdit(viewer)) return sendHtml(reply, <p class="muted">{i18nFor(req).t('upload.notAllowed')}</p>, 404, true);
    const id = String(q(req).id ?? '');
    const c = await choiceOf(api, q(req).library);
    return sendHtml(reply, <UploadTargets id={FORM_IDS.has(id) ? id : 'upload'} libraries={c.libraries} library={c.library} folders={c.folders} />, 200, true);
  });

  // the library page's drop zone, loaded once that page shows
  page('/upload/form', {}, async ({ req, reply, api, viewer }) => {
    if (!mayEdit(viewer)) return sendHtml(reply, <p class="muted">{i18nFor(req).t('upload.notAllowed')}</p>, 404, true);
    const c = await choiceOf(api, q(req).library);
    return sendHtml(reply, <UploadForm id="drop" compact {...c} />, 200, true);
  });
}
