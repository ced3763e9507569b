// The installable web app and reading offline (issue 45): the manifest, the service worker (served
// at /sw.js so its scope is the whole site), the app's icon and the offline books page. The worker
// and the manifest are answered with no-cache (a new version is picked up at once).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownDir } from './assets';
import type { Web } from './context';
import { securityHeaders } from './http';
import { i18nFor } from './i18n/request';
import { OfflineBooks } from './pages/offline';

/** The worker's own policy: it may fetch this site only, and runs no other script. */
const WORKER_CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export function offlineRoutes({ app, page, render }: Web): void {
  const dir = ownDir();
  const files = {
    sw: readFileSync(join(dir, 'sw.js')),
    manifest: readFileSync(join(dir, 'manifest.webmanifest')),
    icon: readFileSync(join(dir, 'icon.svg')),
  };
  const fresh = { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' };
  app.get('/sw.js', (_req, reply) => securityHeaders(reply, WORKER_CSP).headers(fresh).type('text/javascript; charset=utf-8').send(files.sw));
  app.get('/manifest.webmanifest', (_req, reply) => securityHeaders(reply).headers(fresh).type('application/manifest+json; charset=utf-8').send(files.manifest));
  app.get('/icon.svg', (_req, reply) => securityHeaders(reply).headers({ 'Cache-Control': 'public, max-age=86400' }).type('image/svg+xml').send(files.icon));
  page('/offline', {}, async ({ req, reply, viewer }) => render(reply, i18nFor(req).t('offline.title'), viewer, undefined, <OfflineBooks />));
}
