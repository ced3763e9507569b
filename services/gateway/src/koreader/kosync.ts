// KOReader's stock Progress sync (the kosync protocol, no plugin), under /api/kosync and at the root
// paths (some clients drop the prefix): users/create, users/auth, syncs/progress, healthcheck. A
// Bindery user signs in with their own username and password (KOReader sends md5(password) as
// `x-auth-key`), or with a device's sync key typed as the password (then the device is named in
// what it pushes); failures answer the reference server's codes and bodies `{code, message}`.
// Beside it, the caller's documents under /api/kosync/documents (user session): list, auto link,
// bulk link, link one, candidates by search.
import type { FastifyInstance } from 'fastify';
import { kosyncAccountRoutes } from './kosync-account';
import { type KosyncDeps, kosyncContext } from './kosync-context';
import { kosyncDocumentLinkRoutes, kosyncDocumentListRoutes } from './kosync-documents';
import { kosyncPullRoute, kosyncPushRoute } from './kosync-progress';
import { KOSYNC_PREFIX } from './kosync-protocol';

export function kosyncRoutes(app: FastifyInstance, deps: KosyncDeps): void {
  const ctx = kosyncContext(app, deps);
  for (const prefix of ['', KOSYNC_PREFIX]) {
    kosyncAccountRoutes(app, ctx, prefix);
    kosyncPushRoute(app, ctx, prefix);
    kosyncPullRoute(app, ctx, prefix);
  }
  kosyncDocumentListRoutes(app, ctx);
  kosyncDocumentLinkRoutes(app, ctx);
}
