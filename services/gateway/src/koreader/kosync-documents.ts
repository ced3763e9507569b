// The caller's KOReader documents under /api/kosync/documents (user session): the list, auto link,
// bulk link, link one, and the books a document might be (a search).
import Type from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail, Messages, type Reading } from '@bindery/contracts';
import { sendFailure, sendResult } from '../http/reply';
import { errors, Nullable, query, SIGNED_IN } from '../http/schemas';
import { sendJson } from '../read-model/reads';
import { SearchResult } from '../web-api/catalog-schemas';
import { queryOf } from '../web-api/libraries';
import type { KosyncContext } from './kosync-context';
import { DOCUMENT, KOSYNC_PREFIX } from './kosync-protocol';

const KosyncDocument = Type.Object(
  { document: Type.String(), media_item_id: Nullable(Type.String()), item: Type.Unknown(), suggested_media_item_id: Nullable(Type.String()) },
  { description: 'a document KOReader pushed, and the book it is linked to' },
);
const DocParams = Type.Object({ document: Type.String({ pattern: DOCUMENT.source }) });
const AutoLinked = Type.Object({
  linked: Type.Array(Type.Object({ document: Type.String(), media_item_id: Type.String(), status: Type.String() })),
  unmatched: Type.Array(Type.String()),
});
const Links = Type.Object({
  links: Type.Array(Type.Object({ document: Type.String({ pattern: DOCUMENT.source }), media_item_id: Type.String({ format: 'uuid' }) }), { minItems: 1, maxItems: 500 }),
});
const LinkedMany = Type.Object({
  message: Type.String(),
  succeeded: Type.Array(Type.Object({ document: Type.String(), media_item_id: Type.String(), status: Type.String() })),
  failed: Type.Array(Type.Object({ document: Type.String(), error: Type.String() })),
});
const LinkOne = Type.Object({ media_item_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]) });
const LinkedOne = Type.Object({ status: Type.String(), document: KosyncDocument });

const tags = ['kosync documents'];
const docOf = (req: FastifyRequest) => (req.params as { document: string }).document.toLowerCase();

/** A document as the reading service answers it. */
type Doc = Reading.KosyncDocumentRecord;

/** The documents with their linked books' titles, and what auto link would choose for the unlinked. */
async function decorate({ view, access }: KosyncContext, req: FastifyRequest, docs: Doc[]) {
  const a = await access(req);
  const titles = await view.titles(a, [...new Set(docs.map((d) => d.media_item_id).filter((x): x is string => x !== null))]);
  const linked = (d: Doc) => (d.media_item_id ? (titles.get(d.media_item_id) ?? null) : null);
  // what auto link would choose for each unlinked document, in one query
  const suggested = await view.itemsOf(
    a,
    docs.filter((d) => !linked(d)).map((d) => d.document),
  );
  return docs.map((d) => {
    const item = linked(d);
    return { ...d, media_item_id: item ? d.media_item_id : null, item, suggested_media_item_id: item ? null : (suggested.get(d.document) ?? null) };
  });
}

/** Links one document (null unlinks); the item must be one the caller sees. */
async function link({ reads, reading, access }: KosyncContext, req: FastifyRequest, document: string, item: string | null, kind: 'user' | 'catalog') {
  if (item !== null) {
    const a = await access(req);
    if (!(await reads.catalog.itemLibrary(a, item))) return { ok: false as const, error: fail('not_found', Messages.mediaItemNotFound) };
    return reading(req, 'kosync-link', { access: a, item_id: item.toLowerCase(), kind, query: { document } });
  }
  return reading(req, 'kosync-link', { access: await access(req), kind, query: { document } });
}

/** The list, and auto link of the unlinked documents to the books they match. */
export function kosyncDocumentListRoutes(app: FastifyInstance, ctx: KosyncContext): void {
  const { auth, reading, view, access } = ctx;
  const user = { onRequest: auth.requireUser };
  const refused = errors(400, ...SIGNED_IN, 404);
  const docQuery = query({ status: 'linked or unlinked', limit: 'how many', offset: 'how many to skip' });
  app.get(
    `${KOSYNC_PREFIX}/documents`,
    { ...user, schema: { tags, summary: 'your KOReader documents', querystring: docQuery, response: { 200: Type.Object({ data: Type.Array(KosyncDocument) }), ...refused } } },
    async (req, reply) => {
      const r = await reading(req, 'kosync-documents', { access: await access(req), query: queryOf(req) });
      if (!r.ok) return sendFailure(reply, r.error);
      return { data: await decorate(ctx, req, r.value.data) };
    },
  );

  app.post(
    `${KOSYNC_PREFIX}/documents/auto-link`,
    { ...user, schema: { tags, summary: 'link unlinked documents to the books they match', response: { 200: AutoLinked, ...refused } } },
    async (req, reply) => {
      const a = await access(req);
      const r = await reading(req, 'kosync-documents', { access: a, query: { status: 'unlinked' } });
      if (!r.ok) return sendFailure(reply, r.error);
      const linked: { document: string; media_item_id: string; status: string }[] = [];
      const unmatched: string[] = [];
      const docs = r.value.data;
      const found = await view.itemsOf(
        a,
        docs.map((d) => d.document),
      );
      for (const d of docs) {
        const item = found.get(d.document);
        if (!item) {
          unmatched.push(d.document);
          continue;
        }
        const l = await link(ctx, req, d.document, item, 'catalog');
        if (l.ok) linked.push({ document: d.document, media_item_id: item, status: l.value.status });
        else unmatched.push(d.document);
      }
      return { linked, unmatched };
    },
  );
}

/** Linking by hand: many documents, one document (null unlinks), and the books one might be. */
export function kosyncDocumentLinkRoutes(app: FastifyInstance, ctx: KosyncContext): void {
  const { auth, reads } = ctx;
  const user = { onRequest: auth.requireUser };
  const refused = errors(400, ...SIGNED_IN, 404);
  const docParams = { schema: { params: DocParams }, config: { paramsFailure: fail('validation', 'document must be a KOReader document id') } };
  app.post(
    `${KOSYNC_PREFIX}/documents/link`,
    { ...user, schema: { tags, summary: 'link documents to books', body: Links, response: { 200: LinkedMany, ...refused } } },
    async (req) => {
      const succeeded: { document: string; media_item_id: string; status: string }[] = [];
      const failed: { document: string; error: string }[] = [];
      for (const l of (req.body as Type.Static<typeof Links>).links) {
        const r = await link(ctx, req, l.document.toLowerCase(), l.media_item_id, 'user');
        if (r.ok) succeeded.push({ document: l.document.toLowerCase(), media_item_id: l.media_item_id.toLowerCase(), status: r.value.status });
        else failed.push({ document: l.document, error: r.error.message });
      }
      return { message: `${succeeded.length} linked, ${failed.length} failed`, succeeded, failed };
    },
  );

  app.put(
    `${KOSYNC_PREFIX}/documents/:document`,
    { ...user, ...docParams, schema: { tags, summary: 'link a document to a book (null unlinks)', params: DocParams, body: LinkOne, response: { 200: LinkedOne, ...refused } } },
    async (req, reply) => {
      const r = await link(ctx, req, docOf(req), (req.body as Type.Static<typeof LinkOne>).media_item_id, 'user');
      if (!r.ok) return sendFailure(reply, r.error);
      const v = r.value;
      return { status: v.status, document: (await decorate(ctx, req, [v.document]))[0] };
    },
  );

  const candidatesSchema = {
    tags,
    summary: 'books a document might be',
    params: DocParams,
    querystring: query({ q: 'free text (required)', limit: 'how many (default 20)', offset: 'how many to skip' }),
    response: { 200: SearchResult, ...refused },
  };
  app.get(`${KOSYNC_PREFIX}/documents/:document/candidates`, { ...user, ...docParams, schema: candidatesSchema }, async (req, reply) => {
    const q = queryOf(req);
    const text = typeof q.q === 'string' ? q.q.trim() : '';
    if (text === '') return sendFailure(reply, fail('validation', 'q is required'));
    const c = await reads.context(req.caller!);
    const r = await reads.catalog.search(c.access, { q: text, limit: typeof q.limit === 'string' ? q.limit : '20', offset: typeof q.offset === 'string' ? q.offset : '0' });
    return r.ok ? sendJson(reply, r.value) : sendResult(reply, r);
  });
}
