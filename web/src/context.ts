// What the web app's groups of routes share: the context webRoutes builds once and gives every group
// (Web), and what a signed-in page's handler is given for its request (PageContext).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from './api';
import type { Assets } from './assets';
import type { Render, RenderKept, Viewer } from './layout';

export interface WebDeps {
  /** the assets to serve (tests); read from disk once when absent */
  assets?: Assets;
  /** this server's address for the request, to show people what to type elsewhere (null: the page fills it in) */
  origin?: (req: FastifyRequest) => string | null;
  /** the CSRF token of the session the request's cookie holds (without it, the pages take no write) */
  csrf?: (req: FastifyRequest) => Promise<string | null>;
  /** this server mails (SMTP_URL): the pages offer sending books to e-readers */
  mail?: boolean;
}

export interface PageContext {
  req: FastifyRequest;
  reply: FastifyReply;
  api: Api;
  viewer: Viewer;
  assets: Assets;
}

/** Registers a signed-in page: without a valid session, to sign-in and back; `admin` pages are 404 for others. */
export type Page = (path: string, opts: { admin?: boolean }, handler: (c: PageContext) => Promise<unknown>) => unknown;

/** Built once by webRoutes and given to each group of routes: one set of renderers and caches for all. */
export interface Web {
  app: FastifyInstance;
  deps: WebDeps;
  assets: Assets;
  page: Page;
  /** a page in the layout */
  render: Render;
  /** a page in the layout, kept as rendered for the exact API answers it is made from */
  kept: RenderKept;
}

/** The signed-in caller as the API states them, null without a valid session. */
export async function viewerOf(api: Api): Promise<Viewer | null> {
  const r = await api.get('/api/auth/profile');
  return r.status === 200 ? r.body : null;
}
