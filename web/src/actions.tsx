// Writes the web app makes for a page through the gateway's own API, where a form's fields need
// shaping first (a list of checkboxes, a number) or where the API's answer must not reach the
// browser as is (registering someone else answers with *their* session cookie). Each action takes
// only requests from our own pages (the session's CSRF token, see fromOurPage), calls the API
// in-process as the signed-in caller, and answers a fragment with the API's own words.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { apiFor, type Answer, type Api } from './api';
import { viewerOf } from './context';
import { fromOurPage, sendHtml } from './http';
import { apiError, useI18n } from './i18n';
import { i18nFor } from './i18n/request';

export type Form = Record<string, string | string[] | undefined>;

/** One value of a form field (the first, when repeated). */
export const field = (f: Form, k: string): string | undefined => {
  const v = f[k];
  return Array.isArray(v) ? v[0] : v;
};
/** Every value of a form field (checkboxes). */
export const fields = (f: Form, k: string): string[] => {
  const v = f[k];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/** The API's message as an alert: its `error` for a failure, its `message` (or `fallback`) for a success. */
export function Said({ a, fallback }: { a: Answer<unknown>; fallback: string }) {
  const i18n = useI18n();
  const body = (a.body ?? {}) as { error?: unknown; message?: unknown };
  const failed = a.status >= 400;
  // the API's error in the page's language (its own words when the map does not know it)
  const text = failed
    ? typeof body.error === 'string'
      ? apiError(i18n, body.error)
      : i18n.t('action.failed', { status: String(a.status) })
    : typeof body.message === 'string'
      ? body.message
      : fallback;
  return (
    <div class={failed ? 'alert alert-error' : 'alert alert-success'} role={failed ? 'alert' : 'status'}>
      {text}
    </div>
  );
}

export interface ActionOptions {
  /** what a success says when the API's answer has no message (in the request's language, given a function) */
  done: string | ((req: FastifyRequest) => string);
  /** a successful action reloads the page (the change shows everywhere on it) */
  refresh?: boolean;
  /** a successful action goes to this page instead (a full load) */
  goTo?: (form: Form, req: FastifyRequest) => string;
  /** what a success shows instead of the API's message (a key shown once, say) */
  show?: (a: Answer<unknown>) => VNode;
}

/**
 * Registers POST `path`: from our pages only (403 otherwise), as the signed-in caller; `run` calls the API.
 * Answers 200 with the outcome fragment either way (htmx swaps 200s), the API's status in a header.
 */
export function action(app: FastifyInstance, path: string, opts: ActionOptions, run: (api: Api, form: Form, req: FastifyRequest) => Promise<Answer<unknown>>): void {
  app.post(path, async (req: FastifyRequest, reply: FastifyReply) => {
    if (!(await fromOurPage(app, req))) return reply.code(403).type('text/plain; charset=utf-8').send('forms of this page are sent by the page itself');
    const form = (req.body && typeof req.body === 'object' ? req.body : {}) as Form;
    const api = apiFor(app, req);
    const a = await run(api, form, req);
    reply.header('X-Api-Status', String(a.status));
    if (a.status < 400 && opts.goTo) reply.header('HX-Redirect', opts.goTo(form, req));
    else if (a.status < 400 && opts.refresh) reply.header('HX-Refresh', 'true');
    const done = typeof opts.done === 'string' ? opts.done : opts.done(req);
    if (a.status >= 400 || !opts.show) return sendHtml(reply, <Said a={a} fallback={done} />, 200, true);
    // what is shown instead (a key shown once) is in the person's own language, as their page is
    i18nFor(req, await viewerOf(api));
    return sendHtml(reply, opts.show(a), 200, true);
  });
}
