// The web app: server-rendered pages (preact to HTML) with htmx, mounted by the gateway with
// webRoutes(app). Pages read through the gateway's own /api routes in-process (api.ts) and add no
// rule of their own; writes are htmx requests straight to /api, carrying the session's CSRF token
// from the page's <meta name="csrf-token"> (app.js adds it), the proof a cookie-authenticated write needs.
// Here the context every group of routes shares (context.ts) is built once, and the groups (the
// *-routes.tsx files) are registered in order.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { VNode } from 'preact';
import { adminLibrariesRoutes, folderBrowserRoutes, libraryEditActions } from './admin-libraries-routes';
import { duplicateRoutes, scannerRoutes } from './admin-more-routes';
import { adminSystemRoutes } from './admin-system-routes';
import { adminUserRoutes } from './admin-users-routes';
import { apiFor } from './api';
import { approveRoutes } from './approve-routes';
import { type Assets, loadAssets } from './assets';
import { bookFragmentRoutes, bookPageRoutes, progressConflictRoutes } from './book-routes';
import { collectionPageRoutes, smartCollectionRoutes } from './collection-routes';
import { type Page, type Web, type WebDeps, viewerOf } from './context';
import { dashboardRoutes } from './dashboard-routes';
import { deviceRoutes } from './devices-routes';
import { editRoutes } from './edit-routes';
import { csrfOf, inLanguage, loginFor, redirectTo, renderHtml, securityHeaders, sendHtml, sendRendered, useCsrf } from './http';
import { i18nFor } from './i18n/request';
import { Layout, type Live, NotFound, type Render, type RenderKept, type Viewer } from './layout';
import { libraryGridRoutes, libraryRoutes } from './library-routes';
import { mailRoutes } from './mail-routes';
import { offlineRoutes } from './offline-routes';
import { profileRoutes, sessionRoutes } from './profile-routes';
import { readerRoutes } from './reader-routes';
import { signInRoutes } from './sign-in-routes';
import { statisticsRoutes } from './statistics-routes';
import { ssoRoutes } from './sso-routes';
import { uploadRoutes } from './upload-routes';

export function webRoutes(app: FastifyInstance, deps: WebDeps = {}): void {
  const assets = deps.assets ?? loadAssets();
  if (deps.csrf) useCsrf(app, deps.csrf);
  assetRoutes(app, assets);
  const web = webOf(app, deps, assets);
  // the groups in the order their routes are registered (the API document lists the web's routes in it)
  signInRoutes(web);
  dashboardRoutes(web);
  libraryGridRoutes(web);
  bookFragmentRoutes(web);
  collectionPageRoutes(web);
  profileRoutes(web);
  statisticsRoutes(web);
  adminLibrariesRoutes(web);
  deviceRoutes(web);
  approveRoutes(web);
  adminUserRoutes(web);
  adminSystemRoutes(web);
  folderBrowserRoutes(web);
  readerRoutes(web);
  sessionRoutes(web);
  duplicateRoutes(web);
  scannerRoutes(web);
  libraryEditActions(web);
  mailRoutes(web);
  ssoRoutes(web);
  uploadRoutes(web);
  offlineRoutes(web);
  progressConflictRoutes(web);
  libraryRoutes(web);
  smartCollectionRoutes(web);
  editRoutes(web);
  bookPageRoutes(web);
}

function assetRoutes(app: FastifyInstance, assets: Assets): void {
  app.get('/assets/:file', (req, reply) => {
    const path = req.url.split('?')[0]!;
    // the reader's bundle is made on first use: another instance may have shown its name first
    if (path.startsWith('/assets/reader') && !assets.byPath.has(path)) assets.reader();
    const a = assets.byPath.get(path);
    if (!a) return securityHeaders(reply).code(404).type('text/plain; charset=utf-8').send('not found');
    return reply.header('Cache-Control', 'public, max-age=31536000, immutable').header('X-Content-Type-Options', 'nosniff').type(a.type).send(a.body);
  });
}

/** The context every group shares: its page registrar and renderers, and the kept pages' one cache. */
function webOf(app: FastifyInstance, deps: WebDeps, assets: Assets): Web {
  const render: Render = (reply: FastifyReply, title: string, viewer: Viewer | null, current: string | undefined, body: VNode, status = 200, live?: Live) =>
    sendHtml(
      reply,
      <Layout assets={assets} title={title} viewer={viewer} current={current} live={live}>
        {body}
      </Layout>,
      status,
    );

  // kept encoded: a page sent many times is encoded once (and its compressed copy made once: packed-answers)
  const keptPages = new LRUCache<string, Buffer>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (html) => html.length + 200 });
  const kept: RenderKept = (reply, answers, viewer, current, make, live) => {
    const i18n = i18nFor(reply.request, viewer);
    const h = createHash('sha256').update(JSON.stringify([viewer, current ?? '', live ?? null, i18n.locale, i18n.timeZone]));
    for (const a of answers) h.update('\u0000').update(a ?? '');
    const key = h.digest('base64');
    const hit = keptPages.get(key);
    // the language is sent with the kept copy as with the first (the page was rendered in it)
    if (hit !== undefined) return sendRendered(reply.header('Content-Language', i18n.locale), hit);
    const { title, body } = make();
    const html = Buffer.from(
      renderHtml(
        inLanguage(
          i18n,
          <Layout assets={assets} title={title} viewer={viewer} current={current} live={live}>
            {body}
          </Layout>,
        ),
      ),
    );
    keptPages.set(key, html);
    return sendRendered(reply.header('Content-Language', i18n.locale), html);
  };

  const page: Page = (path, opts, handler) =>
    app.get(path, async (req, reply) => {
      const api = apiFor(app, req);
      const viewer = await viewerOf(api);
      if (!viewer) return redirectTo(req, reply, loginFor(req));
      viewer.csrf = await csrfOf(app, req);
      // the page and every fragment of this request in the person's language (their profile's first)
      const i18n = i18nFor(req, viewer);
      if (opts.admin && viewer.role !== 'admin') return render(reply, i18n.t('notFound.title'), viewer, undefined, <NotFound />, 404);
      return handler({ req, reply, api, viewer, assets });
    });

  return { app, deps, assets, page, render, kept };
}
