// Collections: the list and a collection's page, and the smart-collection builder (its rows, the
// live preview, create and save) and the order of custom collections, through the gateway's /api routes.
import type { FastifyRequest } from 'fastify';
import { Reading } from '@bindery/contracts';
import { action, type Form, field } from './actions';
import { apiFor, refusal, success } from './api';
import type { Web } from './context';
import { fromOurPage, securityHeaders, sendHtml } from './http';
import { apiError } from './i18n';
import { i18nFor } from './i18n/request';
import { Failed, NotFound } from './layout';
import { CollectionPage, type CollectionRow, Collections } from './pages/collections';
import { sectionName } from './pages/dashboard';
import { newKey, Preview, RuleRow, rowOf, rulesOf } from './pages/smart-collection';

/** A smart collection's rules with no complete condition (the builder leaves out a row without its value). */
const noCondition = (req: FastifyRequest) => refusal(400, i18nFor(req).t('smart.noCondition'));

const idOf = (req: { params: unknown }) => ((req.params as { id?: string }).id ?? '').slice(0, 100);

export function collectionPageRoutes({ page, render }: Web): void {
  page('/collections', {}, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req, viewer);
    const r = await api.get('/api/collections');
    if (r.status !== 200) return render(reply, t('nav.collections'), viewer, '/collections', <Failed status={r.status} />, 502);
    return render(reply, t('nav.collections'), viewer, '/collections', <Collections collections={r.body.data as CollectionRow[]} />);
  });

  page('/collections/:id', {}, async ({ req, reply, api, viewer }) => {
    const id = (req.params as { id: string }).id;
    const { t } = i18nFor(req, viewer);
    const [c, items] = await Promise.all([api.get('/api/collections/:id', { params: { id } }), api.get('/api/collections/:id/items', { params: { id }, query: { limit: '200' } })]);
    if (c.status === 404 || c.status === 400) return render(reply, t('notFound.title'), viewer, undefined, <NotFound />, 404);
    if (c.status !== 200 || items.status !== 200) return render(reply, t('coll.title'), viewer, '/collections', <Failed status={c.status} />, 502);
    // a smart collection's rule on a library chooses among the libraries the caller may see
    const libs = c.body.rules ? await api.get('/api/libraries') : null;
    const notice = (req.query as Record<string, unknown>).done === 'rules' ? t('coll.rulesSaved') : undefined;
    return render(
      reply,
      sectionName(c.body, t),
      viewer,
      '/collections',
      <CollectionPage
        c={c.body as CollectionRow}
        books={items.body.data}
        libraries={libs?.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : []}
        notice={notice}
      />,
    );
  });
}

export function smartCollectionRoutes({ app, page }: Web): void {
  // the rule builder: one row (a new one, or one redrawn for its field and operator), a removed row
  page('/collections/rule-row', {}, async ({ req, reply, api }) => {
    const q = req.query as Record<string, unknown>;
    const key = typeof q.key === 'string' && /^[a-z0-9]{1,20}$/.test(q.key) ? q.key : newKey();
    const r = rowOf(key, q[`field-${key}`], q[`op-${key}`], q[`value-${key}`]);
    // the `library` field chooses among the libraries the caller may see
    const libs = r.field === 'library' ? await api.get('/api/libraries') : null;
    reply.header('HX-Trigger', 'rules-changed');
    return sendHtml(reply, <RuleRow r={r} libraries={libs?.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : []} />, 200, true);
  });
  page('/collections/rule-removed', {}, async ({ reply }) => {
    reply.header('HX-Trigger', 'rules-changed');
    return securityHeaders(reply).code(200).type('text/html; charset=utf-8').send('');
  });

  // the live preview: how many books the rules match and the first of them
  app.post('/collections/preview', async (req, reply) => {
    if (!(await fromOurPage(app, req))) return reply.code(403).type('text/plain; charset=utf-8').send('forms of this page are sent by the page itself');
    const rules = rulesOf((req.body && typeof req.body === 'object' ? req.body : {}) as Form);
    if (rules.conditions.length === 0) return sendHtml(reply, <p class="muted">{i18nFor(req).t('smart.typeValue')}</p>, 200, true);
    const r = await apiFor(app, req).post('/api/collections/preview', { query: { limit: '8' }, body: { rules } });
    if (r.status === 401) return reply.code(401).header('HX-Redirect', '/login').send('');
    if (r.status !== 200)
      return sendHtml(
        reply,
        <Preview total={0} books={[]} error={r.error ? apiError(i18nFor(req), r.error) : i18nFor(req).t('smart.previewFailed', { status: String(r.status) })} />,
        200,
        true,
      );
    return sendHtml(reply, <Preview total={r.body.total} books={r.body.data} />, 200, true);
  });

  // create the smart collection the builder shows
  action(app, '/collections/smart', { done: (req) => i18nFor(req).t('coll.created'), refresh: true }, async (a, f, req) => {
    const rules = rulesOf(f);
    if (rules.conditions.length === 0) return noCondition(req);
    return a.post('/api/collections', { body: { name: field(f, 'name') ?? '', rules } });
  });

  // a smart collection's name and rules, as the builder on its page shows them; back to the page, which says so
  action(
    app,
    '/collections/:id/rules',
    { done: (req) => i18nFor(req).t('coll.rulesSavedDone'), goTo: (_f, req) => `/collections/${encodeURIComponent(idOf(req))}?done=rules` },
    async (a, f, req) => {
      const rules = rulesOf(f);
      if (rules.conditions.length === 0) return noCondition(req);
      return a.put('/api/collections/:id', { params: { id: idOf(req) }, body: { name: field(f, 'name') ?? '', rules } });
    },
  );

  // move a custom collection up or down: the custom collections' priorities (the order the API lists
  // them in) rewritten as 100, 101, … in the new order, only those that change
  action(app, '/collections/:id/move', { done: (req) => i18nFor(req).t('coll.orderSaved'), refresh: true }, async (a, _f, req) => {
    const id = (req.params as { id: string }).id.toLowerCase();
    const dir = (req.query as Record<string, unknown>).dir === 'up' ? -1 : 1;
    const all = await a.get('/api/collections');
    if (all.status !== 200) return all;
    const own = all.body.data.filter((c) => !c.is_system);
    const at = own.findIndex((c) => c.id === id);
    if (at < 0) return refusal(404, Reading.ReadingMessages.collectionNotFound);
    const to = at + dir;
    if (to >= 0 && to < own.length) [own[at], own[to]] = [own[to]!, own[at]!];
    for (const [i, c] of own.entries()) {
      if (c.priority === 100 + i) continue;
      const r = await a.put('/api/collections/:id', { params: { id: c.id }, body: { priority: 100 + i } });
      if (r.status >= 400) return r;
    }
    return success(i18nFor(req).t('coll.orderSaved'));
  });
}
