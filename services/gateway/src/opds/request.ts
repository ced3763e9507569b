// What every OPDS route (1.2 and 2.0) reads from its request: the base its links start with (the
// reader-key tree keeps its key), the path and query, and a rendered feed from the answer cache.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, isUuid, Reading, type Result } from '@bindery/contracts';
import type { DashboardView } from '../read-model/dashboard-view';
import type { Paging } from './paging';
import { sendFailure } from '../http/reply';
import type { ReadContext, Reads } from '../read-model/reads';
import { segment } from './atom';
import { chooseWords, fromAcceptLanguage, fromProfile, wordsOf } from './words';

export const OPDS_ROOT = '/opds';
const FEED_CACHE_CONTROL = 'private, max-age=0, must-revalidate';

export type Query = Record<string, string | string[]>;
export const queryOf = (req: FastifyRequest) => (req.query ?? {}) as Query;

/** The request's query without paging, to carry into first/next/previous/last links. */
export function otherParams(q: Query): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) if (k !== 'page' && k !== 'per_page') out[k] = Array.isArray(v) ? v[v.length - 1]! : v;
  return out;
}

/** The base every link of a feed starts with: the reader-key tree keeps its key. */
export const baseOf = (req: FastifyRequest) => {
  const key = (req.params as { key?: string }).key;
  return key === undefined ? OPDS_ROOT : `${OPDS_ROOT}/key/${segment(key)}`;
};

/** The request path as the client sent it, without the query. */
export const pathOf = (req: FastifyRequest) => req.url.split('?', 1)[0]!;

export function send(reply: FastifyReply, r: Result<string | Buffer>, type: string): FastifyReply {
  if (!r.ok) return sendFailure(reply, r.error);
  // the words of a feed follow Accept-Language (words.ts): a cache between must keep them apart
  return reply
    .code(200)
    .header('Cache-Control', FEED_CACHE_CONTROL)
    .header('Content-Language', wordsOf(reply.request).locale)
    .header('Vary', 'Accept-Language')
    .type(`${type};charset=utf-8`)
    .send(r.value);
}

/**
 * A rendered feed from the answer cache, keyed by what it depends on: the catalog and identity
 * positions and access (`c.key`), the reading position and the user (pse:lastRead, collections,
 * continue reading), the language of its words, and the URL.
 */
export function feedCache(reads: Reads) {
  return async (req: FastifyRequest, render: (c: ReadContext) => Promise<Result<string>>, extra = ''): Promise<Result<Buffer>> => {
    const c = await reads.context(req.caller!);
    // the app's language, else the profile's (at the current identity position), else English; the
    // language is part of the key, so a profile that changes language is a new answer
    const accept = req.headers['accept-language'];
    const asked = fromAcceptLanguage(typeof accept === 'string' ? accept : undefined);
    const locale = asked ?? fromProfile(await reads.identity.profile(req.caller!.user_id, c.positions.identity ?? 0)) ?? 'en';
    chooseWords(req, locale);
    return reads.cached(`opds|${c.key}|${c.positions.reading ?? 0}|${req.caller!.user_id}|${extra}|${locale}|${req.url}`, () => render(c));
  };
}

type BookPage = Awaited<ReturnType<DashboardView['books']>>;
/** One page of a collection of the caller's (another user's, or a malformed id, does not exist). */
export async function collectionPage(dashboard: DashboardView, req: FastifyRequest, c: ReadContext, id: string, p: Paging): Promise<Result<{ name: string; page: BookPage }>> {
  const col = isUuid(id) ? await dashboard.collection(req.caller!.user_id, id.toLowerCase()) : null;
  if (!col) return { ok: false, error: fail('not_found', Reading.ReadingMessages.collectionNotFound) };
  return { ok: true, value: { name: col.name as string, page: await dashboard.books(req.caller!.user_id, c.access, col, p.perPage, p.offset) } };
}
